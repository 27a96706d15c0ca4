// The scaffold's examples are real tools: they parse into the tool model, pass every validation
// layer with no finding at all (strict included), and the scripts run on their own.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { TEMPLATES } from "../../src/init/templates.ts";
import { parseManifestText, syntaxOf } from "../../src/manifest/forms.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { TOOL_TYPES } from "../../src/schema/vocabulary.ts";
import { normalizeManifest } from "../../src/manifest/normalize.ts";
import { checkProject } from "../../src/validate/check-project.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const scaffold = () => writeTree(makeTemp("kiwi-init-"), Object.fromEntries(TEMPLATES.map((t) => [t.path, { content: t.content, mode: t.mode }])));

describe("the kiwi init templates", () => {
  test.each(TEMPLATES.map((t) => [t.path, t] as const))("%s defines the tool it claims", (_path, template) => {
    const parsed = parseManifestText(template.content, syntaxOf(template.path)!);
    if (parsed === "none") throw new Error("no metadata");
    const tool = normalizeManifest(parsed.value, "fallback");
    expect(tool.id).toBe(template.toolId);
    expect(template.kind.startsWith(`${tool.type} on `)).toBe(true);
    expect(template.kind.endsWith(` on ${tool.executor?.id}`)).toBe(true);
  });

  test("cover a script per runtime, an api tool, an mcp_server and its mcp_tool", () => {
    expect(TEMPLATES.map((t) => t.kind)).toEqual(["script on python_runtime", "script on bash_runtime", "api on http_client", "mcp_server on subprocess", "mcp_tool on everything"]);
    expect(TEMPLATES.every((t) => (TOOL_TYPES as readonly string[]).includes(t.kind.split(" ")[0]!))).toBe(true);
  });

  test.each([false, true])("pass every validation layer without a single finding (strict: %p)", (strict) => {
    const project = readProject(scaffold());
    const result = checkProject(project, { strict });
    expect(result.findings).toEqual([]);
    expect(result.toolsChecked).toBe(TEMPLATES.length);
  });

  test("declare parameters on both scripts, checked by their runtime's child_schemas", () => {
    const project = readProject(scaffold());
    for (const id of ["word_count", "greet"]) {
      const tool = project.tools.find((t) => t.id === id)!;
      expect(Array.isArray(tool.parameters) && tool.parameters.length).toBeGreaterThan(0);
      const runtime = project.tools.find((t) => t.id === tool.executor!.id)!;
      expect(Array.isArray(runtime.childSchemas)).toBe(true);
      expect(tool.config.entrypoint).toBe(tool.manifestFile.split("/").pop());
    }
  });

  test("the Python example counts words from JSON on stdin", () => {
    const root = scaffold();
    const proc = Bun.spawnSync(["python3", "-B", join(root, ".ai/tools/word_count.py")], { stdin: new TextEncoder().encode('{"text": "to be or not to be", "top": 1}') });
    expect([proc.exitCode, JSON.parse(proc.stdout.toString())]).toEqual([0, { lines: 1, words: 6, characters: 18, top: [{ word: "to", count: 2 }] }]);
  });

  test("the bash example greets from its arguments", () => {
    const root = scaffold();
    const proc = Bun.spawnSync(["bash", join(root, ".ai/tools/greet.sh"), "Ada; rm -rf ~", "2"]);
    expect([proc.exitCode, proc.stdout.toString()]).toEqual([0, "Hello, Ada; rm -rf ~!\nHello, Ada; rm -rf ~!\n"]);
  });
});
