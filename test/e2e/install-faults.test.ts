// Faults during `kiwi lock` / `kiwi install`, with real processes: kill -9 mid-write, a full disk
// (a real tiny tmpfs where mount namespaces are allowed, and the test-only fault hook everywhere),
// and a read-only cache (a real read-only bind mount, and a real unprivileged user). Afterwards the
// lockfile is the old one or the new one, and no partial blob sits under its final name.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { KIWI_BIN } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { canUnshareMounts, demoProject, kiwiIn, listFiles, runKiwiUnshared } from "./lock-helpers.ts";
import { needs } from "../helpers/needs.ts";

afterAll(cleanupTemps);

const lockText = (root: string) => readFileSync(join(root, "tool.lock.json"), "utf8");

/** Every blob under its final name holds exactly the bytes its name says. */
function assertNoPartialBlobs(cache: string): { finals: string[]; temps: string[] } {
  const files = listFiles(join(cache, "blobs"));
  const temps = files.filter((f) => basename(f).startsWith("."));
  const finals = files.filter((f) => !basename(f).startsWith("."));
  for (const f of finals) expect(sha256Hex(readFileSync(join(cache, "blobs", f)))).toBe(f.replace("/", ""));
  return { finals, temps };
}

/** Starts kiwi paused at a fault point; resolves once it is paused there (it wrote the marker). */
async function startPaused(root: string, env: Record<string, string>, args: string[], fault: string) {
  const marker = join(makeTemp(), "paused");
  const proc = Bun.spawn([KIWI_BIN, ...args], { cwd: root, env: { ...env, KIWI_TEST_FAULT: fault, KIWI_TEST_FAULT_MARKER: marker }, stdout: "pipe", stderr: "pipe" });
  const deadline = Date.now() + 20_000;
  while (!existsSync(marker)) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`kiwi never reached ${fault}: ${await new Response(proc.stderr).text()}`);
    await Bun.sleep(5);
  }
  return proc;
}

/** A project whose tools have more, larger files, so a run spends real time writing blobs. */
function biggerProject(): string {
  const root = demoProject();
  for (let t = 0; t < 5; t++) {
    for (let f = 0; f < 8; f++) {
      mkdirSync(join(root, `.ai/tools/bulk${t}/data`), { recursive: true });
      writeFileSync(join(root, `.ai/tools/bulk${t}/data/f${f}.bin`), Buffer.alloc(256 * 1024, `${t}-${f}`));
    }
    writeFileSync(join(root, `.ai/tools/bulk${t}/tool.yaml`), `tool_id: bulk${t}\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n`);
    writeFileSync(join(root, `.ai/tools/bulk${t}/main.py`), `print(${t})\n`);
  }
  return root;
}

describe("kill -9 in the middle", () => {
  test.each(["lockfile-write", "lockfile-rename"])("of writing the lockfile (%s): the old lockfile stays; the next lock recovers", async (point) => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const old = lockText(root);
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 2\n");
    const proc = await startPaused(root, k.env, ["lock"], `${point}=pause`);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(lockText(root)).toBe(old);
    expect(listFiles(root).filter((f) => f.startsWith(".tool.lock.json.tmp-"))).toHaveLength(1);
    expect(existsSync(join(root, "tool.lock.json.lock"))).toBe(true);
    const next = await k.run(["lock"]);
    expect(next.exitCode).toBe(0);
    expect(lockText(root)).toContain(sha256Hex("X = 2\n"));
    expect(listFiles(root).filter((f) => f.startsWith(".tool.lock.json") || f.endsWith(".lock"))).toEqual([]);
  });

  test("of writing a blob: no partial blob under its final name; install and cache verify recover", async () => {
    const root = biggerProject();
    const k = kiwiIn(root);
    const proc = await startPaused(root, k.env, ["install"], "blob-write=pause@3");
    proc.kill("SIGKILL");
    await proc.exited;
    const { finals, temps } = assertNoPartialBlobs(k.cache);
    expect(finals).toHaveLength(2);
    expect(temps).toHaveLength(1);
    expect((await k.run(["install"])).exitCode).toBe(0);
    const verified = await k.run(["cache", "verify"]);
    expect(verified.exitCode).toBe(0);
    expect(verified.stdout).toContain("removed 1 leftover temp file\n");
    expect(assertNoPartialBlobs(k.cache).temps).toEqual([]);
    expect((await k.run(["verify"])).exitCode).toBe(0);
  });

  test("at whatever point a real install has reached: the invariants hold", async () => {
    const root = biggerProject();
    const k = kiwiIn(root);
    const proc = Bun.spawn([KIWI_BIN, "install"], { cwd: root, env: k.env, stdout: "ignore", stderr: "ignore" });
    const deadline = Date.now() + 20_000;
    while (listFiles(join(k.cache, "blobs")).length === 0 && proc.exitCode === null && Date.now() < deadline) await Bun.sleep(1);
    proc.kill("SIGKILL");
    await proc.exited;
    assertNoPartialBlobs(k.cache);
    if (existsSync(join(root, "tool.lock.json"))) expect(() => JSON.parse(lockText(root))).not.toThrow();
    expect((await k.run(["install"])).exitCode).toBe(0);
    expect((await k.run(["verify"])).exitCode).toBe(0);
  });
});

