// Requirements written where their ecosystems write them: requirements.txt, package.json, PEP 723.
import { describe, expect, test } from "bun:test";
import type { PackageFileRequirements } from "../../src/manifest/model.ts";
import { parseInlineScriptMetadata, parsePackageJson, parseRequirementsTxt } from "../../src/manifest/package-files.ts";

const fresh = (): PackageFileRequirements => ({ pypi: [], problems: [] });

describe("requirements.txt", () => {
  test("one requirement per line; comments, blank lines and continuations as pip reads them", () => {
    const out = fresh();
    parseRequirementsTxt("# tools\nhttpx>=0.24  # http\n\npydantic>=2.0,\\\n  <3\n", "t/requirements.txt", out);
    expect(out.pypi).toEqual([
      { spec: "httpx>=0.24", source: "t/requirements.txt:2" },
      { spec: "pydantic>=2.0,  <3", source: "t/requirements.txt:4" },
    ]);
  });

  test.each([
    ["-e .", "require the distribution by name and version from an index"],
    ["--index-url https://x.test/simple", "move the option to your pip settings"],
    ["--extra-index-url=https://x.test/simple", "move the option to your pip settings"],
    ["-r other.txt", "write the included file's requirements into this one"],
    ["-c constraints.txt", "write the included file's requirements into this one"],
    ["https://x.test/a.whl", "require the distribution by name and version from an index"],
    ["./local", "require the distribution by name and version from an index"],
    ["/abs/pkg", "require the distribution by name and version from an index"],
  ])("%s is refused, with its line and what to write instead", (line, hint) => {
    const out = fresh();
    parseRequirementsTxt(`ok==1\n${line}\n`, "r.txt", out);
    expect(out.problems).toEqual([{ source: "r.txt:2", message: expect.stringContaining("is a pip option, URL or path"), hint: expect.stringContaining(hint) }]);
  });

  test("a comment line ending in a backslash continues nothing, and a comment line ends a continuation (pip's join_lines)", () => {
    const out = fresh();
    parseRequirementsTxt("# built on C:\\\nfoo-bar==1.0\na==1 \\\n# why a \\\nb==2\n", "r.txt", out);
    expect(out.pypi).toEqual([
      { spec: "foo-bar==1.0", source: "r.txt:2" },
      { spec: "a==1", source: "r.txt:3" },
      { spec: "b==2", source: "r.txt:5" },
    ]);
  });

  test("a requirement continued over lines is named by its first line, and the lines after it by their own", () => {
    const out = fresh();
    parseRequirementsTxt("a==1 \\\n    --hash=sha256:00\n    # via b\nb==2 \\\n    --hash=sha256:11\n-e ./local\n", "r.txt", out);
    expect(out.pypi).toEqual([
      { spec: "a==1     --hash=sha256:00", source: "r.txt:1" },
      { spec: "b==2     --hash=sha256:11", source: "r.txt:4" },
    ]);
    expect(out.problems).toEqual([{ source: "r.txt:6", message: expect.stringContaining('"-e ./local" is a pip option'), hint: expect.any(String) }]);
  });
});

describe("package.json", () => {
  test("dependencies are the tool's; devDependencies are not", () => {
    const out = fresh();
    parsePackageJson(JSON.stringify({ dependencies: { a: "^1" }, devDependencies: { b: "2" } }), "p.json", out);
    expect(out.npm).toEqual({ dependencies: { a: "^1" }, source: "p.json" });
  });

  test("overrides are the tool's too: npm forces those versions anywhere in the tree", () => {
    const out = fresh();
    const overrides = { "kiwi-digits": "2.0.0", "kiwi-pad": { ".": "1.0.0", "kiwi-digits": "$kiwi-digits" } };
    parsePackageJson(JSON.stringify({ dependencies: { "kiwi-pad": "^1" }, overrides }), "p.json", out);
    expect(out.npm).toEqual({ dependencies: { "kiwi-pad": "^1" }, overrides, source: "p.json" });
  });

  test.each([
    ["{ nope", "it is not valid JSON"],
    ['{"dependencies": ["a"]}', "dependencies must map package names to version ranges"],
    ['{"dependencies": {"a": "1"}, "overrides": {"b": 2}}', "overrides must map package names to versions, or to overrides of their own"],
    ['{"dependencies": {"a": "1"}, "overrides": ["b@1"]}', "overrides must map package names to versions"],
  ])("%s is refused, with a hint in npm's terms", (text, message) => {
    const out = fresh();
    parsePackageJson(text, "p.json", out);
    expect(out.problems[0]?.message).toContain(message);
    expect(out.problems[0]?.hint).not.toContain("pip");
  });
});

describe("PEP 723 inline script metadata", () => {
  const toml = (t: string) => Bun.TOML.parse(t);
  test("the dependencies of the `# /// script` block", () => {
    const out = fresh();
    parseInlineScriptMetadata('#!/usr/bin/env python3\n# /// script\n# requires-python = ">=3.11"\n# dependencies = [\n#   "httpx>=0.24",\n#   "rich",\n# ]\n# ///\nprint(1)\n', "s.py", out, toml);
    expect(out.pypi.map((p) => p.spec)).toEqual(["httpx>=0.24", "rich"]);
  });

  test.each([
    ["# /// script\n# dependencies = ['a']\n", "is never closed"],
    // uv stops at the first line that is not `#` or `# …`: a typo or code before the closing line leaves it open.
    ["# /// script\n#dependencies = ['a']\n# ///\n", "is never closed"],
    ["# /// script\n# dependencies = ['a']\nimport a\n# ///\n", "is never closed"],
    ["# /// script\n# dependencies = [\n# ///\n", "not valid TOML"],
    ["# /// script\n# dependencies = 'a'\n# ///\n", "must be a list of strings"],
  ])("%j is refused, with a hint about the block", (text, message) => {
    const out = fresh();
    parseInlineScriptMetadata(text, "s.py", out, toml);
    expect(out.problems[0]?.message).toContain(message);
    expect(out.problems[0]?.hint).not.toContain("pip");
  });

  test("the block ends at the last `# ///` of its comment lines, as uv reads it", () => {
    const out = fresh();
    parseInlineScriptMetadata('# /// script\n# dependencies = ["a"]\n# [tool.notes]\n# text = """\n# ///\n# """\n# ///\nprint(1)\n# ///\n', "s.py", out, toml);
    expect([out.problems, out.pypi]).toEqual([[], [{ spec: "a", source: "s.py:1" }]]);
  });

  test("a script without the block declares nothing", () => {
    const out = fresh();
    parseInlineScriptMetadata("print(1)\n", "s.py", out, toml);
    expect(out).toEqual(fresh());
  });
});
