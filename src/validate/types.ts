// Layer 2, per-type rules: entry points, executors by kind, HTTP method/URL/placeholders, MCP
// transports, runtimes, knowledge form, wasm/native extensions. Script syntax checks are I/O and
// live in syntax.ts / syntax-io.ts. Pure.
import type { Finding } from "../findings/verdict.ts";
import { PRIMITIVES, type Tool } from "../manifest/model.ts";
import { SCRIPT_RUNTIMES } from "../manifest/normalize.ts";
import { toolFinding } from "../findings/finding.ts";
import { type LayerContext, executorOf, normalizeRel, seg, toolPath } from "./layer.ts";
import { toolPathProblem } from "../integrity/tool-path.ts";
import { isRecord } from "../integrity/value.ts";
import { HEADER_NAME, PLACEHOLDER, URL_AUTHORITY, referencedParams } from "../schema/placeholders.ts";
import { STDIN_MODES, isEnvName } from "../schema/vocabulary.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";
import { readJsonPath } from "./jsonpath-parse.ts";

/** HTTP methods an api tool may use. */
export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;
/** MCP transports and the primitive each runs on. */
/** Commands that fetch the package they run when they start. */
/** Launchers that download the server when it starts (they need the network in the sandbox). */
export const FETCHING_LAUNCHERS: ReadonlySet<string> = new Set(["npx", "uvx", "pipx", "bunx", "pnpx"]);

/**
 * The launcher a stdio server's command starts that downloads what it runs when it starts: npx,
 * uvx and the like, or `uv run` (uv resolves and installs the project's dependencies first, as an
 * MCP bundle's uv server does), unless `--offline`. Undefined for a command that runs what it has.
 */
export function fetchingLauncher(config: Record<string, unknown>): string | undefined {
  const command = typeof config.command === "string" ? config.command.split("/").pop()! : "";
  if (FETCHING_LAUNCHERS.has(command)) return command;
  const args = Array.isArray(config.args) ? config.args.map(String) : [];
  const end = args.indexOf("--");
  const own = end === -1 ? args : args.slice(0, end);
  if (command === "uv" && own.includes("run") && !own.includes("--offline")) return "uv run";
  return undefined;
}

/** `http` is rye-os's spelling of streamable-http (its MCP tools accept stdio, http and sse). */
export const MCP_TRANSPORTS: Record<string, (typeof PRIMITIVES)[number]> = { stdio: "subprocess", "streamable-http": "http_client", http: "http_client", sse: "http_client" };

/** Per-type findings for one tool whose type is known. */
export function checkType(tool: Tool, ctx: LayerContext): Finding[] {
  const out: Finding[] = [];
  switch (tool.type) {
    case "script":
      entrypoint(tool, ctx, out);
      subprocessConfig(tool, out);
      executorKind(tool, ctx, out, "script/executor-runtime", (e) => e.type === "runtime", "a runtime", "python_runtime, bash_runtime, node_runtime or bun_runtime");
      runtimeLanguage(tool, out);
      declaredLanguage(tool, out);
      break;
    case "wasm":
    case "native":
      entrypoint(tool, ctx, out);
      subprocessConfig(tool, out);
      break;
    case "api":
      api(tool, ctx, out);
      break;
    case "mcp_server":
      mcpServer(tool, out);
      if (tool.config.transport === undefined || tool.config.transport === "stdio") subprocessConfig(tool, out);
      break;
    case "mcp_tool":
      executorKind(tool, ctx, out, "mcp_tool/executor", (e) => e.type === "mcp_server", "an mcp_server", "the mcp_server tool that serves this tool");
      if (typeof tool.config.tool_name !== "string" || tool.config.tool_name.trim() === "") {
        out.push(toolFinding(tool, "mcp_tool/name", tool.pointers.toolName ?? "/config/tool_name", "the MCP tool name is not given", "set config.tool_name (or kiwi_mcp's config.mcp_tool_name) to the name the server lists in tools/list"));
      }
      break;
    case "runtime":
      executorKind(tool, ctx, out, "runtime/executor", (e) => e.type === "primitive", "a primitive", "subprocess or http_client");
      if (!nonEmpty(tool.config.command) && !nonEmpty(tool.config.url)) {
        out.push(toolFinding(tool, "runtime/endpoint", tool.pointers.config ?? "/config", "a runtime needs config.command or config.url", "set config.command (e.g. python3) for subprocess, or config.url for http_client"));
      }
      if (!nonEmpty(tool.config.url)) subprocessConfig(tool, out);
      // A runtime may ship a wrapper it runs before the tool's entry point; it must be one of its files.
      if (tool.entrypoint !== undefined) entrypoint(tool, ctx, out);
      break;
    case "knowledge":
      knowledge(tool, out);
      break;
    case "primitive":
      if (tool.form !== "builtin" && !(PRIMITIVES as readonly string[]).includes(tool.id)) {
        out.push(toolFinding(tool, "primitive/not-builtin", tool.pointers.type ?? "/tool_type", `only kiwi's built-in primitives (${PRIMITIVES.join(", ")}) execute; "${tool.id}" cannot be a primitive`, "make it a runtime whose executor is subprocess or http_client"));
      }
      break;
  }
  return out;
}

