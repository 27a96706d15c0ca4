import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GIT_BLOBS_DIR, hasGitBlob, readGitBlob, readGitBlobBeside, readGitBlobText, storeGitBlob } from "../../src/cache/git-blobs-io.ts";
import { wholeHeadText } from "../../src/lockfile/edited-tools.ts";
import { gitBlobId } from "../../src/integrity/git-blob.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const bytesOf = (text: string) => new TextEncoder().encode(text);
const lockText = '{\n  "lockfileVersion": 1,\n  "tools": {},\n  "mcp_servers": {}\n}\n';

describe("git blobs kept in the cache", () => {
  test.each(["sha1", "sha256"] as const)("keeps bytes under their %s id and reads them back", (format) => {
    const cache = makeTemp("kiwi-cache-");
    const id = gitBlobId(bytesOf(lockText), format);
    expect(readGitBlob(cache, id)).toBeUndefined();
    storeGitBlob(cache, id, bytesOf(lockText));
    expect(new TextDecoder().decode(readGitBlob(cache, id))).toBe(lockText);
  });

  test("keeps text as its UTF-8 bytes", () => {
    const cache = makeTemp("kiwi-cache-");
    const text = "é-tool ✓\n";
    const id = gitBlobId(bytesOf(text), "sha1");
    storeGitBlob(cache, id, text);
    expect(new TextDecoder().decode(readGitBlob(cache, id))).toBe(text);
  });

  test.each([
    ["other bytes", gitBlobId(bytesOf("something else"), "sha1")],
    ["git's null id", "0".repeat(40)],
    ["a path", "../../outside"],
    ["an id of neither length", "ab".repeat(10)],
  ])("keeps nothing under %s", (_, id) => {
    const cache = makeTemp("kiwi-cache-");
    storeGitBlob(cache, id, bytesOf(lockText));
    expect(readGitBlob(cache, id)).toBeUndefined();
    expect(existsSync(join(cache, GIT_BLOBS_DIR)) ? readdirSync(join(cache, GIT_BLOBS_DIR)) : []).toEqual([]);
  });

  test.each([
    ["long text", `${"tool ".repeat(20000)}é ✓\n`],
    ["long text with a lone surrogate (its UTF-8 holds U+FFFD)", `${"tool ".repeat(20000)}\ud800\n`],
  ])("keeps %s as the UTF-8 bytes its id was taken of", (_, text) => {
    const cache = makeTemp("kiwi-cache-");
    const id = gitBlobId(Buffer.from(text), "sha1");
    storeGitBlob(cache, id, text);
    expect(Buffer.from(readGitBlob(cache, id)!).equals(Buffer.from(text))).toBe(true);
  });

  test("never keeps text that came from bytes that are not UTF-8 under their id", () => {
    const cache = makeTemp("kiwi-cache-");
    const bytes = new Uint8Array([0x7b, 0xff, 0x7d]);
    const id = gitBlobId(bytes, "sha1");
    storeGitBlob(cache, id, new TextDecoder().decode(bytes));
    expect(readGitBlob(cache, id)).toBeUndefined();
  });

  test.each([
    ["damaged", (text: string) => text.replace('"tools": {}', '"tools": {"x": 1}')],
    ["truncated", (text: string) => text.slice(0, 20)],
    ["emptied", () => ""],
  ])("reads a %s blob as a miss and removes it", (_, damage) => {
    const cache = makeTemp("kiwi-cache-");
    const id = gitBlobId(bytesOf(lockText), "sha1");
    storeGitBlob(cache, id, bytesOf(lockText));
    const path = join(cache, GIT_BLOBS_DIR, id);
    chmodSync(path, 0o644);
    writeFileSync(path, damage(lockText));
    expect(readGitBlob(cache, id)).toBeUndefined();
    expect(existsSync(path)).toBe(false);
    storeGitBlob(cache, id, bytesOf(lockText));
    expect(new TextDecoder().decode(readGitBlob(cache, id))).toBe(lockText);
  });

  test("reads a blob as the text its bytes decode to, vouched for by that text", () => {
    const cache = makeTemp("kiwi-cache-");
    const text = `${lockText}é ✓\n`;
    const id = gitBlobId(bytesOf(text), "sha1");
    expect(readGitBlobText(cache, id)).toBeUndefined();
    storeGitBlob(cache, id, text);
    expect(readGitBlobText(cache, id)).toBe(text);
  });

  test.each([
    ["bytes that are not UTF-8", new Uint8Array([0x7b, 0xff, 0x7d])],
    ["a byte order mark", new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d])],
  ])("reads no text of a blob with %s: its bytes are read instead, and kept", (_, bytes) => {
    const cache = makeTemp("kiwi-cache-");
    const id = gitBlobId(bytes, "sha1");
    storeGitBlob(cache, id, bytes);
    expect(readGitBlobText(cache, id)).toBeUndefined();
    expect(readGitBlob(cache, id)).toEqual(bytes);
  });

  describe("read as it differs from a text, never whole", () => {
    /** ~300 KB of lockfile-like ASCII: several of the reader's 64 KB chunks. */
    const big = Array.from({ length: 3000 }, (_, i) => `    "tool-${String(i).padStart(4, "0")}": { "integrity": "sha256:${sha(i)}" }`).join(",\n");
    function sha(i: number): string {
      return new Bun.CryptoHasher("sha256").update(String(i)).digest("hex");
    }
    const ascii = (text: string) => bytesOf(text);
    const cases: [string, Uint8Array, string][] = [
      ["the same text", ascii(big), big],
      ["one character changed in the middle", ascii(`${big.slice(0, 150000)}x${big.slice(150001)}`), big],
      ["one character changed on a chunk boundary", ascii(`${big.slice(0, 65535)}xy${big.slice(65537)}`), big],
      ["the first character changed", ascii(`x${big.slice(1)}`), big],
      ["the last character changed", ascii(`${big.slice(0, -1)}x`), big],
      ["two changes far apart", ascii(`${big.slice(0, 1000)}x${big.slice(1001, 250000)}y${big.slice(250001)}`), big],
      ["text inserted (HEAD longer)", ascii(`${big.slice(0, 100000)}${"inserted ".repeat(20000)}${big.slice(100000)}`), big],
      ["text removed (HEAD shorter)", ascii(`${big.slice(0, 100000)}${big.slice(170000)}`), big],
      ["HEAD a prefix of the text", ascii(big.slice(0, 200000)), big],
      ["the text a prefix of HEAD", ascii(big), big.slice(0, 200000)],
      ["an empty HEAD", new Uint8Array(0), big],
      ["an empty text", ascii(big), ""],
      ["a repeated run that fits either end", ascii(`${"a".repeat(70000)}`), "a".repeat(140000)],
      ["a byte order mark before the same text", new Uint8Array([0xef, 0xbb, 0xbf, ...ascii(big)]), big],
      ["a byte order mark in the middle", ascii(`${big.slice(0, 90000)}\ufeff${big.slice(90000)}`), big],
      ["UTF-8 in the middle", ascii(`${big.slice(0, 90000)}é ✓${big.slice(90003)}`), big],
      ["bytes that are not UTF-8 in the middle", new Uint8Array([...ascii(big.slice(0, 90000)), 0xff, 0xe2, 0x82, ...ascii(big.slice(90000))]), big],
      ["a cut UTF-8 sequence at the end", new Uint8Array([...ascii(big), 0xe2, 0x82]), big],
    ];
    test.each(cases)("%s: the text git's decoding gives, told by its common ends", (_, head, text) => {
      const cache = makeTemp("kiwi-cache-");
      const id = gitBlobId(head, "sha1");
      storeGitBlob(cache, id, head);
      expect(hasGitBlob(cache, id)).toBe(true);
      const told = readGitBlobBeside(cache, id, text)!;
      expect(told).toBeDefined();
      expect(wholeHeadText(text, told) === new TextDecoder().decode(head)).toBe(true);
      expect(told.same + told.tail).toBeLessThanOrEqual(Math.min(text.length, head.length));
      expect(text.slice(0, told.same) === new TextDecoder().decode(head).slice(0, told.same)).toBe(true);
    });

    test("holds only the stretch that differs", () => {
      const cache = makeTemp("kiwi-cache-");
      const head = ascii(`${big.slice(0, 150000)}x${big.slice(150001)}`);
      const id = gitBlobId(head, "sha256");
      storeGitBlob(cache, id, head);
      expect(readGitBlobBeside(cache, id, big)).toEqual({ same: 150000, tail: big.length - 150001, middle: "x" });
    });

    test.each([
      ["damaged", (bytes: Uint8Array) => new Uint8Array([...bytes.subarray(0, 1000), 0x21, ...bytes.subarray(1001)])],
      ["truncated", (bytes: Uint8Array) => bytes.subarray(0, 100000)],
      ["emptied", () => new Uint8Array(0)],
      ["grown", (bytes: Uint8Array) => new Uint8Array([...bytes, 0x20])],
    ])("reads a %s blob as a miss (the whole read then removes it)", (_, damage) => {
      const cache = makeTemp("kiwi-cache-");
      const head = ascii(big);
      const id = gitBlobId(head, "sha1");
      storeGitBlob(cache, id, head);
      const path = join(cache, GIT_BLOBS_DIR, id);
      chmodSync(path, 0o644);
      writeFileSync(path, damage(head));
      expect(readGitBlobBeside(cache, id, big)).toBeUndefined();
      expect(readGitBlob(cache, id)).toBeUndefined();
      expect(existsSync(path)).toBe(false);
    });

    test.each([
      ["a text that is not ASCII", `${big}é`, gitBlobId(bytesOf(big), "sha1")],
      ["no kept blob", big, gitBlobId(bytesOf("another"), "sha1")],
      ["git's null id", big, "0".repeat(40)],
      ["a path", big, "../../outside"],
    ])("reads nothing beside %s", (_, text, id) => {
      const cache = makeTemp("kiwi-cache-");
      storeGitBlob(cache, gitBlobId(bytesOf(big), "sha1"), bytesOf(big));
      expect(readGitBlobBeside(cache, id, text)).toBeUndefined();
    });
  });

  test("reads the text of a damaged blob as a miss", () => {
    const cache = makeTemp("kiwi-cache-");
    const id = gitBlobId(bytesOf(lockText), "sha1");
    writeFileSync(join(makeDir(cache), id), lockText.replace("1", "2"));
    expect(readGitBlobText(cache, id)).toBeUndefined();
    expect(readGitBlob(cache, id)).toBeUndefined();
    expect(existsSync(join(cache, GIT_BLOBS_DIR, id))).toBe(false);
  });

  test("reads a file planted under another blob's id as a miss", () => {
    const cache = makeTemp("kiwi-cache-");
    const id = gitBlobId(bytesOf("the real HEAD lockfile"), "sha1");
    writeFileSync(join(makeDir(cache), id), lockText);
    expect(readGitBlob(cache, id)).toBeUndefined();
  });

  test("keeps the most recently used blobs and drops the oldest", () => {
    const cache = makeTemp("kiwi-cache-");
    const keep = (text: string) => {
      const id = gitBlobId(bytesOf(text), "sha1");
      storeGitBlob(cache, id, bytesOf(text));
      return id;
    };
    const ids = Array.from({ length: 16 }, (_, i) => {
      const id = keep(`lockfile ${i}\n`);
      // Each blob a minute older than the next: "most recent" needs no sleeping.
      const at = new Date(Date.UTC(2026, 0, 1, 0, i));
      utimesSync(join(cache, GIT_BLOBS_DIR, id), at, at);
      return id;
    });
    // Reading the oldest makes it the newest, so the next two oldest go when two more come.
    expect(readGitBlob(cache, ids[0]!)).toBeDefined();
    const more = [keep("lockfile 16\n"), keep("lockfile 17\n")];
    expect(readdirSync(join(cache, GIT_BLOBS_DIR)).sort()).toEqual([...ids.filter((_, i) => i !== 1 && i !== 2), ...more].sort());
  });
});

function makeDir(cache: string): string {
  const dir = join(cache, GIT_BLOBS_DIR);
  mkdirSync(dir, { recursive: true });
  return dir;
}
