// `kiwi cache dir|verify|prune|clean`, and two kiwi processes sharing one cache and one project.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { blobRelPath } from "../../src/cache/cache-layout.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { parseLockfile } from "../../src/lockfile/parse.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { demoProject, kiwiIn, listFiles } from "./lock-helpers.ts";

afterAll(cleanupTemps);

describe("kiwi cache dir", () => {
  test.each([
    ["KIWI_CACHE_DIR", { KIWI_CACHE_DIR: "/tmp/kiwi-x" }, "/tmp/kiwi-x"],
    ["XDG_CACHE_HOME", { KIWI_CACHE_DIR: undefined, XDG_CACHE_HOME: "/tmp/xdg" }, "/tmp/xdg/kiwi"],
    ["HOME", { KIWI_CACHE_DIR: undefined, HOME: "/tmp/home-y" }, "/tmp/home-y/.cache/kiwi"],
    ["HOME over a relative XDG_CACHE_HOME, which the XDG spec calls invalid", { KIWI_CACHE_DIR: undefined, HOME: "/tmp/home-y", XDG_CACHE_HOME: "xdg" }, "/tmp/home-y/.cache/kiwi"],
  ])("follows %s", async (_what, env, expected) => {
    const k = kiwiIn(makeTemp());
    const r = await k.run(["cache", "dir"], env);
    expect(r).toEqual({ exitCode: 0, stdout: `${expected}\n`, stderr: "" });
  });
});

describe("kiwi cache verify / prune / clean", () => {
  test.each([[["clean"]], [["prune", "--grace", "0"]]])("%p refuses a folder that is not kiwi's cache (KIWI_CACHE_DIR pointed at a project), removing nothing", async (args: string[]) => {
    const root = demoProject();
    // A project with folders of its own that share names with kiwi's cache entries.
    writeFileSync(join(root, "README.md"), "# app\n");
    for (const dir of ["check", "runs", "index"]) {
      mkdirSync(join(root, dir));
      writeFileSync(join(root, dir, "keep.txt"), "mine\n");
    }
    const k = kiwiIn(root, { KIWI_CACHE_DIR: root });
    const before = listFiles(root);
    const r = await k.run(["cache", ...args]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain(`error[E_IO]: ${root} does not look like kiwi's cache (no CACHEDIR.TAG written by kiwi, and it holds .ai, README.md): kiwi cache ${args[0]} removed nothing\n`);
    expect(r.stderr).toContain('hint: check KIWI_CACHE_DIR and XDG_CACHE_HOME ("kiwi cache dir" prints the folder kiwi uses)');
    expect(listFiles(root)).toEqual(before);
  });

  test("a cache only kiwi lock has written (no CACHEDIR.TAG yet) is still cleaned", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    expect((await k.run(["lock"])).exitCode).toBe(0);
    expect(existsSync(join(k.cache, "CACHEDIR.TAG"))).toBe(false);
    const r = await k.run(["cache", "clean"]);
    expect(r.exitCode).toBe(0);
    expect(readdirSync(k.cache)).toEqual([]);
  });

  test("verify passes a good cache, and evicts and exits 4 for a tampered blob", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["install"]);
    expect(await k.run(["cache", "verify"])).toEqual({ exitCode: 0, stdout: `${k.cache}: 3 blobs and 10 tool entries verified\n`, stderr: "" });
    const blob = join(k.cache, blobRelPath(sha256Hex("X = 1\n")));
    chmodSync(blob, 0o644);
    writeFileSync(blob, "tampered");
    const r = await k.run(["cache", "verify"]);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain(`cached blob sha256:${sha256Hex("X = 1\n").slice(0, 12)} holds bytes hashing to sha256:${sha256Hex("tampered").slice(0, 12)}`);
    expect(existsSync(blob)).toBe(false);
    expect(listFiles(join(k.cache, "quarantine"))).toHaveLength(1);
  });

  test("verify and prune count an installed package tree's entry as a package tree, not as a tool entry", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["install"]);
    // An unreferenced npm tree's index entry, as deps/ writes it: canonical text named by its sha256.
    const text = '{"files":[],"kind":"npm-tree"}';
    const hex = sha256Hex(text);
    const path = join(k.cache, "index", hex.slice(0, 2), `${hex.slice(2)}.json`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    expect((await k.run(["cache", "verify"])).stdout).toBe(`${k.cache}: 3 blobs, 10 tool entries and 1 package tree verified\n`);
    const old = new Date(Date.now() - 3600_000);
    utimesSync(path, old, old);
    const r = await k.run(["cache", "prune", "--grace", "0"]);
    expect(r.stdout).toMatch(/^removed 0 blobs, 0 tool entries, 1 package tree and \d+ other files? \(/);
    expect(existsSync(path)).toBe(false);
  });

  test("prune keeps what the project's lockfile references and removes the rest", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["install"]);
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 2\n");
    await k.run(["install"]);
    const old = join(k.cache, blobRelPath(sha256Hex("X = 1\n")));
    expect(existsSync(old)).toBe(true);
    const recent = await k.run(["cache", "prune"]);
    expect(recent.exitCode).toBe(0);
    expect(recent.stdout).toContain("kept 2 used in the last 600 s");
    const human = await k.run(["cache", "prune", "--grace", "0"]);
    expect(human.stdout).toMatch(/^removed 1 blob, 1 tool entry and \d+ other files? \(/);
    expect(human.stdout).toContain("not referenced by 1 project lockfile");
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 3\n");
    await k.run(["install"]);
    const r = await k.run(["cache", "prune", "--grace", "0", "--json"]);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, projects: [root], removedBlobs: 1, removedIndex: 1 });
    expect(existsSync(old)).toBe(false);
    expect((await k.run(["verify"])).exitCode).toBe(0);
  });

  test("prune names the stat caches and memos it removes beside blobs and tool entries, so the bytes freed add up", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["install"]);
    const gone = demoProject();
    const kg = kiwiIn(gone, { KIWI_CACHE_DIR: k.cache });
    await kg.run(["install"]);
    rmSync(gone, { recursive: true, force: true });
    const r = await k.run(["cache", "prune", "--grace", "0"]);
    expect(r.stdout).toMatch(/^removed 0 blobs, 0 tool entries and \d+ other files? \(\d.* not referenced by 1 project lockfile \(other files: stat caches, memos, run folders, quarantined entries\)\n$/);
    const json = JSON.parse((await k.run(["cache", "prune", "--grace", "0", "--json"])).stdout);
    expect(json).toMatchObject({ removedBlobs: 0, removedIndex: 0, removedOther: 0, bytesFreed: 0 });
    expect((await k.run(["cache", "prune", "--grace", "0"])).stdout).toStartWith("removed 0 blobs and 0 tool entries (0 B)");
  });

  test("prune refuses a grace that is not a number", async () => {
    const r = await kiwiIn(makeTemp()).run(["cache", "prune", "--grace", "soon"]);
    expect([r.exitCode, r.stderr]).toEqual([2, 'error[E_USAGE]: --grace must be a number of seconds, got "soon"\n  hint: for example --grace 0\n']);
    // An empty value is no 0: it would remove what a running install just stored.
    for (const args of [["--grace="], ["--grace"], ["--grace", ""], ["--grace", "0x10"]]) {
      const empty = await kiwiIn(makeTemp()).run(["cache", "prune", ...args]);
      expect([args, empty.exitCode, empty.stdout]).toEqual([args, 2, ""]);
      expect(empty.stderr).toContain("error[E_USAGE]: --grace must be a number of seconds");
    }
    expect((await kiwiIn(makeTemp()).run(["cache", "prune", "--grace", "1.5"])).exitCode).toBe(0);
  });

  test("clean removes what kiwi stored and nothing else", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["install"]);
    writeFileSync(join(k.cache, "notes.txt"), "mine");
    const r = await k.run(["cache", "clean"]);
    expect(r.exitCode).toBe(0);
    expect(readdirSync(k.cache)).toEqual(["notes.txt"]);
    expect((await k.run(["verify"])).exitCode).toBe(4);
  });
});