function nonEmpty(v: unknown): boolean {
  return typeof v === "string" && v.trim() !== "";
}

function executorKind(tool: Tool, ctx: LayerContext, out: Finding[], rule: Parameters<typeof toolFinding>[1], ok: (e: Tool) => boolean, what: string, hint: string): void {
  const executor = executorOf(tool, ctx);
  if (!executor || ok(executor)) return; // a missing executor is the chain layer's finding
  out.push(toolFinding(tool, rule, tool.pointers.executor ?? "/executor", `the executor of a ${tool.type} must be ${what}, but ${executor.id} is a ${executor.type || "untyped"} tool`, `use ${hint}`));
}

/**
 * A script on one of kiwi's language runtimes must be written in that language. A declared
 * config.entrypoint is judged by the runtime's child_schemas (\.py$ on python_runtime); a script
 * with embedded metadata is its own entry point, which no child schema sees, so a .sh file on
 * python_runtime passed every check and failed only when it ran. Unknown extensions are not judged.
 */
function runtimeLanguage(tool: Tool, out: Finding[]): void {
  if (isRecord(tool.doc.config) && "entrypoint" in tool.doc.config) return;
  const runtime = tool.executor?.id;
  const entry = tool.entrypoint?.toLowerCase();
  if (!runtime || !entry || !Object.values(SCRIPT_RUNTIMES).includes(runtime)) return;
  const ext = entry.slice(entry.lastIndexOf("."));
  const wanted = SCRIPT_RUNTIMES[ext];
  if (!wanted || wanted === runtime || (runtime === "bun_runtime" && wanted === "node_runtime")) return;
  out.push(toolFinding(tool, "script/runtime-language", tool.pointers.executor ?? "/executor", `the entry point "${tool.entrypoint}" is a ${ext} file, but ${runtime} does not run ${ext} files`, `use executor: ${wanted}, or an entry point ${runtime} runs`));
}

/** Extensions of the languages a script may declare (`language`, kiwi_mcp's `manifest.language`). */
const LANGUAGE_EXTENSIONS: Record<string, readonly string[]> = {
  python: [".py"],
  python3: [".py"],
  bash: [".sh", ".bash"],
  sh: [".sh"],
  shell: [".sh"],
  javascript: [".js", ".mjs", ".cjs"],
  node: [".js", ".mjs", ".cjs"],
  typescript: [".ts", ".mts"],
  wasm: [".wasm"],
};

