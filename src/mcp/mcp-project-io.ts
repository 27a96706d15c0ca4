// The MCP view of a project: its mcp_server and mcp_tool manifests, and the pins in
// tool.lock.json (each re-verified against its own snapshot). Reads only; pins are written by
// gate-io.ts through lockfile/fs.ts.
import { isMapping } from "../integrity/value.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { readLockfile } from "../lockfile/fs.ts";
import { readProject } from "../manifest/discover-io.ts";
import type { Tool } from "../manifest/model.ts";
import { suggest } from "../resolve/suggest.ts";
import { type McpPin, parsePin } from "./pin.ts";
import type { OtherServer } from "./scan.ts";

export interface McpProject {
  root: string;
  /** Every mcp_server tool, in discovery order. */
  servers: Tool[];
  /** Every mcp_tool tool. */
  tools: Tool[];
  /** Verified pins by server id (empty without a lockfile). */
  pins: Record<string, McpPin>;
  hasLockfile: boolean;
  /** Tools whose packages the lockfile resolved but records no installed tree for (kiwi lock before kiwi install). */
  packagesNotInstalled: string[];
}

/** Reads the project and its MCP pins; a tampered pin is E_LOCK_INVALID. */
export function readMcpProject(ctx: Pick<Context, "cwd" | "cacheDir">): McpProject {
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const read = readLockfile(project.root);
  const pins: Record<string, McpPin> = {};
  for (const [id, value] of Object.entries(read?.lock.mcp_servers ?? {})) pins[id] = parsePin(value as unknown as CanonicalValue, id);
  return {
    root: project.root,
    servers: project.tools.filter((t) => t.type === "mcp_server"),
    tools: project.tools.filter((t) => t.type === "mcp_tool"),
    pins,
    hasLockfile: read !== undefined,
    packagesNotInstalled: Object.entries(read?.lock.dependencies ?? {})
      .filter(([, d]) => (d.npm !== undefined && d.npm.tree === undefined) || (d.pypi !== undefined && d.pypi.tree === undefined))
      .map(([id]) => id),
  };
}

/** The servers named by `ids` (all of them when none is given); unknown ids fail with a suggestion. */
export function selectServers(project: McpProject, ids: readonly string[], all: readonly Tool[] = []): Tool[] {
  if (ids.length === 0) return project.servers;
  return ids.map((id) => {
    const server = project.servers.find((s) => s.id === id);
    if (server) return server;
    const other = all.find((t) => t.id === id) ?? project.tools.find((t) => t.id === id);
    if (other) {
      throw new KiwiError("E_USAGE", `${id} is of type ${other.type || "(none)"}, not an mcp_server`, {
        hint: other.type === "mcp_tool" && other.executor ? `its server is ${other.executor.id}` : `MCP servers here: ${project.servers.map((s) => s.id).join(", ") || "none"}`,
      });
    }
    const near = suggest(id, project.servers.map((s) => s.id));
    throw new KiwiError("E_TOOL_NOT_FOUND", `no mcp_server has the id "${id}"`, {
      hint: near ? `did you mean "${near}"?` : `MCP servers here: ${project.servers.map((s) => s.id).join(", ") || "none"}`,
    });
  });
}

/**
 * The other servers a server's text should not talk about, for the cross-server scan rule: every
 * other server with the tool names its pin snapshot lists and its mcp_tool manifests name.
 */
export function otherServersOf(project: McpProject, serverId: string): OtherServer[] {
  const out: OtherServer[] = [];
  for (const server of project.servers) {
    if (server.id === serverId) continue;
    const tools = new Set<string>();
    const pin = project.pins[server.id];
    const snapshot = pin?.interface.tools;
    if (Array.isArray(snapshot)) {
      for (const t of snapshot) {
        const name = isMapping(t) ? t.name : undefined;
        if (typeof name === "string") tools.add(name);
      }
    }
    for (const tool of project.tools) if (tool.executor?.id === server.id && typeof tool.config.tool_name === "string") tools.add(tool.config.tool_name);
    out.push({ id: server.id, name: pin?.name || undefined, tools: [...tools] });
  }
  return out;
}
