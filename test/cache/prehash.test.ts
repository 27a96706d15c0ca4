import { afterAll, describe, expect, test } from "bun:test";
import { lstatSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prehashOrder, startPrehash } from "../../src/cache/prehash-io.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { walkRawTree } from "../../src/manifest/raw-tree-io.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("hashing on a worker thread during discovery", () => {
  test("hashes every regular file with the stat it had, skipping ignored folders and symlinks", async () => {
    const dir = writeTree(makeTemp(), {
      "a/main.py": "print(1)\n",
      "a/lib/x.bin": new Uint8Array(3 * 1024 * 1024).fill(7),
      "a/__pycache__/junk.pyc": "junk",
      "a/link.py": { symlink: "main.py" },
    });
    const results = await startPrehash(dir).results();
    expect([...results.paths()].sort()).toEqual([join(dir, "a/lib/x.bin"), join(dir, "a/main.py")]);
    const main = results.get(join(dir, "a/main.py"))!;
    const st = lstatSync(join(dir, "a/main.py"));
    expect(main).toEqual({ size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: sha256Hex("print(1)\n") });
    expect(results.get(join(dir, "a/lib/x.bin"))!.sha256).toBe(sha256Hex(new Uint8Array(3 * 1024 * 1024).fill(7)));
  });

  test("the main thread's help hashes what the worker has not reached: every file once, each right", async () => {
    const files: Record<string, string> = { "a/__pycache__/skip.pyc": "junk" };
    for (let t = 0; t < 40; t++) for (let f = 0; f < 25; f++) files[`t${t}/f${f}.txt`] = `tool ${t} file ${f}\n`.repeat(f + 1);
    const root = writeTree(makeTemp(), Object.fromEntries(Object.entries(files).map(([p, text]) => [`.ai/tools/${p}`, text])));
    const dir = join(root, ".ai/tools");
    const raw = walkRawTree(root, Date.now() + 60_000)!;
    const order = prehashOrder(raw, dir);
    expect(order.length).toBe(1000);
    expect(order.some((p) => p.includes("__pycache__"))).toBe(false);
    const run = startPrehash(dir);
    run.help(raw);
    const results = await run.results();
    expect([...results.paths()].sort()).toEqual([...order].sort());
    for (const abs of results.paths()) expect([abs, results.get(abs)!.sha256]).toEqual([abs, sha256Hex(readFileSync(abs))]);
  });

  test("help with a walk of a tree that changed since only misaligns the claims: nothing it gives is wrong", async () => {
    const root = writeTree(makeTemp(), Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`.ai/tools/t/f${i}.txt`, `file ${i}\n`])));
    const dir = join(root, ".ai/tools");
    const raw = walkRawTree(root, Date.now() + 60_000)!;
    for (let i = 0; i < 50; i++) writeFileSync(join(dir, "t", `new${i}.txt`), `new ${i}\n`);
    const run = startPrehash(dir);
    run.help(raw);
    const results = await run.results();
    expect(results.size).toBeGreaterThan(0);
    for (const abs of results.paths()) {
      const row = results.get(abs)!;
      expect([abs, row.sha256, row.size]).toEqual([abs, sha256Hex(readFileSync(abs)), lstatSync(abs).size]);
    }
  });

  test("gives a file's digest only for the identity it had while being read", async () => {
    const dir = writeTree(makeTemp(), { "a/main.py": "print(1)\n" });
    const abs = join(dir, "a/main.py");
    const results = await startPrehash(dir).results();
    const st = lstatSync(abs);
    const same = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino };
    expect(results.digestIf(abs, same)).toBe(sha256Hex("print(1)\n"));
    for (const changed of [{ ...same, size: same.size + 1 }, { ...same, mtimeMs: same.mtimeMs + 1 }, { ...same, ctimeMs: same.ctimeMs + 1 }, { ...same, ino: same.ino + 1 }]) {
      expect(results.digestIf(abs, changed)).toBeUndefined();
    }
    expect(results.digestIf(join(dir, "a/other.py"), same)).toBeUndefined();
  });

  test("a missing folder gives no results rather than an error", async () => {
    expect((await startPrehash(join(makeTemp(), "nope")).results()).size).toBe(0);
  });
});