/** A declared language must be the entry point's: a python manifest over a .sh file is a mistake. */
function declaredLanguage(tool: Tool, out: Finding[]): void {
  const language = tool.language?.toLowerCase();
  const entry = tool.entrypoint?.toLowerCase();
  if (!language || !entry || !entry.includes(".")) return;
  const exts = LANGUAGE_EXTENSIONS[language];
  const ext = entry.slice(entry.lastIndexOf("."));
  if (!exts || exts.includes(ext) || !Object.values(LANGUAGE_EXTENSIONS).some((e) => e.includes(ext))) return;
  out.push(toolFinding(tool, "script/language-mismatch", tool.pointers.language ?? "/language", `language is "${tool.language}", but the entry point "${tool.entrypoint}" is a ${ext} file`, `fix language, or point the entry point at a ${exts.join(" or ")} file`));
}

/**
 * A link's subprocess config that kiwi exec refuses on every call, or would misread: a program
 * chosen by a parameter, an environment name no process can carry, a stdin mode exec does not
 * know, a working folder that is no folder of the tool's files (a run directory holds only them;
 * a runtime's cwd is resolved in its child's, so only the tool's own is judged).
 */
function subprocessConfig(tool: Tool, out: Finding[]): void {
  if (tool.dialect === "magray") return;
  const c = tool.config;
  const base = tool.pointers.config ?? "/config";
  if (typeof c.command === "string") {
    const param = referencedParams(c.command)[0];
    if (param !== undefined) out.push(toolFinding(tool, "config/command-param", `${base}/command`, `config.command ${JSON.stringify(c.command)} uses the parameter {${param}}; parameters cannot choose the program`, "pass parameters through args or stdin; a program that varies comes from the environment (${PYTHON})"));
  }
  if (isRecord(c.env)) {
    for (const name of Object.keys(c.env)) {
      if (!isEnvName(name)) out.push(toolFinding(tool, "config/env-name", `${base}/env/${seg(name)}`, `config.env has the variable name ${JSON.stringify(name)}, which no environment can hold`, "an environment variable's name is not empty and has no '=' or NUL; rename it"));
    }
  }
  if (c.stdin !== undefined && !(STDIN_MODES as readonly unknown[]).includes(c.stdin)) {
    out.push(toolFinding(tool, "config/stdin", `${base}/stdin`, `config.stdin ${JSON.stringify(c.stdin)} is not one of ${STDIN_MODES.join(", ")}`, "json (the default) sends the parameters, none an empty stdin, inherit kiwi's own"));
  }
  if (tool.type !== "runtime" && typeof c.cwd === "string" && c.cwd !== "" && c.cwd !== "." && !toolPathProblem(c.cwd, "written")) {
    const dir = normalizeRel(c.cwd).replace(/\/+$/, "");
    // "./" is the tool's own folder, as "." is.
    if (dir !== "" && dir !== "." && !tool.files.some((f) => f.path.startsWith(`${dir}/`))) {
      out.push(toolFinding(tool, "config/cwd", `${base}/cwd`, `config.cwd "${c.cwd}" is no folder of the tool's files, so the tool cannot start there`, "name a folder inside the tool that holds some of its files (its run directory holds only those), or leave config.cwd out"));
    }
  }
}

