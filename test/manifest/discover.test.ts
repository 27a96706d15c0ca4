import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Float } from "../../src/integrity/value.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { findProjectRoot } from "../../src/manifest/project-io.ts";
import { RULES } from "../../src/findings/rules.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const script = (id: string, extra = "") => `tool_id: ${id}\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1\nconfig:\n  entrypoint: main.py\n${extra}`;

describe("reading a project", () => {
  test("finds the nearest ancestor that holds .ai/tools/", () => {
    const root = makeProject({ "src/deep/x.txt": "" });
    expect(findProjectRoot(join(root, "src", "deep"))).toBe(root);
  });

  test("refuses a directory with no project above it, with a coded error and hint", () => {
    const dir = makeTemp();
    expect(() => findProjectRoot(dir)).toThrow(expect.objectContaining({ code: "E_NO_PROJECT", hint: expect.stringContaining("kiwi init") }));
  });

  test("a folder that does not exist (a mistyped --cwd) is said to be missing, not to hold no project", () => {
    const dir = join(makeTemp(), "no", "such");
    expect(() => findProjectRoot(dir)).toThrow(expect.objectContaining({ code: "E_NO_PROJECT", message: `${dir} does not exist` }));
  });

  test("reads every manifest form onto one model", () => {
    const root = makeProject({
      ".ai/tools/dp/tool.yaml": script("dp", "timeout: 1.0\n"),
      ".ai/tools/dp/main.py": "print(1)\n",
      ".ai/tools/dp/lib/helper.py": "X = 1\n",
      ".ai/tools/dp/__pycache__/x.pyc": "junk",
      ".ai/tools/weather.yaml": "tool_id: weather\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  method: GET\n  url: https://example.com\n",
      ".ai/tools/json_tool/tool.json": '{"tool_id": "json_tool", "tool_type": "script", "version": "1.0.0", "executor": "node_runtime", "config": {"entrypoint": "x.js"}}',
      ".ai/tools/json_tool/x.js": "console.log(1)\n",
      ".ai/tools/hello.py": '"""\ntool_id: hello\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n"""\nprint("hi")\n',
      ".ai/tools/greet.sh": { content: "#!/bin/bash\n# ---\n# tool_id: greet\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho hi\n", mode: 0o755 },
      ".ai/tools/notes.md": "---\ntool_id: notes\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\n---\n# Notes\n",
      ".ai/tools/mg/tool.json": '{"name": "mg", "version": "1.0.0", "type": "native", "entry_point": "bin/run", "capabilities": ["network"], "permissions": {"network": {"hosts": ["api.example.com"]}}}',
      ".ai/tools/mg/bin/run": { content: "#!/bin/sh\n", mode: 0o755 },
    });
    const project = readProject(root);
    expect(project.findings).toEqual([]);
    const byId = Object.fromEntries(project.tools.map((t) => [t.id, t]));
    expect(byId.dp).toMatchObject({ form: "directory", root: ".ai/tools/dp", manifestFile: ".ai/tools/dp/tool.yaml", executor: { id: "python_runtime", range: "^1" } });
    expect(byId.dp!.files.map((f) => f.path)).toEqual(["lib/helper.py", "main.py"]);
    expect((byId.dp!.manifest as Record<string, unknown>).timeout).toEqual(new Float(1));
    expect(byId.weather).toMatchObject({ form: "file", type: "api", files: [] });
    expect(byId.json_tool).toMatchObject({ form: "directory", entrypoint: "x.js" });
    expect(byId.hello).toMatchObject({ form: "script", entrypoint: "hello.py", root: ".ai/tools" });
    expect(byId.hello!.files.map((f) => f.path)).toEqual(["hello.py"]);
    expect(byId.greet!.files[0]!.isExecutable).toBe(true);
    expect(byId.notes).toMatchObject({ form: "markdown", type: "knowledge", executor: null });
    expect(byId.mg).toMatchObject({ dialect: "magray", type: "native", executor: { id: "subprocess" }, entrypoint: "bin/run" });
    expect(byId.mg!.capabilities).toEqual([{ name: "net.outbound", hosts: ["api.example.com"], pointer: "/capabilities/0" }]);
    expect(byId.mg!.pointers.entrypoint).toBe("/entry_point");
    // Built-ins are part of every project unless overridden.
    expect(byId.subprocess).toMatchObject({ form: "builtin", type: "primitive" });
    expect(byId.python_runtime).toMatchObject({ form: "builtin", type: "runtime" });
  });

  test("lets a project tool override a built-in runtime", () => {
    const root = makeProject({ ".ai/tools/python_runtime.yaml": "tool_id: python_runtime\ntool_type: runtime\nversion: 2.0.0\nexecutor: subprocess\nconfig:\n  command: python3.12\n" });
    const runtimes = readProject(root).tools.filter((t) => t.id === "python_runtime");
    expect(runtimes.map((t) => [t.form, t.version])).toEqual([["file", "2.0.0"]]);
  });

  test("reports broken manifests as findings and still reads the other tools", () => {
    const root = makeProject({
      ".ai/tools/bad.json": '{"tool_id": "bad",',
      ".ai/tools/dup.yaml": "tool_id: a\ntool_id: b\n",
      ".ai/tools/empty.yaml": "",
      ".ai/tools/both/tool.yaml": script("both"),
      ".ai/tools/both/tool.json": "{}",
      ".ai/tools/good.yaml": "tool_id: good\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\n",
      ".ai/tools/helper.py": "import os\n",
    });
    const project = readProject(root);
    expect(project.tools.map((t) => t.id)).toContain("good");
    expect(project.tools.map((t) => t.id)).toContain("both");
    const summary = project.findings.map((f) => [f.file, f.rule, f.severity, f.line]);
    expect(summary).toEqual([
      [".ai/tools/bad.json", "parse/syntax", "error", 1],
      [".ai/tools/both/tool.json", "discover/ambiguous-manifest", "error", undefined],
      [".ai/tools/dup.yaml", "parse/duplicate-key", "error", 2],
      [".ai/tools/empty.yaml", "parse/empty", "error", undefined],
      [".ai/tools/helper.py", "discover/no-metadata", "info", undefined],
    ]);
  });

  test("never follows a symlink that leaves the tool directory, and reports loops", () => {
    const root = makeProject({ ".ai/tools/t/tool.yaml": script("t"), ".ai/tools/t/main.py": "" , ".ai/tools/t/inner.txt": "in" });
    const dir = join(root, ".ai/tools/t");
    symlinkSync("/etc/passwd", join(dir, "escape"));
    symlinkSync("loop-b", join(dir, "loop-a"));
    symlinkSync("loop-a", join(dir, "loop-b"));
    symlinkSync("inner.txt", join(dir, "alias.txt"));
    mkdirSync(join(dir, "sub"));
    symlinkSync("..", join(dir, "sub", "up"));
    const project = readProject(root);
    const tool = project.tools.find((t) => t.id === "t")!;
    expect(tool.files.map((f) => f.path)).toEqual(["alias.txt", "inner.txt", "main.py"]);
    expect(project.findings.map((f) => [f.file, f.rule])).toEqual([
      [".ai/tools/t/escape", "security/symlink-escape"],
      [".ai/tools/t/loop-a", "security/symlink-loop"],
      [".ai/tools/t/loop-b", "security/symlink-loop"],
    ]);
  });
});

