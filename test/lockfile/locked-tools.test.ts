import { describe, expect, test } from "bun:test";
import { lockedToolsOf, lockedToolsOfRendered, touches } from "../../src/lockfile/locked-tools.ts";
import { renderLockfile } from "../../src/lockfile/render.ts";
import { renderedTools } from "../../src/lockfile/rendered-tools.ts";
import type { LockedTool } from "../../src/schema/lockfile.ts";
import { entry, file, lockOf } from "./helpers.ts";

const tools: Record<string, LockedTool> = {
  subprocess: entry("subprocess", { tool_id: "subprocess" }, [], { type: "primitive", source: "<builtin>/subprocess.yaml" }),
  zeta: entry("zeta", { tool_id: "zeta" }, [file("z.py", "z"), file("a/b.py", "b", true)], { executor: "subprocess@1.0.0" }),
  twin: entry("twin", { tool_id: "twin" }, [], { source: ".ai/tools/zeta/tool.yaml" }),
  "é-tool": entry("é-tool", { tool_id: "é-tool" }, [], { executor: "subprocess@1.0.0", source: ".ai/tools/é \"odd\"/tool.yaml" }),
  'we"ird\\id': entry('we"ird\\id', { tool_id: "weird" }, [file('a "quoted" {brace}.py', "q")]),
};
const text = renderLockfile(lockOf(tools));
const views: [string, () => ReturnType<typeof lockedToolsOf>][] = [
  ["parsed whole", () => lockedToolsOf(JSON.parse(text).tools)],
  ["read in place from rendered text", () => lockedToolsOfRendered(renderedTools(text)!)],
];

describe("a lockfile's tool entries, one at a time", () => {
  test.each(views)("gives every id, each entry and the ids of each source as JSON.parse of the whole file: %s", (_, view) => {
    const locked = view();
    const whole = JSON.parse(text).tools as Record<string, LockedTool>;
    expect([...locked.ids()].sort()).toEqual(Object.keys(whole).sort());
    for (const id of locked.ids()) expect(locked.get(id)).toEqual(whole[id]!);
    expect(locked.get("zeta")).toBe(locked.get("zeta")!); // parsed once
    expect([...locked.touchedByAny([".ai/tools/zeta/tool.yaml"])].sort()).toEqual(["twin", "zeta"]);
    expect([...locked.touchedByAny([".ai/tools/zeta/a/b.py"])].sort()).toEqual(["twin", "zeta"]);
    expect(locked.touchedByAny([".ai/tools/none.yaml"])).toEqual([]);
  });

  test.each(views)("has no entry for an id it lacks, whatever Object has: %s", (_, view) => {
    const locked = view();
    for (const id of ["missing", "constructor", "__proto__", "toString", "hasOwnProperty"]) expect(locked.get(id)).toBeUndefined();
  });

  test.each(views)("names the entries each path touches, as the rule over every entry does: %s", (_, view) => {
    const sources = [".ai/tools/a.sh", ".ai/tools/d/tool.yaml", ".ai/tools/d/tool.yml", ".ai/tools/d/tool.json", ".ai/tools/d/e/tool.yaml", ".ai/tools/d/tool.yaml.bak", ".ai/tools/d/mytool.yaml", ".ai/tools/é \"q\"/tool.yaml", "tool.yaml", "/tool.json", ".ai/tools/d/x.yaml#srv", "<builtin>/subprocess.yaml"];
    const many = Object.fromEntries(sources.map((source, i) => [`t${i}`, entry(`t${i}`, { tool_id: `t${i}` }, [], { source })]));
    const locked = view === views[0]![1] ? lockedToolsOf(many) : lockedToolsOfRendered(renderedTools(renderLockfile(lockOf(many)))!);
    const paths = [...sources, ".ai/tools/d/run.py", ".ai/tools/d/e/f/g.txt", ".ai/tools/d", ".ai/tools/dd/tool.yaml", ".ai/tools/é \"q\"/x", "/abs/file", ".ai/tools/d/x.yaml", "x/tool.yaml/y"];
    for (const path of paths) expect({ path, ids: [...locked.touchedByAny([path])].sort() }).toEqual({ path, ids: Object.keys(many).filter((id) => touches(path, many[id]!.source)).sort() });
  });

  test.each(views)("tells apart sources of the same length: %s", (_, view) => {
    const sources = [".ai/tools/d/tool.yaml", ".ai/tools/e/tool.yaml", ".ai/tools/d/tool.json", ".ai/tools/dd/tool.yml", ".ai/tools/d/a.sh", ".ai/tools/e/a.sh"];
    const many = Object.fromEntries(sources.map((source, i) => [`t${i}`, entry(`t${i}`, { tool_id: `t${i}` }, [], { source })]));
    const locked = view === views[0]![1] ? lockedToolsOf(many) : lockedToolsOfRendered(renderedTools(renderLockfile(lockOf(many)))!);
    expect([...locked.touchedByAny([".ai/tools/e/x.py"])].sort()).toEqual(["t1"]);
    expect([...locked.touchedByAny([".ai/tools/d/a.sh"])].sort()).toEqual(["t0", "t2", "t4"]);
    expect([...locked.touchedByAny([".ai/tools/e/a.sh", ".ai/tools/dd/z"])].sort()).toEqual(["t1", "t3", "t5"]);
    expect(locked.touchedByAny([".ai/tools/f/a.sh"])).toEqual([]);
  });

  test.each(views)("names the entries any of several paths touches, each once, as the rule over every entry does: %s", (_, view) => {
    const sources = [".ai/tools/a.sh", ".ai/tools/d/tool.yaml", ".ai/tools/d/e/tool.json", ".ai/tools/d/e/tool.yml", ".ai/tools/é \"q\"/tool.yaml", "tool.yaml", "/tool.json", ".ai/tools/d/x.yaml#srv"];
    const many = Object.fromEntries(sources.map((source, i) => [`t${i}`, entry(`t${i}`, { tool_id: `t${i}` }, [], { source })]));
    const locked = view === views[0]![1] ? lockedToolsOf(many) : lockedToolsOfRendered(renderedTools(renderLockfile(lockOf(many)))!);
    const sets = [[], ["tool.lock.json"], [".ai/tools/d/e/f.py", ".ai/tools/d/run.py"], [".ai/tools/a.sh", ".ai/tools/a.sh", "/abs/file"], [".ai/tools/é \"q\"/x", "x/tool.yaml/y", ".ai/tools/d/x.yaml"], sources];
    for (const paths of sets) {
      const ids = [...locked.touchedByAny(paths)];
      expect({ paths, ids: ids.sort() }).toEqual({ paths, ids: Object.keys(many).filter((id) => paths.some((path) => touches(path, many[id]!.source))).sort() });
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  test("refuses, rather than guess, an entry of text that was never kiwi's rendering", () => {
    const nested = `{\n  "lockfileVersion": 1,\n  "tools": {\n    "a": {\n      "x": {\n    },\n    "b": {\n      "v": 1\n    },\n    "c": {\n      "w": 1 }\n    }\n  },\n  "mcp_servers": {}\n}\n`;
    expect(() => lockedToolsOfRendered(renderedTools(nested)!).get("a")).toThrow(expect.objectContaining({ code: "E_INTERNAL" }));
  });
});
