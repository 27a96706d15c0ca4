import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prehashOrder, startPrehash } from "../../src/cache/prehash-io.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { joinRawTree, listTop, walkRawTree } from "../../src/manifest/raw-tree-io.ts";
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

/** A project of `entries` tool folders under .ai/tools with `files` files each; returns its root and .ai/tools. */
function manyEntries(entries: number, files: number): { root: string; dir: string; contents: Map<string, string> } {
  const tree: Record<string, string> = {};
  const contents = new Map<string, string>();
  const root = makeTemp();
  for (let t = 0; t < entries; t++) {
    for (let f = 0; f < files; f++) {
      const rel = `.ai/tools/t${t}/${f % 3 === 0 ? "" : "data/"}f${f}.txt`;
      tree[rel] = `tool ${t} file ${f}\n`.repeat(f + 1);
      contents.set(join(root, rel), tree[rel]!);
    }
  }
  writeTree(root, tree);
  return { root, dir: join(root, ".ai/tools"), contents };
}

/**
 * Every file a run gave is given with the identity it had while being read: its stat now and its
 * bytes now, or (changed since) the stat the walk took and the bytes it had then. Never one with the other.
 */
function expectTrueToReading(results: Awaited<ReturnType<ReturnType<typeof startPrehash>["results"]>>, before: ReturnType<typeof walkRawTree>, dir: string, contents: Map<string, string>) {
  const walkedAt = new Map(before!.paths.map((p, i) => [`${dir}/${p}`, before!.stats.slice(i * 5, i * 5 + 4)]));
  for (const abs of results.paths()) {
    const row = results.get(abs)!;
    let now: number[] | undefined;
    try {
      const st = lstatSync(abs);
      now = st.isFile() ? [st.size, st.mtimeMs, st.ctimeMs, st.ino] : undefined;
    } catch {
      now = undefined;
    }
    const identity = [row.size, row.mtimeMs, row.ctimeMs, row.ino];
    if (now && identity.every((x, k) => x === now![k])) expect([abs, row.sha256]).toEqual([abs, sha256Hex(readFileSync(abs))]);
    else expect([abs, identity, row.sha256]).toEqual([abs, walkedAt.get(abs)!, sha256Hex(contents.get(abs)!)]);
  }
}

describe("the raw walk shared with the worker", () => {
  const later = Date.now() + 60_000;

  test("the two threads' walks join into the walk one thread takes, and every file is hashed once with its stat", async () => {
    const { root, dir } = manyEntries(40, 12);
    const listing = listTop(root)!;
    expect(listing.names.length).toBe(40);
    const run = startPrehash(dir, listing);
    const blocks = await run.walk();
    const raw = joinRawTree(listing, blocks!, later);
    expect(raw).toEqual(walkRawTree(root, later)!);
    run.help(raw);
    const results = await run.results();
    expect([...results.paths()].sort()).toEqual([...prehashOrder(raw, dir)].sort());
    for (const abs of results.paths()) {
      const st = lstatSync(abs);
      expect([abs, results.get(abs)]).toEqual([abs, { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: sha256Hex(readFileSync(abs)) }]);
    }
  });

  test.each([
    ["the first entry", "t0"],
    ["the last entry", "t39"],
    ["a folder deep in a middle entry", "t20/data"],
  ])("a symbolic link in %s gives no walk, whichever thread walks it", async (_, where) => {
    const { root, dir } = manyEntries(40, 12);
    symlinkSync("f1.txt", join(dir, where, "alias.txt"));
    const listing = listTop(root)!;
    const run = startPrehash(dir, listing);
    expect(await run.walk()).toBeUndefined();
    expect(walkRawTree(root, later)).toBeUndefined();
    expect((await run.results()).size).toBeGreaterThan(0);
  });

  test("a symbolic link directly in .ai/tools gives no listing to share", () => {
    const { root, dir } = manyEntries(3, 2);
    symlinkSync("t0", join(dir, "alias"));
    expect(listTop(root)).toBeUndefined();
    expect(walkRawTree(root, later)).toBeUndefined();
  });

  test("a walk of an entry that vanished before its turn gives none", async () => {
    const { root, dir } = manyEntries(40, 2);
    const listing = listTop(root)!;
    rmSync(join(dir, "t39"), { recursive: true });
    const run = startPrehash(dir, listing);
    expect(await run.walk()).toBeUndefined();
    await run.results();
  });
});

describe("files that change between the walk and their hashing", () => {
  /** Changes made after the walk: a size change, a same-size rewrite, a file replaced by a symlink, one removed, one replaced by a FIFO, one made unreadable. */
  function change(dir: string): string[] {
    const touched = ["t1/f0.txt", "t2/data/f1.txt", "t3/f3.txt", "t4/data/f2.txt", "t5/f6.txt", "t6/data/f4.txt"].map((p) => join(dir, p));
    writeFileSync(touched[0]!, "grown and changed\n".repeat(50));
    writeFileSync(touched[1]!, readFileSync(touched[1]!, "utf8").toUpperCase());
    rmSync(touched[2]!);
    symlinkSync("f0.txt", touched[2]!);
    rmSync(touched[3]!);
    rmSync(touched[4]!);
    expect(Bun.spawnSync(["mkfifo", touched[4]!]).exitCode).toBe(0);
    chmodSync(touched[5]!, 0);
    return touched;
  }

  test("help reads against the walk's stat: a changed, replaced, removed, FIFO or unreadable file is left out, never given stale", async () => {
    const { root, dir, contents } = manyEntries(40, 12);
    const raw = walkRawTree(root, Date.now() + 60_000)!;
    const touched = change(dir);
    const run = startPrehash(dir);
    run.help(raw);
    const results = await run.results();
    expectTrueToReading(results, raw, dir, contents);
    for (const abs of touched.slice(2, 5)) expect([abs, results.get(abs)]).toEqual([abs, undefined]);
    // (A same-size rewrite or a chmod within the file system's timestamp tick keeps the stat: the racy rule covers those.)
    for (const abs of [touched[0]!, ...touched.slice(2, 5)]) {
      const walked = raw.paths.indexOf(abs.slice(dir.length + 1));
      const [size, mtimeMs, ctimeMs, ino] = raw.stats.slice(walked * 5, walked * 5 + 4) as [number, number, number, number];
      expect([abs, results.digestIf(abs, { size, mtimeMs, ctimeMs, ino })]).toEqual([abs, undefined]);
    }
  });

  test("the worker's own share of the walk: whatever it read before or after the changes is true to the stat it gives", async () => {
    const { root, dir, contents } = manyEntries(40, 12);
    const listing = listTop(root)!;
    const run = startPrehash(dir, listing);
    const raw = joinRawTree(listing, (await run.walk())!, Date.now() + 60_000);
    const touched = change(dir);
    run.help(raw);
    const results = await run.results();
    expectTrueToReading(results, raw, dir, contents);
    expect(touched.length).toBe(6);
  });
});

