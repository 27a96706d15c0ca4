import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdFormat, gitBlobId, isBlobOf, isNullBlobId } from "../../src/integrity/git-blob.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { git, gitEnv } from "../hook/git.ts";

afterAll(cleanupTemps);

/** What `git hash-object` says of `bytes` in a repository of `format`. */
function hashObject(bytes: Uint8Array, format: "sha1" | "sha256"): string {
  const repo = makeTemp("kiwi-blob-");
  git(repo, ["init", "-q", `--object-format=${format}`, "."], gitEnv(repo));
  writeFileSync(join(repo, "f"), bytes);
  return git(repo, ["hash-object", "f"], gitEnv(repo)).trim();
}

const samples: [string, Uint8Array][] = [
  ["an empty file", new Uint8Array()],
  ["text", new TextEncoder().encode('{\n  "tools": {}\n}\n')],
  ["bytes that are not UTF-8", new Uint8Array([0xef, 0xbb, 0xbf, 0xff, 0x00, 0x0a])],
];

describe("git blob ids", () => {
  test.each(samples.flatMap(([name, bytes]) => (["sha1", "sha256"] as const).map((f) => [`${name} (${f})`, bytes, f] as const)))("gives git's id for %s", (_, bytes, format) => {
    const id = hashObject(bytes, format);
    expect(gitBlobId(bytes, format)).toBe(id);
    expect(blobIdFormat(id)).toBe(format);
    expect(isBlobOf(bytes, id)).toBe(true);
  });

  test.each([
    ["other bytes", "abc", gitBlobId(new TextEncoder().encode("abd"), "sha1")],
    ["the id in the other format", "abc", gitBlobId(new TextEncoder().encode("abc"), "sha256").slice(0, 40)],
    ["an upper-case id", "abc", gitBlobId(new TextEncoder().encode("abc"), "sha1").toUpperCase()],
    ["a path for an id", "abc", "../../etc/passwd"],
    ["git's null id", "", "0".repeat(40)],
  ])("never takes bytes for %s", (_, text, id) => {
    expect(isBlobOf(new TextEncoder().encode(text), id)).toBe(false);
  });

  test.each([
    ["0".repeat(40), true],
    ["0".repeat(64), true],
    ["0".repeat(39), false],
    ["0".repeat(40).replace(/0$/, "1"), false],
    ["", false],
  ])("takes %s as the null id: %p", (id, expected) => {
    expect(isNullBlobId(id)).toBe(expected);
  });
});
