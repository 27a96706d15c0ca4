// Agent Plugins 1.0.0 (agent-plugins.org): a folder with plugin.json, skills in skills/<name>/SKILL.md
// and MCP servers in mcp.json. The manifest is checked here and each mcp.json server becomes a kiwi
// mcp_server manifest; skills are read by skill.ts. Pure: parsed values in, manifests and problems out.
import { escapePointer } from "../integrity/canonical.ts";
import { severityOf } from "../findings/finding.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { isRecord, toPlain } from "../integrity/value.ts";
import { HEADER_NAME } from "../schema/placeholders.ts";
import { TOOL_ID } from "../schema/vocabulary.ts";
import { BUILTIN_IDS } from "./builtins.ts";
import { leavesFolder } from "./skill.ts";

export const PLUGIN_FILE = "plugin.json";
export const PLUGIN_MCP_FILE = "mcp.json";
export const PLUGIN_SKILLS_DIR = "skills";
export const PLUGIN_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";
export const PLUGIN_MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";

const PLUGIN_FIELDS = new Set(["$schema", "name", "version", "description", "author", "homepage", "repository", "license", "keywords", "extensions"]);
const PLUGIN_NAME = /^[a-z0-9](?:[a-z0-9]|-(?!-)|\.(?!\.))*$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

export interface PluginProblem {
  /** plugin/manifest rejects the plugin; the severity of each rule is the rule table's. */
  rule: "plugin/manifest" | "plugin/field" | "plugin/mcp";
  /** Which file of the plugin, relative to its root: plugin.json or mcp.json (.claude-plugin/plugin.json or .mcp.json for Claude Code). */
  file: string;
  pointer: string;
  message: string;
  hint: string;
}

export interface PluginManifest {
  /** False when plugin.json violates the spec: the plugin is rejected and none of its components read. */
  ok: boolean;
  name?: string;
  version: string;
  problems: PluginProblem[];
}

/** Checks plugin.json (§5): a fatal violation rejects the plugin; an unknown field is reported and ignored. */
export function checkPluginManifest(value: CanonicalValue): PluginManifest {
  const problems: PluginProblem[] = [];
  const fatal = (pointer: string, message: string, hint: string) => problems.push({ rule: "plugin/manifest", file: PLUGIN_FILE, pointer, message, hint });
  const doc = toPlain(value);
  if (!isRecord(doc)) {
    fatal("", "plugin.json is not a JSON object", `write { "$schema": "${PLUGIN_SCHEMA}", "name": "<plugin>" }`);
    return { ok: false, version: "0.0.0", problems };
  }
  if (doc.$schema !== PLUGIN_SCHEMA) {
    fatal(doc.$schema === undefined ? "" : "/$schema", doc.$schema === undefined ? "plugin.json has no $schema" : `$schema ${JSON.stringify(doc.$schema)} is not an Agent Plugins version kiwi reads`, `set "$schema": "${PLUGIN_SCHEMA}" (kiwi reads Agent Plugins 1.0.0)`);
  }
  const name = doc.name;
  if (typeof name !== "string" || name.length === 0 || name.length > 64 || !PLUGIN_NAME.test(name) || !/[a-z0-9]$/.test(name)) {
    fatal(name === undefined ? "" : "/name", name === undefined ? "plugin.json has no name" : `name ${JSON.stringify(name)} is not a plugin name`, "1-64 lower-case letters, digits, hyphens and periods, alphanumeric at both ends, no -- or ..");
  }
  for (const key of ["version", "description", "homepage", "repository", "license"]) {
    if (doc[key] !== undefined && typeof doc[key] !== "string") fatal(`/${key}`, `${key} is not a string`, `write ${key} as a string`);
  }
  if (doc.author !== undefined && (!isRecord(doc.author) || Object.entries(doc.author).some(([k, v]) => !["name", "email", "url"].includes(k) || typeof v !== "string"))) {
    fatal("/author", "author is not an object of string name, email and url", 'write "author": { "name": "…", "email": "…", "url": "…" }');
  }
  if (doc.keywords !== undefined && (!Array.isArray(doc.keywords) || doc.keywords.some((k) => typeof k !== "string"))) fatal("/keywords", "keywords is not an array of strings", 'write "keywords": ["…"]');
  if (doc.extensions !== undefined && !isRecord(doc.extensions)) problems.push({ rule: "plugin/field", file: PLUGIN_FILE, pointer: "/extensions", message: "extensions is not an object, so it is ignored", hint: "key client data by reverse-domain namespace: { \"com.example.client\": { … } }" });
  for (const key of Object.keys(doc)) {
    if (!PLUGIN_FIELDS.has(key)) problems.push({ rule: "plugin/field", file: PLUGIN_FILE, pointer: `/${key}`, message: `${key} is not an Agent Plugins manifest field, so it is ignored`, hint: "put client data under extensions.<namespace>" });
  }
  const version = typeof doc.version === "string" && SEMVER.test(doc.version) ? doc.version : "0.0.0";
  return { ok: !problems.some((p) => severityOf(p.rule) === "error"), ...(typeof name === "string" ? { name } : {}), version, problems };
}

