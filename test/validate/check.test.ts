// Every validation rule through the library: a manifest that passes it and one that trips it,
// located on the right file and line. Tools are built through the real parsers (see _tools.ts).
import { describe, expect, test } from "bun:test";
import type { Finding } from "../../src/findings/verdict.ts";
import type { Project } from "../../src/manifest/discover-io.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";
import type { Tool } from "../../src/manifest/model.ts";
import { checkProject, resolveScope, withFindings } from "../../src/validate/check-project.ts";
import { RULES } from "../../src/findings/rules.ts";
import { syntaxFindings, planSyntaxChecks } from "../../src/validate/syntax.ts";
import { toolFromJson, toolFromYaml } from "./_tools.ts";

function projectOf(tools: Tool[], findings: Finding[] = []): Project {
  return { root: "/project", toolsDir: "/project/.ai/tools", tools: [...tools, ...builtinTools().filter((b) => !tools.some((t) => t.id === b.id))], findings };
}

function check(tools: Tool[], options: { strict?: boolean; only?: string[]; findings?: Finding[] } = {}) {
  return checkProject(projectOf(tools, options.findings), { strict: options.strict, only: options.only });
}

const yaml = (file: string, text: string, files: string[] = [], form: Tool["form"] = file.endsWith("/tool.yaml") ? "directory" : "file") =>
  toolFromYaml(text, { file, files, form, fallbackId: file.slice(file.lastIndexOf("/") + 1).replace(/\.[a-z]+$/, "") });

const script = (body = "", files = ["main.py"], id = "proc") =>
  yaml(`.ai/tools/${id}/tool.yaml`, `tool_id: ${id}\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n${body}`, files);
const api = (config: string, extra = "") => yaml(".ai/tools/weather.yaml", `tool_id: weather\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n${config}\n${extra}`);
const mcpServer = (config: string, executor = "subprocess") => yaml(".ai/tools/srv.yaml", `tool_id: srv\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: ${executor}\nconfig:\n${config}\nvalidation:\n  child_schemas:\n    - { match: { tool_type: mcp_tool }, schema: { type: object } }\n`);
const mcpTool = (executor: string, config = "  tool_name: echo") => yaml(".ai/tools/echo.yaml", `tool_id: echo\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: ${executor}\nconfig:\n${config}\n`);
const runtime = (body: string, id = "rt") => yaml(`.ai/tools/${id}.yaml`, `tool_id: ${id}\ntool_type: runtime\nversion: 1.0.0\n${body}`);
/** A magray tool.json that magray's own validator passes without a warning, with `doc` over it. */
const magray = (doc: Record<string, unknown>, files: string[] = []) =>
  toolFromJson(
    JSON.stringify({ name: "mg", version: "1.0.0", type: "native", entry_point: "bin/run", description: "d", metadata: { author: "A", license: "MIT", repository: "https://r.test", documentation: "https://d.test" }, ...doc }, null, 2),
    { file: ".ai/tools/mg/tool.json", files },
  );
const kiwiBinary = (type: "wasm" | "native", entry: string) =>
  yaml(".ai/tools/bin/tool.yaml", `tool_id: bin\ntool_type: ${type}\nversion: 1.0.0\nexecutor: ${type === "wasm" ? "wasm_runtime" : "subprocess"}\nconfig:\n  entrypoint: ${entry}\n`, [entry]);

/** [rule, valid tools, invalid tools, expected file, expected line, options]. */
type Row = [string, () => Tool[], () => Tool[], string, number | undefined, { strict?: boolean; only?: string[]; findings?: Finding[] }?];

