// Claude Code plugins: a folder with .claude-plugin/plugin.json. Where the format overlaps Agent
// Plugins (plugin.ts), kiwi reads it the way Claude Code does: each skills/<name>/SKILL.md is a skill
// and each server of .mcp.json (and of plugin.json mcpServers) an mcp_server, skills paths too. Its other components (commands, agents, hooks, …) are
// Claude Code's own; kiwi names them once and reads none of them. Pure: parsed values in, manifests
// and problems out.
import { escapePointer } from "../integrity/canonical.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { isRecord, toPlain } from "../integrity/value.ts";
import { leavesFolder } from "./skill.ts";
import { type Mapped, type PluginManifest, type PluginProblem, type PluginServer, type ServerDialect, httpServer, isProblem, stdioServer, unfitServerName } from "./plugin.ts";

export const CLAUDE_PLUGIN_DIR = ".claude-plugin";
export const CLAUDE_PLUGIN_FILE = ".claude-plugin/plugin.json";
export const CLAUDE_MCP_FILE = ".mcp.json";
/** A marketplace's catalog of plugins: no plugin itself. */
export const CLAUDE_MARKETPLACE_FILE = ".claude-plugin/marketplace.json";

/** The components Claude Code reads by default location that are not tools kiwi runs. */
const CLAUDE_ONLY = ["commands", "agents", "hooks", "output-styles", ".lsp.json", "settings.json", "monitors"];
/** plugin.json fields that point Claude Code at components kiwi does not read (skills and mcpServers it reads: claudeSkillDirs, claudeMcpFiles). */
const CLAUDE_PATH_FIELDS = ["commands", "agents", "hooks", "outputStyles", "lspServers", "monitors"];
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

const CLAUDE: ServerDialect = {
  rootVar: "CLAUDE_PLUGIN_ROOT",
  dataVar: "CLAUDE_PLUGIN_DATA",
  // Claude Code reads ${VAR} from the environment, as a kiwi config string does; a literal {name}
  // would be taken for a call parameter, so it is escaped.
  literal: (text) => text.replace(/(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}/g, "{{$1}}"),
};

/** Checks .claude-plugin/plugin.json: Claude Code requires only a name; the rest it reads is not kiwi's. */
export function checkClaudePluginManifest(value: CanonicalValue): PluginManifest & { ignored: string[] } {
  const problems: PluginProblem[] = [];
  const doc = toPlain(value);
  const fatal = (pointer: string, message: string, hint: string) => problems.push({ rule: "plugin/manifest", file: CLAUDE_PLUGIN_FILE, pointer, message, hint });
  if (!isRecord(doc)) {
    fatal("", `${CLAUDE_PLUGIN_FILE} is not a JSON object`, 'write { "name": "<plugin>" }');
    return { ok: false, version: "0.0.0", problems, ignored: [] };
  }
  const name = doc.name;
  if (typeof name !== "string" || !/^[a-z0-9]+(?:[-.][a-z0-9]+)*$/.test(name) || name.length > 64) {
    fatal(name === undefined ? "" : "/name", name === undefined ? `${CLAUDE_PLUGIN_FILE} has no name` : `name ${JSON.stringify(name)} is not a plugin name`, "Claude Code names a plugin in kebab-case: lower-case letters, digits and hyphens");
  }
  if (doc.version !== undefined && typeof doc.version !== "string") fatal("/version", "version is not a string", 'write "version": "1.0.0"');
  const ignored = CLAUDE_PATH_FIELDS.filter((k) => doc[k] !== undefined).map((k) => `plugin.json ${k}`);
  const version = typeof doc.version === "string" && SEMVER.test(doc.version) ? doc.version : "0.0.0";
  return { ok: problems.length === 0, ...(typeof name === "string" ? { name } : {}), version, problems, ignored };
}

/** The Claude Code components a plugin folder holds that kiwi does not read, by their top-level names. */
export function claudeOnlyComponents(names: readonly string[]): string[] {
  return CLAUDE_ONLY.filter((c) => names.includes(c));
}

/**
 * .mcp.json -> one kiwi mcp_server manifest per server, read as Claude Code reads it: `{ mcpServers:
 * { … } }` or the servers at the top; no `type` (or `stdio`) is a stdio server, `http` a
 * streamable-http one; `${CLAUDE_PLUGIN_ROOT}` is the plugin root and other `${VAR}` the
 * environment. A server kiwi cannot run as written is skipped with a plugin/mcp warning.
 */
