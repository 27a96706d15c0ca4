// The examples of the design documents kiwi descends from (../shared/seeds/), each put into a
// project as written, with the files it mentions, through the compiled binary: kiwi check passes,
// and what can run here runs. The YAML of 000_b999499e1048a433.txt lost its indentation when the
// document was extracted; it is restored here as its structure shows, nothing else is changed.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";
import { startPypiIndex } from "../helpers/pypi-index.ts";
import { MODULES, wat } from "../helpers/wat.ts";
import { kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);

/**
 * The examples name real Python packages (data_processor: pandas, numpy; email_enricher: httpx,
 * pydantic). PyPI is not reachable here: a PEP 503 index on loopback serves stand-ins under those
 * names and versions (the example scripts import none of them).
 */
const pypi = startPypiIndex();
pypi.publish({ name: "httpx", version: "0.24.0", files: { "httpx/__init__.py": "VERSION = '0.24.0'\n" } });
pypi.publish({ name: "pydantic", version: "2.0.0", files: { "pydantic/__init__.py": "VERSION = '2.0.0'\n" } });
pypi.publish({ name: "pandas", version: "2.0.0", files: { "pandas/__init__.py": "VERSION = '2.0.0'\n" } });
pypi.publish({ name: "numpy", version: "1.26.0", files: { "numpy/__init__.py": "VERSION = '1.26.0'\n" } });
afterAll(() => pypi.stop());

interface Finding {
  file: string;
  rule: string;
  severity: string;
  message: string;
}

async function checkJson(kiwi: ReturnType<typeof kiwiIn>): Promise<{ exitCode: number; findings: Finding[] }> {
  const r = await kiwi.run(["check", "--json"]);
  return { exitCode: r.exitCode, findings: JSON.parse(r.stdout).findings as Finding[] };
}

const errorsOf = (findings: Finding[]) => findings.filter((f) => f.severity === "error");

/** 000_b999499e1048a433.txt, "Everything Else is Data": python_runtime as data. */
const RUNTIME_000_DATA = `# python_runtime manifest (DATA, not code!)
tool_id: python_runtime
version: "1.4.0"
tool_type: runtime
executor: subprocess # delegates to subprocess primitive
config:
  command: "python3"
  base_args: ["-u"]
  venv:
    enabled: true
    auto_create: true
    path: ".venv"
# THIS IS NEW: defines what children we accept
validation:
  child_schemas:
    - match:
        tool_type: script
      schema:
        type: object
        properties:
          manifest:
            type: object
            properties:
              language:
                const: python
              entrypoint:
                type: string
                pattern: "^[^\\\\0]+\\\\.py$"
            required: [entrypoint]
        required: [manifest]
`;

/** 000_b999499e1048a433.txt, "Example: python_runtime → user_script Chain", 2. python_runtime Manifest. */
const RUNTIME_000_EXAMPLE = `tool_id: python_runtime
version: "1.4.0"
tool_type: runtime
executor: subprocess
config:
  command: "python3"
  base_args: ["-u"]
  install_deps: true
  venv:
    enabled: true
    path: ".venv"
# Child validation - what scripts we accept
validation:
  child_schemas:
    - match:
        tool_type: script
      schema:
        type: object
        properties:
          tool_id:
            type: string
            pattern: "^[a-z][a-z0-9_]*$"
          tool_type:
            const: script
          manifest:
            type: object
            properties:
              language:
                const: python
              entrypoint:
                type: string
                pattern: "\\\\.py$"
              requires:
                type: array
                items:
                  type: string
            required: [entrypoint]
        required: [tool_id, tool_type, manifest]
`;

/** 000_b999499e1048a433.txt, 3. User Script Manifest. */
const DATA_PROCESSOR = `tool_id: data_processor
version: "2.1.0"
tool_type: script
executor: python_runtime
manifest:
  language: python
  entrypoint: process_data.py
  requires:
    - pandas>=2.0
    - numpy
config:
  timeout: 1800
  env:
    PYTHONPATH: "/app/lib"
`;