const rows: Row[] = [
  ["universal/not-a-mapping", () => [script()], () => [yaml(".ai/tools/list.yaml", "- a\n- b\n")], ".ai/tools/list.yaml", 1],
  ["universal/field-type", () => [script("description: fine\n")], () => [script("description: [not, a, string]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["universal/field-type", () => [script("limits: { memory_mb: 64 }\n")], () => [script("limits: { memory_mb: lots }\n")], ".ai/tools/proc/tool.yaml", 7],
  ["universal/unknown-field", () => [script("description: x\n")], () => [script("descripton: x\n")], ".ai/tools/proc/tool.yaml", 7],
  ["universal/alias-conflict", () => [mcpServer("  transport: stdio\n  command: node"), mcpTool("srv", "  tool_name: echo\n  mcp_tool_name: echo")], () => [mcpServer("  transport: stdio\n  command: node"), mcpTool("srv", "  tool_name: echo\n  mcp_tool_name: ekko")], ".ai/tools/echo.yaml", 7],
  ["universal/alias-conflict", () => [script("entrypoint: main.py\n")], () => [script("manifest:\n  entrypoint: other.py\n", ["main.py", "other.py"])], ".ai/tools/proc/tool.yaml", 8],
  ["universal/alias-conflict", () => [script("executor_id: python_runtime\n")], () => [script("executor_id: bash_runtime\n")], ".ai/tools/proc/tool.yaml", 7],
  ["universal/id-format", () => [script()], () => [script("", ["main.py"], "My-Tool")], ".ai/tools/My-Tool/tool.yaml", 1],
  ["universal/type-unknown", () => [script()], () => [yaml(".ai/tools/x.yaml", "tool_id: x\ntool_type: scirpt\nversion: 1.0.0\nexecutor: python_runtime\n")], ".ai/tools/x.yaml", 2],
  ["universal/version-semver", () => [api("  url: https://example.com")], () => [yaml(".ai/tools/w.yaml", "tool_id: w\ntool_type: api\nversion: '1.0'\nexecutor: http_client\nconfig: { url: 'https://x.test' }\n")], ".ai/tools/w.yaml", 3],
  ["universal/version-semver", () => [api("  url: https://example.com")], () => [yaml(".ai/tools/w.yaml", "tool_id: w\ntool_type: api\nversion: 1.0\nexecutor: http_client\nconfig: { url: 'https://x.test' }\n")], ".ai/tools/w.yaml", 3],
  ["universal/executor-required", () => [script()], () => [yaml(".ai/tools/x.yaml", "tool_id: x\ntool_type: script\nversion: 1.0.0\n")], ".ai/tools/x.yaml", 1],
  ["universal/executor-forbidden", () => [yaml(".ai/tools/n.md", "tool_id: n\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\n", [], "markdown")], () => [yaml(".ai/tools/n.md", "tool_id: n\ntool_type: knowledge\nversion: 1.0.0\nexecutor: python_runtime\n", [], "markdown")], ".ai/tools/n.md", 4],
  ["universal/shadows-primitive", () => [runtime("executor: subprocess\nconfig: { command: python3 }\n")], () => [yaml(".ai/tools/subprocess.yaml", "tool_id: subprocess\ntool_type: primitive\nversion: 9.0.0\nexecutor: null\n")], ".ai/tools/subprocess.yaml", 1],
  ["script/language-mismatch", () => [script("language: python\n")], () => [script("manifest:\n  language: bash\n")], ".ai/tools/proc/tool.yaml", 8],
  ["script/runtime-language", () => [yaml(".ai/tools/ok.sh", "tool_id: ok\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\n", [], "script")], () => [yaml(".ai/tools/sh_on_py.sh", "tool_id: sh_on_py\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n", [], "script")], ".ai/tools/sh_on_py.sh", 4],
  ["universal/duplicate-id", () => [script(), script("", ["main.py"], "other")], () => [script(), yaml(".ai/tools/proc.yaml", "tool_id: proc\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://x.test' }\n")], ".ai/tools/proc.yaml", 1],
  ["security/reserved-key", () => [script()], () => [script("metadata:\n  __proto__: { admin: true }\n")], ".ai/tools/proc/tool.yaml", 8],
  ["security/reserved-key", () => [script()], () => [script("metadata: { constructor: x }\n")], ".ai/tools/proc/tool.yaml", 7],
  ["entrypoint/required", () => [script()], () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: {}\n", ["main.py"])], ".ai/tools/p/tool.yaml", 5],
  ["entrypoint/not-found", () => [script()], () => [script("", ["other.py"])], ".ai/tools/proc/tool.yaml", 6],
  ["entrypoint/not-found", () => [yaml(".ai/tools/wrap/tool.yaml", "tool_id: wrap\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: python3\n  entrypoint: boot.py\n", ["boot.py"])], () => [yaml(".ai/tools/wrap/tool.yaml", "tool_id: wrap\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: python3\n  entrypoint: boot.py\n", ["other.py"])], ".ai/tools/wrap/tool.yaml", 7],
  ["entrypoint/extension", () => [kiwiBinary("wasm", "t.wasm")], () => [kiwiBinary("wasm", "t.exe")], ".ai/tools/bin/tool.yaml", 6],
  ["entrypoint/extension", () => [kiwiBinary("native", "bin/run")], () => [kiwiBinary("native", "t.wasm")], ".ai/tools/bin/tool.yaml", 6],
  ["magray/type-entry", () => [magray({ type: "wasm", entry_point: "t.wasm" }, ["t.wasm"])], () => [magray({ type: "wasm", entry_point: "t.exe" }, ["t.exe"])], ".ai/tools/mg/tool.json", 5],
  ["magray/type-entry", () => [magray({}, ["bin/run"])], () => [magray({ entry_point: "t.wasm" }, ["t.wasm"])], ".ai/tools/mg/tool.json", 5],
  ["magray/type-entry", () => [magray({ type: "script", entry_point: "run.py", capabilities: ["ui"] }, ["run.py"])], () => [magray({ type: "script", entry_point: "run.ts", capabilities: ["ui"] }, ["run.ts"])], ".ai/tools/mg/tool.json", 5, { strict: true }],
  ["magray/missing-field", () => [magray({})], () => [magray({ description: "" })], ".ai/tools/mg/tool.json", 6],
  ["magray/missing-field", () => [magray({})], () => [magray({ metadata: { license: "MIT", repository: "r", documentation: "d" } })], ".ai/tools/mg/tool.json", 7],
  ["magray/version", () => [magray({ version: "10.0.0" })], () => [magray({ version: "1.2.3-beta" })], ".ai/tools/mg/tool.json", 3],
  ["magray/name", () => [magray({ name: "mg_tool-2" })], () => [magray({ name: "Bad Name" })], ".ai/tools/mg/tool.json", 2],
  ["magray/name-not-an-id", () => [magray({ name: "mg" })], () => [magray({ name: "Café" })], ".ai/tools/mg/tool.json", 2],
  ["magray/capability-required", () => [magray({ capabilities: ["ui"] })], () => [magray({ capabilities: [] })], ".ai/tools/mg/tool.json", 13, { strict: true }],
  ["magray/advice", () => [magray({})], () => [magray({ capabilities: ["shell"], permissions: { shell: ["execute"] } })], ".ai/tools/mg/tool.json", 13],
  ["script/executor-runtime", () => [script()], () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: subprocess\nconfig: { entrypoint: main.py }\n", ["main.py"])], ".ai/tools/p/tool.yaml", 4],
  ["api/executor", () => [api("  url: https://x.test")], () => [yaml(".ai/tools/a.yaml", "tool_id: a\ntool_type: api\nversion: 1.0.0\nexecutor: subprocess\nconfig: { url: 'https://x.test' }\n")], ".ai/tools/a.yaml", 4],
  ["api/method", () => [api("  method: post\n  url: https://x.test")], () => [api("  method: FETCH\n  url: https://x.test")], ".ai/tools/weather.yaml", 6],
  ["api/url", () => [api("  url: ${BASE_URL}/v1/items")], () => [api("  url: /v1/items")], ".ai/tools/weather.yaml", 6],
  ["api/url", () => [api("  url_template: https://x.test/{city}", "parameters: [{ name: city, type: string }]")], () => [api("  method: GET")], ".ai/tools/weather.yaml", 5],
  [
    "api/placeholder",
    () => [api("  url_template: https://x.test/{city}?k=${API_KEY}&lit={{brace}}", "parameters: [{ name: city, type: string }]")],
    () => [api("  url_template: https://x.test/{city}\n  headers: { X-Days: '{days}' }", "parameters: [{ name: city, type: string }]")],
    ".ai/tools/weather.yaml",
    7,
  ],
  ["api/url", () => [api("  url_template: https://${API_HOST}/v1/{city}", "parameters: [{ name: city, type: string }]")], () => [api("  url_template: https://{city}.x.test/v1", "parameters: [{ name: city, type: string }]")], ".ai/tools/weather.yaml", 6],
  [
    "api/host-undeclared",
    () => [api("  url: https://API.x.test:8443/v1", 'requires:\n  - net.outbound: ["*.x.test:8443"]')],
    () => [api("  url: https://api.x.test/v1", 'requires:\n  - net.outbound: ["x.test", "api.x.test:8443"]')],
    ".ai/tools/weather.yaml",
    6,
  ],
  ["api/host-undeclared", () => [api("  url: ${BASE_URL}/v1", 'requires:\n  - net.outbound: ["x.test"]')], () => [api("  url: http://127.0.0.1:8080/v1", 'requires:\n  - net.outbound: ["localhost:8080"]')], ".ai/tools/weather.yaml", 6],
  ["api/header-name", () => [api("  url: https://x.test\n  headers: { X-Api-Version: '2' }")], () => [api("  url: https://x.test\n  headers: { 'X Api Version': '2' }")], ".ai/tools/weather.yaml", 7],
  // An HTTP MCP server sends its headers on every request too.
  ["api/header-name", () => [mcpServer("  transport: streamable-http\n  url: https://mcp.test/mcp\n  headers: { X-Tenant: a }", "http_client")], () => [mcpServer("  transport: streamable-http\n  url: https://mcp.test/mcp\n  headers: { 'X Tenant': a }", "http_client")], ".ai/tools/srv.yaml", 8],
  ["api/response-transform", () => [api("  url: https://x.test\n  response_transform: \"$.forecast['daily'][0:7]\"")], () => [api("  url: https://x.test\n  response_transform: \"$..daily\"")], ".ai/tools/weather.yaml", 7],
  ["mcp_server/transport", () => [mcpServer("  transport: stdio\n  command: node")], () => [mcpServer("  transport: websocket\n  command: node")], ".ai/tools/srv.yaml", 6],
  ["mcp_server/command", () => [mcpServer("  transport: stdio\n  command: node")], () => [mcpServer("  transport: stdio")], ".ai/tools/srv.yaml", 5],
  ["mcp_server/url", () => [mcpServer("  transport: sse\n  url: https://mcp.test/sse", "http_client")], () => [mcpServer("  transport: sse", "http_client")], ".ai/tools/srv.yaml", 5],
  ["mcp_server/fetches-at-start", () => [yaml(".ai/tools/npx_srv.yaml", "tool_id: npx_srv\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: npx\nrequires:\n  - net.outbound: [registry.npmjs.org]\n")], () => [yaml(".ai/tools/npx_srv.yaml", "tool_id: npx_srv\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: npx\n")], ".ai/tools/npx_srv.yaml", 7],
  // An MCP bundle's uv server: uv run installs the project's dependencies before it starts the server.
  ["mcp_server/fetches-at-start", () => [yaml(".ai/tools/uv_srv.yaml", "tool_id: uv_srv\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: uv\n  args: [run, --offline, src/server.py]\n")], () => [yaml(".ai/tools/uv_srv.yaml", "tool_id: uv_srv\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: uv\n  args: [--directory, ., run, src/server.py]\n")], ".ai/tools/uv_srv.yaml", 7],
  ["mcp_server/executor", () => [mcpServer("  transport: stdio\n  command: node")], () => [mcpServer("  transport: stdio\n  command: npx", "http_client")], ".ai/tools/srv.yaml", 4],
  ["mcp_tool/executor", () => [mcpServer("  transport: stdio\n  command: node"), mcpTool("srv")], () => [mcpTool("subprocess")], ".ai/tools/echo.yaml", 4],
  ["mcp_tool/name", () => [mcpServer("  transport: stdio\n  command: node"), mcpTool("srv")], () => [mcpServer("  transport: stdio\n  command: node"), mcpTool("srv", "  other: 1")], ".ai/tools/echo.yaml", 5],
  ["runtime/executor", () => [runtime("executor: subprocess\nconfig: { command: ruby }\nvalidation: { child_schemas: [] }\n")], () => [runtime("executor: python_runtime\nconfig: { command: ruby }\n")], ".ai/tools/rt.yaml", 4],
  ["config/command-param", () => [runtime("executor: subprocess\nconfig: { command: \"${PYTHON}\" }\n")], () => [runtime("executor: subprocess\nconfig: { command: \"{interp}\" }\n")], ".ai/tools/rt.yaml", 5],
  ["config/env-name", () => [script("  env: { A_B: x }")], () => [script("  env: { \"A=B\": x }")], ".ai/tools/proc/tool.yaml", 7],
  ["config/stdin", () => [script("  stdin: none")], () => [script("  stdin: pipe")], ".ai/tools/proc/tool.yaml", 7],
  ["config/cwd", () => [script("  cwd: lib/", ["main.py", "lib/util.py"]), script("  cwd: ./", ["main.py"], "other")], () => [script("  cwd: work")], ".ai/tools/proc/tool.yaml", 7],
  ["runtime/endpoint", () => [runtime("executor: subprocess\nconfig: { command: ruby }\n")], () => [runtime("executor: subprocess\nconfig: { args: [] }\n")], ".ai/tools/rt.yaml", 5],
  ["knowledge/format", () => [yaml(".ai/tools/n.md", "tool_id: n\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\n", [], "markdown")], () => [yaml(".ai/tools/n.yaml", "tool_id: n\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\n")], ".ai/tools/n.yaml", 1],
  ["primitive/not-builtin", () => [script()], () => [yaml(".ai/tools/spawner.yaml", "tool_id: spawner\ntool_type: primitive\nversion: 1.0.0\nexecutor: null\n")], ".ai/tools/spawner.yaml", 2],
  ["deps/requirement", () => [script("requires: [npm:left-pad@1.3.0]\n")], () => [script("requires: [npm:left-pad@latest]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["deps/conflict", () => [script("requires: [npm:a@^1]\n")], () => [script("requires: [npm:a@^1, npm:a@^2]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["deps/installed-folder", () => [script("", ["main.py", "node_modules/a/index.js"]), script("requires: [pypi:httpx]\n", ["main.py", "lib/node_modules.py"])], () => [script("requires: [pypi:httpx]\n", ["main.py", "site-packages/httpx/__init__.py"])], ".ai/tools/proc/tool.yaml", 1],
  ["security/capability-unknown", () => [script("requires: [{ fs.read: [./data] }, requests]\n")], () => [script("requires: [{ fs.exec: [./bin] }]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/capability-unknown", () => [magray({ capabilities: ["ui"] }, ["bin/run"])], () => [magray({ capabilities: ["telepathy"] }, ["bin/run"])], ".ai/tools/mg/tool.json", 14],
  ["security/capability-permission", () => [magray({ capabilities: ["network"], permissions: { network: ["outbound"] } }, ["bin/run"])], () => [magray({ capabilities: ["network"] }, ["bin/run"])], ".ai/tools/mg/tool.json", 14],
  ["security/capability-path", () => [script("requires: [{ fs.read: [/etc, /usr/share/zoneinfo] }]\n")], () => [script("requires: [{ fs.read: [/proc/self] }]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/capability-path", () => [script("requires: [{ fs.write: [~/.cache/x, ./out] }]\n")], () => [script("requires: [{ fs.write: [/] }]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/capability-unscoped", () => [script("requires: [{ net.outbound: [api.example.com] }]\n")], () => [script("requires: [net.outbound]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/host-invalid", () => [script("requires: [{ net.outbound: ['api.example.com:443'] }]\n")], () => [script("requires: [{ net.outbound: ['https://api.example.com/v1'] }]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/host-any", () => [script("requires: [{ net.outbound: ['*.example.com'] }]\n")], () => [script("requires: [{ net.outbound: ['*'] }]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/limits", () => [magray({ runtime_config: { max_memory_mb: 64 } }, ["bin/run"])], () => [magray({ runtime_config: { max_memory_mb: 4096 } }, ["bin/run"])], ".ai/tools/mg/tool.json", 14],
  ["security/limits", () => [script("limits: { timeout_ms: 1000 }\n")], () => [script("limits: { timeout_ms: 0 }\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/limits-high", () => [script("limits: { memory_mb: 512 }\n")], () => [script("limits: { memory_mb: 1024 }\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/risky-combination", () => [script("requires: [shell.execute, { fs.read: [./d] }]\n")], () => [script("requires: [shell.execute, { net.outbound: [x.test] }, { fs.write: [./out] }]\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/secret-literal", () => [script("  env: { GH_TOKEN: '${GH_TOKEN}' }\n")], () => [script(`  env: { GH_TOKEN: ${"ghp_" + "x7".repeat(18)} }\n`)], ".ai/tools/proc/tool.yaml", 7],
  ["security/secret-value", () => [script("  env: { API_KEY: '${API_KEY}', PASSWORD_MIN_LENGTH: '8' }\n")], () => [script("  env: { API_KEY: 3f9a7c2e5b8d1f4a6c0e9b7d2a5f8c1e }\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/secret-in-args", () => [script("  env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' }\n  args: ['--repo', '${REPO}']\n")], () => [script("  args: ['--token', '${GITHUB_TOKEN}']\n")], ".ai/tools/proc/tool.yaml", 7],
  ["security/path", () => [script()], () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: ../../etc/passwd\n")], ".ai/tools/p/tool.yaml", 6],
  ["security/path", () => [magray({}, ["bin/run"])], () => [magray({ entry_point: "/usr/bin/env" })], ".ai/tools/mg/tool.json", 5],
  [
    "security/path",
    () => [script("", ["main.py"])],
    () => [script("", [])],
    ".ai/tools/proc/tool.yaml",
    6,
    { findings: [{ rule: "security/symlink-escape", severity: "error", file: ".ai/tools/proc/main.py", message: "the symbolic link resolves outside the tool directory" }] },
  ],
  ["chain/missing-executor", () => [script()], () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: pyhton_runtime\nconfig: { entrypoint: main.py }\n", ["main.py"])], ".ai/tools/p/tool.yaml", 4],
  ["chain/version-range", () => [script()], () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^^1\nconfig: { entrypoint: main.py }\n", ["main.py"])], ".ai/tools/p/tool.yaml", 4],
  ["chain/version-mismatch", () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1.0\nconfig: { entrypoint: main.py }\n", ["main.py"])], () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^2\nconfig: { entrypoint: main.py }\n", ["main.py"])], ".ai/tools/p/tool.yaml", 4],
  ["chain/cycle", () => [runtime("executor: subprocess\nconfig: { command: a }\n", "a")], () => [runtime("executor: b\nconfig: { command: a }\n", "a"), runtime("executor: a\nconfig: { command: b }\n", "b")], ".ai/tools/a.yaml", 4],
  ["chain/too-deep", () => chainOf(15), () => chainOf(17), ".ai/tools/t0.yaml", 4],
  [
    "chain/broken",
    () => [pScript(), runtime("executor: subprocess\nconfig: { command: x }\nvalidation: { child_schemas: [{ match: {}, schema: true }] }\n")],
    () => [pScript(), runtime("executor: missing_primitive\nconfig: { command: x }\nvalidation: { child_schemas: [{ match: {}, schema: true }] }\n")],
    ".ai/tools/p/tool.yaml",
    4,
    { only: ["p"] },
  ],
  ["chain/no-primitive", () => [script()], () => [runtime("executor: notes\nconfig: { command: x }\n"), yaml(".ai/tools/notes.md", "tool_id: notes\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\n", [], "markdown")], ".ai/tools/rt.yaml", 4],
  ["child-schema/missing", () => [runtime("executor: subprocess\nconfig: { command: ruby }\nvalidation: { child_schemas: [{ match: { tool_type: script }, schema: true }] }\n", "ruby_runtime"), rubyScript()], () => [runtime("executor: subprocess\nconfig: { command: ruby }\n", "ruby_runtime"), rubyScript()], ".ai/tools/ruby_runtime.yaml", 1],
  ["child-schema/invalid", () => [runtime("executor: subprocess\nconfig: { command: ruby }\nvalidation: { child_schemas: [{ match: { tool_type: script }, schema: { properties: { x: { pattern: '^[a-z]+$' } } } }] }\n", "ruby_runtime")], () => [runtime("executor: subprocess\nconfig: { command: ruby }\nvalidation: { child_schemas: [{ match: { tool_type: script }, schema: { properties: { x: { pattern: '^(a|a)*$' } } } }] }\n", "ruby_runtime")], ".ai/tools/ruby_runtime.yaml", 6],
  ["child-schema/invalid", () => [runtime("executor: subprocess\nconfig: { command: ruby }\nvalidation: { child_schemas: [{ match: {}, schema: { $ref: '#/$defs/a', $defs: { a: { type: object } } } }] }\n", "ruby_runtime")], () => [runtime("executor: subprocess\nconfig: { command: ruby }\nvalidation: { child_schemas: [{ match: {}, schema: { $ref: 'https://evil.test/s.json' } }] }\n", "ruby_runtime")], ".ai/tools/ruby_runtime.yaml", 6],
  ["child-schema/no-match", () => [mcpServer("  transport: stdio\n  command: node")], () => [yaml(".ai/tools/srv.yaml", "tool_id: srv\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { transport: stdio, command: x }\n")], ".ai/tools/srv.yaml", 4],
  ["ignore/invalid", () => [script(`  env: { GH_TOKEN: ${"ghp_" + "x7".repeat(18)} }  # kiwi-ignore: security/secret-literal\n`)], () => [script("  env: { GH_TOKEN: '${GH_TOKEN}' }  # kiwi-ignore: security/secret-litteral\n")], ".ai/tools/proc/tool.yaml", 7],
  ["ignore/unused", () => [script(`  env: { GH_TOKEN: ${"ghp_" + "x7".repeat(18)} }  # kiwi-ignore: security/secret-literal\n`)], () => [script("  env: { GH_TOKEN: '${GH_TOKEN}' }  # kiwi-ignore: security/secret-literal\n")], ".ai/tools/proc/tool.yaml", 7],
  ["child-schema/mismatch", () => [script()], () => [yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.rb\n", ["main.rb"])], ".ai/tools/p/tool.yaml", 6],
];

function chainOf(length: number): Tool[] {
  return Array.from({ length }, (_, i) => runtime(`executor: ${i === length - 1 ? "subprocess" : `t${i + 1}`}\nconfig: { command: x }\nvalidation: { child_schemas: [{ match: {}, schema: true }] }\n`, `t${i}`));
}

function pScript(): Tool {
  return yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig: { entrypoint: main.py }\n", ["main.py"]);
}

function rubyScript(): Tool {
  return yaml(".ai/tools/r/tool.yaml", "tool_id: r\ntool_type: script\nversion: 1.0.0\nexecutor: ruby_runtime\nconfig: { entrypoint: main.rb }\n", ["main.rb"]);
}

describe("every rule, valid and invalid", () => {
  test.each(rows)("%s", (rule, valid, invalid, file, line, options = {}) => {
    // Discovery findings (a symlink escape) belong to the invalid tree only.
    const good = check(valid(), { ...options, findings: [] });
    expect(good.findings.filter((f) => f.rule === rule)).toEqual([]);
    const bad = check(invalid(), options).findings.filter((f) => f.rule === rule);
    expect(bad.length).toBeGreaterThan(0);
    expect(bad[0]!.file).toBe(file);
    expect(bad[0]!.line).toBe(line);
    expect(bad[0]!.message.length).toBeGreaterThan(10);
    // Every finding says what to do about it.
    expect(bad.filter((f) => !f.hint).map((f) => f.message)).toEqual([]);
    expect(bad[0]!.severity as string).toBe(options.strict ? "error" : (RULES as Record<string, { severity: string }>)[rule]!.severity);
  });

  test("the valid manifests of the table are clean of errors", () => {
    const clean = [script(), api("  url: https://x.test"), mcpServer("  transport: stdio\n  command: node"), mcpTool("srv"), magray({}, ["bin/run"])];
    const result = check(clean);
    expect(result.findings.filter((f) => f.severity !== "info")).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.toolsChecked).toBe(5);
  });

  test("every validation rule of the table has a row here", () => {
    const covered = new Set(rows.map((r) => r[0]));
    // mcp_tool/unknown-name needs tool.lock.json's pins (check-io.ts): test/validate/mcp-names.test.ts covers it.
    // kiwi_mcp/* come from reading a Python module (test/manifest/python-module.test.ts).
    // skill/* and plugin/* come from discovery (test/manifest/skill.test.ts, plugin.test.ts).
    // security/remote-committed is the staged check's, about a commit (test/hook/staged.test.ts, test/e2e/hook.test.ts);
    // security/remote-unlocked needs the lockfile kiwi check reads (test/validate/file-secrets-io.test.ts, test/e2e/registry.test.ts).
    // ignore/expired is about an entry of .ai/kiwi-ignore.yaml on a given day (test/validate/ignore-file.test.ts).
    const own = Object.keys(RULES).filter((r) => !/^(parse|discover|parameters|kiwi_mcp|skill|plugin)\/|^security\/symlink|^security\/remote-(committed|unlocked)$|^ignore\/expired$|^mcp_tool\/unknown-name$/.test(r) && !r.startsWith("script/"));
    expect(own.filter((r) => !covered.has(r))).toEqual([]);
  });
});

describe("an id that is not text", () => {
  test("is universal/id-format at the field, saying what to write", () => {
    const found = check([yaml(".ai/tools/w.yaml", "tool_id: 5\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: https://x.test }\n")]).findings.filter((f) => f.rule === "universal/id-format");
    expect(found.map((f) => [f.line, f.message, f.hint])).toEqual([[1, "tool_id must be a string", "write tool_id as 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter: tool_id: weather"]]);
  });
});

describe("an executor a type needs", () => {
  test("is asked for with the type's article (an api tool)", () => {
    const found = check([yaml(".ai/tools/w.yaml", "tool_id: w\ntool_type: api\nversion: 1.0.0\nconfig: { url: https://x.test }\n")]).findings.filter((f) => f.rule === "universal/executor-required");
    expect(found.map((f) => f.message)).toEqual(["an api tool needs an executor"]);
  });
});

describe("a remote executor this checkout has not installed", () => {
  test("is named as such, with kiwi install as the fix, where a missing executor would suggest another id", () => {
    const tool = yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: sh_runtime\nconfig: { entrypoint: main.sh }\n", ["main.sh"]);
    const plain = checkProject(projectOf([tool]), {}).findings.filter((f) => f.rule === "chain/missing-executor");
    expect(plain.map((f) => f.message)).toEqual(['executor "sh_runtime" of p does not exist']);
    const named = checkProject(projectOf([tool]), { notInstalled: new Set(["sh_runtime"]) }).findings.filter((f) => f.rule === "chain/missing-executor");
    expect(named.map((f) => [f.severity, f.message, f.hint])).toEqual([["error", 'executor "sh_runtime" of p is a remote tool this checkout has not installed', 'run "kiwi install": it places the remote tools tool.lock.json records, then checks and locks']]);
  });
});

describe("strictness", () => {
  test.each([
    ["security/limits-high", [script("limits: { memory_mb: 1024 }\n")]],
    ["security/risky-combination", [script("requires: [shell.execute, { net.outbound: [x.test] }, { fs.write: [./out] }]\n")]],
    ["security/secret-in-args", [script("  args: ['--token=${API_KEY}']\n")]],
    ["security/secret-value", [script("  env: { DB_PASSWORD: 'my-super-secret-password' }\n")]],
    ["child-schema/missing", [runtime("executor: subprocess\nconfig: { command: ruby }\n", "ruby_runtime"), rubyScript()]],
  ])("--strict makes %s an error", (rule, tools) => {
    const loose = check(tools).findings.find((f) => f.rule === rule);
    const strict = check(tools, { strict: true }).findings.find((f) => f.rule === rule);
    expect([loose?.severity, strict?.severity]).toEqual(["warning", "error"]);
    expect(check(tools).ok).toBe(true);
    expect(check(tools, { strict: true }).ok).toBe(false);
  });
});

describe("a credential written into a manifest", () => {
  const found = (tools: Tool[]) => check(tools).findings.filter((f) => f.rule === "security/secret-literal");
  // Built here, not written out: a scanner of this repository must not find a key in its tests.
  const samples: [string, string][] = [
    ["GitHub token", "ghp_" + "aB3".repeat(12)],
    ["GitHub token", "github_pat_" + "11AB".repeat(6) + "_" + "xY9".repeat(19) + "xY"],
    ["GitLab token", "glpat-" + "Zx_9".repeat(5)],
    ["npm token", "npm_" + "kQ4".repeat(12)],
    ["PyPI token", "pypi-AgE" + "Ii".repeat(30)],
    ["Slack token", "xoxb-" + "1234567890-abcdef"],
    ["Slack webhook URL", "https://hooks.slack.com/services/T024BE7LD/B0A1B2C3D/" + "Xk3".repeat(8)],
    ["AWS access key id", "AKIA" + "ABCDEFGHIJKLMNOP"],
    ["Google API key", "AIza" + "Sy7".repeat(11) + "Sy"],
    ["Anthropic API key", "sk-ant-api03-" + "qW3e".repeat(10)],
    ["OpenAI API key", "sk-proj-" + "Qz5r".repeat(10)],
    ["Stripe secret key", "sk_" + "live_" + "4tG".repeat(8)],
    ["JSON Web Token", "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + "." + "sR2".repeat(14) + "s"],
    ["private key", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----"],
  ];

  test.each(samples)("a %s is an error at its field, shown by its first four characters only", (kind, value) => {
    const tool = api(`  url: https://api.test/v1\n  headers:\n    Authorization: ${JSON.stringify(`Bearer ${value}`)}\n`);
    const [finding, ...more] = found([tool]);
    expect(more).toEqual([]);
    expect([finding!.severity, finding!.line]).toEqual(["error", 8]);
    expect(finding!.message).toStartWith(`config.headers.Authorization holds what looks like ${["npm token", "AWS access key id", "Anthropic API key", "OpenAI API key"].includes(kind) ? "an" : "a"} ${kind} (${value.slice(0, 4)}…)`);
    expect(JSON.stringify(finding)).not.toContain(value.slice(0, 12));
    expect(check([tool]).ok).toBe(false);
  });

  test("the hint names the variable to set when the value is a config.env entry", () => {
    const hints = (env: string) => found([script(`  env: { ${env}: ${"npm_" + "kQ4".repeat(12)} }\n`)]).map((f) => f.hint);
    expect(hints("NPM_TOKEN")).toEqual([expect.stringContaining('write NPM_TOKEN: "${NPM_TOKEN}" and set NPM_TOKEN where kiwi runs')]);
    expect(hints("REGISTRY_AUTH")).toEqual([expect.stringContaining("(and list REGISTRY_AUTH in config.secrets)")]);
    // Already listed: the hint does not ask for it again.
    const listed = found([script(`  env: { REGISTRY_AUTH: ${"npm_" + "kQ4".repeat(12)} }\n  secrets: [REGISTRY_AUTH]\n`)]).map((f) => f.hint);
    expect(listed).toEqual([expect.stringContaining('write REGISTRY_AUTH: "${REGISTRY_AUTH}" and set REGISTRY_AUTH where kiwi runs;')]);
  });

  test("anywhere in any dialect: an argument, a nested value, a magray field", () => {
    const key = "AKIA" + "Z7QW".repeat(4);
    expect(found([script(`  args: ['--key', '${key}']\n  extra: { deep: [{ k: '${key}' }] }\n`)]).map((f) => f.message.slice(0, f.message.indexOf(" holds")))).toEqual(["config.args.1", "config.extra.deep.0.k"]);
    expect(found([magray({ description: `uses ${key}` }, ["bin/run"])]).map((f) => [f.file, f.line])).toEqual([[".ai/tools/mg/tool.json", 6]]);
  });

  test("the hint shows the kiwi-ignore comment for a published example where the manifest can hold one, and the ignore file's entry in JSON", () => {
    const key = "AKIA" + "Z7QW".repeat(4);
    const [inYaml] = found([script(`  env: { AWS_ACCESS_KEY_ID: ${key} }\n`)]);
    expect(inYaml!.hint).toEndWith("; if it is a published example and no credential, say so on its line: # kiwi-ignore: security/secret-literal -- <why>");
    const [inJson] = found([magray({ description: `uses ${key}` }, ["bin/run"])]);
    expect(inJson!.hint).toEndWith("; if it is a published example and no credential, say so in .ai/kiwi-ignore.yaml (rule: security/secret-literal, tool: mg, reason: <why>)");
  });

  test("a placeholder in a token's place is no finding (AWS's documented …EXAMPLE ids among them); a real key beside one still is", () => {
    const placeholders = ["AKIAIOSFODNN7" + "EXAMPLE", "ghp_" + "X".repeat(36), "xoxb-" + "your-bot-token-here", "sk-proj-" + "0".repeat(40), "https://hooks.slack.com/services/" + "T00000000/B00000000/" + "X".repeat(24), "npm_" + "REDACTED".repeat(4) + "abcd", "sk-ant-" + "placeholder".repeat(3), "AIza" + "DUMMY".repeat(7)];
    for (const p of placeholders) expect([p, found([script(`  env: { TOKEN: '${p}' }\n`)])]).toEqual([p, []]);
    const real = "AKIA" + "Z7QW".repeat(4);
    expect(found([script(`  args: ['${placeholders[0]} ${real}']\n`)]).map((f) => f.message.slice(0, f.message.indexOf(";")))).toEqual(["config.args.0 holds what looks like an AWS access key id (AKIA…)"]);
    // A private key's header is fixed text: no stand-in.
    expect(found([script(`  env: { KEY: '-----BEGIN RSA ${"PRIVATE"} KEY----- xxxxxxxxxx' }\n`)])).toHaveLength(1);
  });

  test("a reference, a placeholder, a short look-alike or a truncated example is no finding", () => {
    const tools = [
      script("  env: { GH_TOKEN: '${GH_TOKEN}', OPENAI_API_KEY: '${OPENAI_API_KEY}' }\n  args: ['sk-learn', 'ghp_...', 'AKIA...', 'xoxb-', 'eyJhbGciOi']\n"),
      yaml(".ai/tools/doc.md", "tool_id: doc\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: 'Set GH_TOKEN to a token (ghp_…) in your environment'\n", [], "markdown"),
    ];
    expect(found(tools)).toEqual([]);
  });
});

describe("a literal value under a secret's name", () => {
  const found = (tools: Tool[]) => check(tools).findings.filter((f) => f.rule === "security/secret-value");

  test("a random-looking literal in a secret variable or a credential header is a warning naming the field, its length and two characters", () => {
    const tools = [
      script("  env:\n    SIGNING_SECRET: Zx8kP2mQ9vL4nR7tW1yB5cD3\n    REPORT_CREDENTIALS: dGhpcyBpcyBhIHNlY3JldCBrZXk=\n    DSN: 9b7d2a5f8c1e3f9a7c2e5b8d1f4a6c0e\n  secrets: [DSN]\n"),
      api("  url: https://api.test/v1\n  headers:\n    Authorization: Bearer Zx8kP2mQ9vL4nR7tW1yB5cD3\n    X-Api-Key: 1234567890abcdef\n    Accept: 3f9a7c2e5b8d1f4a6c0e9b7d2a5f8c1e\n"),
    ];
    expect(found(tools).map((f) => [f.file, f.line, f.severity, f.message.slice(0, f.message.indexOf(";"))])).toEqual([
      [".ai/tools/proc/tool.yaml", 8, "warning", "config.env.SIGNING_SECRET holds a literal value that looks like a secret (24 random-looking characters, Zx…)"],
      [".ai/tools/proc/tool.yaml", 9, "warning", "config.env.REPORT_CREDENTIALS holds a literal value that looks like a secret (28 random-looking characters, dG…)"],
      [".ai/tools/proc/tool.yaml", 10, "warning", "config.env.DSN holds a literal value that looks like a secret (32 random-looking characters, 9b…)"],
      [".ai/tools/weather.yaml", 8, "warning", "config.headers.Authorization holds a literal value that looks like a secret (24 random-looking characters, Zx…)"],
      [".ai/tools/weather.yaml", 9, "warning", "config.headers.X-Api-Key holds a literal value that looks like a secret (16 random-looking characters, 12…)"],
    ]);
    expect(found(tools)[0]!.hint).toContain('write SIGNING_SECRET: "${SIGNING_SECRET}"');
    expect(found(tools)[3]!.hint).toContain('(Authorization: "Bearer ${NAME}")');
    expect(JSON.stringify(found(tools))).not.toContain("Zx8kP2");
  });

  test("a reference, a URL, a path, a word, a number, a header name or a known credential (secret-literal's) is no warning", () => {
    const key = "ghp_" + "Zx8kP2mQ9vL4nR7tW1yB5cD3" + "q7Wm4Rt8Yp2K";
    const tools = [
      script(
        `  env:\n    GH_TOKEN: '\${GH_TOKEN}'\n    TOKEN_URL: https://auth.test/oauth2/token\n    API_KEY_FILE: /run/secrets/api_key_for_the_service\n    PASSWORD_MIN_LENGTH: '12'\n    API_KEY_HEADER: X-Api-Key\n    TOKEN_SCOPES: repo,read:org,workflow\n    PLACEHOLDER_TOKEN: xxxxxxxxxxxxxxxxxxxxxxxx\n    OTHER_TOKEN: ${key}\n    LOG_LEVEL: 9b7d2a5f8c1e3f9a7c2e5b8d1f4a6c0e\n`,
      ),
      api("  url: https://api.test/v1\n  headers:\n    Authorization: 'Bearer ${TOKEN}'\n    Accept: application/json\n"),
    ];
    expect(found(tools)).toEqual([]);
    expect(check(tools).findings.filter((f) => f.rule === "security/secret-literal").length).toBe(1);
  });
});

describe("a literal password", () => {
  const found = (tools: Tool[]) => check(tools).findings.filter((f) => f.rule === "security/secret-value");

  test("under a name that ends in PASSWORD any literal is a warning, however plain: people choose passwords", () => {
    const tools = [script("  env:\n    DB_PASSWORD: postgres\n    SMTP_PASSWD: changeme\n    KEY_PASSPHRASE: correct horse battery staple\n    ADMIN_PASSWORD: 'hunter2'\n")];
    expect(found(tools).map((f) => [f.line, f.severity, f.message.slice(0, f.message.indexOf(";"))])).toEqual([
      [8, "warning", "config.env.DB_PASSWORD holds a literal password (8 characters, po…)"],
      [9, "warning", "config.env.SMTP_PASSWD holds a literal password (8 characters, ch…)"],
      [10, "warning", "config.env.KEY_PASSPHRASE holds a literal password (28 characters, co…)"],
      [11, "warning", "config.env.ADMIN_PASSWORD holds a literal password (7 characters, hu…)"],
    ]);
    expect(found(tools)[0]!.hint).toContain('write DB_PASSWORD: "${DB_PASSWORD}" and set DB_PASSWORD where kiwi runs');
    expect(JSON.stringify(found(tools))).not.toContain("postgres");
    expect(check(tools, { strict: true }).ok).toBe(false);
  });

  test("a reference, an empty value, a file, or a name that only mentions a password is no warning", () => {
    const tools = [script("  env:\n    DB_PASSWORD: '${DB_PASSWORD}'\n    EMPTY_PASSWORD: ''\n    PASSWORD_FILE: /run/secrets/db\n    PASSWORD_MIN_LENGTH: '12'\n    ROOT_PASSWORD: ./secrets/root.txt\n")];
    expect(found(tools)).toEqual([]);
  });
});

describe("a secret on the command line", () => {
  const secretFindings = (tools: Tool[]) => check(tools).findings.filter((f) => f.rule === "security/secret-in-args");

  test("each secret in each argument is named, at the argument's line, with config.env as the way out", () => {
    const found = secretFindings([script("  args:\n    - --token=${GH_TOKEN}\n    - --user\n    - ${DB_PASSWORD}:${GH_TOKEN}\n")]);
    expect(found.map((f) => [f.line, f.message.slice(0, f.message.indexOf(" on "))])).toEqual([
      [8, "config.args[0] passes ${GH_TOKEN}"],
      [10, "config.args[2] passes ${DB_PASSWORD}"],
      [10, "config.args[2] passes ${GH_TOKEN}"],
    ]);
    expect(found[0]!.hint).toContain('config.env instead (GH_TOKEN: "${GH_TOKEN}") if the tool can read it');
  });

  test("a name config.secrets lists counts, whatever it looks like; a plain variable does not", () => {
    const found = secretFindings([script("  secrets: [DSN]\n  args: ['${DSN}', '${HOME}/out', '{query}']\n")]);
    expect(found.map((f) => f.message.slice(0, f.message.indexOf(" on ")))).toEqual(["config.args[0] passes ${DSN}"]);
  });

  test("kiwi_mcp's base_args and a command are read too; a literal $ that is no placeholder is not", () => {
    const rt = runtime("executor: subprocess\nconfig:\n  command: ${TOOL_SECRET_BIN}\n  base_args: ['-u', '${SIGNING_KEY_PASSPHRASE}', '$API_TOKEN']\n");
    expect(secretFindings([rt]).map((f) => [f.line, f.message.slice(0, f.message.indexOf(" on "))])).toEqual([
      [6, "config.command passes ${TOOL_SECRET_BIN}"],
      [7, "config.base_args[1] passes ${SIGNING_KEY_PASSPHRASE}"],
    ]);
  });

  test("a parameter named as a secret in an argument is one too; a count of tokens or a key of another kind is not", () => {
    const found = secretFindings([script("  args: ['--token', '{token}', '--key={apiKey}', '{max_tokens}', '{sort_key}', '{db_password}{passwordless}{token_count}{password_file}']\n")]);
    expect(found.map((f) => [f.line, f.message.slice(0, f.message.indexOf(" on "))])).toEqual([
      [7, "config.args[1] passes the parameter {token}"],
      [7, "config.args[2] passes the parameter {apiKey}"],
      [7, "config.args[5] passes the parameter {db_password}"],
    ]);
    expect(found[0]!.hint).toBe('leave it to the parameters on stdin (the default), or pass it in config.env (TOKEN: "{token}"); --strict makes this an error');
    expect(secretFindings([script("  env: { API_KEY: '{api_key}' }\n  args: ['{{token}}']\n")])).toEqual([]);
  });

  test("a secret in config.env, the way it should go, is no finding", () => {
    expect(secretFindings([script("  env: { GH_TOKEN: '${GH_TOKEN}', API_KEY: '${API_KEY}' }\n  args: ['-v']\n")])).toEqual([]);
  });
});

describe("kiwi-ignore comments", () => {
  // Built here, not written out: a scanner of this repository must not find a key in its tests.
  const token = "ghp_" + "x7".repeat(18);
  const rules = (findings: readonly Finding[]) => findings.map((f) => [f.rule, f.line]);

  test("a comment after a value lets that line's finding through: not counted, not an error, listed with its reason", () => {
    const result = check([script(`  env: { GH_TOKEN: ${token} }  # kiwi-ignore: security/secret-literal -- a revoked example\n`)]);
    expect(result.ok).toBe(true);
    expect(result.counts).toEqual({ error: 0, warning: 0, info: 0 });
    expect(result.findings).toEqual([]);
    expect(result.ignored.map((f) => [f.rule, f.severity, f.line, f.ignoredBy])).toEqual([["security/secret-literal", "error", 7, { line: 7, reason: "a revoked example" }]]);
  });

  test("a comment alone on its line covers the next line, and only that one", () => {
    const above = check([script(`  # kiwi-ignore: security/secret-literal\n  env: { GH_TOKEN: ${token} }\n`)]);
    expect([above.ok, rules(above.ignored), rules(above.findings)]).toEqual([true, [["security/secret-literal", 8]], []]);
    const twoAbove = check([script(`  # kiwi-ignore: security/secret-literal\n  description_extra: 1\n  env: { GH_TOKEN: ${token} }\n`)]);
    expect(twoAbove.ok).toBe(false);
    expect(rules(twoAbove.findings)).toEqual([
      ["ignore/unused", 7],
      ["security/secret-literal", 9],
    ]);
    expect(twoAbove.findings[0]!.message).toBe("the kiwi-ignore comment names security/secret-literal, which reports nothing on line 8 (the line below it)");
  });

  test("one comment names several rules, warnings and errors alike; a rule it does not name stays", () => {
    const tool = script(`  env: { GH_TOKEN: ${token}, API_KEY: 3f9a7c2e5b8d1f4a6c0e9b7d2a5f8c1e }  # kiwi-ignore: security/secret-literal, security/secret-value\n  args: ['--t', '\${GITHUB_TOKEN}']  # kiwi-ignore: security/secret-literal\n`);
    const result = check([tool]);
    expect(rules(result.ignored)).toEqual([
      ["security/secret-literal", 7],
      ["security/secret-value", 7],
    ]);
    expect(rules(result.findings)).toEqual([
      ["security/secret-in-args", 8],
      ["ignore/unused", 8],
    ]);
  });

  test("a warning --strict makes an error is still let through", () => {
    const tool = script("  args: ['--token=${API_KEY}']  # kiwi-ignore: security/secret-in-args\n");
    const strict = check([tool], { strict: true });
    expect([strict.ok, rules(strict.ignored), strict.findings]).toEqual([true, [["security/secret-in-args", 7]], []]);
  });

  test("an error kiwi cannot lock or run past stays, and the comment says it cannot ignore it", () => {
    const tool = yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: ../../etc/passwd  # kiwi-ignore: security/path\n");
    const result = check([tool]);
    expect(result.ok).toBe(false);
    expect(result.ignored).toEqual([]);
    expect(rules(result.findings.filter((f) => f.rule === "security/path" || f.rule.startsWith("ignore/")))).toEqual([
      ["security/path", 6],
      ["ignore/invalid", 6],
    ]);
    expect(result.findings.find((f) => f.rule === "ignore/invalid")!.message).toBe("the kiwi-ignore comment names security/path, an error kiwi cannot lock or run past: it cannot be ignored");
  });

  test.each([
    ["a misspelt rule, with the rule it is near", "# kiwi-ignore: security/secret-litteral", "the kiwi-ignore comment names security/secret-litteral, which is not one of kiwi's rules", "did you mean security/secret-literal?"],
    ["a word that is no rule id", "# kiwi-ignore: secret-literal", 'the kiwi-ignore comment names "secret-literal", which is not a rule id', "name rules as kiwi check prints them (layer/name), separated by commas; a reason goes after --"],
    ["no colon", "# kiwi-ignore security/secret-literal", "the kiwi-ignore comment has no colon, so it names no rule", "write it as # kiwi-ignore: <rule>[, <rule>] -- <reason>"],
    ["no rule at all", "# kiwi-ignore: -- just because", "the kiwi-ignore comment names no rule", "name the rule it lets through: # kiwi-ignore: security/secret-literal -- why"],
    ["an ignore rule", "# kiwi-ignore: ignore/unused", "the kiwi-ignore comment names ignore/unused, which reports on kiwi-ignore comments and entries themselves: it cannot be ignored", "fix or remove the comment or entry it reports"],
  ])("%s ignores nothing and is a warning at the comment", (_name, comment, message, hint) => {
    const result = check([script(`  env: { GH_TOKEN: ${token} }  ${comment}\n`)]);
    expect(result.ok).toBe(false);
    expect(result.ignored).toEqual([]);
    const [own, ...rest] = result.findings.filter((f) => f.rule === "ignore/invalid");
    expect(rest).toEqual([]);
    expect([own!.severity, own!.line, own!.column, own!.tool, own!.message, own!.hint]).toEqual(["warning", 7, 64, "proc", message, hint]);
  });

  test("a comment in one tool's manifest ignores nothing in another's, and an out-of-scope tool's comments are not judged", () => {
    const ignoring = yaml(".ai/tools/quiet/tool.yaml", "tool_id: quiet\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n  # kiwi-ignore: security/secret-literal\n", ["main.py"]);
    const loud = script(`  env: { GH_TOKEN: ${token} }\n`);
    const all = check([ignoring, loud]);
    expect(all.findings.map((f) => [f.rule, f.file])).toEqual([
      ["security/secret-literal", ".ai/tools/proc/tool.yaml"],
      ["ignore/unused", ".ai/tools/quiet/tool.yaml"],
    ]);
    expect(check([ignoring, loud], { only: ["proc"] }).findings.map((f) => f.rule)).toEqual(["security/secret-literal"]);
  });

  test("findings added later (the interpreter checks) meet the comments too, and the verdict on each comment is taken again", () => {
    const tool = yaml(".ai/tools/s/tool.yaml", "tool_id: s\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig: { entrypoint: run.sh }  # kiwi-ignore: script/interpreter-missing\n", ["run.sh"]);
    const base = check([tool]);
    expect(rules(base.findings)).toEqual([["ignore/unused", 5]]);
    const requests = planSyntaxChecks([tool]);
    const merged = withFindings(base, syntaxFindings(requests, { verdicts: new Map(), missing: new Set(["bash"]) }));
    expect(merged.findings).toEqual([]);
    expect(rules(merged.ignored)).toEqual([["script/interpreter-missing", 5]]);
    expect(merged.counts).toEqual({ error: 0, warning: 0, info: 0 });
  });
});

describe("findings speak the user's dialect", () => {
  test("magray tools are reported at magray field names", () => {
    const result = check([magray({ name: "Bad Name", runtime_config: { max_execution_time_ms: 900000 }, capabilities: ["shell"] })]);
    const pointers = result.findings.map((f) => [f.rule, f.pointer]);
    expect(pointers).toContainEqual(["magray/name", "/name"]);
    expect(pointers).toContainEqual(["security/limits", "/runtime_config/max_execution_time_ms"]);
    expect(pointers).toContainEqual(["security/capability-permission", "/capabilities/0"]);
    expect(result.findings.find((f) => f.rule === "security/limits")!.message).toContain("runtime_config.max_execution_time_ms");
  });

  test("a limit past 2^53 is refused without naming the rounded number kiwi read", () => {
    const messages = (body: string) => check([script(body)]).findings.filter((f) => f.rule === "security/limits").map((f) => f.message);
    expect(messages("limits: { fuel: 9007199254740993 }\n")).toEqual(["limits.fuel is larger than 9007199254740991, past what kiwi reads exactly; it must be between 1 and 100000000 units of fuel"]);
    expect(messages("limits: { memory_mb: -9007199254740993 }\n")).toEqual(["limits.memory_mb is smaller than -9007199254740991, past what kiwi reads exactly; it must be between 1 and 2048 MB"]);
    expect(messages("limits: { fuel: 100000001 }\n")).toEqual(["limits.fuel is 100000001; it must be between 1 and 100000000 units of fuel"]);
  });

  test("child_schemas match magray children through the model's tool_type", () => {
    const good = magray({ type: "script", entry_point: "main.py" }, ["main.py"]);
    const bad = magray({ type: "script", entry_point: "main.sh" }, ["main.sh"]);
    expect(check([good]).findings.filter((f) => f.rule.startsWith("child-schema/"))).toEqual([]);
    // main.sh maps to bash_runtime, whose child schema accepts it; a .py under bash would not.
    expect(check([bad]).findings.filter((f) => f.rule.startsWith("child-schema/"))).toEqual([]);
  });

  test("a magray entry point holding '..' anywhere is refused as magray refuses it; kiwi's dialect refuses only a '..' segment", () => {
    const mg = check([magray({ entry_point: "bin..x" }, ["bin..x"])]).findings.filter((f) => f.rule === "security/path");
    expect(mg.map((f) => [f.pointer, f.severity, f.message])).toEqual([["/entry_point", "error", 'Security validation error: Entry point contains potentially dangerous path components ("bin..x" holds \'..\')']]);
    const own = yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: a..b.py }\n", ["a..b.py"]);
    expect(check([own]).findings.filter((f) => f.rule === "security/path")).toEqual([]);
  });

  test("a list with one bad item is told about that item, not that it should be a list or a mapping", () => {
    const found = check([magray({ capabilities: ["filesystem"], permissions: { filesystem: ["read", "execute"] } }, ["bin/run"])]).findings.filter((f) => f.rule === "universal/field-type");
    expect(found.map((f) => [f.pointer, f.message])).toEqual([["/permissions/filesystem/1", '/permissions/filesystem/1 must be one of "read", "write"']]);
  });

  test("an unknown field suggests the field it probably meant", () => {
    const finding = check([script("descripton: x\n")]).findings.find((f) => f.rule === "universal/unknown-field")!;
    expect(finding.hint).toBe('did you mean "description"?');
  });
});

describe("scope", () => {
  const tools = () => [
    script(),
    yaml(".ai/tools/p/tool.yaml", "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig: { entrypoint: main.py }\n", ["main.py"]),
    runtime("executor: missing_primitive\nconfig: { command: x }\nvalidation: { child_schemas: [{ match: {}, schema: true }] }\n"),
  ];

  test("only reports on the given tools, by id or path", () => {
    const byId = check(tools(), { only: ["proc"] });
    expect(new Set(byId.findings.map((f) => f.file))).toEqual(new Set());
    expect(byId.toolsChecked).toBe(1);
    const byPath = check(tools(), { only: [".ai/tools/rt.yaml"] });
    expect(byPath.findings.map((f) => f.rule)).toEqual(["chain/missing-executor"]);
  });

  test("chain rules still see the whole tree: a break below an unchecked tool is chain/broken", () => {
    const result = check(tools(), { only: [".ai/tools/p"] });
    expect(result.findings.map((f) => [f.rule, f.file])).toEqual([["chain/broken", ".ai/tools/p/tool.yaml"]]);
    expect(result.findings[0]!.message).toContain("breaks at rt");
  });

  test("a path matching nothing is reported as unmatched", () => {
    expect(check(tools(), { only: ["nope", "proc"] }).unmatched).toEqual(["nope"]);
  });

  test.each([
    ["the project folder (\"\")", [""], ["p", "proc", "rt"]],
    ["the project folder (\".\")", ["."], ["p", "proc", "rt"]],
    ["a file inside a folder tool", [".ai/tools/p/main.py"], ["p"]],
    ["a folder tool's own folder", [".ai/tools/proc"], ["proc"]],
    ["a folder whose name only starts with a tool's folder name", [".ai/tools/pr", ".ai/tools/p/"], ["p"]],
    ["a path below a tool's manifest file", [".ai/tools/rt.yaml/x"], []],
    ["a tool's id", ["rt"], ["rt"]],
  ])("selects by %s exactly the tools a path or id names", (_name, only, expected) => {
    const project = projectOf(tools());
    const result = checkProject(project, { only });
    expect(result.toolsChecked).toBe(expected.length);
    // In project order, as the project lists them.
    expect(resolveScope(project, only).tools.map((t) => t.id)).toEqual(project.tools.map((t) => t.id).filter((id) => expected.includes(id)));
  });

  test("judges a child's link against its executor's child_schemas when either side is in scope, by path or by id", () => {
    const tree = () => [
      runtime("executor: subprocess\nconfig: { command: x }\nvalidation: { child_schemas: [{ match: { tool_type: script }, schema: { type: object, required: [config], properties: { config: { type: object, required: [flag] } } } }] }\n"),
      yaml(".ai/tools/kid/tool.yaml", "tool_id: kid\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig: { entrypoint: main.py }\n", ["main.py"]),
      yaml(".ai/tools/other.yaml", "tool_id: other\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://x.test' }\n"),
    ];
    const mismatch = (only: string[]) => check(tree(), { only }).findings.filter((f) => f.rule === "child-schema/mismatch").map((f) => f.file);
    expect(mismatch([".ai/tools/kid/main.py"])).toEqual([".ai/tools/kid/tool.yaml"]);
    expect(mismatch(["kid"])).toEqual([".ai/tools/kid/tool.yaml"]);
    expect(mismatch([".ai/tools/rt.yaml"])).toEqual([".ai/tools/kid/tool.yaml"]);
    expect(mismatch(["rt"])).toEqual([".ai/tools/kid/tool.yaml"]);
    expect(mismatch([".ai/tools/other.yaml"])).toEqual([]);
  });
});

describe("built-ins", () => {
  test("kiwi's own tools are clean", () => {
    const result = check([]);
    expect(result.findings).toEqual([]);
    expect(result.toolsChecked).toBe(0);
  });

  test("a built-in named by its id is checked and counted, as any tool named is", () => {
    const result = check([], { only: ["python_runtime", "subprocess"] });
    expect([result.findings, result.unmatched, result.toolsChecked]).toEqual([[], [], 2]);
  });
});

describe("script syntax findings", () => {
  test("interpreter verdicts become findings on the script, and a missing interpreter is one warning", () => {
    const tools = [script(), script("", ["main.py"], "other"), yaml(".ai/tools/s/tool.yaml", "tool_id: s\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig: { entrypoint: run.sh }\n", ["run.sh"])];
    const requests = planSyntaxChecks(tools);
    expect(requests.map((r) => [r.language, r.file])).toEqual([
      ["python", ".ai/tools/proc/main.py"],
      ["python", ".ai/tools/other/main.py"],
      ["bash", ".ai/tools/s/run.sh"],
    ]);
    const findings = syntaxFindings(requests, {
      verdicts: new Map([
        [requests[0]!.abs, { ok: false, line: 3, column: 7, message: "invalid syntax" }],
        [requests[1]!.abs, { ok: true }],
      ]),
      missing: new Set(["bash"]),
    });
    expect(findings.map((f) => [f.rule, f.severity, f.file, f.line])).toEqual([
      ["script/interpreter-missing", "warning", ".ai/tools/s/tool.yaml", 5],
      ["script/syntax", "error", ".ai/tools/proc/main.py", 3],
    ]);
  });
});