/** The entry point is declared, safe (security.ts reports unsafe ones), has the right extension and exists. */
function entrypoint(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  const at = tool.pointers.entrypoint ?? "/config/entrypoint";
  const entry = tool.entrypoint;
  const magray = tool.dialect === "magray";
  // A magray entry point's presence and extension are magray.ts's (in magray's words).
  if (magray && (entry === undefined || entry.trim() === "")) return;
  if (entry === undefined || entry.trim() === "") {
    const field = tool.dialect === "magray" ? "entry_point" : "config.entrypoint";
    out.push(toolFinding(tool, "entrypoint/required", tool.dialect === "magray" ? "" : (tool.pointers.config ?? "/config"), `a ${tool.type} tool needs an entry point`, `set ${field} to the file to run, relative to the tool folder`));
    return;
  }
  if (!magray && tool.type === "wasm" && !entry.toLowerCase().endsWith(".wasm")) {
    out.push(toolFinding(tool, "entrypoint/extension", at, `the entry point "${entry}" of a wasm tool must end in .wasm`, 'point it at the compiled .wasm module, or use type "native" for an executable'));
  }
  if (!magray && tool.type === "native" && entry.toLowerCase().endsWith(".wasm")) {
    out.push(toolFinding(tool, "entrypoint/extension", at, `the entry point "${entry}" of a native tool must not be a .wasm module`, 'use type "wasm" for WebAssembly modules'));
  }
  if (toolPathProblem(entry, "written")) return;
  const rel = normalizeRel(entry);
  if (ctx.escapedPaths.has(toolPath(tool, rel))) return; // security.ts reports it as a path escape
  if (!tool.files.some((f) => f.path === rel)) {
    const hint =
      tool.form === "file"
        ? "a single-file manifest has no files of its own; make it a directory tool (<name>/tool.yaml beside the script)"
        : `add ${rel} to ${tool.root || "the tool folder"} or fix the path`;
    // magray only warns ("Entry point file not found"); kiwi locks and runs a tool's own files, so
    // a tool whose entry point is missing could never run: an error, and the message says why.
    const why = magray ? " (magray only warns: kiwi locks and runs the files a tool has, and this one could never run)" : "";
    out.push(toolFinding(tool, "entrypoint/not-found", at, `the entry point "${entry}" is not a file inside the tool directory${why}`, hint));
  }
}

function api(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  const c = tool.config;
  const base = tool.pointers.config ?? "/config";
  if (tool.executor && tool.executor.id !== "http_client") {
    const executor = executorOf(tool, ctx);
    if (!executor || executor.type !== "primitive" || executor.id !== "http_client") {
      out.push(toolFinding(tool, "api/executor", tool.pointers.executor ?? "/executor", `the executor of an api tool must be http_client, not ${tool.executor.id}`, "set executor: http_client"));
    }
  }
  if (c.method !== undefined && (typeof c.method !== "string" || !(HTTP_METHODS as readonly string[]).includes(c.method.toUpperCase()))) {
    out.push(toolFinding(tool, "api/method", `${base}/method`, `method ${JSON.stringify(c.method)} is not one of ${HTTP_METHODS.join(", ")}`, `use one of them, in capitals: method: ${HTTP_METHODS[0]}`));
  }
  const field = c.url_template !== undefined ? "url_template" : "url";
  const url = c[field];
  if (url === undefined) out.push(toolFinding(tool, "api/url", base, "an api tool needs config.url or config.url_template", "set config.url: https://api.example.com/v1/..."));
  else if (typeof url !== "string" || !isAbsoluteHttpTemplate(url)) {
    out.push(toolFinding(tool, "api/url", `${base}/${field}`, `${field} ${JSON.stringify(url)} is not an absolute http(s) URL`, "start it with https:// (or ${BASE_URL} read from the environment)"));
  } else {
    // exec refuses a parameter in the scheme or host on every call (it could choose the server).
    const inAuthority = referencedParams(URL_AUTHORITY.exec(url)?.[0] ?? "");
    if (inAuthority.length > 0) {
      out.push(toolFinding(tool, "api/url", `${base}/${field}`, `${field} ${JSON.stringify(url)} puts the parameter {${inAuthority[0]}} in its scheme or host`, "parameters may only fill the path, query and fragment; put a configurable host in an environment variable (${API_HOST})"));
    } else undeclaredHost(tool, url, field, `${base}/${field}`, out);
  }
  headerNames(tool, base, out);
  const declared = declaredParameterNames(tool.parameters);
  const scan = (value: unknown, pointer: string, depth: number) => {
    if (depth > 64) return;
    if (typeof value === "string") {
      for (const name of referencedParams(value)) {
        if (!declared.has(name)) {
          out.push(toolFinding(tool, "api/placeholder", pointer, `placeholder {${name}} is not a declared parameter`, declared.size ? `declared parameters: ${[...declared].join(", ")}` : `declare it under parameters: - name: ${name}`));
        }
      }
    } else if (Array.isArray(value)) value.forEach((v, i) => scan(v, `${pointer}/${i}`, depth + 1));
    else if (isRecord(value)) for (const [k, v] of Object.entries(value)) scan(v, `${pointer}/${seg(k)}`, depth + 1);
  };
  for (const key of ["url", "url_template", "headers", "query", "body"]) if (c[key] !== undefined) scan(c[key], `${base}/${key}`, 0);
  // The plan parses the path before any request; one it refuses would refuse every call.
  if (typeof c.response_transform === "string") {
    try {
      readJsonPath(c.response_transform);
    } catch (error) {
      if (!(error instanceof ParseProblem)) throw error;
      out.push(toolFinding(tool, "api/response-transform", `${base}/response_transform`, error.message, error.hint ?? "use the documented JSONPath subset"));
    }
  }
}

