// `# kiwi-ignore:` comments as the parsers read them: which line each covers, what it names, and
// where it sits in its file for every manifest form that has comments.
import { describe, expect, test } from "bun:test";
import { textIgnoreDirectives, yamlIgnoreDirectives } from "../../src/manifest/ignore-comments.ts";
import { type ParsedManifest, parseManifestText } from "../../src/manifest/forms.ts";

function parsed(text: string, syntax: Parameters<typeof parseManifestText>[1]): ParsedManifest {
  const result = parseManifestText(text, syntax);
  if (result === "none") throw new Error("expected metadata");
  return result;
}

describe("reading a comment", () => {
  test("after a value it covers its own line; alone on a line, the next one", () => {
    const text = "a: 1  # kiwi-ignore: security/secret-value\n  # kiwi-ignore: security/secret-literal\nb: 2\n";
    expect(yamlIgnoreDirectives(text)).toEqual([
      { line: 1, column: 7, target: 1, rules: ["security/secret-value"], invalid: [] },
      { line: 2, column: 3, target: 3, rules: ["security/secret-literal"], invalid: [] },
    ]);
  });

  test("names several rules, by commas or spaces, and keeps the reason after --", () => {
    const [d] = yamlIgnoreDirectives("k: v #kiwi-ignore:security/secret-literal,security/secret-value security/host-any -- example key, revoked\r\n");
    expect(d).toEqual({ line: 1, column: 6, target: 1, rules: ["security/secret-literal", "security/secret-value", "security/host-any"], invalid: [], reason: "example key, revoked" });
  });

  test("keeps what is not a rule id apart, and a comment without its colon names nothing", () => {
    expect(yamlIgnoreDirectives("k: v  # kiwi-ignore: secret-literal, Security/Path\n")[0]).toMatchObject({ rules: [], invalid: ["secret-literal", "Security/Path"] });
    expect(yamlIgnoreDirectives("k: v  # kiwi-ignore security/path\n")[0]).toMatchObject({ rules: [], invalid: [], noColon: true });
    expect(yamlIgnoreDirectives("k: v  # kiwi-ignore:\n")[0]).toMatchObject({ rules: [], invalid: [] });
    expect(yamlIgnoreDirectives("k: v  # kiwi-ignore: kiwi-ignore-all\n")[0]).toEqual({ line: 1, column: 7, target: 1, rules: [], invalid: ["kiwi-ignore-all"] });
  });

  test("a # inside a word, a quoted string or a block scalar is no comment: a description may show the syntax", () => {
    expect(yamlIgnoreDirectives("note: a#kiwi-ignore:security/path\n")).toEqual([]);
    expect(yamlIgnoreDirectives("k: v  # kiwi-ignored: security/path\n")).toEqual([]);
    expect(yamlIgnoreDirectives('q: "x # kiwi-ignore: security/path"\nr: \'y # kiwi-ignore: security/path\'\n')).toEqual([]);
    const shown = "description: |\n  Add a comment:\n  # kiwi-ignore: security/secret-literal -- why\n  on the line.\nk: v  # kiwi-ignore: security/host-any\n";
    expect(yamlIgnoreDirectives(shown).map((d) => [d.line, d.rules])).toEqual([[5, ["security/host-any"]]]);
  });

  test("in flow collections and sequences, as anywhere a YAML comment may stand", () => {
    const text = "env: { K: v }  # kiwi-ignore: security/secret-value\nargs:\n  - --flag  # kiwi-ignore: security/secret-in-args\n";
    expect(yamlIgnoreDirectives(text).map((d) => [d.line, d.target, d.rules[0]])).toEqual([
      [1, 1, "security/secret-value"],
      [3, 3, "security/secret-in-args"],
    ]);
  });
});

