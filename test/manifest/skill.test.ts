// Agent Skills as kiwi tools: a folder with SKILL.md is read as a knowledge tool whose files
// (SKILL.md included) are the folder's files; bad skills are findings at the field.
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readProject } from "../../src/manifest/discover-io.ts";
import { leavesFolder, skillManifest } from "../../src/manifest/skill.ts";
import { checkProject } from "../../src/validate/check-project.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);
const REAL = join(import.meta.dir, "..", "fixtures", "real", "skills");

const skill = (front: string, body = "# Do the thing\n") => `---\n${front}\n---\n${body}`;

describe("a skill folder is a knowledge tool", () => {
  test("the real anthropics/skills files read clean: id from name, SKILL.md the entry point, every file hashed", () => {
    const root = makeProject({ ".ai/tools/brand-guidelines/LICENSE.txt": "terms\n" });
    for (const name of ["template-skill", "brand-guidelines"]) cpSync(join(REAL, name), join(root, ".ai/tools", name), { recursive: true });
    const project = readProject(root);
    expect(project.findings).toEqual([]);
    const brand = project.tools.find((t) => t.id === "brand-guidelines")!;
    expect([brand.type, brand.version, brand.executor, brand.entrypoint, brand.form, brand.manifestFile]).toEqual(["knowledge", "0.0.0", null, "SKILL.md", "directory", ".ai/tools/brand-guidelines/SKILL.md"]);
    expect(brand.files.map((f) => f.path)).toEqual(["LICENSE.txt", "SKILL.md"]);
    expect(brand.description).toStartWith("将 Anthropic");
    expect(brand.manifest).toMatchObject({ config: { entrypoint: "SKILL.md", skill: { license: "完整条款见 LICENSE.txt" } } });
    const template = project.tools.find((t) => t.id === "template-skill")!;
    expect(template.description).toBe("Replace with description of the skill and when Claude should use it.");
    const checked = checkProject(project);
    expect(checked.findings.filter((f) => f.severity === "error")).toEqual([]);
  });

  test("metadata.version (semver) is the tool's version; the optional fields are kept under config.skill", () => {
    const root = makeProject({
      ".ai/tools/pdf-tools/SKILL.md": skill('name: pdf-tools\ndescription: Fill PDF forms.\nlicense: MIT\nallowed-tools: Bash(python3:*) Read\ncompatibility: needs python3\nmetadata:\n  version: "2.1.0"\n  author: acme'),
      ".ai/tools/pdf-tools/scripts/fill.py": "print(1)\n",
    });
    const project = readProject(root);
    expect(project.findings).toEqual([]);
    const tool = project.tools.find((t) => t.id === "pdf-tools")!;
    expect(tool.version).toBe("2.1.0");
    expect(tool.config).toEqual({ entrypoint: "SKILL.md", skill: { license: "MIT", compatibility: "needs python3", "allowed-tools": "Bash(python3:*) Read", metadata: { version: "2.1.0", author: "acme" } } });
    expect(tool.files.map((f) => f.path)).toEqual(["SKILL.md", "scripts/fill.py"]);
  });
});

describe("bad skills are findings at the field", () => {
  test.each([
    ["a missing name", "description: d", "skill/name", "the front matter has no name", 2],
    ["a name that is not the folder's", "name: other\ndescription: d", "skill/name", 'name "other" does not match the skill\'s folder "my-skill"', 2],
    ["a name with capitals", "name: My-Skill\ndescription: d", "skill/name", 'name "My-Skill" is not a skill name', 2],
    ["a double hyphen", "name: my--skill\ndescription: d", "skill/name", 'name "my--skill" is not a skill name', 2],
    ["a missing description", "name: my-skill", "skill/description", "the front matter has no description", 2],
    ["metadata that is not a string map", "name: my-skill\ndescription: d\nmetadata:\n  version: 1.0", "skill/field", "metadata is not a mapping of strings to strings", 4],
    ["allowed-tools as a list", "name: my-skill\ndescription: d\nallowed-tools: [Read]", "skill/field", "allowed-tools is not a string", 4],
  ])("%s", (_what, front, rule, message, line) => {
    const root = makeProject({ ".ai/tools/my-skill/SKILL.md": skill(front) });
    const finding = readProject(root).findings.find((f) => f.rule === rule);
    expect(finding).toMatchObject({ severity: "error", file: ".ai/tools/my-skill/SKILL.md", message });
    expect(finding!.line).toBe(line);
    expect(finding!.hint).toBeTruthy();
  });

  test("bad front matter is a parse error at its line; no front matter at all is skill/front-matter", () => {
    const broken = readProject(makeProject({ ".ai/tools/my-skill/SKILL.md": "---\nname: [unclosed\n---\n" })).findings;
    expect(broken[0]).toMatchObject({ rule: "parse/syntax", severity: "error", file: ".ai/tools/my-skill/SKILL.md" });
    const none = readProject(makeProject({ ".ai/tools/my-skill/SKILL.md": "# My skill\n" }));
    expect(none.findings).toEqual([expect.objectContaining({ rule: "skill/front-matter", severity: "error", line: 1 })]);
    expect(none.tools.some((t) => t.id === "my-skill")).toBe(false);
  });

  test("a link escaping the folder is skill/path-escape at its line in SKILL.md", () => {
    const root = makeProject({ ".ai/tools/my-skill/SKILL.md": skill("name: my-skill\ndescription: d", "# Use\n\nSee [the guide](references/guide.md) and [secrets](../../../.env) and ![x](/etc/passwd).\n[site](https://example.com)\n") });
    const findings = readProject(root).findings.filter((f) => f.rule === "skill/path-escape");
    expect(findings.map((f) => [f.line, f.message])).toEqual([
      [7, 'the link "../../../.env" points outside the skill\'s folder'],
      [7, 'the link "/etc/passwd" points outside the skill\'s folder'],
    ]);
  });

  test("an unknown field is a warning, not an error", () => {
    const root = makeProject({ ".ai/tools/my-skill/SKILL.md": skill("name: my-skill\ndescription: d\nmodel: opus") });
    expect(readProject(root).findings).toEqual([expect.objectContaining({ rule: "skill/field", severity: "warning", message: "model is not an Agent Skills field" })]);
  });
});

describe("the pure mapping", () => {
  test("a tool.yaml beside SKILL.md wins: the folder is a kiwi directory tool", () => {
    const root = makeProject({
      ".ai/tools/doc/tool.yaml": "tool_id: doc\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\nconfig: { entrypoint: SKILL.md }\n",
      ".ai/tools/doc/SKILL.md": skill("name: doc\ndescription: d"),
    });
    const tool = readProject(root).tools.find((t) => t.id === "doc")!;
    expect([tool.version, tool.manifestFile]).toEqual(["1.0.0", ".ai/tools/doc/tool.yaml"]);
  });

  test.each([
    ["scripts/run.sh", false],
    ["./a/../b", false],
    ["../x", true],
    ["a/../../x", true],
    ["/abs", true],
    ["C:\\x", true],
  ])("leavesFolder(%p) is %p", (path, expected) => {
    expect(leavesFolder(path)).toBe(expected);
  });

  test("the manifest is made from the front matter as written", () => {
    const read = skillManifest({ name: "x", description: "d" }, "x", "", 4);
    expect(read.problems).toEqual([]);
    expect(read.manifest).toEqual({ tool_id: "x", tool_type: "knowledge", version: "0.0.0", description: "d", executor: null, config: { entrypoint: "SKILL.md" } });
    expect(readFileSync(join(REAL, "template-skill", "SKILL.md"), "utf8")).toContain("name: template-skill");
  });
});