/**
 * A URL whose host, written in the manifest, none of the tool's declared net.outbound hosts admits:
 * exec's host policy refuses every call to it. A host from the environment (${API_HOST}) is known
 * only at the call, and entries that are no hosts are security/host-invalid's.
 */
function undeclaredHost(tool: Tool, template: string, field: string, pointer: string, out: Finding[]): void {
  const authority = URL_AUTHORITY.exec(template)?.[0];
  const caps = tool.capabilities.filter((c) => c.name === "net.outbound" && c.hosts?.length);
  if (authority === undefined || authority.includes("${") || caps.length === 0) return;
  // host-rule (with ipaddr.js) loads only for an api tool that declares hosts, as in security.ts.
  const { admitsHost, parseHostRule } = require("../manifest/host-rule.ts") as typeof import("../manifest/host-rule.ts");
  const declared = caps.flatMap((c) => c.hosts!);
  const rules = declared.map(parseHostRule).filter((r) => r !== null);
  let url: URL;
  try {
    url = new URL(authority);
  } catch {
    return;
  }
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  if (rules.length === 0 || admitsHost(rules, url.hostname, port)) return;
  const portful = rules.some((r) => r.port !== undefined);
  const entry = portful ? `${url.hostname}:${port}` : url.hostname;
  out.push(
    toolFinding(tool, "api/host-undeclared", pointer, `${field} ${JSON.stringify(template)} calls ${url.hostname}:${port}, which is not among the declared net.outbound hosts (${declared.join(", ")}), so kiwi exec refuses every call`, `add "${entry}" to net.outbound (${caps.map((c) => c.pointer).join(", ")}), or fix the URL`),
  );
}

/** Names in a parameters list (whatever else is wrong with it). */
export function declaredParameterNames(parameters: unknown): Set<string> {
  const names = new Set<string>();
  if (Array.isArray(parameters)) for (const p of parameters) if (isRecord(p) && typeof p.name === "string") names.add(p.name);
  return names;
}

