// The lock index file: what is saved is what loads, whatever the byte lengths of its text
// sections (the numbers after them are read in place when they sit at an 8-byte boundary, and the
// paths end with the padding's NUL when there is padding), and a damaged file loads as nothing.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildLockIndex, loadLockIndex, namesAt, pathAt, positionOf, sameIgnoreFile, saveLockIndex, unpinnedServers } from "../../src/lockfile/lock-index-io.ts";
import { readIgnoreFileText } from "../../src/manifest/ignore-file-io.ts";
import type { RawTree } from "../../src/manifest/raw-tree-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

/** The day these tests judge ignore files on: their files have no expires, so any day would do. */
const TODAY = "2026-11-28";

afterAll(cleanupTemps);

/** A raw tree of one folder holding `count` files whose names grow by one character each. */
function tree(count: number, stem: string): RawTree {
  const paths = ["t", ...Array.from({ length: count }, (_, i) => `t/${stem}${"x".repeat(i)}.py`)];
  const stats = paths.flatMap((_, i) => [i * 10, 1_000_000 + i, 1_000_000 + i, 500 + i, i === 0 ? 0o040755 : 0o100644]);
  return { paths, parents: paths.map((_, i) => (i === 0 ? -1 : 0)), stats, top: [4096, 1_000_000, 1_000_000, 2, 0o040755], racy: false };
}