/** 000_b999499e1048a433.txt, "Lockfile Design", Format: its hashes are elided placeholders. */
const LOCKFILE_000 = `{
"lockfile_version": 1,
"generated_at": "2026-01-24T12:00:00Z",
"root": {
"tool_id": "my_data_processor",
"version": "2.1.0",
"integrity": "sha256:a1b2c3d4e5f6..."
},
"resolved_chain": [
{
"tool_id": "my_data_processor",
"version": "2.1.0",
"integrity": "sha256:a1b2c3d4e5f6...",
"executor": "python_runtime"
},
{
"tool_id": "python_runtime",
"version": "1.4.0",
"integrity": "sha256:f6e5d4c3b2a1...",
"executor": "subprocess"
},
{
"tool_id": "subprocess",
"version": "1.0.0",
"integrity": "sha256:0123456789ab...",
"executor": null
}
],
"registry": {
"url": "https://mrecfyfjpwzrzxoiooew.supabase.co",
"fetched_at": "2026-01-24T12:00:00Z"
}
}
`;

/** The file the example names; pandas is not installed here, so the script leaves it out. */
const PROCESS_DATA = 'import json, os, sys\nparams = json.load(sys.stdin)\nprint("processed", params, "with PYTHONPATH", os.environ["PYTHONPATH"])\n';

