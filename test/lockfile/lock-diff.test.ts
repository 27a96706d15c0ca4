import { describe, expect, test } from "bun:test";
import { diffFiles, diffLockfiles, isEmptyDiff, summarizeDiff } from "../../src/lockfile/lock-diff.ts";
import { entry, file, lockOf } from "./helpers.ts";

const base = lockOf({
  a: entry("a", { tool_id: "a" }, [file("main.py", "1"), file("keep.py", "k")]),
  gone: entry("gone", { tool_id: "gone" }),
});

describe("diffing lockfiles", () => {
  test("no lockfile yet: every tool is added", () => {
    const diff = diffLockfiles(undefined, base);
    expect(diff.added.map((c) => c.id)).toEqual(["a", "gone"]);
    expect(diff.removed).toEqual([]);
  });

  test.each(["constructor", "__proto__", "hasOwnProperty"])("a tool named %s on one side is added or removed, never compared with Object's own", (id) => {
    const one = lockOf({ ...base.tools, [id]: entry(id, { tool_id: id }) });
    expect(diffLockfiles(base, one)).toMatchObject({ added: [{ id, kind: "added" }], removed: [], changed: [] });
    expect(diffLockfiles(one, base)).toMatchObject({ added: [], removed: [{ id, kind: "removed" }], changed: [] });
  });

  test("the same lockfile: nothing changed", () => {
    expect(isEmptyDiff(diffLockfiles(base, structuredClone(base)))).toBe(true);
  });

  test("reports added, removed and changed tools with per-file changes", () => {
    const next = lockOf({
      a: entry("a", { tool_id: "a", x: 1 }, [file("main.py", "2"), file("keep.py", "k", true), file("new.py", "n")], { version: "1.1.0" }),
      fresh: entry("fresh", { tool_id: "fresh" }),
    });
    const diff = diffLockfiles(base, next);
    expect(diff.added.map((c) => c.id)).toEqual(["fresh"]);
    expect(diff.removed.map((c) => c.id)).toEqual(["gone"]);
    expect(diff.changed.map((c) => c.id)).toEqual(["a"]);
    const a = diff.changed[0]!;
    expect(a.fields).toEqual(["version", "manifest_digest"]);
    expect(a.files.map((f) => [f.path, f.kind])).toEqual([
      ["keep.py", "mode"],
      ["main.py", "changed"],
      ["new.py", "added"],
    ]);
    const summary = summarizeDiff(diff).changed[0]!;
    expect(summary).toMatchObject({ id: "a", change: "changed", before: "1.0.0", after: "1.1.0" });
    expect(summary.fields.map((f) => f.field)).toEqual(["version", "manifest"]);
    expect(summary.files[0]).toEqual({ path: "keep.py", change: "mode", before: file("keep.py", "k").sha256, after: file("keep.py", "k").sha256, executable: true });
  });

  test("a summary for people leaves out the file lists of added and removed tools, never a changed tool's", () => {
    const now = lockOf({ a: entry("a", { tool_id: "a", v: 2 }, [file("main.py", "2"), file("keep.py", "k")]), fresh: entry("fresh", { tool_id: "fresh" }, [file("x.py", "x")]) });
    const diff = diffLockfiles(base, now);
    const full = summarizeDiff(diff);
    const brief = summarizeDiff(diff, { addedFiles: false });
    expect(full.added[0]!.files.map((f) => f.path)).toEqual(["x.py"]);
    expect([brief.added[0]!.files, brief.removed[0]!.files]).toEqual([[], []]);
    expect(brief.changed[0]!.files.map((f) => f.path)).toEqual(["main.py"]);
    // Everything else is the full summary's.
    const withoutFiles = (s: typeof full) => ({ ...s, added: s.added.map(({ files: _, ...rest }) => rest), removed: s.removed.map(({ files: _, ...rest }) => rest) });
    expect(withoutFiles(brief)).toEqual(withoutFiles(full));
  });

  test.each([
    ["a removed file", [file("x", "1")], [], [["x", "removed"]]],
    ["an added file", [], [file("x", "1")], [["x", "added"]]],
    ["changed bytes", [file("x", "1")], [file("x", "2")], [["x", "changed"]]],
    ["a flipped executable bit", [file("x", "1")], [file("x", "1", true)], [["x", "mode"]]],
    ["nothing", [file("x", "1")], [file("x", "1")], []],
  ])("file diff of %s", (_what, before, after, expected) => {
    expect(diffFiles(before, after).map((f) => [f.path, f.kind])).toEqual(expected as [string, string][]);
  });
});