describe("discovery findings take their severity from the rule table", () => {
  // RULES is the one place a rule's severity is written (findings/rules.ts); discovery used to
  // hard-code its own. Changing the table for a moment must change what discovery reports.
  test.each([
    ["discover/no-metadata", { ".ai/tools/helper.py": "import os\n" }, ".ai/tools/helper.py"],
    ["discover/ambiguous-manifest", { ".ai/tools/both/tool.yaml": script("both"), ".ai/tools/both/tool.json": "{}" }, ".ai/tools/both/tool.json"],
    ["parse/duplicate-key", { ".ai/tools/dup.yaml": "tool_id: dup\ntool_id: dup2\n" }, ".ai/tools/dup.yaml"],
    ["parse/empty", { ".ai/tools/empty.yaml": "" }, ".ai/tools/empty.yaml"],
  ] as const)("%s", (rule, tree, file) => {
    const root = makeProject(tree);
    const info = (RULES as Record<string, { severity: string }>)[rule]!;
    const written = info.severity;
    try {
      info.severity = written === "warning" ? "info" : "warning";
      expect(readProject(root).findings.filter((f) => f.rule === rule).map((f) => [f.file, f.severity])).toEqual([[file, info.severity]]);
    } finally {
      info.severity = written;
    }
  });
});