describe("000_b999499e1048a433.txt: the tool-chain design", () => {
  for (const [name, runtime] of [
    ["python_runtime as data", RUNTIME_000_DATA],
    ["the example chain's python_runtime", RUNTIME_000_EXAMPLE],
  ] as const) {
    test(`${name} accepts data_processor through its manifest.* child schema; check, lock and exec pass`, async () => {
      const root = makeProject({
        ".ai/tools/python_runtime.yaml": runtime,
        ".ai/tools/data_processor/tool.yaml": DATA_PROCESSOR,
        ".ai/tools/data_processor/process_data.py": PROCESS_DATA,
      });
      const kiwi = kiwiIn(root, { PIP_INDEX_URL: pypi.url });
      const { exitCode, findings } = await checkJson(kiwi);
      expect(errorsOf(findings)).toEqual([]);
      expect(exitCode).toBe(0);
      // 30 minutes is allowed in kiwi's dialect, and said to be long.
      expect(findings.map((f) => f.rule)).toEqual(["security/limits-high"]);
      // manifest.requires (pandas>=2.0, numpy) is installed like any requirement.
      expect((await kiwi.run(["install"])).exitCode).toBe(0);
      const r = await kiwi.run(["exec", "data_processor"]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toMatch(/^processed \{\} with PYTHONPATH \S+\/site-packages:\/app\/lib\n$/);
      // The document calls it with {"input": "data.csv"}, which it never declares: kiwi refuses
      // undeclared parameters (README, Compatibility).
      const undeclared = await kiwi.run(["exec", "data_processor", "--param", "input=data.csv"]);
      expect([undeclared.exitCode, undeclared.stderr]).toEqual([7, expect.stringContaining("params/input: is not a declared parameter")]);
      // base_args are the runtime's arguments: python3 -u, then the script.
      const plan = JSON.parse((await kiwi.run(["exec", "data_processor", "--dry-run"])).stdout);
      expect(plan.subprocess.argv.slice(1, 2)).toEqual(["-u"]);
      expect(plan.subprocess.argv.at(-1)).toEndWith("/process_data.py");
    }, 90_000);
  }

  test("the document's lockfile example, as written, is refused for its placeholder hashes, naming the field", async () => {
    const root = makeProject({ ".ai/tools/python_runtime.yaml": RUNTIME_000_DATA, ".ai/tools/data_processor/tool.yaml": DATA_PROCESSOR, ".ai/tools/data_processor/process_data.py": PROCESS_DATA, "lock.json": LOCKFILE_000 });
    const r = await kiwiIn(root).run(["verify", "lock.json"]);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain('error[E_LOCK_INVALID]: lock.json: /root/integrity is "sha256:a1b2c3d4e5f6...", not a sha256 digest');
  });

  test("the same schema refuses a child whose manifest names a shell script, at the field the user wrote", async () => {
    const root = makeProject({
      ".ai/tools/python_runtime.yaml": RUNTIME_000_DATA,
      ".ai/tools/data_processor/tool.yaml": DATA_PROCESSOR.replace("entrypoint: process_data.py", "entrypoint: process_data.sh").replace("language: python", "language: bash"),
      ".ai/tools/data_processor/process_data.sh": "echo hi\n",
    });
    const { findings } = await checkJson(kiwiIn(root));
    const mismatches = findings.filter((f) => f.rule === "child-schema/mismatch");
    expect(mismatches.map((f) => f.message).sort()).toEqual([
      'executor python_runtime rejects this manifest (child_schemas entry 0): /manifest/entrypoint must match pattern "^[^\\0]+\\.py$"',
      "executor python_runtime rejects this manifest (child_schemas entry 0): /manifest/language must be equal to constant",
    ]);
  });
});

/** 001_e5f81448ee9d126b.txt, "Examples": the four tool types, and the embedded-metadata form. */
const EXAMPLES_001 = {
  ".ai/tools/email_enricher/tool.yaml": `# .ai/tools/email_enricher/tool.yaml
tool_id: email_enricher
tool_type: script
version: "1.2.0"
executor: python_runtime
description: "Enrich email addresses with company data"
config:
  entrypoint: main.py
  requires:
    - httpx>=0.24.0
    - pydantic>=2.0
parameters:
  - name: email
    type: string
    required: true
`,
  ".ai/tools/email_enricher/main.py": "import json, sys\nfrom lib.clearbit import lookup\nprint(lookup(json.load(sys.stdin)['email']))\n",
  ".ai/tools/email_enricher/requirements.txt": "httpx>=0.24.0\npydantic>=2.0\n",
  ".ai/tools/email_enricher/lib/clearbit.py": "def lookup(email):\n    return email.split('@')[1]\n",
  ".ai/tools/weather_api.yaml": `# .ai/tools/weather_api.yaml  ← Entire tool is one file
tool_id: weather_forecast
tool_type: api
version: "1.0.0"
executor: http_client
description: "Get weather forecast for coordinates"
config:
  method: GET
  url_template: "https://api.weather.com/v1/forecast?lat={lat}&lon={lon}&units=metric"
  headers:
    X-API-Key: "\${WEATHER_API_KEY}"
  response_transform: "$.forecast.daily[0:7]"
parameters:
  - name: lat
    type: number
    required: true
  - name: lon
    type: number
    required: true
`,
  ".ai/tools/supabase_execute_sql.yaml": `# .ai/tools/supabase_execute_sql.yaml
tool_id: supabase_execute_sql
tool_type: mcp_tool
version: "1.0.0"
executor: supabase_mcp
description: "Execute SQL queries on Supabase"
config:
  mcp_tool_name: execute_sql
parameters:
  - name: project_id
    type: string
    required: true
  - name: query
    type: string
    required: true
`,
  // The server the MCP tool example names (the document does not show it).
  ".ai/tools/supabase_mcp.yaml": `tool_id: supabase_mcp
tool_type: mcp_server
version: "1.0.0"
executor: subprocess
description: "Supabase MCP server"
config:
  transport: stdio
  command: npx
  args: ["-y", "@supabase/mcp-server-supabase"]
requires:
  - net.outbound: [registry.npmjs.org]
validation:
  child_schemas:
    - match: { tool_type: mcp_tool }
      schema: { type: object }
`,
  ".ai/tools/github_mcp.yaml": `# .ai/tools/github_mcp.yaml
tool_id: github_mcp
tool_type: mcp_server
version: "1.0.0"
executor: subprocess
description: "GitHub MCP server for repository operations"
config:
  transport: stdio
  command: npx
  args: ["-y", "@modelcontextprotocol/server-github"]
  env:
    GITHUB_TOKEN: "\${GITHUB_TOKEN}"
  startup_timeout: 10
`,
  ".ai/tools/my_script.py": `#!/usr/bin/env python3
"""
tool_id: my_script
tool_type: script
version: 1.0.0
executor: python_runtime
"""
print("hello from my_script")
`,
};


describe("001_e5f81448ee9d126b.txt: the manifest-driven validation design", () => {
  const root = makeProject(EXAMPLES_001);
  const kiwi = kiwiIn(root, { PIP_INDEX_URL: pypi.url });

  test("every example passes kiwi check: no errors", async () => {
    const { exitCode, findings } = await checkJson(kiwi);
    expect(errorsOf(findings)).toEqual([]);
    expect(exitCode).toBe(0);
    // github_mcp fetches its package with npx and declares no network: said, not refused.
    expect(findings.map((f) => `${f.file} ${f.rule}`)).toEqual([".ai/tools/github_mcp.yaml mcp_server/fetches-at-start"]);
  });

  test("config.mcp_tool_name names the MCP tool, as config.tool_name does", async () => {
    const plan = JSON.parse((await kiwi.run(["exec", "supabase_execute_sql", "--unlocked", "--dry-run", "--param", "project_id=p", "--param", "query=select 1"])).stdout);
    expect(plan.config.tool_name).toBe("execute_sql");
  });

  test("the script examples run: a multi-file tool (its requirements.txt installed) and embedded metadata", async () => {
    const install = await kiwi.run(["install"]);
    expect(install.exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.email_enricher.pypi.requires).toEqual(["httpx>=0.24.0", "pydantic>=2.0"]);
    const enrich = await kiwi.run(["exec", "email_enricher", "--unlocked", "--param", "email=ada@example.com"]);
    expect([enrich.exitCode, enrich.stdout]).toEqual([0, "example.com\n"]);
    const embedded = await kiwi.run(["exec", "my_script", "--unlocked"]);
    expect([embedded.exitCode, embedded.stdout]).toEqual([0, "hello from my_script\n"]);
  }, 90_000);

  test("the API example plans the request its url_template describes", async () => {
    const r = await kiwi.run(["exec", "weather_forecast", "--unlocked", "--dry-run", "--param", "lat=52.5", "--param", "lon=13.4"], { WEATHER_API_KEY: "k" });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).http.url).toBe("https://api.weather.com/v1/forecast?lat=52.5&lon=13.4&units=metric");
  });

  test("two spellings of the MCP tool name that disagree are an error naming both", async () => {
    const bad = makeProject({
      ...EXAMPLES_001,
      ".ai/tools/supabase_execute_sql.yaml": EXAMPLES_001[".ai/tools/supabase_execute_sql.yaml"].replace("  mcp_tool_name: execute_sql\n", "  mcp_tool_name: execute_sql\n  tool_name: run_sql\n"),
    });
    const { exitCode, findings } = await checkJson(kiwiIn(bad));
    expect(exitCode).not.toBe(0);
    expect(errorsOf(findings).map((f) => [f.file, f.rule, f.message])).toEqual([
      [".ai/tools/supabase_execute_sql.yaml", "universal/alias-conflict", "config.mcp_tool_name disagrees with config.tool_name, which kiwi reads (kiwi_mcp's validation design names an MCP tool with config.mcp_tool_name)"],
    ]);
  });
});

