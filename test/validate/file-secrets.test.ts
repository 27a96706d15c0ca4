// Which files of which tools are read for credentials, and how what they hold becomes findings and
// ignore comments (pure: the scans are given).
import { describe, expect, test } from "bun:test";
import type { Finding } from "../../src/findings/verdict.ts";
import { type FileScan, MAX_SCANNED_BYTES, fileSecretFindings, planFileScans } from "../../src/validate/file-secrets.ts";
import { toolFromYaml } from "./_tools.ts";

const dirTool = (files: string[]) => toolFromYaml("tool_id: t\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\n", { files });

describe("planFileScans", () => {
  test("every file of each project tool once, its manifest first; a file past the size cap and built-in tools left out", () => {
    const tool = dirTool(["main.py", "lib/util.py", "data.bin"]);
    tool.files[2]!.size = MAX_SCANNED_BYTES + 1;
    const builtin = { ...dirTool(["x.py"]), id: "python_runtime", form: "builtin" as const };
    // An Agent Plugin's servers share the plugin's files.
    const twin = { ...tool, id: "t2" };
    expect(planFileScans([tool, builtin, twin]).map((r) => [r.tool, r.file, r.abs, r.identity?.size, r.manifest])).toEqual([
      ["t", ".ai/tools/t/tool.yaml", "/project/.ai/tools/t/tool.yaml", undefined, "yaml"],
      ["t", ".ai/tools/t/main.py", "/project/.ai/tools/t/main.py", 1, undefined],
      ["t", ".ai/tools/t/lib/util.py", "/project/.ai/tools/t/lib/util.py", 1, undefined],
    ]);
  });

  test("a remote tool's files are marked remote", () => {
    const remote = { ...dirTool(["main.py"]), root: ".ai/tools/.remote/t", manifestFile: ".ai/tools/.remote/t/tool.yaml" };
    expect(planFileScans([remote, dirTool(["main.py"])]).map((r) => [r.file, r.remote])).toEqual([
      [".ai/tools/.remote/t/tool.yaml", true],
      [".ai/tools/.remote/t/main.py", true],
      [".ai/tools/t/tool.yaml", undefined],
      [".ai/tools/t/main.py", undefined],
    ]);
  });

  test("a tool's manifest file is marked with its syntax, whatever form holds it", () => {
    const yamlFile = toolFromYaml("tool_id: w\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\n", { file: ".ai/tools/w.yaml", form: "file", files: ["w.yaml"] });
    const script = toolFromYaml("tool_id: s\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n", { file: ".ai/tools/s.py", form: "script", files: ["s.py"] });
    expect(planFileScans([yamlFile, script]).map((r) => [r.file, r.manifest])).toEqual([
      [".ai/tools/w.yaml", "yaml"],
      [".ai/tools/s.py", "python"],
    ]);
  });
});

describe("fileSecretFindings", () => {
  const tool = dirTool(["main.py", "notes.md"]);
  const [, main, notes] = planFileScans([tool]);
  const hit = (line: number) => ({ kind: "GitHub token", shown: "ghp_", line, column: 9 });

  test("each credential is an error at its file, line and column, naming the kind and four characters only", () => {
    const scans = new Map<string, FileScan>([[main!.abs, { hits: [hit(3)], ignores: [] }]]);
    const { findings, ignoreComments } = fileSecretFindings([main!, notes!], scans, [], [tool]);
    expect(findings).toEqual([
      expect.objectContaining({ rule: "security/secret-literal", severity: "error", file: ".ai/tools/t/main.py", line: 3, column: 9, tool: "t", message: "line 3 holds what looks like a GitHub token (ghp_…); the file is committed with the tool" }),
    ]);
    expect(findings[0]!.hint).toContain("kiwi-ignore: security/secret-literal");
    expect(ignoreComments).toEqual([]);
  });

  test("a line the manifest's own check reported (kept or ignored) is not reported again", () => {
    const reported: Finding = { rule: "security/secret-literal", severity: "error", file: ".ai/tools/t/main.py", line: 3, message: "config.env.X holds …" };
    const scans = new Map<string, FileScan>([[main!.abs, { hits: [hit(3), hit(4)], ignores: [] }]]);
    expect(fileSecretFindings([main!], scans, [reported], [tool]).findings.map((f) => f.line)).toEqual([4]);
  });

  test("the lines of a manifest value written over several lines are that value's finding: one credential, one finding", () => {
    // tool.yaml: `description: |` on line 5, the key inside the block scalar on line 7, and a
    // commented-out one on line 9, which is no value and is reported.
    const manifest = planFileScans([tool])[0]!;
    const located = { ...tool, locate: (pointer: string) => (pointer === "/description" ? { line: 5, column: 1, lastLine: 7 } : undefined) };
    const reported: Finding = { rule: "security/secret-literal", severity: "error", file: tool.manifestFile, line: 5, column: 1, pointer: "/description", tool: "t", message: "description holds …" };
    const scans = new Map<string, FileScan>([[manifest.abs, { hits: [hit(7), hit(9)], ignores: [] }]]);
    expect(fileSecretFindings([manifest], scans, [reported], [located]).findings.map((f) => f.line)).toEqual([9]);
    // Without the value's last line (a one-line value), only its own line is covered.
    expect(fileSecretFindings([manifest], scans, [reported], [tool]).findings.map((f) => f.line)).toEqual([7, 9]);
  });

  test("a file's ignore comments are given to the check", () => {
    const directive = { line: 2, column: 1, target: 3, rules: ["security/secret-literal"], invalid: [] };
    const scans = new Map<string, FileScan>([[main!.abs, { hits: [], ignores: [directive] }]]);
    expect(fileSecretFindings([main!], scans, [], [tool]).ignoreComments).toEqual([{ file: ".ai/tools/t/main.py", tool: "t", directives: [directive] }]);
  });
});
