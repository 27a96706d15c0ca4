// The lock diff for humans: what a staged check shows of a manifest the check may not have passed.
import { describe, expect, test } from "bun:test";
import { renderFileDiff, renderResolution, renderToolSummary } from "../../src/ui/lock-render.ts";

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

describe("where a lock's packages came from", () => {
  test("names the packages, their origins and the setting that chose them", () => {
    expect(renderResolution({ tools: ["pad"], ecosystem: "npm", packages: 2, sources: ["https://registry.npmjs.org"], setting: "npm_config_registry" })).toBe("resolved pad: 2 npm packages from https://registry.npmjs.org (npm_config_registry)");
  });

  test("says no package is to be installed, not that none came from nowhere, when markers leave out every requirement", () => {
    expect(renderResolution({ tools: ["g"], ecosystem: "pypi", packages: 0, sources: [], setting: "pip's default index" })).toBe("resolved g: no Python packages to install (the requirements' environment markers exclude every one on this machine)");
  });
});
