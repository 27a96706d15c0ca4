import { describe, expect, test } from "bun:test";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import { renderLockfile } from "../../src/lockfile/render.ts";
import { type ToolBlocks, splitToolBlocks } from "../../src/lockfile/tool-blocks.ts";
import { findRenderedBlock, renderedBlockAt, renderedIds, renderedIdsTouchedByAny, renderedTools } from "../../src/lockfile/rendered-tools.ts";
import { touches } from "../../src/lockfile/locked-tools.ts";
import { type HeadText, editedInStretch, editedToolIds, wholeHeadText } from "../../src/lockfile/edited-tools.ts";
import type { LockedTool, Lockfile, McpPin, RemoteTool } from "../../src/schema/lockfile.ts";
import { entry, file, lockOf } from "./helpers.ts";

/**
 * The staged check's editedEntries before blocks (both files JSON.parsed whole), kept verbatim as
 * the definition every answer must match.
 */
function parsedWhole(committed: string, head: string | undefined): string[] | "all" {
  if (head === undefined) return "all";
  let before: Record<string, unknown>;
  try {
    before = (JSON.parse(head) as { tools?: Record<string, unknown> }).tools ?? {};
  } catch {
    return "all";
  }
  const after = (JSON.parse(committed) as { tools?: Record<string, unknown> }).tools ?? {};
  const ids = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...ids].filter((id) => JSON.stringify(before[id]) !== JSON.stringify(after[id])).sort();
}

const zeta = entry("zeta", { tool_id: "zeta" }, [file("z.py", "z"), file("a/b.py", "b", true)], { executor: "python_runtime@1.0.0" });
const tools: Record<string, LockedTool> = {
  subprocess: entry("subprocess", { tool_id: "subprocess" }, [], { type: "primitive", source: "<builtin>/subprocess.yaml" }),
  python_runtime: entry("python_runtime", { tool_id: "python_runtime" }, [], { type: "runtime", executor: "subprocess@1.0.0", source: "<builtin>/python_runtime.yaml" }),
  zeta,
  "é-tool": entry("é-tool", { tool_id: "é-tool" }, [], { executor: "subprocess@1.0.0" }),
  'we"ird\\id': entry('we"ird\\id', { tool_id: "weird" }, [file('a "quoted" {brace}.py', "q")], { executor: "subprocess@1.0.0" }),
  "zw\u200bsp": entry("zw\u200bsp", { tool_id: "zwsp" }, [], { executor: "subprocess@1.0.0" }),
};
const pin = {
  name: "weather",
  interface_hash: formatDigest(sha256Hex("i")),
  full_hash: formatDigest(sha256Hex("f")),
  interface: { tools: [{ name: "forecast", inputSchema: { type: "object", properties: { days: { type: "integer" } } } }] },
  version: "1.2.0",
} as unknown as McpPin;
const remoteDp: RemoteTool = {
  source: `oci://127.0.0.1:5000/team/zeta@sha256:${"a".repeat(64)}`,
  reference: "127.0.0.1:5000/team/zeta:1.0",
  integrity: zeta.integrity,
  manifest_file: "tool.yaml",
  manifest_sha256: sha256Hex("tool_id: zeta\n"),
};

const base: Lockfile = { ...lockOf(tools, { weather: pin }), remote: { zeta: remoteDp } };
const render = (change: (lock: Lockfile) => Lockfile = (l) => l) => renderLockfile(change(structuredClone(base)));
const withTools = (edit: (t: Record<string, LockedTool>) => void) => (lock: Lockfile) => {
  edit(lock.tools);
  return lock;
};
const relocked = render(withTools((t) => (t.zeta = { ...t.zeta!, integrity: formatDigest(sha256Hex("new")), files: [file("z.py", "z2"), file("a/b.py", "b", true)] })));
const canonical = render();

const minify = (text: string) => JSON.stringify(JSON.parse(text));
const fourSpaces = (text: string) => JSON.stringify(JSON.parse(text), null, 4);
const crlf = (text: string) => text.replaceAll("\n", "\r\n");
/** Replaces the first occurrence of `from`, failing the test when it is not there (a stale fixture). */
const swap = (text: string, from: string, to: string) => {
  if (!text.includes(from)) throw new Error(`fixture: ${JSON.stringify(from)} is not in the text`);
  return text.replace(from, to);
};
const zetaOpen = '\n    "zeta": {\n';

