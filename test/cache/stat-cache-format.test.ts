import { describe, expect, test } from "bun:test";
import { STAT_FORMAT, type StatCacheData, decodeStatCache, encodeStatCache } from "../../src/cache/stat-cache-format.ts";

const hex = (n: number) => n.toString(16).padStart(2, "0").repeat(32);

const DATA: StatCacheData = {
  root: "/home/ünï/project",
  entries: new Map([
    ["a/main.py", [10, 1_700_000_000_123.456, 1_700_000_000_999.5, 42, hex(1)]],
    ["b/データ.bin", [0, 1, 2, 2 ** 40, hex(2)]],
  ]),
  tools: new Map([["a/tool.yaml", [hex(3), hex(4), hex(5)]]]),
  checked: { context: hex(6), tools: { a: hex(7), b: hex(8) } },
};

describe("the stat cache's bytes", () => {
  test.each([
    ["rows, tool memos and a checked tree", DATA],
    ["no checked tree", { ...DATA, checked: null }],
    ["a checked tree of no tools", { ...DATA, checked: { context: hex(9), tools: {} } }],
    ["nothing at all", { root: "/p", entries: new Map(), tools: new Map(), checked: null }],
  ])("read back as written: %s", (_what, data) => {
    expect(decodeStatCache(encodeStatCache(data))).toEqual(data);
  });

  test("read back from a buffer that does not start at an 8-byte boundary", () => {
    const bytes = encodeStatCache(DATA);
    const shifted = new Uint8Array(bytes.length + 3);
    shifted.set(bytes, 3);
    expect(decodeStatCache(shifted.subarray(3))).toEqual(DATA);
  });

  test("leave out a row, a memo or a checked tree whose digest is not lowercase hex, keeping the rest", () => {
    const data: StatCacheData = {
      ...DATA,
      entries: new Map([...DATA.entries, ["bad.py", [1, 2, 3, 4, "AB".repeat(32)]]]),
      tools: new Map([...DATA.tools, ["bad.yaml", [hex(1), "zz", hex(1)]]]),
      checked: { context: hex(6), tools: { a: "sha256:" + hex(7) } },
    };
    expect(decodeStatCache(encodeStatCache(data))).toEqual({ ...DATA, checked: null });
  });

  test("carries its format version in the byte after the magic", () => {
    expect(encodeStatCache(DATA)[7]).toBe(STAT_FORMAT);
  });

  test.each([
    ["empty", new Uint8Array(0)],
    ["garbage", new TextEncoder().encode("x".repeat(200))],
    ["a JSON stat cache", new TextEncoder().encode(JSON.stringify({ format: 2, root: "/p", entries: {} }))],
  ])("read %s as nothing", (_what, bytes) => {
    expect(decodeStatCache(bytes)).toBeUndefined();
  });

  test("read every truncation of a file as nothing", () => {
    const bytes = encodeStatCache(DATA);
    for (let end = 0; end < bytes.length; end++) expect(decodeStatCache(bytes.subarray(0, end))).toBeUndefined();
  });

  test("read a file with any single byte changed as nothing (never a wrong row)", () => {
    const bytes = encodeStatCache(DATA);
    for (let at = 0; at < bytes.length; at++) {
      const damaged = Uint8Array.from(bytes);
      damaged[at] = damaged[at]! ^ 0x10;
      expect(decodeStatCache(damaged)).toBeUndefined();
    }
  });
});
