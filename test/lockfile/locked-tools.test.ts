import { describe, expect, test } from "bun:test";
import { lockedToolsOf, lockedToolsOfBlocks } from "../../src/lockfile/locked-tools.ts";
import { renderLockfile } from "../../src/lockfile/render.ts";
import { cutRenderedToolBlocks, splitToolBlocks } from "../../src/lockfile/tool-blocks.ts";
import type { LockedTool } from "../../src/schema/lockfile.ts";
import { entry, file, lockOf } from "./helpers.ts";

const tools: Record<string, LockedTool> = {
  subprocess: entry("subprocess", { tool_id: "subprocess" }, [], { type: "primitive", source: "<builtin>/subprocess.yaml" }),
  zeta: entry("zeta", { tool_id: "zeta" }, [file("z.py", "z"), file("a/b.py", "b", true)], { executor: "subprocess@1.0.0" }),
  "é-tool": entry("é-tool", { tool_id: "é-tool" }, [], { executor: "subprocess@1.0.0" }),
  'we"ird\\id': entry('we"ird\\id', { tool_id: "weird" }, [file('a "quoted" {brace}.py', "q")]),
};
const text = renderLockfile(lockOf(tools));

describe("a lockfile's tool entries, one at a time", () => {
  test.each([
    ["parsed whole", () => lockedToolsOf(JSON.parse(text).tools)],
    ["cut from rendered text", () => lockedToolsOfBlocks(cutRenderedToolBlocks(text)!)],
  ])("gives every id and each entry as JSON.parse of the whole file: %s", (_, view) => {
    const locked = view();
    const whole = JSON.parse(text).tools as Record<string, LockedTool>;
    expect([...locked.ids].sort()).toEqual(Object.keys(whole).sort());
    for (const id of locked.ids) expect(locked.get(id)).toEqual(whole[id]!);
    expect(locked.get("zeta")).toBe(locked.get("zeta")!); // parsed once
  });

  test.each([
    ["parsed whole", () => lockedToolsOf(JSON.parse(text).tools)],
    ["cut from rendered text", () => lockedToolsOfBlocks(cutRenderedToolBlocks(text)!)],
  ])("has no entry for an id it lacks, whatever Object has: %s", (_, view) => {
    const locked = view();
    for (const id of ["missing", "constructor", "__proto__", "toString", "hasOwnProperty"]) expect(locked.get(id)).toBeUndefined();
  });

  test("refuses a block that was never taken as rendered, rather than guess its entry", () => {
    const nested = `{\n  "lockfileVersion": 1,\n  "tools": {\n    "a": {\n      "x": {\n    },\n    "b": {\n      "v": 1\n    },\n    "c": {\n      "w": 1 }\n    }\n  },\n  "mcp_servers": {}\n}\n`;
    const cut = splitToolBlocks(nested)!;
    expect(cut.rendered.size).toBe(0);
    expect(() => lockedToolsOfBlocks(cut).get("b")).toThrow(expect.objectContaining({ code: "E_INTERNAL" }));
  });
});