/** [name, committed, head, whether both texts are cut into blocks]. */
const cases: [string, string, string | undefined, boolean][] = [
  ["no HEAD copy", canonical, undefined, false],
  ["the same bytes", canonical, canonical, true],
  ["a relocked entry", relocked, canonical, true],
  ["a tool added", render(withTools((t) => (t.added = entry("added", { tool_id: "added" })))), canonical, true],
  ["a tool removed", render(withTools((t) => delete t.zeta)), canonical, true],
  ["every tool removed (an empty tools section)", render(withTools((t) => Object.keys(t).forEach((id) => delete t[id]))), canonical, true],
  ["both sections empty", render(withTools((t) => Object.keys(t).forEach((id) => delete t[id]))), render(withTools((t) => Object.keys(t).forEach((id) => delete t[id]))), true],
  ["only an MCP pin changed", render((l) => ({ ...l, mcp_servers: { weather: { ...pin, version: "1.3.0" } } })), canonical, true],
  ["only the remote record changed", render((l) => ({ ...l, remote: { zeta: { ...remoteDp, reference: "127.0.0.1:5000/team/zeta:2.0" } } })), canonical, true],
  ["the remote section dropped", render((l) => ({ ...l, remote: undefined })), canonical, true],
  ["HEAD hand-edited: spaces inside one entry, same values", canonical, swap(canonical, '"type": "script"', '"type" :  "script"'), true],
  ["HEAD hand-edited: keys of one entry reordered", canonical, swap(canonical, '      "version": "1.0.0",\n      "type": "primitive",', '      "type": "primitive",\n      "version": "1.0.0",'), true],
  ["HEAD hand-edited: a key written twice inside an entry (the last one counts)", canonical, swap(canonical, zetaOpen, `${zetaOpen}      "version": "9.9.9",\n`), true],
  ["HEAD hand-edited: a value changed", canonical, swap(canonical, '"executor": "python_runtime@1.0.0"', '"executor": "subprocess@1.0.0"'), true],
  ["HEAD hand-edited: a number where a string was", canonical, swap(canonical, '"type": "runtime"', '"type": 1.0'), true],
  ["HEAD minified", relocked, minify(canonical), false],
  ["HEAD minified, same values", canonical, minify(canonical), false],
  ["committed minified", minify(relocked), canonical, false],
  ["HEAD with 4-space indent", relocked, fourSpaces(canonical), false],
  ["HEAD with CRLF line ends", relocked, crlf(canonical), false],
  ["both with CRLF line ends", crlf(relocked), crlf(canonical), false],
  ["HEAD with one tool id twice (the last one counts)", canonical, swap(canonical, zetaOpen, `\n    "zeta": {\n      "version": "0.0.1"\n    },${zetaOpen}`), false],
  ["HEAD with a second top-level tools key (the last one counts)", canonical, swap(canonical, '\n  "mcp_servers"', '\n  "tools": {},\n  "mcp_servers"'), false],
  ["HEAD with tools after the MCP pins", canonical, `{\n  "lockfileVersion": 1,\n  "mcp_servers": {},\n  "tools": ${JSON.stringify({ zeta }, null, 2).replaceAll("\n", "\n  ")}\n}\n`, true],
  ["HEAD with tools nested in an MCP pin before its own", canonical, swap(canonical, '\n  "tools": {', '\n  "mcp_servers": {\n  "tools": {\n    "zeta": {\n      "files": []\n    }\n  }},\n  "tools": {'), false],
  ["HEAD with an escaped id that names the same tool", canonical, swap(canonical, '"é-tool": {', '"\\u00e9-tool": {'), true],
  ["HEAD with an escaped id that names another tool", canonical, swap(canonical, '"é-tool": {', '"\\u00e8-tool": {'), true],
  ["HEAD with an id that is not a JSON string", canonical, swap(canonical, '"é-tool": {', '"é\ttool": {'), false],
  ["HEAD not JSON: cut off", canonical, canonical.slice(0, 2000), false],
  ["HEAD not JSON: a stray comma in the header", canonical, swap(canonical, '"lockfileVersion": 1,', '"lockfileVersion": 1,,'), false],
  ["HEAD not JSON: inside one entry", canonical, swap(canonical, '"type": "script"', '"type": script'), true],
  ["HEAD not JSON at all", canonical, "<<<<<<< HEAD\n", false],
  ["HEAD is JSON but no object", canonical, "[]\n", false],
  ["HEAD without a tools key", canonical, '{\n  "lockfileVersion": 1\n}\n', false],
  ["HEAD with a null tools", canonical, '{\n  "lockfileVersion": 1,\n  "tools": null\n}\n', false],
  ["an empty file in HEAD", canonical, "", false],
];

