// `kiwi mcp pin` and `kiwi mcp approve`: servers started, listed, scanned and in tool.lock.json through the gate (ops/mcp-gate-io.ts), which writes the pin.
import type { Context } from "../context.ts";
import { KiwiError, toKiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import { type McpProject, readMcpProject, selectServers } from "../mcp/mcp-project-io.ts";
import { type AskInput, type GateOutcome, assertScanPasses, gateServer, scanFor } from "./mcp-gate-io.ts";
import { diffFromPin, pinMatches } from "../mcp/pin.ts";
import { type LiveInterface, inspectServer } from "./mcp-inspect-io.ts";

/** The project's MCP servers and pins; pins live in tool.lock.json, so it must exist. */
export function readPinnableProject(ctx: Context): McpProject {
  const project = readMcpProject(ctx);
  if (!project.hasLockfile) throw new KiwiError("E_LOCK_MISSING", `tool.lock.json does not exist in ${project.root}; pins are kept there`, { hint: 'run "kiwi lock" first' });
  return project;
}

/** A server `kiwi mcp pin` could not pin (it failed to start or answer, or --strict refused it). */
export interface PinFailure {
  server: string;
  error: KiwiError;
}

/**
 * Pins (or re-pins) the named servers (default: all), one at a time; `each` sees every outcome as
 * it is written. A server that fails does not stop the others: its failure is returned with them.
 */
export async function pinServers(ctx: Context, ids: readonly string[], strict: boolean, each: (outcome: GateOutcome, live: LiveInterface) => void): Promise<{ project: McpProject; outcomes: GateOutcome[]; failures: PinFailure[] }> {
  const project = readPinnableProject(ctx);
  const outcomes: GateOutcome[] = [];
  const failures: PinFailure[] = [];
  for (const server of selectServers(project, ids)) {
    try {
      const live = await inspectServer(ctx, server.id, { unlocked: false });
      const outcome = await gateServer(project, live, { mode: "pin", warnOnly: false, strict, interactive: false });
      outcomes.push(outcome);
      each(outcome, live);
    } catch (error) {
      failures.push({ server: server.id, error: toKiwiError(error) });
    }
  }
  return { project, outcomes, failures };
}

export interface ApproveOutcome {
  server: string;
  /** "matches": the live interface equals the pin, nothing was written. */
  result: "matches" | "approved" | "pinned";
  /** The hashes now pinned (the old pin when it matched). */
  pinned: { name: string; interface_hash: string; full_hash: string };
  review?: AskInput;
  warnings: string[];
}

/**
 * `kiwi mcp approve`: one server's change (diff from its pin, poisoning scan) handed to `review`,
 * which shows it and says yes or no (or throws); approved, it is re-pinned through the gate.
 */
export async function approveServer(ctx: Context, serverId: string, options: { strict: boolean; review: (change: AskInput) => Promise<boolean> }): Promise<ApproveOutcome> {
  const project = readPinnableProject(ctx);
  const [server] = selectServers(project, [serverId]) as [Tool];
  const live = await inspectServer(ctx, server.id, { unlocked: false });
  const pinned = project.pins[server.id];
  if (pinned && pinMatches(pinned, live.live)) return { server: server.id, result: "matches", pinned, warnings: [] };
  const scan = scanFor(project, live, options.strict);
  const diff = pinned ? diffFromPin(pinned, live.live, live.listing, server.id) : undefined;
  const review: AskInput = { server: server.id, reason: pinned ? "changed" : "unpinned", ...(diff ? { diff } : {}), scan };
  if (!(await options.review(review))) throw new KiwiError(pinned ? "E_MCP_DRIFT" : "E_MCP_UNPINNED", `MCP server "${server.id}" was not approved; its pin is unchanged`, { hint: "nothing was written" });
  if (options.strict) assertScanPasses(server.id, scan);
  const outcome = await gateServer(project, live, { mode: "pin", warnOnly: false, strict: false, interactive: false });
  return { server: server.id, result: pinned ? "approved" : "pinned", pinned: live.live, review, warnings: outcome.warnings };
}