/** 003_eeeba89fc6211482.txt, "Example Test Manifests" and "Complete tool.json Schema". */
const MINIMAL_003 = `{
  "name": "minimal-tool",
  "version": "1.0.0", 
  "description": "Minimal valid tool",
  "type": "wasm",
  "capabilities": [],
  "entry_point": "tool.wasm",
  "metadata": {
    "author": "Test Author",
    "license": "MIT"
  }
}
`;
const INVALID_003 = `{
  "name": "",
  "version": "invalid-version",
  "type": "wasm",
  "entry_point": "tool.exe"
}
`;
/** The document's schema illustration: its type and license are placeholders, not values. */
const COMPLETE_003 = `{
  "$schema": "https://magray.dev/schemas/tool-manifest/v1.json",
  "name": "example-tool",
  "version": "1.2.3",
  "description": "Example tool for demonstration",
  "type": "wasm|native|script",
  "capabilities": [
    "filesystem",
    "network", 
    "shell",
    "ui"
  ],
  "entry_point": "main.wasm",
  "runtime_config": {
    "max_memory_mb": 64,
    "max_execution_time_ms": 30000,
    "fuel_limit": 1000000
  },
  "permissions": {
    "filesystem": ["read", "write"],
    "network": ["outbound"],
    "shell": ["execute"]
  },
  "metadata": {
    "author": "Tool Author",
    "license": "MIT|Apache-2.0|GPL-3.0",
    "repository": "https://github.com/author/tool",
    "homepage": "https://tool.example.com",
    "documentation": "https://docs.example.com"
  },
  "config": {
    "tool_specific_setting": "value",
    "custom_parameters": {
      "nested": "config"
    }
  }
}
`;

/** A WASI module that prints a line: the file minimal-tool's entry point names (built with wabt). */
const HELLO_WASM = wat(MODULES.hello);