describe("a full disk", () => {
  test("injected ENOSPC on a blob: exit 2 with the disk-full hint, nothing partial, a rerun completes", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    const r = await k.run(["install"], { KIWI_TEST_FAULT: "blob-write=ENOSPC@2" });
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain(`error[E_IO]: cannot write to the cache ${k.cache}: ENOSPC`);
    expect(r.stderr).toContain("hint: the disk is full");
    expect(assertNoPartialBlobs(k.cache)).toEqual({ finals: [expect.any(String)], temps: [] });
    expect((await k.run(["install"])).exitCode).toBe(0);
  });

  test("injected ENOSPC on the lockfile: the old lockfile stays, no temp file is left", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const old = lockText(root);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(2)\n");
    const r = await k.run(["lock"], { KIWI_TEST_FAULT: "lockfile-write=ENOSPC" });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("ENOSPC");
    expect(r.stderr).toContain("the disk is full");
    expect(lockText(root)).toBe(old);
    expect(listFiles(root).filter((f) => f.startsWith(".tool.lock.json"))).toEqual([]);
  });

  test.skipIf(!needs(canUnshareMounts(), "mount namespaces (unshare -rm) are not available"))("a real 64 KiB tmpfs as the cache: exit 2 ENOSPC, no partial blob", async () => {
    const root = demoProject();
    writeFileSync(join(root, ".ai/tools/dp/data.bin"), Buffer.alloc(256 * 1024, 7));
    const k = kiwiIn(root);
    mkdirSync(k.cache, { recursive: true });
    const after = makeTemp();
    // The tmpfs lives only in the namespace, so its content is copied out for inspection.
    const r = await runKiwiUnshared(`mount -t tmpfs -o size=64k tmpfs "${k.cache}"`, ["install"], root, k.env);
    const copy = await runKiwiUnshared(`mount -t tmpfs -o size=64k tmpfs "${k.cache}" && "${KIWI_BIN}" install >/dev/null 2>&1; cp -a "${k.cache}/." "${after}/"`, ["--version"], root, k.env);
    expect(copy.exitCode).toBe(0);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain("ENOSPC");
    expect(r.stderr).toContain("the disk is full");
    expect(assertNoPartialBlobs(after).temps).toEqual([]);
    expect(lockText(root)).toContain(sha256Hex(Buffer.alloc(256 * 1024, 7)));
  });
});

