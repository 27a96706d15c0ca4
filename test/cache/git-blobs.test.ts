import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GIT_BLOBS_DIR, readGitBlob, readGitBlobText, storeGitBlob } from "../../src/cache/git-blobs-io.ts";
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
