// A kiwi tool written back out in the ecosystem's formats: an Agent Skill folder, an Agent Plugin
// (skills/ and mcp.json), or an MCP registry server.json. Pure: tools and file texts in, a plan of
// files out (export-io.ts writes it).
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import { PLUGIN_MCP_FILE, PLUGIN_MCP_SCHEMA, PLUGIN_SCHEMA } from "../manifest/plugin.ts";
import { CLAUDE_MCP_FILE, CLAUDE_PLUGIN_FILE } from "../manifest/claude-plugin.ts";
import { SKILL_FILE } from "../manifest/skill.ts";
import { SERVER_JSON_SCHEMA } from "./server-json.ts";
import { declaredSecrets, isSecretName } from "../schema/placeholders.ts";
import { renderLosslessJson } from "../integrity/canonical.ts";

export const EXPORT_FORMATS = ["skill", "plugin", "server.json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** One file of an export: copied from a tool file, or written from text. */
export interface ExportFile {
  path: string;
  from?: string;
  text?: string;
  executable?: boolean;
}

export interface ExportPlan {
  /** The folder (or, for server.json, the file) created under --out. */
  name: string;
  files: ExportFile[];
  notes: string[];
}

type ReadText = (abs: string) => string;
const SKILL_NAME = /^[a-z0-9](?:[a-z0-9]|-(?!-))*$/;

function refuse(tool: Tool, message: string, hint: string): KiwiError {
  return new KiwiError("E_USAGE", `${tool.id} (${tool.manifestFile}): ${message}`, { hint, details: { tool: tool.id } });
}

/** A knowledge tool as an Agent Skill folder: SKILL.md (front matter + the document) and its other files. */
export function exportSkill(tool: Tool, read: ReadText, notes: string[] = []): ExportPlan {
  if (tool.type !== "knowledge") throw refuse(tool, `a ${tool.type} tool is not a skill`, "export knowledge tools as skills; MCP servers as --format plugin or server.json");
  const name = tool.id.replace(/_/g, "-");
  if (name !== tool.id) notes.push(`${tool.id} is exported as the skill ${name} (skill names have no underscores)`);
  if (!SKILL_NAME.test(name) || name.length > 64) throw refuse(tool, `${JSON.stringify(name)} is not a skill name`, "skill names are 1-64 lower-case letters, digits and single hyphens");
  if (!tool.description) throw refuse(tool, "the tool has no description, which a skill must have", "add description: what it is and when to use it");
  // The Agent Skills limits kiwi reads a skill by (manifest/skill.ts): an export must be a skill kiwi and its clients accept.
  if (tool.description.length > 1024) throw refuse(tool, `its description is ${tool.description.length} characters; a skill's is at most 1024`, "shorten the description; put the detail in the document");
  // A Markdown tool is its one file; any other knowledge tool names its document (never "the first file": a PNG is no skill).
  const entryFile = tool.form === "markdown" ? tool.files[0] : tool.entrypoint ? tool.files.find((f) => f.path === tool.entrypoint) : undefined;
  if (!entryFile || !/\.md$/i.test(entryFile.path)) throw refuse(tool, "the tool has no Markdown document", "point config.entrypoint at a .md file of the tool");
  const text = read(entryFile.abs);
  const files: ExportFile[] = [];
  if (tool.manifestFile.endsWith(`/${SKILL_FILE}`) && name === tool.id) {
    files.push({ path: SKILL_FILE, from: entryFile.abs });
    // A Claude Code plugin's skill may list allowed-tools (manifest/skill.ts), which the Agent Skills spec writes as one string.
    const allowed = (tool.config.skill as Record<string, unknown> | undefined)?.["allowed-tools"];
    if (Array.isArray(allowed)) notes.push(`${tool.id}: allowed-tools is a list, as Claude Code reads it; the Agent Skills spec (and kiwi, for a skill outside a Claude Code plugin) wants one space-separated string: ${JSON.stringify(allowed.map(String).join(" "))}. SKILL.md is written as it is`);
  } else {
    const skill = (tool.config.skill ?? {}) as Record<string, unknown>;
    const front: Record<string, unknown> = { name, description: tool.description };
    for (const key of ["license", "compatibility", "allowed-tools"]) if (typeof skill[key] === "string") front[key] = skill[key];
    const metadata = { ...((skill.metadata as Record<string, string> | undefined) ?? {}), ...(tool.version !== "0.0.0" ? { version: tool.version } : {}) };
    if (Object.keys(metadata).length > 0) front.metadata = metadata;
    files.push({ path: SKILL_FILE, text: `---\n${yamlFront(front)}---\n${stripFrontMatter(text)}` });
  }
  for (const f of tool.files) if (f !== entryFile) files.push({ path: f.path, from: f.abs, executable: f.isExecutable });
  return { name, files, notes };
}

/** An mcp_server tool as a registry server.json: its package (npm, PyPI) or its remote. */
export function exportServerJson(tool: Tool, registryName: string, notes: string[] = []): ExportPlan {
  if (tool.type !== "mcp_server") throw refuse(tool, `a ${tool.type} tool is not an MCP server`, "server.json describes MCP servers");
  if (!/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/.test(registryName)) throw new KiwiError("E_USAGE", `--name ${JSON.stringify(registryName)} is not a registry name`, { hint: "write it as io.github.<owner>/<server>" });
  const c = exactConfig(tool);
  const secrets = declaredSecrets(c);
  const doc: Record<string, unknown> = { $schema: `https://static.modelcontextprotocol.io/schemas/${SERVER_JSON_SCHEMA}/server.schema.json`, name: registryName };
  let description = tool.description ?? tool.id;
  if (description.length > 100) {
    description = `${description.slice(0, 99)}…`;
    notes.push("the description was cut to the registry's 100 characters");
  }
  Object.assign(doc, { description, version: tool.version });
  if (typeof c.package === "string") {
    const m = /^(npm|pypi):(.+?)(?:@|==)([^@=]+)$/.exec(c.package);
    if (!m) throw refuse(tool, `config.package ${JSON.stringify(c.package)} names no exact version`, "pin it: npm:<name>@<version> or pypi:<name>==<version>");
    const pkg: Record<string, unknown> = { registryType: m[1], identifier: m[2], version: m[3], transport: { type: "stdio" } };
    if (typeof c.bin === "string") notes.push(`config.bin ${c.bin} has no place in a server.json: clients run the package's default program (npx, uvx), which may not be ${c.bin}`);
    const args = (Array.isArray(c.args) ? (c.args as unknown[]) : []).map((a) => argumentOf(configText(a), secrets));
    if (args.length > 0) pkg.packageArguments = args;
    const env = keyValues(c.env, secrets, notes);
    if (env.length > 0) pkg.environmentVariables = env;
    doc.packages = [pkg];
  } else if (tool.executor?.id === "http_client" && typeof c.url === "string") {
    const url = templateOf(c.url, secrets);
    const remote: Record<string, unknown> = { type: c.transport === "sse" ? "sse" : "streamable-http", url: url.text, ...(Object.keys(url.variables).length > 0 ? { variables: url.variables } : {}) };
    const headers = keyValues(c.headers, secrets, notes);
    if (headers.length > 0) remote.headers = headers;
    doc.remotes = [remote];
  } else {
    throw refuse(tool, "it runs a local command, which a server.json cannot describe (it names published packages and remotes)", "publish the server to npm or PyPI and name it in config.package, or export --format plugin");
  }
  return { name: "server.json", files: [{ path: "server.json", text: `${JSON.stringify(doc, null, 2)}\n` }], notes };
}

/** Tools as one Agent Plugin: knowledge tools under skills/, MCP servers in mcp.json with their files at the root. */
export function exportPlugin(tools: Tool[], pluginName: string, read: ReadText, notes: string[] = []): ExportPlan {
  if (!/^[a-z0-9](?:[a-z0-9]|-(?!-)|\.(?!\.))*$/.test(pluginName) || !/[a-z0-9]$/.test(pluginName) || pluginName.length > 64) {
    throw new KiwiError("E_USAGE", `${JSON.stringify(pluginName)} is not a plugin name`, { hint: "pass --name with lower-case letters, digits, hyphens and periods" });
  }
  const files: ExportFile[] = [];
  const servers: Record<string, unknown> = {};
  const owner = new Map<string, { id: string; from?: string }>();
  const place = (file: ExportFile, tool: Tool) => {
    const other = owner.get(file.path);
    // Servers of one plugin share its root: the same file on disk is placed once.
    if (other !== undefined && other.id !== tool.id && (file.from === undefined || other.from !== file.from)) throw refuse(tool, `its file ${file.path} is also ${other.id}'s, and a plugin has one root`, "export the two servers as two plugins");
    if (other === undefined) {
      owner.set(file.path, { id: tool.id, from: file.from });
      files.push(file);
    }
  };
  for (const tool of tools) {
    if (tool.type === "knowledge") {
      const skill = exportSkill(tool, read, notes);
      for (const f of skill.files) place({ ...f, path: `skills/${skill.name}/${f.path}` }, tool);
    } else if (tool.type === "mcp_server") {
      servers[tool.id] = pluginServer(tool, notes);
      for (const f of tool.files) {
        // A server read from a Claude Code plugin: its manifests are that format's, and the export writes an Agent Plugin's.
        if (fromClaudePlugin(tool) && (f.path === CLAUDE_PLUGIN_FILE || f.path === CLAUDE_MCP_FILE || f.path === serverFile(tool))) continue;
        if (f.path === "plugin.json" || f.path === PLUGIN_MCP_FILE) {
          // A server read from a plugin carries that plugin's manifests as files: the export writes them anew.
          if (tool.manifestFile.endsWith(`/${PLUGIN_MCP_FILE}#${tool.id}`)) continue;
          throw refuse(tool, `its file ${f.path} is where the plugin's own ${f.path} goes`, "rename that file of the tool (and the path the server opens), then export again");
        }
        place({ path: f.path, from: f.abs, executable: f.isExecutable }, tool);
      }
    } else {
      throw refuse(tool, `a ${tool.type} tool has no place in an Agent Plugin (skills and MCP servers only)`, "export knowledge tools and mcp_server tools");
    }
  }
  const first = tools[0]!;
  const manifest: Record<string, unknown> = { $schema: PLUGIN_SCHEMA, name: pluginName, version: first.version };
  if (tools.length === 1 && first.description) manifest.description = first.description;
  files.push({ path: "plugin.json", text: `${JSON.stringify(manifest, null, 2)}\n` });
  if (Object.keys(servers).length > 0) files.push({ path: "mcp.json", text: `${JSON.stringify({ $schema: PLUGIN_MCP_SCHEMA, mcpServers: servers }, null, 2)}\n` });
  return { name: pluginName, files: files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)), notes };
}