describe("the lock index file", () => {
  test("loads what was saved, for every alignment of its sections", () => {
    const seen = new Set<number>();
    for (let extra = 0; extra < 16; extra++) {
      const cacheDir = makeTemp("kiwi-cache-");
      const root = makeTemp("kiwi-root-");
      const raw = tree(3 + extra, "f".repeat(extra));
      const index = buildLockIndex({ root, strict: false, raw, tools: [], findings: [], startedAt: Date.now() + 60_000, pinned: false, lockfileText: "{}\n" });
      saveLockIndex(cacheDir, index);
      const file = readdirSync(join(cacheDir, "stat")).find((n) => n.endsWith(".index"))!;
      const bytes = readFileSync(join(cacheDir, "stat", file));
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      seen.add((24 + view.getUint32(8, true) + view.getUint32(12, true) + view.getUint32(16, true)) % 8);
      const loaded = loadLockIndex(cacheDir, root, undefined)!;
      expect(loaded.paths).toEqual(raw.paths);
      expect([...loaded.stats]).toEqual(raw.stats);
      expect([...loaded.parents]).toEqual(raw.parents);
      expect(Buffer.from(loaded.names!).toString("latin1")).toBe(`${raw.paths.join("\0")}\0`);
    }
    // Both layouts were loaded: text ending on an 8-byte boundary (no padding) and not.
    expect(seen.has(0)).toBe(true);
    expect(seen.size).toBeGreaterThan(1);
  });

  test("finds and names entries from its bytes as the decoded paths do, for every alignment", () => {
    for (let extra = 0; extra < 9; extra++) {
      const cacheDir = makeTemp("kiwi-cache-");
      const root = makeTemp("kiwi-root-");
      // Names that are prefixes and suffixes of one another, and one that is not ASCII.
      const raw = tree(3 + extra, `é${"f".repeat(extra)}`);
      raw.paths.push("t/x.py", "t/xx.py", "t/x.py.bak");
      raw.parents.push(0, 0, 0);
      raw.stats.push(...[1, 2, 3].flatMap((i) => [i, 1_000_000, 1_000_000, 900 + i, 0o100644]));
      saveLockIndex(cacheDir, buildLockIndex({ root, strict: false, raw, tools: [], findings: [], startedAt: Date.now() + 60_000, pinned: false, lockfileText: "{}\n" }));
      const loaded = loadLockIndex(cacheDir, root, undefined)!;
      expect(loaded.starts).toBeDefined();
      for (const [i, path] of raw.paths.entries()) {
        expect(positionOf(loaded, path)).toBe(i);
        expect(pathAt(loaded, i)).toBe(path);
      }
      for (const absent of ["", "t/", "x.py", "/x.py", "t/x", "t/x.py.ba", "t/xx.py/", "u", "t\0t"]) expect(positionOf(loaded, absent)).toBe(-1);
      const some = [raw.paths.length - 1, 0, 2];
      expect(Buffer.from(namesAt(loaded, some)).toString("utf8")).toBe(`${some.map((i) => raw.paths[i]).join("\0")}\0`);
      expect([...namesAt(loaded, [])]).toEqual([0]);
    }
  });

  test("keeps the ignore file the verdict read, and says whether it is still that one", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const root = makeTemp("kiwi-root-");
    const file = join(root, ".ai/kiwi-ignore.yaml");
    mkdirSync(join(root, ".ai"), { recursive: true });
    writeFileSync(file, "ignore: []\n");
    const build = (startedAt: number) => buildLockIndex({ root, strict: false, raw: tree(2, "a"), tools: [], findings: [], ignoreFile: readIgnoreFileText(root), startedAt, pinned: false, lockfileText: "{}\n" });
    saveLockIndex(cacheDir, build(Date.now() + 60_000));
    const loaded = loadLockIndex(cacheDir, root, undefined)!;
    const st = statSync(file);
    expect(loaded.ignores).toEqual([st.size, st.mtimeMs, st.ctimeMs, st.ino]);
    expect(sameIgnoreFile(loaded, TODAY)).toBe(true);
    writeFileSync(file, "ignore: [ ]\n");
    expect(sameIgnoreFile(loaded, TODAY)).toBe(false);
    rmSync(file);
    expect(sameIgnoreFile(loaded, TODAY)).toBe(false);
    // Recorded without one: the same while there is none, not once one appears.
    saveLockIndex(cacheDir, build(Date.now() + 60_000));
    const none = loadLockIndex(cacheDir, root, undefined)!;
    expect([none.ignores, sameIgnoreFile(none, TODAY)]).toEqual([[], true]);
    writeFileSync(file, "ignore: []\n");
    expect(sameIgnoreFile(none, TODAY)).toBe(false);
    // Written within the racy margin of the run: its stat vouches for nothing.
    saveLockIndex(cacheDir, build(Date.now()));
    const racy = loadLockIndex(cacheDir, root, undefined)!;
    expect([racy.ignores, sameIgnoreFile(racy, TODAY)]).toEqual([null, false]);
  });

  test("a verdict over an ignore file whose entries may expire holds for the day it was taken on", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const root = makeTemp("kiwi-root-");
    mkdirSync(join(root, ".ai"), { recursive: true });
    writeFileSync(join(root, ".ai/kiwi-ignore.yaml"), "ignore:\n  - { rule: security/host-any, tool: crawl, expires: 2030-01-01 }\n");
    const readOn = Date.parse("2029-12-31T23:59:00Z");
    saveLockIndex(cacheDir, buildLockIndex({ root, strict: false, raw: tree(2, "a"), tools: [], findings: [], ignoreFile: readIgnoreFileText(root, readOn), startedAt: Date.now() + 60_000, pinned: false, lockfileText: "{}\n" }));
    const loaded = loadLockIndex(cacheDir, root, undefined)!;
    expect(loaded.ignoresDay).toBe("2029-12-31");
    expect(sameIgnoreFile(loaded, "2029-12-31")).toBe(true);
    expect(sameIgnoreFile(loaded, "2030-01-01")).toBe(false);
    // A file without a date keeps its verdict whatever the day.
    writeFileSync(join(root, ".ai/kiwi-ignore.yaml"), "ignore: []\n");
    saveLockIndex(cacheDir, buildLockIndex({ root, strict: false, raw: tree(2, "a"), tools: [], findings: [], ignoreFile: readIgnoreFileText(root, readOn), startedAt: Date.now() + 60_000, pinned: false, lockfileText: "{}\n" }));
    const undated = loadLockIndex(cacheDir, root, undefined)!;
    expect([undated.ignoresDay, sameIgnoreFile(undated, "2030-01-01")]).toEqual([undefined, true]);
  });

  test("a file cut short or with a wrong magic loads as nothing", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const root = makeTemp("kiwi-root-");
    saveLockIndex(cacheDir, buildLockIndex({ root, strict: false, raw: tree(4, "a"), tools: [], findings: [], startedAt: Date.now() + 60_000, pinned: false, lockfileText: "{}\n" }));
    const path = join(cacheDir, "stat", readdirSync(join(cacheDir, "stat")).find((n) => n.endsWith(".index"))!);
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 3));
    expect(loadLockIndex(cacheDir, root, undefined)).toBeUndefined();
    writeFileSync(path, Buffer.concat([Buffer.from("KIWIIX99"), bytes.subarray(8)]));
    expect(loadLockIndex(cacheDir, root, undefined)).toBeUndefined();
  });

  test("the servers the lockfile pins are kept with it; a damaged list loads as nothing", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const root = makeTemp("kiwi-root-");
    const index = buildLockIndex({ root, strict: false, raw: tree(2, "p"), tools: [], findings: [], startedAt: Date.now() + 60_000, pinned: false, lockfileText: "{}\n", mcpPinned: ["gh"] });
    saveLockIndex(cacheDir, { ...index, mcpServers: ["fs", "gh", "db"] });
    const loaded = loadLockIndex(cacheDir, root, undefined)!;
    expect(loaded.lockfile.mcpPinned).toEqual(["gh"]);
    expect(unpinnedServers(loaded)).toEqual(["fs", "db"]);
    // Without the list (a run that did not learn the pins) the index does not say.
    saveLockIndex(cacheDir, buildLockIndex({ root, strict: false, raw: tree(2, "p"), tools: [], findings: [], startedAt: Date.now() + 60_000, pinned: false, lockfileText: "{}\n" }));
    expect(unpinnedServers(loadLockIndex(cacheDir, root, undefined)!)).toBeUndefined();
    saveLockIndex(cacheDir, index);
    const path = join(cacheDir, "stat", readdirSync(join(cacheDir, "stat")).find((n) => n.endsWith(".index"))!);
    const bytes = readFileSync(path).toString("latin1");
    expect(bytes).toContain('"mcpPinned":["gh"]');
    writeFileSync(path, Buffer.from(bytes.replace('"mcpPinned":["gh"]', '"mcpPinned":[1234]'), "latin1"));
    expect(loadLockIndex(cacheDir, root, undefined)).toBeUndefined();
  });
});
