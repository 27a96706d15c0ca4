// The MCP step of `kiwi lock` and `kiwi install`, in front of mcp-lock-io.ts: when the lock already
// knows which mcp_server tools its lockfile pins (from the lockfile it wrote or confirmed, or from
// the lock index, which records the pins of the bytes it vouches for), a step with nothing to pin,
// or one whose mode never pins at lock time, answers without reading the project a second time.
// That second read (discovery of every manifest and the whole lockfile parsed) cost a warm lock of
// a 1,000-tool tree with MCP servers ~130 ms, four times the rest of the run. Only a server that
// must be started loads mcp-lock-io.ts, with the MCP SDK behind it.
import type { Context } from "../context.ts";
import { lockTimeSkipReason, resolveMcpMode } from "../mcp/modes.ts";
import type { LockPinReport } from "./mcp-lock-io.ts";

/** What the lock step tells the MCP step. */
export interface LockedServers {
  /** Ids of the project's mcp_server tools. */
  mcpServers: readonly string[];
  /** Those the lockfile does not pin, in project order; undefined when the lock did not learn its pins. */
  mcpUnpinned?: readonly string[];
}

/** Pins the servers the lock left unpinned (trust on first use), or reports why not. */
export async function pinAfterLock(ctx: Context, locked: LockedServers, options: { strict: boolean; onStart?: (server: string) => void }): Promise<LockPinReport[]> {
  if (locked.mcpServers.length === 0) return [];
  if (locked.mcpUnpinned !== undefined) {
    if (locked.mcpUnpinned.length === 0) return [];
    const skip = lockTimeSkipReason(resolveMcpMode(undefined, ctx.env));
    if (skip !== undefined) return locked.mcpUnpinned.map((server) => ({ server, result: "skipped", reason: skip }));
  }
  const { pinUnpinnedServers } = await import("./mcp-lock-io.ts");
  return pinUnpinnedServers(ctx, options);
}