/**
 * A server kiwi read from a Claude Code plugin: from its .mcp.json, from plugin.json's inline
 * mcpServers or from a file those name (its CLAUDE_PLUGIN_ROOT is kiwi's, as PLUGIN_ROOT is for an Agent Plugin's).
 */
function fromClaudePlugin(tool: Tool): boolean {
  return tool.manifestFile.endsWith(`#${tool.id}`) && tool.files.some((f) => f.path === CLAUDE_PLUGIN_FILE);
}

/** The plugin-relative file a plugin's server was read from (`<plugin>/<file>#<server>`). */
function serverFile(tool: Tool): string {
  return tool.manifestFile.slice(tool.root.length + 1, tool.manifestFile.lastIndexOf("#"));
}

function pluginServer(tool: Tool, notes: string[]): Record<string, unknown> {
  const c = exactConfig(tool);
  const secrets = declaredSecrets(c);
  const literal = (what: string, value: string, name?: string): string | undefined => {
    if (name !== undefined && isSecretName(name, secrets) && !value.includes("${")) {
      notes.push(`${tool.id}: ${what} is a secret, and mcp.json holds no secrets: its literal value is left out; set it in the client`);
      return undefined;
    }
    if (/\$\{[A-Za-z_]\w*\}/.test(value.replace(/\$\{PLUGIN_ROOT\}/g, ""))) {
      notes.push(`${tool.id}: ${what} reads ${value.match(/\$\{[A-Za-z_]\w*\}/)![0]} from the environment, which Agent Plugins cannot express (no expansion, no secrets in mcp.json): left out; set it in the client`);
      return undefined;
    }
    return unescape(value);
  };
  if (tool.executor?.id === "http_client" && typeof c.url === "string") {
    const url = literal("its url", c.url);
    if (url === undefined) throw refuse(tool, "its URL depends on the environment", "write the URL literally to export it");
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((c.headers as Record<string, unknown>) ?? {})) {
      const value = literal(`header ${k}`, configText(v), k);
      if (value !== undefined) headers[k] = value;
    }
    return { type: c.transport === "sse" ? "sse" : "streamable-http", url, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
  }
  const args = (Array.isArray(c.args) ? (c.args as unknown[]) : []).map(configText);
  let command = typeof c.command === "string" ? c.command : undefined;
  let launcher: string[] = [];
  if (typeof c.package === "string") {
    const m = /^(npm|pypi):(.+?)(?:@|==)([^@=]+)$/.exec(c.package);
    if (!m) throw refuse(tool, `config.package ${JSON.stringify(c.package)} names no exact version`, "pin it");
    command = m[1] === "npm" ? "npx" : "uvx";
    // config.bin names the package's program kiwi runs; without it the launcher runs the default one.
    const bin = typeof c.bin === "string" ? c.bin : undefined;
    if (m[1] === "npm") launcher = bin ? ["-y", "-p", `${m[2]}@${m[3]}`, bin] : ["-y", `${m[2]}@${m[3]}`];
    else launcher = bin ? ["--from", `${m[2]}==${m[3]}`, bin] : [`${m[2]}==${m[3]}`];
    notes.push(`${tool.id}: runs its package through ${command} (${launcher.join(" ")}), which fetches it at start; kiwi ran the locked copy`);
  }
  if (command === undefined) throw refuse(tool, "it names no command or package", "set config.command or config.package");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries((c.env as Record<string, unknown>) ?? {})) {
    if (k === "PLUGIN_ROOT" || k === "PLUGIN_DATA" || (fromClaudePlugin(tool) && k === "CLAUDE_PLUGIN_ROOT")) continue;
    const value = literal(`env ${k}`, configText(v), k);
    if (value !== undefined) env[k] = value;
  }
  const mappedArgs = [...launcher, ...args.flatMap((a) => literal(`argument ${JSON.stringify(a)}`, a) ?? [])];
  return { type: "stdio", command: command.startsWith("./") || !command.includes("/") ? command : `./${command}`, ...(mappedArgs.length > 0 ? { args: mappedArgs } : {}), ...(Object.keys(env).length > 0 ? { env } : {}), ...(typeof c.cwd === "string" ? { cwd: `./${c.cwd}` } : {}) };
}