export function claudePluginServers(value: CanonicalValue, plugin: PluginManifest, file: string = CLAUDE_MCP_FILE): { servers: PluginServer[]; problems: PluginProblem[] } {
  const problems: PluginProblem[] = [];
  const warn = (pointer: string, message: string, hint: string) => problems.push({ rule: "plugin/mcp", file, pointer, message, hint });
  const doc = toPlain(value);
  const wrapped = isRecord(doc) && doc.mcpServers !== undefined;
  const entries = !isRecord(doc) ? undefined : wrapped ? doc.mcpServers : doc;
  if (!isRecord(entries)) {
    warn(wrapped ? "/mcpServers" : "", `${file} ${wrapped ? "has an mcpServers that is not an object" : "is not a JSON object"}, so the plugin's MCP servers are not read`, 'write { "mcpServers": { "<name>": { "command": "…" } } }');
    return { servers: [], problems };
  }
  const servers: PluginServer[] = [];
  const ROOT = "${CLAUDE_PLUGIN_ROOT}";
  for (const [name, entry] of Object.entries(entries)) {
    const pointer = `${wrapped ? "/mcpServers" : ""}/${escapePointer(name)}`;
    const skip = (message: string, hint: string) => warn(pointer, `server ${JSON.stringify(name)} is skipped: ${message}`, hint);
    const unfit = unfitServerName(name);
    if (unfit) {
      skip(unfit.problem, unfit.hint);
      continue;
    }
    if (!isRecord(entry)) {
      skip("it is not an object", 'write { "command": "…" }');
      continue;
    }
    const defaulted = JSON.stringify(entry).match(/\$\{[A-Za-z_][A-Za-z0-9_]*:-/);
    let mapped: Mapped;
    if (defaulted) mapped = { problem: `it uses ${defaulted[0]}…}, a default kiwi does not expand`, hint: "write ${VAR} and set VAR in the environment kiwi runs in" };
    else if (entry.type === undefined || entry.type === "stdio") {
      // ${CLAUDE_PLUGIN_ROOT}/bin/server is the plugin's own executable: ./bin/server in the run directory.
      const command = typeof entry.command === "string" && entry.command.startsWith(`${ROOT}/`) ? `.${entry.command.slice(ROOT.length)}` : entry.command;
      const { type: _type, ...rest } = entry;
      mapped = stdioServer({ ...rest, command }, CLAUDE);
    } else if (entry.type === "http" || entry.type === "sse") mapped = httpServer({ ...entry, type: entry.type === "http" ? "streamable-http" : "sse" }, CLAUDE);
    else mapped = { problem: `type ${JSON.stringify(entry.type)} is not stdio, http or sse`, hint: "set type" };
    if (isProblem(mapped)) {
      skip(mapped.problem, mapped.hint);
      continue;
    }
    const description = `MCP server ${name} of the Claude Code plugin ${plugin.name ?? ""}`.trim();
    servers.push({ name, manifest: { tool_id: name, tool_type: "mcp_server", version: plugin.version, description, ...mapped } });
  }
  return { servers, problems };
}

/**
 * The plugin-relative files whose servers Claude Code loads: .mcp.json, and what plugin.json's
 * mcpServers adds to it, either servers inline (plugin.json itself) or the path or paths ("./…",
 * inside the plugin) of more .mcp.json-shaped files. A malformed mcpServers is a plugin/mcp warning.
 */
export function claudeMcpFiles(value: CanonicalValue): { files: string[]; problems: PluginProblem[] } {
  const doc = toPlain(value);
  const field = isRecord(doc) ? doc.mcpServers : undefined;
  if (isRecord(field)) return { files: [CLAUDE_MCP_FILE, CLAUDE_PLUGIN_FILE], problems: [] };
  const read = componentPaths(field, "mcpServers", CLAUDE_MCP_FILE, "plugin/mcp", 'write "mcpServers": { "<name>": { … } }, or "./path/to/.mcp.json" (or a list of such paths) relative to the plugin root');
  return { files: read.paths, problems: read.problems };
}

/**
 * The plugin-relative folders of skill folders Claude Code loads: skills/, and the path or paths
 * ("./…", inside the plugin) plugin.json's skills adds. A malformed one is a plugin/field warning.
 */
export function claudeSkillDirs(value: CanonicalValue): { dirs: string[]; problems: PluginProblem[] } {
  const doc = toPlain(value);
  const read = componentPaths(isRecord(doc) ? doc.skills : undefined, "skills", "skills", "plugin/field", 'write "skills": "./path/to/skills" (or a list of such paths) relative to the plugin root, each a folder of <name>/SKILL.md');
  return { dirs: read.paths, problems: read.problems };
}

/** A component path field (a "./path" or a list of them) -> the default path first, then each added one, plugin-relative. */
function componentPaths(field: unknown, key: string, fallback: string, rule: "plugin/mcp" | "plugin/field", hint: string): { paths: string[]; problems: PluginProblem[] } {
  const paths = [fallback];
  const problems: PluginProblem[] = [];
  const warn = (pointer: string, message: string) => problems.push({ rule, file: CLAUDE_PLUGIN_FILE, pointer, message, hint });
  if (field === undefined) return { paths, problems };
  const given = typeof field === "string" ? [field] : Array.isArray(field) ? field : undefined;
  if (given === undefined) {
    warn(`/${key}`, `${key} is not ${key === "mcpServers" ? "an object of servers, " : ""}a path or a list of paths, so it is not read`);
    return { paths, problems };
  }
  given.forEach((path, i) => {
    const pointer = typeof field === "string" ? `/${key}` : `/${key}/${i}`;
    if (typeof path !== "string" || !path.startsWith("./") || leavesFolder(path)) {
      warn(pointer, `${key} path ${JSON.stringify(path)} is not a ./path inside the plugin, so it is not read`);
      return;
    }
    const out: string[] = [];
    for (const part of path.split("/")) {
      if (part === "..") out.pop();
      else if (part !== "" && part !== ".") out.push(part);
    }
    const rel = out.join("/");
    if (rel !== "" && !paths.includes(rel)) paths.push(rel);
  });
  return { paths, problems };
}
