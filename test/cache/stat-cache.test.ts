import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { RACY_MARGIN_MS, loadStatCache, statCachePath, statCacheOf } from "../../src/cache/stat-cache-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const HEX = "ab".repeat(32);
const stat = { size: 10, mtimeMs: 1_000_000, ctimeMs: 1_000_000, ino: 42 };
const LATER = stat.mtimeMs + RACY_MARGIN_MS + 1;

describe("the stat cache", () => {
  test("remembers a digest and returns it while size, mtime, ctime and inode are unchanged", () => {
    const cache = makeTemp();
    const first = loadStatCache(cache, "/project", LATER);
    expect(first.lookup("a.py", stat)).toBeUndefined();
    first.record("a.py", stat, HEX);
    expect(first.save()).toBeUndefined();
    const second = loadStatCache(cache, "/project", LATER);
    expect(second.lookup("a.py", stat)).toBe(HEX);
    expect([second.hits, second.misses]).toEqual([1, 0]);
  });

  test.each([
    ["size", { ...stat, size: 11 }],
    ["mtime", { ...stat, mtimeMs: stat.mtimeMs + 1 }],
    ["ctime (chmod, or an mtime reset with touch -d)", { ...stat, ctimeMs: stat.ctimeMs + 1 }],
    ["inode (the file was replaced)", { ...stat, ino: 43 }],
  ])("misses when the %s changed", (_what, changed) => {
    const cache = makeTemp();
    const first = loadStatCache(cache, "/project", LATER);
    first.record("a.py", stat, HEX);
    first.save();
    expect(loadStatCache(cache, "/project", LATER).lookup("a.py", changed)).toBeUndefined();
  });

  test("does not remember a file modified within the racy margin of hashing", () => {
    const cache = makeTemp();
    const first = loadStatCache(cache, "/project", stat.mtimeMs + 10);
    first.record("a.py", stat, HEX);
    first.save();
    expect(loadStatCache(cache, "/project", LATER).lookup("a.py", stat)).toBeUndefined();
  });

  /** The bytes a save of one row (a.py) for `root` writes. */
  const saved = (root = "/project"): Buffer => {
    const cache = makeTemp();
    const sc = loadStatCache(cache, root, LATER);
    sc.record("a.py", stat, HEX);
    sc.recordTool("a.yaml", HEX, HEX, HEX);
    sc.recordChecked({ context: HEX, tools: { a: HEX } });
    expect(sc.save()).toBeUndefined();
    return readFileSync(statCachePath(cache, root));
  };

  test("keeps rows, tool memos and the checked tree across a save and a load", () => {
    const cache = makeTemp();
    const path = statCachePath(cache, "/project");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, saved());
    const sc = loadStatCache(cache, "/project", LATER);
    expect(sc.lookup("a.py", stat)).toBe(HEX);
    expect(sc.lookupTool("a.yaml", HEX)).toEqual({ integrity: HEX, manifestDigest: HEX });
    expect(sc.checked).toEqual({ context: HEX, tools: { a: HEX } });
  });

  const flip = (bytes: Buffer, at: number) => {
    const out = Buffer.from(bytes);
    out[at] = out[at]! ^ 0x01;
    return out;
  };
  test.each([
    ["an empty file", () => Buffer.alloc(0)],
    ["garbage", () => Buffer.from("not a stat cache at all, just some text that is long enough to hold a header")],
    ["a JSON stat cache of an older kiwi", () => Buffer.from(JSON.stringify({ format: 2, root: "/project", entries: { "a.py": [10, 1_000_000, 1_000_000, 42, HEX] } }))],
    ["a truncated file", () => saved().subarray(0, -1)],
    ["a file cut after its header", () => saved().subarray(0, 40)],
    ["a file with bytes added", () => Buffer.concat([saved(), Buffer.from([0])])],
    ["another format version", () => flip(saved(), 7)],
    ["a flipped bit in a digest (the checksum catches it)", () => flip(saved(), saved().length - 1)],
    ["a flipped bit in the file's size", () => flip(saved(), saved().length - 32 - 96 - 64 - 32)],
    ["another project's file", () => saved("/other")],
  ])("ignores %s (every file is hashed, which is always correct)", (_what, body) => {
    const cache = makeTemp();
    const path = statCachePath(cache, "/project");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, body());
    const sc = loadStatCache(cache, "/project", LATER);
    expect(sc.lookup("a.py", stat)).toBeUndefined();
    expect(sc.lookupTool("a.yaml", HEX)).toBeUndefined();
    expect(sc.checked).toBeNull();
  });

  test("a read-only cache over a kept subset (exec's chain memo) drops rows that are not well formed", () => {
    const sc = statCacheOf("/project", { entries: { "a.py": [10, 1_000_000, 1_000_000, 42, HEX], "b.py": [10, 1_000_000, 1_000_000, 42, "zz"] as never }, tools: {} }, LATER);
    expect(sc.lookup("a.py", stat)).toBe(HEX);
    expect(sc.lookup("b.py", stat)).toBeUndefined();
    expect(sc.seen().entries).toEqual({ "a.py": [10, 1_000_000, 1_000_000, 42, HEX] });
  });

  test("a save removes the JSON stat cache an older kiwi wrote, and nothing else of the project", () => {
    const cache = makeTemp();
    const file = statCachePath(cache, "/project");
    const legacy = file.replace(/\.stat$/, ".json");
    const treeMemo = file.replace(/\.stat$/, ".tree.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(legacy, '{"format":2,"root":"/project","entries":{}}');
    writeFileSync(treeMemo, "{}");
    const run = loadStatCache(cache, "/project", LATER);
    run.record("a.py", stat, HEX);
    expect(run.save()).toBeUndefined();
    expect([existsSync(file), existsSync(legacy), existsSync(treeMemo)]).toEqual([true, false, true]);
  });

  test("forgets files that were not seen in the last run", () => {
    const cache = makeTemp();
    const first = loadStatCache(cache, "/project", LATER);
    first.record("a.py", stat, HEX);
    first.record("b.py", stat, HEX);
    first.save();
    const second = loadStatCache(cache, "/project", LATER);
    second.lookup("a.py", stat);
    second.save();
    expect(loadStatCache(cache, "/project", LATER).lookup("b.py", stat)).toBeUndefined();
  });

  test("a cache it cannot write is a warning, not a failure", () => {
    const cache = join(makeTemp(), "file-not-dir");
    writeFileSync(cache, "");
    const sc = loadStatCache(cache, "/project", LATER);
    sc.record("a.py", stat, HEX);
    expect(sc.save()).toMatch(/could not save the stat cache .* \(ENOTDIR\)/);
  });
});
