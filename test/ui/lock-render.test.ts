// The lock diff for humans: what a staged check shows of a manifest the check may not have passed.
import { describe, expect, test } from "bun:test";
import { renderFileDiff, renderToolSummary } from "../../src/ui/lock-render.ts";

describe("the lock diff", () => {
  test("shows a control character in a version (a manifest the check refuses) visibly, never sends it to the terminal", () => {
    const diff = {
      added: [],
      removed: [],
      changed: [{ id: "w", change: "changed" as const, before: "1.0.0", after: "1.0.1\u001b[2J", fields: [{ field: "version", before: "1.0.0", after: "1.0.1\u001b[2J" }], files: [] }],
    };
    expect(renderFileDiff(diff, { color: false })).toBe("~ w 1.0.0 -> 1.0.1<U+001B>[2J\n    ~ version: 1.0.0 -> 1.0.1<U+001B>[2J\n");
    expect(renderToolSummary(diff, { color: false })).toBe("~ w 1.0.0 -> 1.0.1<U+001B>[2J (integrity)\n");
  });
});
