// One rule for a path inside a tool, at the strictness each caller needs: "written" for what a
// manifest's author wrote (kiwi check and kiwi exec), "locked" for kiwi's canonical form (the lock,
// registry artifacts, the store).
import { describe, expect, test } from "bun:test";
import { toolPathProblem } from "../../src/integrity/tool-path.ts";

describe("toolPathProblem", () => {
  test.each([
    // path, as written, as locked
    ["main.py", undefined, undefined],
    ["lib/helper.py", undefined, undefined],
    ["~notes.txt", "is relative to a home directory", undefined],
    ["./main.py", undefined, "has a . or .. segment"],
    ["lib//helper.py", undefined, "has an empty segment"],
    ["lib\\helper.py", undefined, "contains a backslash"],
    ["lib/../main.py", "contains '..'", "has a . or .. segment"],
    ["..", "contains '..'", "has a . or .. segment"],
    ["lib\\..\\..\\x", "contains '..'", "contains a backslash"],
    ["/etc/passwd", "is absolute", "is absolute"],
    ["\\\\server\\share", "is absolute", "is absolute"],
    ["C:/x", "is absolute", "is absolute"],
    ["a\0b", "contains a NUL byte", "contains a NUL byte"],
  ])("%p: written %p, locked %p", (path, written, locked) => {
    expect([toolPathProblem(path, "written"), toolPathProblem(path, "locked")]).toEqual([written, locked]);
  });
});
