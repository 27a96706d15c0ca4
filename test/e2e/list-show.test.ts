// `kiwi list` and `kiwi show` through the compiled binary, on the project `kiwi init` scaffolds.
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);

async function scaffolded() {
  const root = makeTemp("kiwi-list-");
  const k = kiwiIn(root, { KIWI_MCP_MODE: "off" });
  expect((await k.run(["init"])).exitCode).toBe(0);
  return { root, k };
}

describe("kiwi list", () => {
  test("lists the project's tools, then the built-ins, with type, version, lock status and description", async () => {
    const { k } = await scaffolded();
    const r = await k.run(["list"]);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^everything\s+mcp_server\s+1\.0\.0\s+locked\s+The MCP reference server/);
    expect(lines.findIndex((l) => l.startsWith("bash_runtime"))).toBeGreaterThan(lines.findIndex((l) => l.startsWith("word_count")));
    expect(lines.at(-1)).toBe("5 project tools, 7 built-in");
  });

  test("--json is one document; a tool added since the lock is not locked", async () => {
    const { root, k } = await scaffolded();
    writeFileSync(join(root, ".ai/tools/later.sh"), "#!/bin/bash\n# ---\n# tool_id: later\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho later\n");
    const doc = JSON.parse((await k.run(["list", "--json"])).stdout);
    expect(doc.ok).toBe(true);
    expect(doc.tools.find((t: { id: string }) => t.id === "later")).toEqual({ id: "later", type: "script", version: "1.0.0", description: null, source: ".ai/tools/later.sh", builtin: false, locked: false });
    expect(doc.tools.find((t: { id: string }) => t.id === "subprocess")).toMatchObject({ builtin: true, source: "<builtin>/subprocess.yaml" });
  });

  test("outside a project it says how to start one", async () => {
    const r = await kiwiIn(makeTemp()).run(["list"]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain('hint: run "kiwi init" to create one');
  });
});

describe("a description written over lines, or holding control characters", () => {
  // A published tool's description reaches the terminal: an escape sequence in it would recolour,
  // move the cursor or rewrite what kiwi shows; a block scalar's second line broke the table.
  const root = makeProject({
    // A broken tool is listed too, its type and version as written.
    ".ai/tools/b.yaml": "tool_id: b\ntool_type: \"api\\e[31m\"\nversion: \"1.0.0\\e[2J\"\nexecutor: http_client\n",
    ".ai/tools/a.yaml": "tool_id: a\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\ndescription: |\n  First line.\n  Second\tline \u001b[31mred\u001b[0m.\nconfig: { url: 'https://a.example.com' }\nrequires: [{ net.outbound: [a.example.com] }]\nparameters:\n  - { name: q, type: string, description: \"one\\ntwo\\u001b[2J\" }\n",
  });
  const k = kiwiIn(root, { KIWI_MCP_MODE: "off" });

  test("kiwi list keeps it on the tool's line, the escape made visible", async () => {
    const r = await k.run(["list"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(/^a\s+api\s+1\.0\.0\s+not locked\s+First line\. Second line <U\+001B>\[31mred<U\+001B>\[0m\.$/);
    expect(r.stdout.split("\n")[1]).toMatch(/^b\s+api<U\+001B>\[31m\s+1\.0\.0<U\+001B>\[2J\s+not locked$/);
    expect(r.stdout).not.toContain("\u001b");
  });

  test("kiwi show indents each of its lines, and a parameter's stays on its line", async () => {
    const r = await k.run(["show", "a"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("\n  First line.\n  Second\\tline <U+001B>[31mred<U+001B>[0m.\n");
    expect(r.stdout).toContain("  q: string  one two<U+001B>[2J\n");
    expect(r.stdout).not.toContain("\u001b");
  });

  test("kiwi show's heading and kiwi tree show a broken tool's type and version with the escape made visible", async () => {
    const show = await k.run(["show", "b"]);
    expect(show.stdout.split("\n")[0]).toBe("b 1.0.0<U+001B>[2J (api<U+001B>[31m, .ai/tools/b.yaml)");
    const tree = await k.run(["tree", "b"]);
    expect(tree.stdout.split("\n")[0]).toMatch(/^b 1\.0\.0<U\+001B>\[2J \(api<U\+001B>\[31m\)  sha256:/);
    expect(show.stdout + tree.stdout).not.toContain("\u001b");
  });
});

describe("kiwi show", () => {
  test("shows parameters with types, contracts and defaults, permissions and the verified chain", async () => {
    const { k } = await scaffolded();
    const r = await k.run(["show", "word_count"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("  text: string (required)  minLength 1, maxLength 100000  The text to count.");
    expect(r.stdout).toContain("  top: integer  default 3, minimum 0, maximum 20");
    expect(r.stdout).toMatch(/└─ python_runtime 1\.0\.0 \(runtime\)\s+sha256:[0-9a-f]{12}\s+<builtin>\/python_runtime\.yaml\s+verified/);
  });

  test("--json names the declared permissions and each contract; a tool without an MCP server has no pin", async () => {
    const root = makeProject({
      ".ai/tools/weather.yaml": "tool_id: weather\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  url_template: https://api.example.com/{city}\nrequires:\n  - net.outbound: [api.example.com]\nparameters:\n  - { name: city, type: string, required: true, enum: [Oslo, Lima] }\n",
    });
    const doc = JSON.parse((await kiwiIn(root).run(["show", "weather", "--json"])).stdout);
    expect(doc).toMatchObject({ ok: true, tool: { id: "weather", locked: false }, permissions: [{ name: "net.outbound", targets: ["api.example.com"] }], pin: null });
    expect(doc.parameters).toEqual([{ name: "city", type: "string", required: true, description: null, contracts: { enum: ["Oslo", "Lima"] } }]);
  });

  test("an unknown tool suggests the nearest id", async () => {
    const { k } = await scaffolded();
    const r = await k.run(["show", "word_cuont"]);
    expect([r.exitCode, r.stderr]).toEqual([2, 'error[E_TOOL_NOT_FOUND]: no tool has the id "word_cuont"\n  hint: did you mean "word_count"?\n']);
  });
});
