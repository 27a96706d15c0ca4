import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { statRelPath } from "../../src/cache/cache-layout.ts";
import { RACY_MARGIN_MS, loadStatCache } from "../../src/cache/stat-cache-io.ts";
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

  test.each([
    ["a damaged file", "{not json"],
    ["another project's file", JSON.stringify({ format: 1, root: "/other", entries: { "a.py": [10, 1_000_000, 1_000_000, 42, HEX] } })],
    ["a row with a bad digest", JSON.stringify({ format: 1, root: "/project", entries: { "a.py": [10, 1_000_000, 1_000_000, 42, "zz"] } })],
  ])("ignores %s (every file is hashed, which is always correct)", (_what, body) => {
    const cache = makeTemp();
    const path = join(cache, statRelPath("/project"));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, body);
    expect(loadStatCache(cache, "/project", LATER).lookup("a.py", stat)).toBeUndefined();
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
