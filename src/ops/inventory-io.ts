// `kiwi list` and `kiwi show <tool>`: what the project holds and what one tool takes, read from
// the tree (discovery) and tool.lock.json. Inspection only: nothing is hashed, locked or run.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { readLockfile } from "../lockfile/fs.ts";
import { readProject } from "../manifest/discover-io.ts";
import type { Capability, Tool } from "../manifest/model.ts";
import { buildParametersSchema } from "../validate/parameters.ts";
import type { Lockfile, McpPin } from "../schema/lockfile.ts";
import { type TreeReport, resolveTree } from "./tree-io.ts";
import { unknownTool } from "../exec/chain-verify-io.ts";
import { remoteToolsNotInstalled } from "./remote-installed-io.ts";

export interface ListedTool {
  id: string;
  type: string;
  version: string;
  description: string | null;
  /** The manifest file, or `<builtin>/<id>.yaml`. */
  source: string;
  builtin: boolean;
  /** In tool.lock.json at this version. */
  locked: boolean;
  /** A remote tool tool.lock.json records that this checkout has not installed (kiwi install places it). */
  notInstalled?: true;
}

export interface ListReport {
  root: string;
  lockfile: boolean;
  tools: ListedTool[];
}

/** Every tool of the project, then kiwi's built-ins, each with whether tool.lock.json holds it. */
export function listTools(ctx: Context): ListReport {
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const lock = readLockfile(project.root)?.lock;
  // As npm ls lists a dependency it has not installed: the lock names it, this checkout lacks it.
  const missing: ListedTool[] = remoteToolsNotInstalled(project.root, Object.keys(lock?.remote ?? {}), new Set(project.tools.map((t) => t.id)))
    .filter((id) => lock!.tools[id])
    .map((id) => ({ id, type: lock!.tools[id]!.type, version: lock!.tools[id]!.version, description: null, source: lock!.tools[id]!.source, builtin: false, locked: true, notInstalled: true }));
  const tools = [...project.tools.map((t) => listed(t, lock)), ...missing]
    .sort((a, b) => Number(a.builtin) - Number(b.builtin) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { root: project.root, lockfile: lock !== undefined, tools };
}

export interface ShownParameter {
  name: string;
  type: string | null;
  required: boolean;
  default?: unknown;
  description: string | null;
  /** JSON Schema keywords that bound the value (minimum, maxLength, pattern, enum, format...). */
  contracts: Record<string, unknown>;
}

export interface ShowReport {
  tool: ListedTool;
  parameters: ShownParameter[];
  permissions: { name: string; targets: string[] }[];
  chain: TreeReport;
  /** The MCP pin that applies: the server's own, or the one of the server an mcp_tool runs on. */
  pin: { server: string; name: string; interface_hash: string; full_hash: string; sandbox?: string } | null;
}

function listed(t: Tool, lock: Lockfile | undefined): ListedTool {
  return {
    id: t.id,
    type: t.type,
    version: t.version,
    description: t.description ?? null,
    source: t.manifestFile,
    builtin: t.form === "builtin",
    locked: lock?.tools[t.id]?.version === t.version,
  };
}

const NOT_CONTRACTS = new Set(["type", "description", "default", "title", "$comment"]);

/** One tool in full: its parameters with their contracts and defaults, chain, permissions and pin. */
export function showTool(ctx: Context, toolId: string): ShowReport {
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const tool = project.tools.find((t) => t.id === toolId);
  const lock = readLockfile(project.root)?.lock;
  const remote = lock?.remote?.[toolId];
  if (!tool && remote) {
    throw new KiwiError("E_TOOL_NOT_FOUND", `"${toolId}" is a remote tool this checkout has not installed`, { hint: `run "kiwi install" to place it from ${remote.reference}`, details: { tool: toolId } });
  }
  if (!tool) throw unknownTool(toolId, project.tools.map((t) => t.id));
  const server = tool.type === "mcp_server" ? tool.id : tool.type === "mcp_tool" ? (tool.executor?.id ?? null) : null;
  const pin = server ? (lock?.mcp_servers[server] as McpPin | undefined) : undefined;
  return {
    tool: listed(tool, lock),
    parameters: parametersOf(tool),
    permissions: tool.capabilities.map(permissionOf),
    chain: resolveTree(ctx, toolId),
    pin: pin && server ? { server, name: pin.name, interface_hash: pin.interface_hash, full_hash: pin.full_hash, ...(pin.sandbox ? { sandbox: pin.sandbox } : {}) } : null,
  };
}

function parametersOf(tool: Tool): ShownParameter[] {
  const { schema } = buildParametersSchema(tool);
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, p]) => ({
    name,
    type: typeof p.type === "string" ? p.type : null,
    required: required.has(name),
    ...(p.default !== undefined ? { default: p.default } : {}),
    description: typeof p.description === "string" ? p.description : null,
    contracts: Object.fromEntries(Object.entries(p).filter(([k]) => !NOT_CONTRACTS.has(k))),
  }));
}

function permissionOf(c: Capability): { name: string; targets: string[] } {
  return { name: c.name, targets: [...(c.paths ?? []), ...(c.hosts ?? [])] };
}