/** A cut as plain arrays, so that two cuts compare by content and order. */
const plain = (cut: ToolBlocks | undefined) => cut && { blocks: [...cut.blocks], rendered: [...cut.rendered].sort() };

/** Text renderLockfile writes for what it parses to: what the lockfile memo vouches for before its text is read in place. */
function isRendered(text: string): boolean {
  try {
    return renderLockfile(JSON.parse(text) as Lockfile) === text;
  } catch {
    return false;
  }
}

/** Lockfile texts whose tools have ids an object lookup answers for: "__proto__" and Object.prototype's names. */
function withIds(ids: [string, string][]): string {
  const blocks = ids.map(([id, body]) => `    ${JSON.stringify(id)}: {\n${body}\n    }`);
  return `{\n  "lockfileVersion": 1,\n  "tools": {\n${blocks.join(",\n")}\n  },\n  "mcp_servers": {}\n}\n`;
}
const ent = (version: string) => `      "version": ${JSON.stringify(version)}`;
const prototypeCases: [string, string, string][] = [
  ["__proto__ as an empty entry, in HEAD only", withIds([["a", ent("1")]]), withIds([["a", ent("1")], ["__proto__", ""]])],
  ["__proto__ as an empty entry, committed only", withIds([["a", ent("1")], ["__proto__", ""]]), withIds([["a", ent("1")]])],
  ["__proto__ as an entry, in HEAD only", withIds([["a", ent("1")]]), withIds([["a", ent("1")], ["__proto__", ent("1")]])],
  ["__proto__ on both sides, changed", withIds([["__proto__", ent("2")]]), withIds([["__proto__", ent("1")]])],
  ["toString in HEAD only", withIds([["a", ent("1")]]), withIds([["toString", ent("1")]])],
  ["constructor committed only, empty", withIds([["constructor", ""]]), withIds([["a", ent("1")]])],
  ["hasOwnProperty on both sides, the same", withIds([["hasOwnProperty", ent("1")]]), withIds([["hasOwnProperty", ent("1")]])],
];

/**
 * Text that is JSON and cuts into blocks, but whose blocks are not whole members: "b" is written
 * at the indent of a tool while it sits inside "a". A block comparison would blame "b"; "a" changed.
 */
const nested = (v: number) =>
  `{\n  "lockfileVersion": 1,\n  "tools": {\n    "a": {\n      "x": {\n    },\n    "b": {\n      "v": ${v}\n    },\n    "c": {\n      "w": 1 }\n    }\n  },\n  "mcp_servers": {}\n}\n`;