/** The config as written (1.0 a float, 12345678901234567890 exact): what kiwi passes at exec, so what an export must say. */
function exactConfig(tool: Tool): Record<string, unknown> {
  return tool.configLossless ?? tool.config;
}

/** A config value as the argument or variable text exec makes of it (exec/template.ts renderConfigText). */
function configText(value: unknown): string {
  return typeof value === "string" ? value : renderLosslessJson(value);
}

/** kiwi config text back to literal text: `{{x}}` is a literal `{x}`. */
function unescape(text: string): string {
  return text.replace(/\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g, "{$1}");
}

/** A kiwi argument as a server.json positional: `${X}` is a required user input, anything else a fixed value. */
function argumentOf(arg: string, secrets: ReadonlySet<string>): Record<string, unknown> {
  const whole = /^\$\{([A-Za-z_]\w*)\}$/.exec(arg);
  if (whole) return { type: "positional", valueHint: whole[1]!.toLowerCase(), isRequired: true, ...(isSecretName(whole[1]!, secrets) ? { isSecret: true } : {}) };
  return withVariables({ type: "positional" }, arg, secrets);
}

function keyValues(map: unknown, secrets: ReadonlySet<string>, notes: string[]): Record<string, unknown>[] {
  if (typeof map !== "object" || map === null) return [];
  return Object.entries(map as Record<string, unknown>).map(([name, raw]) => {
    const value = configText(raw);
    const whole = /^\$\{([A-Za-z_]\w*)\}$/.exec(value);
    if (whole && whole[1] === name) return { name, isRequired: true, ...(isSecretName(name, secrets) ? { isSecret: true } : {}) };
    if (isSecretName(name, secrets) && !value.includes("${")) {
      // A server.json is published: a secret's value written into the manifest is never copied (as the import never copies one).
      notes.push(`${name} is a secret, and its literal value is not exported: the server.json asks the user for it`);
      return { name, isRequired: true, isSecret: true };
    }
    return withVariables({ name }, value, secrets);
  });
}

