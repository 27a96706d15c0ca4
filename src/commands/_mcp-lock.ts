// The MCP step of `kiwi lock` and `kiwi install`: pin servers that have no pin yet, and report it
// on stderr. Loaded lazily (only projects with mcp_server tools pay for the MCP SDK).
import type { Context } from "../context.ts";
import { renderFindings } from "../ui/mcp-render.ts";
import { showNote } from "../ui/output.ts";

/**
 * Pins unpinned servers after the lockfile was written (callers run it only for projects with an
 * mcp_server); returns what the JSON document reports.
 */
export async function pinServersAfterLock(ctx: Context, options: { strict: boolean; json: boolean }): Promise<{ server: string; result: string; reason?: string; interface_hash?: string; full_hash?: string }[]> {
  const { pinUnpinnedServers } = await import("../ops/mcp-lock-io.ts");
  // Starting a server can take a while (npx may download it): say what kiwi is waiting for.
  const onStart = options.json ? undefined : (server: string) => showNote(`starting MCP server "${server}" to pin its interface…`);
  const reports = await pinUnpinnedServers(ctx, { strict: options.strict, onStart });
  for (const r of reports) {
    if (options.json) continue;
    for (const w of r.warnings ?? []) showNote(`warning: ${w}`);
    if (r.result === "pinned") {
      if (r.scan?.findings.length) showNote(renderFindings(r.scan, ctx).trimEnd());
      showNote(`pinned MCP server "${r.server}" (${r.pin!.name}): interface ${r.pin!.interface_hash}`);
    } else if (r.result === "failed") showNote(`warning: MCP server "${r.server}" was not pinned: ${r.reason}\n  hint: fix it, then run "kiwi mcp pin ${r.server}"`);
    else showNote(`note: MCP server "${r.server}" was not pinned (${r.reason})`);
  }
  return reports.map((r) => ({ server: r.server, result: r.result, ...(r.reason ? { reason: r.reason } : {}), ...(r.pin ? { interface_hash: r.pin.interface_hash, full_hash: r.pin.full_hash } : {}) }));
}