describe("a read-only cache directory", () => {
  test.skipIf(!needs(canUnshareMounts(), "mount namespaces (unshare -rm) are not available"))("read-only bind mount: lock still works (warning), install fails with EROFS and a hint", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    mkdirSync(k.cache, { recursive: true });
    const ro = `mount --bind -o ro "${k.cache}" "${k.cache}"`;
    const lock = await runKiwiUnshared(ro, ["lock"], root, k.env);
    expect(lock.exitCode).toBe(0);
    expect(lock.stderr).toMatch(/warning: could not save the stat cache .*\(EROFS\)/);
    const install = await runKiwiUnshared(ro, ["install"], root, k.env);
    expect([install.exitCode, install.stdout]).toEqual([2, ""]);
    expect(install.stderr).toContain("EROFS");
    expect(install.stderr).toContain("point KIWI_CACHE_DIR at a writable folder");
    expect(listFiles(k.cache)).toEqual([]);
  });

  test.skipIf(!needs(canUnshareMounts(), "mount namespaces (unshare -rm) are not available"))("read-only bind mount over a filled cache: install and verify still succeed", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    expect((await k.run(["install"])).exitCode).toBe(0);
    const ro = `mount --bind -o ro "${k.cache}" "${k.cache}"`;
    const install = await runKiwiUnshared(ro, ["install", "--frozen-lockfile"], root, k.env);
    expect(install.exitCode).toBe(0);
    expect(install.stdout).toContain("(0 stored, 3 already cached)");
    expect((await runKiwiUnshared(ro, ["verify"], root, k.env)).exitCode).toBe(0);
  });

  test.skipIf(!needs(process.getuid?.() === 0, "needs root"))("a cache the user may not write (run as nobody): exit 2 EACCES with a hint", async () => {
    const base = makeTemp();
    chmodSync(base, 0o755);
    const root = join(base, "project");
    cpSync(demoProject(), root, { recursive: true });
    const cache = join(base, "cache");
    mkdirSync(cache, { mode: 0o555 });
    chmodSync(cache, 0o555);
    chmodSync(root, 0o777);
    const env = { PATH: process.env.PATH!, HOME: base, KIWI_CACHE_DIR: cache, NO_COLOR: "1" };
    const proc = Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", KIWI_BIN, "install"], { cwd: root, env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect([code, stdout]).toEqual([2, ""]);
    expect(stderr).toContain("EACCES");
    expect(stderr).toContain("KIWI_CACHE_DIR");
    expect(listFiles(cache)).toEqual([]);
  });

  test.skipIf(!needs(process.getuid?.() === 0, "needs root"))("a project the user may not write (run as nobody): an up-to-date lock and install succeed; a lock that must write exits 2 naming the lockfile", async () => {
    const base = makeTemp();
    chmodSync(base, 0o755);
    const root = join(base, "project");
    cpSync(demoProject(), root, { recursive: true });
    const cache = join(base, "cache");
    mkdirSync(cache, { mode: 0o777 });
    chmodSync(cache, 0o777);
    const env = { PATH: process.env.PATH!, HOME: base, KIWI_CACHE_DIR: cache, NO_COLOR: "1" };
    const asNobody = async (...args: string[]) => {
      const proc = Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", KIWI_BIN, ...args], { cwd: root, env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { exitCode, stdout, stderr };
    };
    expect((await kiwiIn(root).run(["lock"])).exitCode).toBe(0);
    const locked = lockText(root);
    for (const dir of [root, join(root, ".ai"), join(root, ".ai/tools"), join(root, ".ai/tools/dp"), join(root, ".ai/tools/dp/lib")]) chmodSync(dir, 0o555);

    const lock = await asNobody("lock");
    expect([lock.exitCode, lock.stdout, lock.stderr]).toEqual([0, "tool.lock.json is up to date (10 tools)\n", ""]);
    const install = await asNobody("install");
    expect([install.exitCode, install.stderr]).toEqual([0, ""]);
    expect(install.stdout).toContain("installed 10 tools");
    expect((await asNobody("verify")).exitCode).toBe(0);

    chmodSync(join(root, ".ai/tools/dp"), 0o755);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(2)\n");
    const stale = await asNobody("lock");
    expect([stale.exitCode, stale.stdout]).toEqual([2, ""]);
    expect(stale.stderr).toContain(`error[E_IO]: cannot write ${join(root, "tool.lock.json")}: EACCES (the project folder is not writable by this user)`);
    expect(stale.stderr).toContain(`hint: make ${root} writable to lock it; "kiwi install --frozen-lockfile" and "kiwi verify" only read tool.lock.json`);
    expect(lockText(root)).toBe(locked);
    expect(listFiles(root).filter((f) => f.includes("tool.lock.json"))).toEqual(["tool.lock.json"]);
    chmodSync(root, 0o755);
  });
});
