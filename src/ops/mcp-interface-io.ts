// `kiwi mcp hash`, `kiwi mcp diff` and `kiwi mcp scan`: one server's live interface (or an offline
// wire listing file) read, then hashed, compared with its pin or scanned for poisoning. Read-only:
// nothing here writes a pin (ops/mcp-gate-io.ts does).
import type { Context } from "../context.ts";
import { KiwiError, toKiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import type { Negotiation } from "../mcp/mcp-client-io.ts";
import type { InterfaceDiff } from "../mcp/interface-diff.ts";
import { readWireListing } from "../mcp/listing-io.ts";
import { type McpPin, diffFromPin } from "../mcp/pin.ts";
import { readMcpProject, selectServers } from "../mcp/mcp-project-io.ts";
import { type ScanResult, scanListing } from "../mcp/scan.ts";
import { scanFor } from "./mcp-gate-io.ts";
import { type LiveInterface, inspectServer, liveInterfaceOf, negotiationFor } from "./mcp-inspect-io.ts";

/** Where an interface came from: a live server by id, or a listing file. */
export type InterfaceSource = { server: string } | { listing: string };

/** A live server (by id) or an offline listing file, as a LiveInterface; `live.warnings` says what the session tolerated. */
export async function liveOrListing(ctx: Context, serverId: string | undefined, listingFile: string | undefined, unlocked: boolean, known?: Tool, negotiation?: Negotiation): Promise<{ live: LiveInterface; source: InterfaceSource }> {
  if (listingFile) {
    const { listing, source } = readWireListing(ctx.cwd, listingFile);
    const pseudo = known ?? ({ id: source, manifestFile: source } as Tool);
    return { live: liveInterfaceOf(pseudo, listing), source: { listing: source } };
  }
  if (!serverId) throw new KiwiError("E_USAGE", "name an mcp_server tool id, or pass --listing FILE", { hint: 'e.g. "kiwi mcp hash github_mcp" or "kiwi mcp hash --listing tools.json"' });
  if (!known) selectServers(readMcpProject(ctx), [serverId]);
  const live = await inspectServer(ctx, serverId, { unlocked, ...(negotiation ? { negotiation } : {}) });
  return { live, source: { server: serverId } };
}

/** `kiwi mcp diff`: what changed in a server's interface since it was pinned. */
export async function diffServer(ctx: Context, serverId: string, options: { listing?: string; unlocked: boolean }): Promise<{ server: Tool; pinned: McpPin; live: LiveInterface; diff: InterfaceDiff }> {
  const project = readMcpProject(ctx);
  const [server] = selectServers(project, [serverId]) as [Tool];
  const pinned = project.pins[server.id];
  if (!pinned) {
    throw new KiwiError("E_MCP_UNPINNED", `MCP server "${server.id}" has no pin in tool.lock.json, so there is nothing to compare with`, { hint: `pin it with "kiwi mcp pin ${server.id}"` });
  }
  const { live } = await liveOrListing(ctx, server.id, options.listing, options.unlocked, server, negotiationFor(pinned));
  return { server, pinned, live, diff: diffFromPin(pinned, live.live, live.listing, server.id) };
}

/** `kiwi mcp scan`: the poisoning scan of a listing file, or of the named (default: every) server. */
export async function scanServers(ctx: Context, options: { server?: string; listing?: string; unlocked: boolean; strict: boolean }): Promise<{ results: { server: string; scan: ScanResult; warnings: string[] }[]; failures: { server: string; error: KiwiError }[] }> {
  if (options.listing) {
    const { listing, source } = readWireListing(ctx.cwd, options.listing);
    const server = options.server ?? source;
    return { results: [{ server, scan: scanListing(listing, { server, file: source, strict: options.strict }), warnings: [] }], failures: [] };
  }
  const project = readMcpProject(ctx);
  const results = [];
  const failures = [];
  // A server that cannot be listed does not keep the others from being scanned.
  for (const server of selectServers(project, options.server ? [options.server] : [])) {
    try {
      const live = await inspectServer(ctx, server.id, { unlocked: options.unlocked });
      results.push({ server: server.id, scan: scanFor(project, live, options.strict), warnings: live.warnings });
    } catch (error) {
      failures.push({ server: server.id, error: toKiwiError(error) });
    }
  }
  return { results, failures };
}