describe("two kiwi processes at once", () => {
  test("concurrent installs of one project never corrupt the store or the lockfile", async () => {
    const root = demoProject();
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `.ai/tools/dp/lib/m${i}.py`), `V = ${i}\n`.repeat(2000));
    const k = kiwiIn(root);
    const results = await Promise.all([k.run(["install"]), k.run(["install"]), k.run(["lock"]), k.run(["install"])]);
    expect(results.map((r) => r.exitCode)).toEqual([0, 0, 0, 0]);
    expect(() => parseLockfile(readFileSync(join(root, "tool.lock.json"), "utf8"))).not.toThrow();
    expect(listFiles(root).filter((f) => !f.startsWith(".ai/"))).toEqual(["tool.lock.json"]);
    expect((await k.run(["cache", "verify"])).exitCode).toBe(0);
    expect((await k.run(["verify"])).exitCode).toBe(0);
  });

  test("installs of two projects sharing one cache and the same files", async () => {
    const a = demoProject();
    const b = demoProject();
    const ka = kiwiIn(a);
    const env = { KIWI_CACHE_DIR: ka.cache, HOME: ka.env.HOME };
    const [ra, rb] = await Promise.all([ka.run(["install"]), kiwiIn(b).run(["install"], env)]);
    expect([ra.exitCode, rb.exitCode]).toEqual([0, 0]);
    expect((await ka.run(["cache", "verify"])).exitCode).toBe(0);
    expect(listFiles(join(ka.cache, "projects"))).toHaveLength(2);
    const old = new Date(Date.now() - 3600_000);
    for (const f of listFiles(join(ka.cache, "blobs"))) utimesSync(join(ka.cache, "blobs", f), old, old);
    expect(JSON.parse((await ka.run(["cache", "prune", "--grace", "0", "--json"])).stdout).removedBlobs).toBe(0);
  });
});