describe("edited tool entries between HEAD's lockfile and the committed one", () => {
  test.each(cases)("%s: the same ids as parsing both files whole", (_name, committed, head, cut) => {
    expect(editedToolIds(committed, head)).toEqual(parsedWhole(committed, head));
    // Rendered committed text comes cut by the cheaper cut, to the same answer.
    if (isRendered(committed)) expect(editedToolIds(committed, head, renderedTools(committed))).toEqual(parsedWhole(committed, head));
    if (head === undefined) return;
    expect(splitToolBlocks(committed) !== undefined && splitToolBlocks(head) !== undefined).toBe(cut);
    // The other text's blocks are only a hint: the cut is the same with or without it.
    const like = splitToolBlocks(committed);
    if (like) expect(plain(splitToolBlocks(head, like))).toEqual(plain(splitToolBlocks(head)));
  });

  test("a relock names the relocked tool, and unchanged texts name none", () => {
    expect(editedToolIds(relocked, canonical)).toEqual(["zeta"]);
    expect(editedToolIds(canonical, canonical)).toEqual([]);
    expect(editedToolIds(canonical, undefined)).toBe("all");
    expect(editedToolIds(canonical, "not json")).toBe("all");
  });

  test.each(prototypeCases)("%s: the same ids as parsing both files whole", (_name, committed, head) => {
    expect(splitToolBlocks(committed)).toBeDefined();
    expect(splitToolBlocks(head)).toBeDefined();
    expect(editedToolIds(committed, head)).toEqual(parsedWhole(committed, head));
  });

  test("blocks that are not whole JSON members are never taken as entries", () => {
    expect(splitToolBlocks(nested(1))).toBeDefined();
    expect(JSON.parse(nested(1)).tools.a.b).toEqual({ v: 1 });
    expect(editedToolIds(nested(2), nested(1))).toEqual(parsedWhole(nested(2), nested(1)));
    expect(editedToolIds(nested(2), nested(1))).toEqual(["a"]);
  });

  test("random damage to HEAD's copy (and to the committed one, while it stays JSON) never changes the answer", () => {
    let seed = 14;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = ["{", "}", "[", "]", ",", '"', ":", "\n", " ", "\\", '\n    }', '\n    "zeta": {\n', ',\n', "null", '"tools": '];
    const damage = (text: string) => {
      const at = next(text.length + 1);
      switch (next(4)) {
        case 0:
          return text.slice(0, at) + text.slice(at + 1 + next(20));
        case 1:
          return text.slice(0, at) + pieces[next(pieces.length)]! + text.slice(at);
        case 2: {
          const lines = text.split("\n");
          const i = next(lines.length);
          lines.splice(next(lines.length), 0, lines[i]!);
          return lines.join("\n");
        }
        default: {
          const lines = text.split("\n");
          const [i, j] = [next(lines.length), next(lines.length)];
          [lines[i], lines[j]] = [lines[j]!, lines[i]!];
          return lines.join("\n");
        }
      }
    };
    const isJson = (text: string) => {
      try {
        JSON.parse(text);
        return true;
      } catch {
        return false;
      }
    };
    let cutBoth = 0;
    for (let i = 0; i < 3000; i++) {
      let head = canonical;
      for (let k = next(3); k >= 0; k--) head = damage(head);
      let committed = next(2) === 0 ? relocked : canonical;
      if (next(4) === 0) {
        const damaged = damage(committed);
        if (isJson(damaged)) committed = damaged;
      }
      const like = splitToolBlocks(committed);
      const cut = splitToolBlocks(head, like);
      if (JSON.stringify(plain(cut)) !== JSON.stringify(plain(splitToolBlocks(head)))) expect({ head, cut: plain(cut) }).toEqual({ head, cut: plain(splitToolBlocks(head)) });
      if (like && cut) cutBoth++;
      const want = parsedWhole(committed, head);
      const got = editedToolIds(committed, head);
      if (JSON.stringify(got) !== JSON.stringify(want)) expect({ committed, head, got }).toEqual({ committed, head, got: want });
      if (isRendered(committed)) {
        const fromCut = editedToolIds(committed, head, renderedTools(committed));
        if (JSON.stringify(fromCut) !== JSON.stringify(want)) expect({ committed, head, fromCut }).toEqual({ committed, head, fromCut: want });
      }
    }
    // The comparison by blocks ran, not only the fallback.
    expect(cutBoth).toBeGreaterThan(1000);
  });
});

