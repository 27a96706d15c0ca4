import { describe, expect, test } from "bun:test";
import { Float } from "../../src/integrity/value.ts";
import { type ParsedManifest, decodeManifest, parseManifestBytes, parseManifestText } from "../../src/manifest/forms.ts";
import { ParseProblem } from "../../src/integrity/parse-problem.ts";

function parsed(text: string, syntax: Parameters<typeof parseManifestText>[1]): ParsedManifest {
  const result = parseManifestText(text, syntax);
  if (result === "none") throw new Error("expected metadata");
  return result;
}

function problem(fn: () => unknown): ParseProblem {
  try {
    fn();
  } catch (error) {
    if (error instanceof ParseProblem) return error;
    throw error;
  }
  throw new Error("expected a ParseProblem");
}

describe("YAML manifests", () => {
  test("keeps integers, floats and explicit !!float apart", () => {
    const { value } = parsed("i: 1\nf: 1.0\nt: !!float 3\nbig: 12345678901234567890\nhex: 0x1F\n", "yaml");
    expect(value).toEqual({ i: 1, f: new Float(1), t: new Float(3), big: 12345678901234567890n, hex: 31 });
  });

  test("points a JSON pointer at the key's line and column", () => {
    const { locate } = parsed("tool_id: a\nconfig:\n  entrypoint: main.py\n", "yaml");
    expect(locate("/config/entrypoint")).toEqual({ line: 3, column: 3 });
    expect(locate("/config/missing")).toEqual({ line: 2, column: 1 });
  });

  test("says where a text value written over several lines ends, for each way YAML writes one", () => {
    const text = "a: one line\nb: |\n  first\n  second\nc: >-\n  folded\n\n  on\nd:\n  plain\n  lines\ne: \"quoted\n  across\"\nf: [x]\ng: &s |\n  held\n  here\nh: *s\n";
    const { locate } = parsed(text, "yaml");
    expect(locate("/a")).toEqual({ line: 1, column: 1 });
    expect(locate("/b")).toEqual({ line: 2, column: 1, lastLine: 4 });
    expect(locate("/c")).toEqual({ line: 5, column: 1, lastLine: 8 });
    expect(locate("/d")).toEqual({ line: 9, column: 1, lastLine: 11 });
    expect(locate("/e")).toEqual({ line: 12, column: 1, lastLine: 13 });
    expect(locate("/g")).toEqual({ line: 15, column: 1, lastLine: 17 });
    // A collection, a missing field and an alias (its text is the anchor's, at /g) have none.
    expect(locate("/f")).toEqual({ line: 14, column: 1 });
    expect(locate("/b/x")).toEqual({ line: 2, column: 1 });
    expect(locate("/h")).toEqual({ line: 18, column: 1 });
  });

  test.each([
    ["a: 1\na: 2\n", "parse/duplicate-key"],
    // Two keys the yaml library tells apart by type, but which are one key in the manifest's JSON.
    ["1: a\n'1': b\n", "parse/duplicate-key"],
    ["config: { true: a, 'true': b }\n", "parse/duplicate-key"],
    ["a: [1, 2\n", "parse/syntax"],
    ["a: .inf\n", "parse/non-finite"],
    ["a: .nan\n", "parse/non-finite"],
  ])("rejects %p with %s", (text, rule) => {
    expect(problem(() => parseManifestText(text, "yaml")).rule).toBe(rule);
  });

  test.each([
    ["executor: *runtime\n", 1, 11],
    ["args: [-u, *flag]\n", 1, 12],
    ["first: *later\nsecond: &later x\n", 1, 8],
    ["*key : value\n", 1, 1],
  ])("refuses an alias to no anchor before it (%p), which read as null", (text, line, column) => {
    const p = problem(() => parseManifestText(text, "yaml"));
    expect([p.rule, p.message, p.position, p.hint]).toEqual(["parse/syntax", expect.stringMatching(/^invalid YAML: the alias \*\w+ names no anchor before it$/), { line, column }, expect.stringContaining("define the anchor")]);
  });

  test("merges `<<` keys as PyYAML (kiwi_mcp's reader) does: the mapping's own keys win, then earlier sources over later ones", () => {
    const text = "defaults: &defaults\n  method: GET\n  url: https://api.example.com/v1\nslow: &slow { timeout: 60, method: PUT }\nconfig:\n  <<: [*defaults, *slow]\n  method: POST\nquoted: { '<<': kept }\n";
    const { value, locate } = parsed(text, "yaml");
    expect((value as Record<string, unknown>).config).toEqual({ method: "POST", url: "https://api.example.com/v1", timeout: 60 });
    // A quoted "<<" is an ordinary key.
    expect((value as Record<string, unknown>).quoted).toEqual({ "<<": "kept" });
    // A merged value is found where it is written: in the anchored mapping.
    expect(locate("/config/url")).toEqual({ line: 3, column: 3 });
    expect(locate("/config/timeout")).toEqual({ line: 4, column: 15 });
    expect(locate("/config/method")).toEqual({ line: 7, column: 3 });
  });

  test.each([
    ["config:\n  <<: 5\n", "merge key (<<) takes a mapping", 2, 7],
    ["config:\n  <<: [*nowhere]\n", "the alias *nowhere names no anchor", 2, 8],
  ])("refuses a merge key whose value is no mapping (%p)", (text, message, line, column) => {
    const p = problem(() => parseManifestText(text, "yaml"));
    expect([p.rule, p.position]).toEqual(["parse/syntax", { line, column }]);
    expect(p.message).toContain(message);
  });

  test("a second document is named as such at its `---` line, not in the library's words", () => {
    const p = problem(() => parseManifestText("tool_id: a\ntool_type: knowledge\n---\ntool_id: b\n", "yaml"));
    expect([p.rule, p.message, p.position, p.hint]).toEqual([
      "parse/syntax",
      "invalid YAML: a manifest is one YAML document, and another one starts at line 3",
      { line: 3, column: 1 },
      'remove that "---" line and what follows it, or move the second document into a manifest of its own',
    ]);
  });

  test.each(["a: 1\n---\nb: 2\n", "a:\n\tb: 1\n", 'a: "x\n', "a: [1, 2\n", "a: b: c\n", "- a\nb: 1\n", 'a: "\\q"\n', "key: @x\n", "a\nb: 1\n"])("a YAML syntax error says what to do about it: %p", (text) => {
    const p = problem(() => parseManifestText(text, "yaml"));
    expect([p.rule, typeof p.hint, p.message]).toEqual(["parse/syntax", "string", expect.not.stringContaining("YAML.parse")]);
  });

  test("reads a !!timestamp as written, never in the machine's time zone (the tool's hash would follow it)", () => {
    const text = "a: !!timestamp 2001-12-14T21:59:43.10-05:00\nb: !!timestamp 2001-12-14\n";
    const zone = process.env.TZ;
    try {
      const seen = ["America/New_York", "Asia/Tokyo"].map((tz) => {
        process.env.TZ = tz;
        return parsed(text, "yaml").value;
      });
      expect(seen).toEqual([
        { a: "2001-12-14T21:59:43.10-05:00", b: "2001-12-14" },
        { a: "2001-12-14T21:59:43.10-05:00", b: "2001-12-14" },
      ]);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  test("reads an !!omap or !!pairs as the list of one-key mappings it is written as, not a list of nulls", () => {
    const { value, locate } = parsed("a: !!omap\n  - x: 1\n  - y: [2]\nb: !!pairs [{p: 1}, {p: 2}]\n", "yaml");
    expect(value).toEqual({ a: [{ x: 1 }, { y: [2] }], b: [{ p: 1 }, { p: 2 }] });
    expect(locate("/a/1/y")).toEqual({ line: 3, column: 5 });
  });

  test.each([
    ["{a: 1}: c\n", "mapping", 1, 1],
    ["[a, b]: c\n", "list", 1, 1],
    ["config:\n  ? [x, y]\n  : 1\n", "list", 2, 5],
    ["config: { {a: 1}: x, {b: 2}: y }\n", "mapping", 1, 11],
  ])("refuses a list or mapping as a key (%p), which read as \"[object Object]\" (two of them as one)", (text, kind, line, column) => {
    const p = problem(() => parseManifestText(text, "yaml"));
    expect([p.rule, p.message, p.position]).toEqual(["parse/syntax", `invalid YAML: a key must be text, not a ${kind}`, { line, column }]);
  });

  test("refuses an alias bomb instead of expanding it", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) levels.push(`${"abcdefghij"[i]}: &${"abcdefghij"[i]} [${Array(10).fill(`*${"abcdefghij"[i - 1]}`).join(", ")}]`);
    const p = problem(() => parseManifestText(`${levels.join("\n")}\n`, "yaml"));
    expect(p.rule).toBe("parse/alias-bomb");
  });

  test("refuses 10,000 levels of nesting without a stack overflow", () => {
    const p = problem(() => parseManifestText(`${"[".repeat(10_000)}${"]".repeat(10_000)}\n`, "yaml"));
    expect(p.rule).toMatch(/^parse\/(too-deep|syntax)$/);
  });
});

describe("JSON manifests", () => {
  test.each([
    ['{\n  "name": "a",\n}\n', 3, 1],
    ['{\n  "name": "a" // the id\n}\n', 2, 15],
    ["{ name: 'a' }\n", 1, 3],
  ])("a syntax error is at its line and column and says what to do: %p", (text, line, column) => {
    const p = problem(() => parseManifestText(text, "json"));
    expect([p.rule, p.position, p.hint]).toEqual(["parse/syntax", { line, column }, "fix the JSON there: it allows no trailing comma, comment or unquoted key (or write the manifest as YAML)"]);
  });
});

describe("embedded metadata", () => {
  test("reads YAML from a Python script's leading docstring, with script line numbers", () => {
    const text = '#!/usr/bin/env python3\n"""\ntool_id: hello\ntool_type: script\nconfig:\n  x: 1\n"""\nprint("hi")\n';
    const { value, locate } = parsed(text, "python");
    expect(value).toEqual({ tool_id: "hello", tool_type: "script", config: { x: 1 } });
    expect(locate("/config/x")).toEqual({ line: 6, column: 3 });
  });

  test("reads the fenced part of a docstring that also has prose", () => {
    const text = '"""Say hello.\n\n---\ntool_id: hello\ntool_type: script\n---\n"""\n';
    expect(parsed(text, "python").value).toEqual({ tool_id: "hello", tool_type: "script" });
  });

  test.each(['r"""', "R'''", 'u"""', "U'''"])("reads a %s docstring (a raw or unicode one) as a docstring, as Python does", (opening) => {
    const text = `#!/usr/bin/env python3\n${opening}\ntool_id: sq\ntool_type: script\npattern: '\\d+'\n${opening.slice(-3)}\nprint(1)\n`;
    const { value, locate } = parsed(text, "python");
    expect(value).toEqual({ tool_id: "sq", tool_type: "script", pattern: "\\d+" });
    expect(locate("/pattern")).toEqual({ line: 5, column: 1 });
  });

  test.each([
    ["fenced, under prose", '"""Counts words.\n\n    ---\n    tool_id: ind\n    tool_type: script\n    limits: { memory_mb: 4096 }\n    ---\n"""\n', 6],
    ["whole", '"""\n    tool_id: ind\n    tool_type: script\n    limits: { memory_mb: 4096 }\n"""\n', 4],
  ])("an indented docstring manifest (%s) is located at the file's columns, its indentation counted", (_name, text, line) => {
    expect(parsed(text, "python").locate("/limits/memory_mb")).toEqual({ line, column: 15 });
  });

  test.each([
    ['"""Usage:\n    python helper.py --url URL\n"""\nimport sys\n'],
    ['"""helper2.py: shared utilities"""\n'],
    ['"""\nname: looks like YAML\nversion: 2\n"""\n'],
    ['"""Unclosed prose docstring\n'],
  ])("a docstring without tool_type is prose, not a manifest: %p", (text) => {
    expect(parseManifestText(text, "python")).toBe("none");
  });

  test("a docstring that declares tool_type is a manifest, and its YAML errors are reported", () => {
    expect(() => parseManifestText('"""\ntool_type: script\n  bad: [\n"""\n', "python")).toThrow(ParseProblem);
  });

  test.each(["python", "shell", "markdown"] as const)("an empty %s file (an __init__.py) is no tool", (syntax) => {
    expect(parseManifestBytes(new Uint8Array(), syntax)).toBe("none");
  });

  test.each(["yaml", "json"] as const)("an empty %s manifest is still parse/empty", (syntax) => {
    expect(() => parseManifestBytes(new Uint8Array(), syntax)).toThrow(expect.objectContaining({ rule: "parse/empty" }));
  });

  test("reads a shell script's `# ---` block", () => {
    const text = "#!/bin/bash\n# ---\n# tool_id: sh1\n# config:\n#   n: 2\n# ---\necho hi\n";
    const { value, locate } = parsed(text, "shell");
    expect(value).toEqual({ tool_id: "sh1", config: { n: 2 } });
    expect(locate("/config/n")).toEqual({ line: 5, column: 5 });
    // A block scalar inside the block: its last line in the script's terms.
    expect(parsed("#!/bin/bash\n# ---\n# tool_id: sh1\n# description: |\n#   one\n#   two\n# ---\necho hi\n", "shell").locate("/description")).toEqual({ line: 4, column: 3, lastLine: 6 });
  });

  test("a `# ---` block's `#key` lines (no space after #) point at the file's columns, as `# key` lines do", () => {
    const text = "#!/bin/bash\n# ---\n# tool_id: sh1\n#version: abc\n#config:\n#  n: 2\n# description: x\n# ---\necho hi\n";
    const { value, locate } = parsed(text, "shell");
    expect(value).toEqual({ tool_id: "sh1", version: "abc", config: { n: 2 }, description: "x" });
    expect([locate("/tool_id"), locate("/version"), locate("/config"), locate("/config/n"), locate("/description")]).toEqual([
      { line: 3, column: 3 },
      { line: 4, column: 2 },
      { line: 5, column: 2 },
      { line: 6, column: 4 },
      { line: 7, column: 3 },
    ]);
    // A YAML error on such a line is placed the same way.
    expect(problem(() => parsed("# ---\n# tool_id: a\n#k: v: w\n# ---\n", "shell")).position).toEqual({ line: 3, column: 5 });
  });

  test("reads Markdown front matter", () => {
    expect(parsed("---\ntool_id: notes\ntool_type: knowledge\n---\n# Notes\n", "markdown").value).toEqual({ tool_id: "notes", tool_type: "knowledge" });
  });

  test.each([
    ["python", '#!/usr/bin/env python3\n"""\ntool_id: wc\ntool_type: script\nconfig: { entrypoint: wc.py }\ndescription: "counts words"\nexecutor: python_runtime\n"""\nprint(1)\n'],
    ["shell", '#!/usr/bin/env bash\n# ---\n# tool_id: wc\n# tool_type: script\n# config: { entrypoint: wc.sh }\n# description: "counts words"\n# executor: bash_runtime\n# ---\necho 1\n'],
    ["markdown", "---\ntool_id: wc\ntool_type: script\nconfig: { entrypoint: wc.md }\ndescription: \"counts words\"\nexecutor: null\n---\n# Words\n"],
  ] as const)("reads a %s file saved with CRLF line ends as it reads it with LF, values and positions alike", (syntax, lf) => {
    const crlf = parsed(lf.replaceAll("\n", "\r\n"), syntax);
    const plain = parsed(lf, syntax);
    // The block's last value carried the CR ("bash_runtime\r"), and a flow mapping or a quoted
    // string on a line ending in one was a syntax error.
    expect(crlf.value).toEqual(plain.value);
    expect(["/config/entrypoint", "/description", "/executor"].map((p) => crlf.locate(p))).toEqual(["/config/entrypoint", "/description", "/executor"].map((p) => plain.locate(p)));
    expect(crlf.block).toEqual(plain.block);
  });

  test.each([
    ["print('no metadata')\n", "python"],
    ["echo hi\n", "shell"],
    ["# Title\n", "markdown"],
  ] as const)("says a %s file without metadata is not a manifest", (text, syntax) => {
    expect(parseManifestText(text, syntax)).toBe("none");
  });

  test.each([
    ['"""\ntool_id: x\ntool_type: script\n', "python", "the leading docstring is never closed"],
    ["# ---\n# tool_id: x\n", "shell", "the `# ---` metadata block is never closed"],
    ["# ---\n# tool_id: x\necho\n# ---\n", "shell", "interrupted by a non-comment line"],
    ["---\ntool_id: x\n", "markdown", "the front matter is never closed"],
  ] as const)("reports an unclosed or broken block in %p", (text, syntax, message) => {
    expect(problem(() => parseManifestText(text, syntax)).message).toContain(message);
  });
});

describe("every problem a manifest's text has", () => {
  test.each([
    ["a non-finite YAML number", "a: .inf\n", "yaml"],
    ["YAML nested 300 deep", `${"[".repeat(300)}${"]".repeat(300)}\n`, "yaml"],
    ["JSON nested 300 deep", `${"[".repeat(300)}${"]".repeat(300)}`, "json"],
    ["a JSON trailing comma", '{"a": 1,}', "json"],
    ["a docstring never closed", '"""\ntool_id: x\ntool_type: script\n', "python"],
    ["a # --- block never closed", "# ---\n# tool_id: x\n", "shell"],
    ["front matter never closed", "---\ntool_id: x\n", "markdown"],
    ["an unclosed YAML list", "a: [1, 2\n", "yaml"],
  ] as const)("says what to do about it: %s", (_name, text, syntax) => {
    const p = problem(() => parseManifestText(text, syntax));
    expect(p.hint?.length ?? 0).toBeGreaterThan(10);
  });
});

describe("manifest bytes", () => {
  test.each([
    [new Uint8Array(0), "parse/empty"],
    [new Uint8Array([0x61, 0x00, 0x62]), "parse/binary"],
    [new Uint8Array([0x61, 0xff, 0x62]), "parse/encoding"],
    [new Uint8Array(1024 * 1024 + 1).fill(0x61), "parse/too-large"],
  ])("refuses bytes that are not a text manifest (%#: %s)", (bytes, rule) => {
    expect(problem(() => decodeManifest(bytes)).rule).toBe(rule);
  });

  test("decodes UTF-8 text", () => {
    expect(decodeManifest(new TextEncoder().encode("name: café"))).toBe("name: café");
  });
});

describe("the lines a manifest spans in its file (what kiwi check reads as code or body lies outside)", () => {
  const block = (text: string, syntax: Parameters<typeof parseManifestText>[1]) => {
    const parsed = parseManifestText(text, syntax);
    return parsed === "none" ? parsed : parsed.block;
  };
  test("a docstring, a metadata block and front matter with their delimiters; none for a YAML or JSON file, which is all manifest", () => {
    expect(block('#!/usr/bin/env python3\n"""\ntool_id: s\ntool_type: script\n"""\nprint(1)\n', "python")).toEqual({ first: 2, last: 5 });
    expect(block('"""tool_type: script"""\nx = 1\n', "python")).toEqual({ first: 1, last: 1 });
    expect(block("#!/bin/bash\n\n# ---\n# tool_id: g\n# tool_type: script\n# ---\necho hi\n", "shell")).toEqual({ first: 3, last: 6 });
    expect(block("---\nname: x\ndescription: y\n---\n# Body\n", "markdown")).toEqual({ first: 1, last: 4 });
    expect(block("tool_id: a\ntool_type: api\n", "yaml")).toBeUndefined();
    expect(block('{"name": "a"}', "json")).toBeUndefined();
  });
});