describe("every form with comments", () => {
  const token = "ghp_" + "x7".repeat(18);

  test("a YAML manifest", () => {
    const p = parsed(`tool_id: t\nconfig:\n  env:\n    GH_TOKEN: ${token}  # kiwi-ignore: security/secret-literal\n`, "yaml");
    expect(p.ignores).toEqual([{ line: 4, column: 57, target: 4, rules: ["security/secret-literal"], invalid: [] }]);
  });

  test("a shell script's # --- block: lines and columns of the file, past the block's '# ' prefix", () => {
    const text = "#!/usr/bin/env bash\n# ---\n# tool_id: greet\n# tool_type: script\n# # kiwi-ignore: security/secret-value\n# config: { env: { API_KEY: k } }\n# ---\necho hi\n";
    const p = parsed(text, "shell");
    expect(p.ignores).toEqual([{ line: 5, column: 3, target: 6, rules: ["security/secret-value"], invalid: [] }]);
    expect(p.locate("/config")).toMatchObject({ line: 6 });
  });

  test("a shell script's # --- block of `#key` lines: the comment's column past a one-character prefix", () => {
    const text = "# ---\n#tool_id: greet\n#config: { env: { API_KEY: k } } # kiwi-ignore: security/secret-value\n# ---\n";
    expect(parsed(text, "shell").ignores).toEqual([{ line: 3, column: 34, target: 3, rules: ["security/secret-value"], invalid: [] }]);
  });

  test("Markdown front matter, and not a comment shown in the page below it", () => {
    const text = "---\ntool_id: notes\ntool_type: knowledge  # kiwi-ignore: universal/unknown-field\n---\n```yaml\nk: v  # kiwi-ignore: security/path\n```\n";
    expect(parsed(text, "markdown").ignores).toEqual([{ line: 3, column: 23, target: 3, rules: ["universal/unknown-field"], invalid: [] }]);
  });

  test("a Python docstring's YAML, and a kiwi_mcp module's own comments", () => {
    const doc = '"""\ntool_id: p\ntool_type: script\nconfig:\n  env: { K: v }  # kiwi-ignore: security/secret-value\n"""\n';
    expect(parsed(doc, "python").ignores).toMatchObject([{ line: 5, target: 5, rules: ["security/secret-value"] }]);
    const module = '__version__ = "1.0.0"\n__tool_type__ = "script"\n__executor_id__ = "python_runtime"\n# kiwi-ignore: security/secret-literal -- documented example\nCONFIG = {"env": {"GH_TOKEN": "x"}}\nHELP = """Add # kiwi-ignore: security/path to a line"""\nNOTE = "x # kiwi-ignore: security/path"\nOPTS = {\n    "a": 1,  # kiwi-ignore: security/secret-value\n}\n';
    expect(parsed(module, "python").ignores).toEqual([
      { line: 4, column: 1, target: 5, rules: ["security/secret-literal"], invalid: [], reason: "documented example" },
      { line: 9, column: 14, target: 9, rules: ["security/secret-value"], invalid: [] },
    ]);
  });

  test("a manifest without one carries no ignores field, and JSON has no comments to read", () => {
    expect("ignores" in parsed("tool_id: t\n", "yaml")).toBe(false);
    expect("ignores" in parsed('{ "tool_id": "t", "note": "x  # kiwi-ignore: security/path" }', "json")).toBe(false);
  });
});

describe("a tool's other files: the mark after any language's comment opener", () => {
  test("#, //, /* */, --, ;, % and <!-- -->: after code it covers its own line, alone the next one", () => {
    const text = [
      'key = "x"  # kiwi-ignore: security/secret-literal -- a sample',
      "const k = 1; // kiwi-ignore: security/secret-literal",
      "/* kiwi-ignore: security/secret-literal -- block */",
      "-- kiwi-ignore: security/secret-literal",
      "x ; kiwi-ignore: security/secret-literal",
      "% kiwi-ignore: security/secret-literal",
      "<!-- kiwi-ignore: security/secret-literal -- in a page -->",
    ].join("\n");
    expect(textIgnoreDirectives(text).map((d) => [d.line, d.column, d.target, d.rules, d.reason])).toEqual([
      [1, 12, 1, ["security/secret-literal"], "a sample"],
      [2, 14, 2, ["security/secret-literal"], undefined],
      [3, 1, 4, ["security/secret-literal"], "block"],
      [4, 1, 5, ["security/secret-literal"], undefined],
      [5, 3, 5, ["security/secret-literal"], undefined],
      [6, 1, 7, ["security/secret-literal"], undefined],
      [7, 1, 8, ["security/secret-literal"], "in a page"],
    ]);
  });

  test("a word that only starts with the mark, or the mark with no opener before it, is none; a text without it costs one test", () => {
    expect(textIgnoreDirectives("# kiwi-ignored: security/secret-literal\nsee kiwi-ignore: security/secret-literal\n")).toEqual([]);
    expect(textIgnoreDirectives("plain text\n")).toEqual([]);
  });

  test("a comment without its colon or with a typo is read as the manifest's are, to be reported", () => {
    expect(textIgnoreDirectives("// kiwi-ignore security/secret-literal\n")[0]).toMatchObject({ noColon: true, rules: [] });
    expect(textIgnoreDirectives("# kiwi-ignore: secret-literal\n")[0]).toMatchObject({ rules: [], invalid: ["secret-literal"] });
  });
});
