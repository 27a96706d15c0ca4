// `kiwi mcp pin` and the reading half of `kiwi mcp approve`: servers started, listed, scanned and
// (re-)pinned in tool.lock.json through the gate (ops/mcp-gate-io.ts), which writes the pin.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import { type McpProject, readMcpProject, selectServers } from "../mcp/mcp-project-io.ts";
import { type GateOutcome, gateServer } from "./mcp-gate-io.ts";
import { type LiveInterface, inspectServer } from "./mcp-inspect-io.ts";

/** The project's MCP servers and pins; pins live in tool.lock.json, so it must exist. */
export function readPinnableProject(ctx: Context): McpProject {
  const project = readMcpProject(ctx);
  if (!project.hasLockfile) throw new KiwiError("E_LOCK_MISSING", `tool.lock.json does not exist in ${project.root}; pins are kept there`, { hint: 'run "kiwi lock" first' });
  return project;
}

/** Pins (or re-pins) the named servers (default: all), one at a time; `each` sees every outcome as it is written. */
export async function pinServers(ctx: Context, ids: readonly string[], strict: boolean, each: (outcome: GateOutcome, live: LiveInterface) => void): Promise<{ project: McpProject; outcomes: GateOutcome[] }> {
  const project = readPinnableProject(ctx);
  const outcomes: GateOutcome[] = [];
  for (const server of selectServers(project, ids)) {
    const live = await inspectServer(ctx, server.id, { unlocked: false });
    const outcome = await gateServer(project, live, { mode: "pin", warnOnly: false, strict, interactive: false });
    outcomes.push(outcome);
    each(outcome, live);
  }
  return { project, outcomes };
}

/** `kiwi mcp approve`'s first step: the one server, its pin (if any) and its live interface. */
export async function inspectForApproval(ctx: Context, serverId: string): Promise<{ project: McpProject; server: Tool; live: LiveInterface }> {
  const project = readPinnableProject(ctx);
  const [server] = selectServers(project, [serverId]) as [Tool];
  return { project, server, live: await inspectServer(ctx, server.id, { unlocked: false }) };
}