describe("003_eeeba89fc6211482.txt: magray's tool.json, judged as magray judges it", () => {
  test("the valid minimal manifest passes with magray's two warnings, and runs", async () => {
    const root = makeProject({ ".ai/tools/minimal-tool/tool.json": MINIMAL_003, ".ai/tools/minimal-tool/tool.wasm": HELLO_WASM });
    const kiwi = kiwiIn(root);
    const { exitCode, findings } = await checkJson(kiwi);
    expect(exitCode).toBe(0);
    expect(findings.map((f) => [f.severity, f.message]).sort()).toEqual([
      ["warning", "No documentation URL specified in metadata"],
      ["warning", "No repository URL specified in metadata"],
    ]);
    const r = await kiwi.run(["exec", "minimal-tool", "--unlocked"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "hello from wasm\n"]);
  });

  test("it round-trips through check, lock, install, verify and a locked exec", async () => {
    const root = makeProject({ ".ai/tools/minimal-tool/tool.json": MINIMAL_003, ".ai/tools/minimal-tool/tool.wasm": HELLO_WASM });
    const kiwi = kiwiIn(root);
    for (const step of [["check"], ["lock"], ["install"], ["verify"]]) expect((await kiwi.run(step)).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "minimal-tool"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "hello from wasm\n"]);
  });

  test("in strict mode it fails as magray's strict mode fails it: no capability", async () => {
    const root = makeProject({ ".ai/tools/minimal-tool/tool.json": MINIMAL_003, ".ai/tools/minimal-tool/tool.wasm": HELLO_WASM });
    const r = await kiwiIn(root).run(["check", "--strict", "--json"]);
    expect(r.exitCode).not.toBe(0);
    expect(errorsOf(JSON.parse(r.stdout).findings).map((f: Finding) => f.message)).toEqual(["Tool must declare at least one capability in strict mode"]);
  });

  test("the invalid manifest fails with magray's errors, in magray's words", async () => {
    const root = makeProject({ ".ai/tools/bad/tool.json": INVALID_003 });
    const { exitCode, findings } = await checkJson(kiwiIn(root));
    expect(exitCode).not.toBe(0);
    expect(errorsOf(findings).map((f) => f.message).sort()).toEqual(
      [
        "Invalid tool type 'wasm' for entry point 'tool.exe'",
        "Invalid version format: invalid-version",
        "Missing required field: description",
        "Missing required field: metadata.author",
        "Missing required field: metadata.license",
        "Missing required field: name",
        // kiwi also checks the file exists: a tool that cannot run is an error (README, Compatibility).
        'the entry point "tool.exe" is not a file inside the tool directory (magray only warns: kiwi locks and runs the files a tool has, and this one could never run)',
      ].sort(),
    );
  });

  test("the schema illustration is refused for its placeholder type, as magray's parser refuses it", async () => {
    const root = makeProject({ ".ai/tools/example-tool/tool.json": COMPLETE_003, ".ai/tools/example-tool/main.wasm": HELLO_WASM });
    const { findings } = await checkJson(kiwiIn(root));
    expect(errorsOf(findings).map((f) => f.rule)).toEqual(["universal/type-unknown"]);
  });
});

/**
 * 004_5ea950724dd95131.txt, "Adding New Schemas": schemas/tools/my_new_tool.ncl. Nickel is not
 * available here, so the same contracts are written as kiwi's parameters list, kept in a file
 * beside the manifest as VAPORA keeps one schema per tool; the rest of the document's contracts
 * (between, greater_than, less_than, match, Uuid, Url, TaggedUnion) are in a second tool.
 */
const VAPORA = {
  ".ai/tools/my_new_tool/tool.yaml": "tool_id: my_new_tool\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nparameters: my_new_tool.params.yaml\n",
  ".ai/tools/my_new_tool/my_new_tool.params.yaml": `# name | String | std.string.NonEmpty | std.string.length.min 3 | std.string.length.max 50
- { name: name, type: string, description: "User name (3-50 chars)", required: true, non_empty: true, minLength: 3, maxLength: 50 }
# age | Number | std.number.between 0 120
- { name: age, type: number, description: "User age (0-120)", minimum: 0, maximum: 120 }
# email | String | std.string.Email
- { name: email, type: string, description: "User email address", format: email }
# active | Bool | default = true
- { name: active, type: boolean, description: "Account status", default: true }
`,
  ".ai/tools/my_new_tool/main.py": "import json, sys\nprint(json.dumps(json.load(sys.stdin), sort_keys=True))\n",
  ".ai/tools/kanban_create_task/tool.yaml": "tool_id: kanban_create_task\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nparameters: schema.json\n",
  ".ai/tools/kanban_create_task/schema.json": JSON.stringify({
    type: "object",
    properties: {
      project_id: { type: "string", format: "uuid" },
      title: { type: "string", minLength: 3, maxLength: 200 },
      priority: { type: "number", minimum: 0, maximum: 100, default: 50 },
      estimate: { type: "number", exclusiveMinimum: -1, exclusiveMaximum: 1000 },
      level: { type: "string", enum: ["low", "high"] },
      link: { type: "string", format: "uri" },
      code: { type: "string", pattern: "^[A-Z]{3}-[0-9]+$" },
    },
    required: ["project_id", "title"],
  }),
  ".ai/tools/kanban_create_task/main.py": "import json, sys\nprint(json.dumps(json.load(sys.stdin), sort_keys=True))\n",
};

