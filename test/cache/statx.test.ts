// statx through bun:ffi (cache/statx-io.ts) must give lstatSync's numbers to the last bit, or
// the lock index would see every entry as changed; and the index scan must find the same changes with it as without it.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { loadLockIndex, scanLockIndex, scanLockIndexFast } from "../../src/lockfile/lock-index-io.ts";
import { openStatx } from "../../src/cache/statx-io.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("statx through bun:ffi", () => {
  test.skipIf(process.platform !== "linux")("reads size, mtimeMs, ctimeMs, ino and mode exactly as lstatSync does, for files and folders, unicode names included", async () => {
    const dir = makeTemp();
    const names = ["plain.txt", "ünïcödé 名前.bin", "sub", "sub/inner.sh"];
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, names[0]!), "x".repeat(12345));
    writeFileSync(join(dir, names[1]!), "y");
    writeFileSync(join(dir, names[3]!), "#!/bin/sh\n");
    chmodSync(join(dir, names[3]!), 0o755);
    const bytes = new TextEncoder().encode(`${names.join("\0")}\0`);
    const native = await openStatx(dir, bytes, names[0]!, 0);
    expect(native).toBeDefined();
    const row = new Float64Array(5);
    let at = 0;
    for (const name of names) {
      expect(native!.statAt(at, row)).toBe(true);
      const st = lstatSync(join(dir, name));
      expect([...row]).toEqual([st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode]);
      at = bytes.indexOf(0, at) + 1;
    }
    native!.close();
  });

  test.skipIf(process.platform !== "linux")("stays right through garbage collections and JIT tiers (its buffers never move)", async () => {
    const dir = makeTemp();
    const names = Array.from({ length: 64 }, (_, i) => (i % 8 === 0 ? `d${i}` : `f${i}.txt`));
    for (const [i, name] of names.entries()) {
      if (name.startsWith("d")) mkdirSync(join(dir, name));
      else writeFileSync(join(dir, name), "z".repeat(i * 7));
    }
    // A small names buffer, as the scan of a small tree has.
    const bytes = new TextEncoder().encode(`${names.join("\0")}\0`);
    const offsets = names.map((_, i) => (i === 0 ? 0 : bytes.indexOf(0, 0) + 1));
    for (let i = 1; i < names.length; i++) offsets[i] = bytes.indexOf(0, offsets[i - 1]!) + 1;
    const expected = names.map((name) => {
      const st = lstatSync(join(dir, name));
      return [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode];
    });
    const native = await openStatx(dir, bytes, names[0]!, 0);
    if (!native) return;
    const row = new Float64Array(5);
    let wrong = 0;
    for (let round = 0; round < 600; round++) {
      for (let i = 0; i < names.length; i++) {
        if (!native.statAt(offsets[i]!, row) || row.some((v, k) => v !== expected[i]![k])) wrong++;
        // Garbage for the collector, as a real scan makes between calls.
        if (i % 16 === 0) JSON.parse(JSON.stringify({ round, i, pad: "p".repeat(200) }));
      }
      if (round % 100 === 0) Bun.gc(true);
    }
    native.close();
    expect(wrong).toBe(0);
  });

  test("reports a missing entry as a failure, not as numbers", async () => {
    const dir = makeTemp();
    writeFileSync(join(dir, "a"), "a");
    const bytes = new TextEncoder().encode("a\0gone\0");
    const native = await openStatx(dir, bytes, "a", 0);
    if (!native) return; // not Linux: nothing to check
    expect(native.statAt(2, new Float64Array(5))).toBe(false);
    native.close();
  });

  test("the index scan finds the same changes with statx as with lstatSync", async () => {
    const { root, index } = await lockedTwoTools();
    expect((await scanLockIndexFast(index)).tools.size).toBe(0);
    writeFileSync(join(root, ".ai/tools/b/main.py"), "print(22)\n");
    const fast = await scanLockIndexFast(index);
    const slow = scanLockIndex(index);
    expect([...fast.tools.keys()]).toEqual([...slow.tools.keys()]);
    expect(fast.tools.size).toBe(1);
    expect([...fast.fresh]).toEqual([...slow.fresh]);
  });

  test("a scan of some entries finds exactly the whole scan's changes among them, with statx as with lstatSync", async () => {
    const { root, index } = await lockedTwoTools();
    writeFileSync(join(root, ".ai/tools/a/main.py"), "print(11)\n");
    writeFileSync(join(root, ".ai/tools/b/main.py"), "print(22)\n");
    const at = (path: string) => index.paths.indexOf(path);
    const whole = scanLockIndex(index);
    for (const only of [[at("a/main.py")], [at("b/tool.yaml"), at("b/main.py")], [at("a/tool.yaml")], []]) {
      const expected = [...whole.fresh].filter(([i]) => i === -1 || only.includes(i));
      for (const scan of [await scanLockIndexFast(index, only), scanLockIndex(index, undefined, only)]) {
        expect(scan.structural).toBe(false);
        expect([...scan.fresh]).toEqual(expected);
        expect([...scan.tools.keys()]).toEqual([...whole.tools.keys()].filter((t) => only.some((i) => index.owners[i] === t && whole.fresh.has(i))));
      }
    }
    // statx's rows of the entries scanned are kept in order, each the index's or the changed stat, with their names.
    const only = [at("a/main.py"), at("a/tool.yaml"), at("b/main.py")];
    const fast = await scanLockIndexFast(index, only);
    if (process.platform === "linux") {
      expect(new TextDecoder().decode(fast.onlyNames)).toBe("a/main.py\0a/tool.yaml\0b/main.py\0");
      expect([...fast.onlyRows!]).toEqual(only.flatMap((i) => fast.fresh.get(i) ?? [...index.stats.subarray(i * 5, i * 5 + 5)]));
      expect(only.map((i) => lstatSync(join(root, ".ai/tools", index.paths[i]!))).flatMap((st) => [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode])).toEqual([...fast.onlyRows!]);
    }
    expect(scanLockIndex(index, undefined, only).onlyRows).toBeUndefined();
    // An entry gone is structural, in a scan that stats it and in no other.
    rmSync(join(root, ".ai/tools/b/main.py"));
    expect((await scanLockIndexFast(index, [at("b/main.py")])).structural).toBe(true);
    expect((await scanLockIndexFast(index, [at("a/main.py")])).structural).toBe(false);
  });
});

/** A locked project of two script tools, a and b, and its lock index (the clock ahead: past the racy margin). */
async function lockedTwoTools() {
  const root = makeProject({
    ".ai/tools/a/tool.yaml": "tool_id: a\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1\nconfig:\n  entrypoint: main.py\n",
    ".ai/tools/a/main.py": "print(1)\n",
    ".ai/tools/b/tool.yaml": "tool_id: b\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1\nconfig:\n  entrypoint: main.py\n",
    ".ai/tools/b/main.py": "print(2)\n",
  });
  const ctx = { ...createContext({ cwd: root, env: { KIWI_CACHE_DIR: makeTemp() } }), now: () => Date.now() + 60_000 };
  await lockProject(ctx);
  return { root, index: loadLockIndex(ctx.cacheDir, root, false)! };
}