/** A fixed value, with each `${X}` it reads as a `{x}` variable the user supplies. */
function withVariables(base: Record<string, unknown>, value: string, secrets: ReadonlySet<string>): Record<string, unknown> {
  const { text, variables } = templateOf(value, secrets);
  return { ...base, value: text, ...(Object.keys(variables).length > 0 ? { variables } : {}) };
}

/**
 * kiwi config text as a server.json template, in one pass: `${X}` (read from the environment)
 * becomes the variable `{x}`, and `{{x}}` the literal `{x}`. Unescaping first would turn a kiwi
 * literal `${{HOME}}` into the reference `${HOME}`.
 */
function templateOf(value: string, secrets: ReadonlySet<string>): { text: string; variables: Record<string, unknown> } {
  const variables: Record<string, unknown> = {};
  const text = value.replace(/\$\{([A-Za-z_]\w*)\}|\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g, (_m, name: string | undefined, literal: string | undefined) => {
    if (name === undefined) return `{${literal}}`;
    variables[name.toLowerCase()] = { isRequired: true, ...(isSecretName(name, secrets) ? { isSecret: true } : {}) };
    return `{${name.toLowerCase()}}`;
  });
  return { text, variables };
}

function stripFrontMatter(text: string): string {
  const lines = text.split("\n");
  if (lines[0]?.trim() !== "---") return text;
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  return end === -1 ? text : lines.slice(end + 1).join("\n");
}

/** Front matter as YAML with every string quoted as JSON (valid YAML, no surprises with `:` or `#`). */
function yamlFront(front: Record<string, unknown>): string {
  return Object.entries(front)
    .map(([k, v]) => (typeof v === "object" && v !== null ? `${k}:\n${Object.entries(v as Record<string, string>).map(([mk, mv]) => `  ${mk}: ${JSON.stringify(mv)}\n`).join("")}` : `${k}: ${JSON.stringify(v)}\n`))
    .join("");
}