export interface PluginServer {
  name: string;
  manifest: { [key: string]: CanonicalValue };
}

/**
 * mcp.json (§7.2) -> one kiwi mcp_server manifest per valid server. An invalid file disables MCP for
 * the plugin and an invalid entry skips that server, each reported as a warning, as the spec says.
 * kiwi runs the server from the tool's run directory (the plugin root): `${PLUGIN_ROOT}` becomes
 * the path of the root relative to the working directory, and PLUGIN_ROOT is set to it.
 */
export function pluginServers(value: CanonicalValue, plugin: PluginManifest): { servers: PluginServer[]; problems: PluginProblem[] } {
  const problems: PluginProblem[] = [];
  const warn = (pointer: string, message: string, hint: string) => problems.push({ rule: "plugin/mcp", file: PLUGIN_MCP_FILE, pointer, message, hint });
  const doc = toPlain(value);
  if (!isRecord(doc) || !isRecord(doc.mcpServers) || doc.$schema !== PLUGIN_MCP_SCHEMA || Object.keys(doc).some((k) => k !== "$schema" && k !== "mcpServers")) {
    const why = !isRecord(doc) ? "is not a JSON object" : doc.$schema === undefined ? "has no $schema" : doc.$schema !== PLUGIN_MCP_SCHEMA ? `has $schema ${JSON.stringify(doc.$schema)}, not ${PLUGIN_MCP_SCHEMA}` : !isRecord(doc.mcpServers) ? "has no mcpServers object" : "has top-level fields other than $schema and mcpServers";
    warn("", `mcp.json ${why}, so the plugin's MCP servers are not read`, `write { "$schema": "${PLUGIN_MCP_SCHEMA}", "mcpServers": { … } }`);
    return { servers: [], problems };
  }
  const servers: PluginServer[] = [];
  for (const [name, entry] of Object.entries(doc.mcpServers)) {
    const pointer = `/mcpServers/${escapePointer(name)}`;
    const skip = (message: string, hint: string) => warn(pointer, `server ${JSON.stringify(name)} is skipped: ${message}`, hint);
    const unfit = unfitServerName(name);
    if (unfit) {
      skip(unfit.problem, unfit.hint);
      continue;
    }
    if (!isRecord(entry)) {
      skip("it is not an object", 'write { "type": "stdio", "command": "…" }');
      continue;
    }
    const mapped: Mapped = entry.type === "stdio" ? stdioServer(entry, AGENT_PLUGIN) : entry.type === "streamable-http" || entry.type === "sse" ? httpServer(entry, AGENT_PLUGIN) : entry.type === undefined ? { problem: "it has no type (stdio, streamable-http or sse)", hint: 'set "type": "stdio" (with "command") or "streamable-http" (with "url")' } : { problem: `type ${JSON.stringify(entry.type)} is not stdio, streamable-http or sse`, hint: "set type" };
    if (isProblem(mapped)) {
      skip(mapped.problem, mapped.hint);
      continue;
    }
    const description = `MCP server ${name} of the Agent Plugin ${plugin.name ?? ""}`.trim();
    servers.push({ name, manifest: { tool_id: name, tool_type: "mcp_server", version: plugin.version, description, ...mapped } });
  }
  return { servers, problems };
}

/**
 * Where a pointer into a plugin server's kiwi manifest sits in mcp.json, below the server's entry
 * `at`: the config fields a server entry gives (command, args, env, cwd, url, headers) are its own
 * keys, one for one; anything else (the requires taken from url, a PLUGIN_ROOT kiwi adds) is the
 * entry itself.
 */
