// Reading the project's ignore file as discovery reads a manifest: absent is no file at all; only a
// regular UTF-8 file of at most 1 MiB is text; anything else says why (validate/ reports it).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { readIgnoreFileText } from "../../src/manifest/ignore-file-io.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("reading .ai/kiwi-ignore.yaml", () => {
  test("a project without one has none; discovery carries one that is there", () => {
    const root = makeProject({ ".ai/tools/t.yaml": "tool_id: t\n" });
    expect(readIgnoreFileText(root)).toBeUndefined();
    expect(readProject(root).ignoreFile).toBeUndefined();
    writeFileSync(join(root, ".ai/kiwi-ignore.yaml"), "ignore: []\n");
    const read = readIgnoreFileText(root)!;
    expect([read.text, read.unreadable, read.digest]).toEqual(["ignore: []\n", undefined, sha256Hex("ignore: []\n")]);
    expect(read.stat[0]).toBe(11);
    expect(readProject(root).ignoreFile).toEqual(read);
  });

  test.each([
    ["a symbolic link", (file: string) => symlinkSync(`${file}.real`, file), "is a symbolic link: kiwi reads the ignore file only as a regular file"],
    ["a folder", (file: string) => mkdirSync(file), "is not a regular file"],
    ["larger than 1 MiB", (file: string) => writeFileSync(file, `# ${"x".repeat(1024 * 1024)}\n`), "is 1048579 bytes: it is capped at 1048576 bytes"],
    ["binary", (file: string) => writeFileSync(file, "ignore: []\n\0"), "contains NUL bytes: it must be UTF-8 text"],
  ])("%s is not read, and says why", (_name, make, why) => {
    const root = makeProject({ ".ai/tools/t.yaml": "tool_id: t\n", ".ai/kiwi-ignore.yaml.real": "ignore: []\n" });
    make(join(root, ".ai/kiwi-ignore.yaml"));
    const read = readIgnoreFileText(root)!;
    expect([read.text, read.unreadable]).toEqual([undefined, why]);
  });
});