describe("004_5ea950724dd95131.txt: VAPORA's contracts as kiwi's parameter contracts", () => {
  const root = makeProject(VAPORA);
  const kiwi = kiwiIn(root);

  test("a valid call runs with the defaults applied", async () => {
    const r = await kiwi.run(["exec", "my_new_tool", "--unlocked", "--param", "name=Ada", "--param", "age=36", "--param", "email=ada@example.com"]);
    expect([r.exitCode, r.stdout]).toEqual([0, '{"active": true, "age": 36, "email": "ada@example.com", "name": "Ada"}\n']);
  });

  test("every violation is reported at once, unknown fields included (VAPORA's strict mode)", async () => {
    const r = await kiwi.run(["exec", "my_new_tool", "--unlocked", "--param", "name=A", "--param", "age=121", "--param", "email=nope", "--param", "extra=1"]);
    expect(r.exitCode).toBe(7);
    for (const line of ["params/age: must be <= 120 (got 121)", 'params/email: must be a valid email (got "nope")', "params/extra: is not a declared parameter", 'params/name: must be at least 3 characters long (got "A")']) {
      expect(r.stderr).toContain(line);
    }
  });

  test("between is inclusive, greater_than and less_than exclusive; Uuid, Url, match and a tagged union hold", async () => {
    const call = (...params: string[]) => kiwi.run(["exec", "kanban_create_task", "--unlocked", ...params.flatMap((p) => ["--param", p])]);
    const base = ["project_id=123e4567-e89b-12d3-a456-426614174000", "title=Fix it"];
    const ok = await call(...base, "priority=100", "estimate=999.5", "level=low", "link=https://x.test/a", "code=ABC-12");
    expect(ok.exitCode).toBe(0);
    expect(JSON.parse(ok.stdout).priority).toBe(100);
    const bad = await call("project_id=not-a-uuid", "title=ok!", "priority=101", "estimate=-1", "level=urgent", "link=not a url", "code=abc-1");
    expect(bad.exitCode).toBe(7);
    for (const field of ["project_id", "priority", "estimate", "level", "link", "code"]) expect(bad.stderr).toContain(`params/${field}:`);
  });

  test("a parameters file that is missing is an error naming the manifest and the file", async () => {
    const broken = makeProject({ ...VAPORA, ".ai/tools/my_new_tool/tool.yaml": VAPORA[".ai/tools/my_new_tool/tool.yaml"].replace("my_new_tool.params.yaml", "missing.yaml") });
    const { exitCode, findings } = await checkJson(kiwiIn(broken));
    expect(exitCode).not.toBe(0);
    expect(errorsOf(findings).map((f) => [f.file, f.rule, f.message])).toEqual([[".ai/tools/my_new_tool/tool.yaml", "parameters/file", 'parameters names the file "missing.yaml", but it is not a file inside the tool directory']]);
  });

  test("a nested schema in a JSON Schema parameters file, which kiwi does not enforce, is reported rather than dropped in silence", async () => {
    const nested = JSON.stringify({
      type: "object",
      properties: {
        opts: { type: "object", title: "Options", properties: { depth: { type: "integer", minimum: 1 } }, required: ["depth"], additionalProperties: false },
        ids: { type: "array", items: { type: "integer" } },
      },
    });
    const root = makeProject({ ...VAPORA, ".ai/tools/kanban_create_task/schema.json": nested });
    const { findings } = await checkJson(kiwiIn(root));
    const reported = (findings as { rule: string; file: string; message: string }[]).filter((f) => f.rule === "parameters/unknown-field");
    // opts's own "required" list goes with its properties, which are reported; "title" is an annotation.
    expect(reported.map((f) => [f.file, f.message]).sort()).toEqual(
      ['"additionalProperties"', '"items"', '"properties"'].map((key) => [".ai/tools/kanban_create_task/tool.yaml", `parameter field ${key} is not known`]),
    );
  });

  test("the parameters file is part of the tool: editing it changes the tool's integrity", async () => {
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    writeFileSync(join(root, ".ai/tools/my_new_tool/my_new_tool.params.yaml"), "- { name: name, type: string }\n");
    const r = await kiwi.run(["exec", "my_new_tool", "--param", "name=Ada"]);
    expect([r.exitCode, r.stderr]).toEqual([6, expect.stringContaining("E_INTEGRITY_MISMATCH")]);
  });
});