export function serverPointer(at: string, pointer: string): string {
  const field = /^\/config\/(command|args|env|cwd|url|headers)(\/.*)?$/.exec(pointer);
  return field ? `${at}/${field[1]}${field[2] ?? ""}` : at;
}

type Problem = { problem: string; hint: string };
export type Mapped = { [key: string]: CanonicalValue } | Problem;

/**
 * How a plugin format spells its server entries: the variable naming the plugin root (and the
 * persistent data folder kiwi does not provide), and how the rest of a string becomes kiwi config
 * text. Agent Plugins expands nothing else; Claude Code also reads `${VAR}` from the environment.
 */
export interface ServerDialect {
  rootVar: string;
  dataVar: string;
  /** Text between root references, as kiwi config text. */
  literal: (text: string) => string;
}

const AGENT_PLUGIN: ServerDialect = { rootVar: "PLUGIN_ROOT", dataVar: "PLUGIN_DATA", literal: (text) => escapeLiteral(text) };

/**
 * Why a plugin's server name cannot be a kiwi tool's id, or undefined. A project tool of a
 * built-in's id replaces it: a plugin's server would become every Python (or Node…) tool's runtime.
 */
export function unfitServerName(name: string): Problem | undefined {
  if (!TOOL_ID.test(name)) return { problem: "its name is not a kiwi tool id", hint: "name servers with lower-case letters, digits, - and _, starting with a letter" };
  if (BUILTIN_IDS.includes(name)) return { problem: `its name is kiwi's built-in ${name}, which a plugin's server must not replace`, hint: "give the server another name" };
  return undefined;
}

export function isProblem(m: Mapped): m is Problem {
  return typeof m.problem === "string" && typeof m.hint === "string" && Object.keys(m).length === 2;
}

export function stdioServer(entry: Record<string, unknown>, dialect: ServerDialect): Mapped {
  const ROOT = `\${${dialect.rootVar}}`;
  const DATA = `\${${dialect.dataVar}}`;
  const unknown = Object.keys(entry).find((k) => !["type", "command", "args", "env", "cwd"].includes(k));
  if (unknown) return { problem: `${unknown} is not a stdio server field`, hint: "stdio servers have command, args, env and cwd" };
  const command = entry.command;
  if (typeof command !== "string" || command === "" || /\s/.test(command) || command.includes("${")) return { problem: "command is not one executable token", hint: `write a bare name (node) or a plugin-relative path (./bin/server${dialect.rootVar === "PLUGIN_ROOT" ? "" : ` or ${ROOT}/bin/server`}); put arguments in args` };
  if (entry.args !== undefined && (!Array.isArray(entry.args) || entry.args.some((a) => typeof a !== "string"))) return { problem: "args is not an array of strings", hint: 'write "args": ["…"]' };
  if (entry.env !== undefined && (!isRecord(entry.env) || Object.values(entry.env).some((v) => typeof v !== "string"))) return { problem: "env is not an object of strings", hint: 'write "env": { "NAME": "value" }' };
  const env = (entry.env ?? {}) as Record<string, string>;
  if (Object.keys(env).some((k) => k === dialect.rootVar || k === dialect.dataVar)) return { problem: `env sets ${dialect.rootVar} or ${dialect.dataVar}, which the client provides`, hint: "remove them from env" };
  const strings = [...((entry.args as string[] | undefined) ?? []), ...Object.values(env), ...(typeof entry.cwd === "string" ? [entry.cwd] : [])];
  if (strings.some((s) => s.includes(DATA))) return { problem: `it uses ${DATA}, a persistent writable folder kiwi does not provide (what runs is what was locked)`, hint: "write state under the working directory or a declared fs.write path, or run the server from a kiwi manifest" };
  let cwd: string | undefined;
  if (entry.cwd !== undefined) {
    const raw = typeof entry.cwd === "string" ? entry.cwd : "";
    const rel = raw === ROOT ? "." : raw.startsWith(`${ROOT}/`) ? `.${raw.slice(ROOT.length)}` : raw;
    if (!rel.startsWith("./") && rel !== "." || leavesFolder(rel)) return { problem: `cwd ${JSON.stringify(raw)} is not a path inside the plugin`, hint: `write ./<folder> or ${ROOT}/<folder>` };
    cwd = normalizeRel(rel);
  }
  // The root as seen from the working directory: `.` unless cwd goes deeper.
  const root = cwd === undefined || cwd === "." ? "." : cwd.split("/").map(() => "..").join("/");
  const expand = (s: string) => s.split(ROOT).map(dialect.literal).join(root);
  if (command.startsWith("../") || leavesFolder(command)) return { problem: `command ${JSON.stringify(command)} leaves the plugin`, hint: "bundle the executable in the plugin and name it ./path" };
  const config: { [key: string]: CanonicalValue } = { transport: "stdio" };
  // A plugin-relative command resolves in the run directory, which holds the plugin's files.
  config.command = command;
  if (Array.isArray(entry.args) && entry.args.length > 0) config.args = (entry.args as string[]).map(expand);
  config.env = { ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, expand(v)])), [dialect.rootVar]: root };
  if (cwd !== undefined && cwd !== ".") config.cwd = cwd;
  return { executor: "subprocess", config };
}