/** An absolute http(s) URL once placeholders are filled; a leading `${VAR}` may supply the origin. */
export function isAbsoluteHttpTemplate(template: string): boolean {
  const filled = template.replace(/^\$\{[A-Za-z_][A-Za-z0-9_]*\}/, "https://env.invalid").replace(PLACEHOLDER, "x");
  if (!/^https?:\/\//i.test(filled)) return false;
  try {
    const url = new URL(filled);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** config.headers names that are no HTTP token: exec refuses every request that would send one. */
function headerNames(tool: Tool, base: string, out: Finding[]): void {
  const headers = tool.config.headers;
  if (!isRecord(headers)) return;
  for (const name of Object.keys(headers)) {
    if (!HEADER_NAME.test(name)) out.push(toolFinding(tool, "api/header-name", `${base}/headers/${seg(name)}`, `header name ${JSON.stringify(name)} is not a valid HTTP header name`, "use letters, digits and - (e.g. X-Api-Version); an HTTP header name has no spaces, colons or quotes"));
  }
}

function mcpServer(tool: Tool, out: Finding[]): void {
  const c = tool.config;
  const base = tool.pointers.config ?? "/config";
  const transport = c.transport;
  if (typeof transport !== "string" || !(transport in MCP_TRANSPORTS)) {
    out.push(toolFinding(tool, "mcp_server/transport", transport === undefined ? base : `${base}/transport`, transport === undefined ? "the MCP transport is not given" : `transport ${JSON.stringify(transport)} is not stdio, streamable-http (or http) or sse`, "set config.transport: stdio (with config.package or config.command) or streamable-http (with config.url)"));
    return;
  }
  // npx, uvx and the like download the server when it starts: in the sandbox that needs the network.
  const launcher = transport === "stdio" ? fetchingLauncher(c) : undefined;
  if (launcher !== undefined && !tool.capabilities.some((cap) => cap.name === "net.outbound")) {
    out.push(toolFinding(tool, "mcp_server/fetches-at-start", `${base}/command`, `${launcher} downloads the server when it starts, but ${tool.id} declares no net.outbound: in kiwi's sandbox it cannot reach the registry`, tool.manifestFile.includes("#")
      ? // A plugin's mcp.json has no place for kiwi's permissions.
        `a plugin's ${tool.manifestFile.slice(tool.manifestFile.lastIndexOf("/") + 1, tool.manifestFile.indexOf("#"))} cannot declare net.outbound: write a kiwi manifest for the server under another id (config.package: ${["npx", "bunx", "pnpx"].includes(launcher) ? "npm:<package>@<version>" : "pypi:<package>==<version>"}), which kiwi locks, installs and starts directly`
      : `declare net.outbound for the registry (e.g. registry.npmjs.org) and fs.write for its cache (~/.npm), or install the package and start it directly`));
  }
  if (transport === "stdio" && !nonEmpty(c.command) && c.package === undefined) {
    out.push(toolFinding(tool, "mcp_server/command", base, "a stdio MCP server needs config.command or config.package", "name the server's package (config.package: npm:@scope/server@1.2.3), which kiwi installs and runs, or set config.command"));
  }
  if (transport !== "stdio" && c.package !== undefined) {
    out.push(toolFinding(tool, "mcp_server/command", `${base}/package`, `config.package starts a stdio server, but the transport is ${transport}`, "use transport: stdio with config.package"));
  }
  if (transport !== "stdio" && (typeof c.url !== "string" || !isAbsoluteHttpTemplate(c.url))) {
    out.push(toolFinding(tool, "mcp_server/url", c.url === undefined ? base : `${base}/url`, `a ${transport} MCP server needs an absolute http(s) config.url`, "set config.url to the server's endpoint (https://host/mcp), or use transport: stdio with config.command or config.package"));
  }
  if (transport !== "stdio") headerNames(tool, base, out);
  const wanted = MCP_TRANSPORTS[transport]!;
  if (tool.executor && tool.executor.id !== wanted) {
    out.push(toolFinding(tool, "mcp_server/executor", tool.pointers.executor ?? "/executor", `a ${transport} MCP server runs on ${wanted}, not ${tool.executor.id}`, `set executor: ${wanted}`));
  }
}

function knowledge(tool: Tool, out: Finding[]): void {
  if (tool.form === "markdown" || tool.form === "builtin") return;
  const entry = tool.entrypoint ? normalizeRel(tool.entrypoint) : undefined;
  if (entry && entry.toLowerCase().endsWith(".md") && tool.files.some((f) => f.path === entry)) return;
  out.push(toolFinding(tool, "knowledge/format", "", "a knowledge tool must be Markdown with YAML front matter", "write it as <name>.md starting with a `---` front-matter block, or point config.entrypoint at a .md file in the tool folder"));
}