describe("cutting the tools section into blocks", () => {
  test("gives one block per tool of a rendered lockfile, each the entry as rendered", () => {
    const { blocks, rendered } = splitToolBlocks(canonical)!;
    expect([...blocks.keys()].sort()).toEqual(Object.keys(tools).sort());
    for (const [id, block] of blocks) expect(JSON.parse(`{${block}}`)).toEqual({ [id]: JSON.parse(canonical).tools[id] });
    expect([...rendered].sort()).toEqual(Object.keys(tools).sort());
  });

  test("leaves out the remote records and MCP pins, which are written at the same indent", () => {
    expect(canonical).toContain('"remote": {\n    "zeta": {\n');
    expect(canonical).toContain('"mcp_servers": {\n    "weather": {\n');
    const { blocks } = splitToolBlocks(canonical)!;
    expect(blocks.get("zeta")).toContain('"integrity"');
    expect(blocks.get("zeta")).not.toContain('"reference"');
    expect(blocks.has("weather")).toBe(false);
  });

  test.each([
    ["minified", minify(canonical)],
    ["4-space indent", fourSpaces(canonical)],
    ["CRLF line ends", crlf(canonical)],
    ["an id twice", swap(canonical, zetaOpen, `${zetaOpen}      "files": []\n    },${zetaOpen}`)],
    ["text after the last block", swap(canonical, '\n    }\n  },\n  "remote"', '\n    }, \n  },\n  "remote"')],
    ["a later tools key", swap(canonical, '\n  "mcp_servers"', '\n  "tools": {},\n  "mcp_servers"')],
    ["a broken header", swap(canonical, '"lockfileVersion": 1', '"lockfileVersion": ')],
  ])("refuses text with %s", (_name, text) => {
    expect(splitToolBlocks(text)).toBeUndefined();
  });

  test.each([
    ["a space before a colon", '"type": "script"', '"type" : "script"'],
    ["keys out of order", '      "version": "1.0.0",\n      "type": "script",', '      "type": "script",\n      "version": "1.0.0",'],
    ["two files on one line", '"is_executable": true },\n        {', '"is_executable": true }, {'],
    ["a number for a string", '"type": "script"', '"type": 1'],
    ["an unbalanced brace", '"type": "script"', '"type": {'],
  ])("takes a block as rendered only in the exact rendered shape: not with %s", (_name, from, to) => {
    const zetaOnly = render(withTools((t) => Object.keys(t).forEach((id) => id !== "zeta" && delete t[id])));
    expect(splitToolBlocks(zetaOnly)!.rendered.has("zeta")).toBe(true);
    expect(splitToolBlocks(swap(zetaOnly, from, to))?.rendered.has("zeta") ?? false).toBe(false);
  });

  test("takes no block of text that is not in the rendered shape as rendered", () => {
    expect(splitToolBlocks(nested(1))!.rendered.size).toBe(0);
    expect(splitToolBlocks(swap(canonical, '"a/b.py"', '"a\tb.py"'))?.rendered.has("zeta") ?? false).toBe(false);
  });
});

describe("reading text kiwi rendered in place", () => {
  const rendered = [...new Set([...cases.map(([, committed]) => committed), ...cases.map(([, , head]) => head ?? canonical), ...prototypeCases.flatMap(([, a, b]) => [a, b])])].filter(isRendered);

  test("the cases hold rendered texts of every kind: escaped ids, an empty section, remote records, pins", () => {
    expect(rendered.length).toBeGreaterThan(8);
    expect(rendered.some((t) => t.includes('"tools": {}'))).toBe(true);
  });

  test.each(rendered.map((t, i) => [i, t] as const))("finds in rendered text %# the blocks splitToolBlocks cuts, by id and by source", (_, text) => {
    const view = renderedTools(text)!;
    const cut = splitToolBlocks(text)!;
    expect(renderedIds(view)).toEqual([...cut.blocks.keys()]);
    for (const [id, block] of cut.blocks) expect(renderedBlockAt(view, findRenderedBlock(view, id))).toEqual({ id, block });
    const tools = JSON.parse(text).tools as Record<string, { source: string }>;
    for (const { source } of Object.values(tools)) expect(renderedIdsTouchedByAny(view, [source]).sort()).toEqual(Object.keys(tools).filter((id) => touches(source, tools[id]!.source)).sort());
    // Remote records and MCP pins sit at the same indent after the tools: never found as tools.
    for (const id of ["weather", "nope", "constructor", "__proto__"]) if (!Object.hasOwn(tools, id)) expect(findRenderedBlock(view, id)).toBe(-1);
  });

  test.each([
    ["minified", minify(canonical)],
    ["4-space indent", fourSpaces(canonical)],
    ["CRLF line ends", crlf(canonical)],
  ])("finds no tools section in text with %s (the caller then parses it)", (_name, text) => {
    expect(renderedTools(text)).toBeUndefined();
  });
});