export function httpServer(entry: Record<string, unknown>, dialect: ServerDialect): Mapped {
  const unknown = Object.keys(entry).find((k) => !["type", "url", "headers"].includes(k));
  if (unknown) return { problem: `${unknown} is not a ${String(entry.type)} server field`, hint: "remote servers have url and headers" };
  if (typeof entry.url !== "string") return { problem: "url is missing", hint: "write the endpoint's absolute URL" };
  // The plugin's folder (and data folder) are paths on disk: no part of a remote endpoint's address or
  // headers, and kiwi sets neither for an http client, so ${VAR} would read an unset variable.
  const fileVar = [dialect.rootVar, dialect.dataVar].map((v) => `\${${v}}`).find((v) => [entry.url, ...(isRecord(entry.headers) ? Object.values(entry.headers) : [])].some((s) => typeof s === "string" && s.includes(v)));
  if (fileVar) return { problem: `it uses ${fileVar} in a remote server's url or headers, but that is a folder path on disk (set only for a stdio server), no part of an endpoint's address`, hint: "write the endpoint's absolute https:// URL; a server the plugin runs from its own files is a stdio server (command, args)" };
  let url: URL;
  try {
    url = new URL(entry.url);
  } catch {
    return { problem: `url ${JSON.stringify(entry.url)} is not an absolute URL`, hint: "write https://host/mcp" };
  }
  const loopback = url.hostname === "localhost" || /^127\./.test(url.hostname) || url.hostname === "[::1]";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) return { problem: "url is not https (plain http is only for loopback)", hint: "use https" };
  if (url.username || url.password || entry.url.includes("#")) return { problem: "url has user information or a fragment", hint: "remove them" };
  if (entry.headers !== undefined && (!isRecord(entry.headers) || Object.values(entry.headers).some((v) => typeof v !== "string"))) return { problem: "headers is not an object of strings", hint: 'write "headers": { "Name": "value" }' };
  const headers = (entry.headers ?? {}) as Record<string, string>;
  const badName = Object.keys(headers).find((h) => !HEADER_NAME.test(h));
  if (badName !== undefined) return { problem: `header name ${JSON.stringify(badName)} is not an HTTP header name`, hint: "use letters, digits and - (X-Tenant)" };
  const lower = Object.keys(headers).map((h) => h.toLowerCase());
  if (new Set(lower).size !== lower.length) return { problem: "a header is named twice (names are case-insensitive)", hint: "keep one" };
  const config: { [key: string]: CanonicalValue } = { transport: entry.type as string, url: dialect.literal(entry.url) };
  if (Object.keys(headers).length > 0) config.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, dialect.literal(v)]));
  return { executor: "http_client", config, requires: [{ "net.outbound": [url.port ? `${url.hostname}:${url.port}` : url.hostname] }] };
}

/** Literal text as a kiwi config string: the spec does no expansion but ${PLUGIN_ROOT}, so none may happen. */
function escapeLiteral(text: string): string {
  return text.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, "{{$1}}");
}

function normalizeRel(path: string): string {
  const out: string[] = [];
  for (const s of path.split("/")) {
    if (s === "" || s === ".") continue;
    if (s === "..") out.pop();
    else out.push(s);
  }
  return out.length === 0 ? "." : out.join("/");
}
