import { describe, expect, test } from "bun:test";
import { HOOK_MARKER, isKiwiHook, parseReplacedHook, quoteSh, renderHookScript } from "../../src/hook/script.ts";

describe("the hook script", () => {
  test("carries the marker on its second line so kiwi recognises its own hook", () => {
    const text = renderHookScript(["/opt/kiwi/bin/kiwi"]);
    expect(text.split("\n").slice(0, 2)).toEqual(["#!/bin/sh", HOOK_MARKER]);
    expect(isKiwiHook(text)).toBe(true);
  });

  test.each([
    ["an empty file", ""],
    ["husky's hook", '#!/usr/bin/env sh\n. "$(dirname -- "$0")/_/husky.sh"\nnpx lint-staged\n'],
    ["a hook that merely mentions kiwi far down", `#!/bin/sh\necho 1\necho 2\necho 3\necho 4\n${HOOK_MARKER}\n`],
    ["a hook that quotes the marker text inside a command", `#!/bin/sh\necho "${HOOK_MARKER}"\n`],
  ])("does not claim %s", (_name, text) => {
    expect(isKiwiHook(text)).toBe(false);
  });

  test("passes the syntax check of sh with awkward paths in the fallback", () => {
    const text = renderHookScript(["/tmp/it's a dir/kiwi", "/tmp/$HOME/`x`/cli.ts"], "pre-commit.pre-kiwi");
    const proc = Bun.spawnSync(["sh", "-n"], { stdin: new TextEncoder().encode(text), stderr: "pipe" });
    expect([proc.exitCode, proc.stderr.toString()]).toEqual([0, ""]);
  });

  test.each([
    ["plain", "abc", "'abc'"],
    ["a single quote", "it's", `'it'\\''s'`],
    ["dollar and backticks stay literal", "$(rm -rf ~)`x`", "'$(rm -rf ~)`x`'"],
  ])("quotes %s for sh", (_name, word, quoted) => {
    expect(quoteSh(word)).toBe(quoted);
  });

  test.each([
    ["a recorded backup name", "pre-commit.pre-kiwi", "pre-commit.pre-kiwi"],
    ["a path that would leave the hooks folder", "../../etc/passwd", undefined],
    ["a parent reference", "..", undefined],
  ])("reads %s back from the hook", (_name, recorded, expected) => {
    const text = renderHookScript(["kiwi"]).replace(`${HOOK_MARKER}\n`, `${HOOK_MARKER}\n# kiwi-replaced: ${recorded}\n`);
    expect(parseReplacedHook(text)).toBe(expected);
  });

  test("names no replaced hook when none was replaced", () => {
    expect(parseReplacedHook(renderHookScript(["kiwi"]))).toBeUndefined();
  });
});