describe("edited entries found in the one stretch where HEAD's text differs", () => {
  /** A lockfile of `count` tools, each with an entry point, as kiwi renders it. */
  const many = (count: number, change: (id: string, t: LockedTool) => LockedTool | undefined = (_, t) => t) => {
    const out: Record<string, LockedTool> = {};
    for (let i = 0; i < count; i++) {
      const id = `tool-${String(i).padStart(4, "0")}`;
      const t = change(id, entry(id, { tool_id: id }, [file("main.py", id)], { executor: "python_runtime@1.0.0" }));
      if (t) out[id] = t;
    }
    return renderLockfile(lockOf(out));
  };
  const relock = (t: LockedTool, v: string) => ({ ...t, integrity: formatDigest(sha256Hex(v)), files: [file("main.py", v)] });
  /** many(count) with one more tool, `id`. */
  const withTool = (count: number, id: string) => renderLockfile(lockOf({ ...(JSON.parse(many(count)).tools as Record<string, LockedTool>), [id]: entry(id, { tool_id: id }, [file("main.py", id)]) }));

  test.each<[string, string, string, string[]]>([
    ["one entry relocked in the middle", many(300, (id, t) => (id === "tool-0150" ? relock(t, "new") : t)), many(300), ["tool-0150"]],
    ["the first entry relocked", many(300, (id, t) => (id === "tool-0000" ? relock(t, "new") : t)), many(300), ["tool-0000"]],
    ["the last entry relocked", many(300, (id, t) => (id === "tool-0299" ? relock(t, "new") : t)), many(300), ["tool-0299"]],
    ["two entries far apart", many(300, (id, t) => (id === "tool-0010" || id === "tool-0290" ? relock(t, id) : t)), many(300), ["tool-0010", "tool-0290"]],
    ["an entry whose new text differs only in its last characters", many(50, (id, t) => (id === "tool-0020" ? { ...t, files: [{ ...t.files[0]!, is_executable: true }] } : t)), many(50), ["tool-0020"]],
    ["a tool added in the middle", withTool(50, "tool-0020x"), many(50), ["tool-0020x"]],
    ["a tool added before the first", withTool(50, "a-first"), many(50), ["a-first"]],
    ["a tool removed from the middle", many(50, (id, t) => (id === "tool-0020" ? undefined : t)), many(50), ["tool-0020"]],
    ["the first tool removed", many(50, (id, t) => (id === "tool-0000" ? undefined : t)), many(50), ["tool-0000"]],
    ["HEAD's entry hand-spaced, the same values", many(50), swap(many(50), '"tool-0020": {\n      "version": "1.0.0"', '"tool-0020": {\n      "version" :  "1.0.0"'), []],
    ["HEAD's entry hand-edited to another value", many(50), swap(many(50), '"tool-0020": {\n      "version": "1.0.0"', '"tool-0020": {\n      "version": "1.0.1"'), ["tool-0020"]],
  ])("%s", (_, committed, head, edited) => {
    const cut = renderedTools(committed)!;
    expect(editedInStretch(committed, cut, head)).toEqual(edited);
    expect(editedToolIds(committed, head, cut)).toEqual(parsedWhole(committed, head));
  });

  test.each<[string, string, string]>([
    ["a tool added at the end", many(51), many(50)],
    ["a tool removed from the middle", many(50, (id, t) => (id === "tool-0020" ? undefined : t)), many(50)],
    ["an MCP pin changed after the tools", many(20), many(20).replace('"mcp_servers": {}', '"mcp_servers": {"x": 1}')],
    ["HEAD with a second member of an id kept before the stretch (the later one counts)", many(20), swap(many(20), '"tool-0010": {', '"tool-0002": {')],
    ["HEAD with a second member of an id kept after the stretch (the later one counts)", many(20), swap(many(20), '"tool-0010": {', '"tool-0015": {')],
    ["HEAD's separator before the stretch broken (not JSON)", many(50, (id, t) => (id === "tool-0020" ? relock(t, "new") : t)), swap(many(50), '\n    },\n    "tool-0020"', '\n    }\n\n    "tool-0020"')],
    ["HEAD's separator after the stretch broken (not JSON)", many(50, (id, t) => (id === "tool-0020" ? relock(t, "new") : t)), swap(many(50), '\n    },\n    "tool-0021"', '\n    }\n\n    "tool-0021"')],
    ["HEAD's block in the stretch not one whole member", many(20), swap(many(20), '"tool-0010": {\n      "version": "1.0.0",', '"tool-0010": {\n      "version": {\n    },\n    "x": {\n      "v": 1,')],
  ])("leaves %s to the whole cut, to the same answer", (_, committed, head) => {
    const cut = renderedTools(committed)!;
    const quick = editedInStretch(committed, cut, head);
    if (quick !== undefined) expect(quick).toEqual(parsedWhole(committed, head) as string[]);
    expect(editedToolIds(committed, head, cut)).toEqual(parsedWhole(committed, head));
  });

  /**
   * Seeded (committed, HEAD) pairs: a few entries relocked, removed or one tool added, and one time
   * in three a hand edit somewhere in HEAD (a character changed, added or removed, from `pieces`).
   * `next` is the same stream, for a test's own choices between pairs.
   */
  function randomPairs(seed: number, rounds: number, tools: number, pieces: readonly string[]) {
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    function* pairs() {
      for (let i = 0; i < rounds; i++) {
        const count = 1 + next(tools);
        const touched = new Set(Array.from({ length: 1 + next(3) }, () => `tool-${String(next(count)).padStart(4, "0")}`));
        const kind = next(5);
        const committed = many(count, (id, t) => (!touched.has(id) ? t : kind === 0 ? undefined : relock(t, `${id}-${i}`)));
        let head = many(count + (kind === 1 ? 1 : 0));
        if (next(3) === 0) {
          const at = next(head.length);
          head = head.slice(0, at) + pieces[next(pieces.length)]! + head.slice(at + next(2));
        }
        yield { committed, head };
      }
    }
    return { next, pairs: pairs() };
  }

  test("random relocks and hand edits of HEAD's copy give the ids parsing both files whole gives", () => {
    let quick = 0;
    for (const { committed, head } of randomPairs(7, 1500, 40, ["", " ", "1", '"', "}", ",", "\n"]).pairs) {
      const cut = renderedTools(committed)!;
      const want = parsedWhole(committed, head);
      const stretch = editedInStretch(committed, cut, head);
      if (stretch !== undefined) {
        quick++;
        if (JSON.stringify(stretch) !== JSON.stringify(want)) expect({ committed, head, stretch }).toEqual({ committed, head, stretch: want as string[] });
      }
      const got = editedToolIds(committed, head, cut);
      if (JSON.stringify(got) !== JSON.stringify(want)) expect({ committed, head, got }).toEqual({ committed, head, got: want });
    }
    // The stretch answered most of them, not only the fallback.
    expect(quick).toBeGreaterThan(700);
  });

  test("HEAD told as it differs from the committed text gives what its whole text gives, however much of the common ends is told", () => {
    const { next, pairs } = randomPairs(11, 600, 30, ["", " ", "1", '"', "}", ",", "\n", "é"]);
    for (const { committed, head } of pairs) {
      // The common ends, measured whole, then told shorter (as a reader that stops early would).
      const max = Math.min(committed.length, head.length);
      let same = 0;
      while (same < max && committed[same] === head[same]) same++;
      let tail = 0;
      while (tail < max - same && committed[committed.length - 1 - tail] === head[head.length - 1 - tail]) tail++;
      const cut = renderedTools(committed)!;
      const want = parsedWhole(committed, head);
      for (const [s, t] of [[same, tail], [same - next(same + 1), tail], [same, tail - next(tail + 1)], [0, 0]] as const) {
        const told: HeadText = { same: s, tail: t, middle: head.slice(s, head.length - t) };
        expect(wholeHeadText(committed, told)).toBe(head);
        const stretch = editedInStretch(committed, cut, told);
        if (s === same && t === tail) expect(stretch).toEqual(editedInStretch(committed, cut, head));
        if (stretch !== undefined && JSON.stringify(stretch) !== JSON.stringify(want)) expect({ committed, head, s, t, stretch }).toEqual({ committed, head, s, t, stretch: want as string[] });
        const got = editedToolIds(committed, told, cut);
        if (JSON.stringify(got) !== JSON.stringify(want)) expect({ committed, head, s, t, got }).toEqual({ committed, head, s, t, got: want });
      }
    }
  });
});
