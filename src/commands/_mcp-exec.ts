// The mcp_tool side of `kiwi exec`, loaded only for one (the prompt and the MCP renderers): the
// gate hooks handed to ops/exec-io.ts, and the call's result, drift and gate outcome as shown.
import type { Context } from "../context.ts";
import type { KiwiError } from "../errors.ts";
import type { McpGateHooks } from "../ops/exec-io.ts";
import type { McpCall } from "../ops/mcp-exec-io.ts";
import type { GateOutcome } from "../ops/mcp-gate-io.ts";
import { resolveMcpMode } from "../mcp/modes.ts";
import { renderDiff, renderDriftSummary, renderFindings, renderToolResult } from "../ui/mcp-render.ts";
import { askApproval, canAsk } from "../ui/mcp-prompt.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";

export interface McpExecArgs {
  json?: boolean;
  strict?: boolean;
  mcpMode?: string;
  warnOnly?: boolean;
}

/** How the call is gated against its server's pin (mode, prompt) and how the gate's outcome is reported. */
export function mcpGateHooks(ctx: Context, args: McpExecArgs): McpGateHooks {
  const interactive = canAsk(ctx);
  return {
    gate: { mode: resolveMcpMode(args.mcpMode, ctx.env), warnOnly: args.warnOnly === true, strict: args.strict === true, interactive, ask: interactive ? (q) => askApproval(q, ctx) : undefined },
    onGate: (outcome) => reportGate(ctx, outcome),
  };
}

/** Prints an mcp_tool call's result; returns the exit code (1 when the result has isError). */
export function showMcpCall(call: McpCall, args: McpExecArgs): number {
  const isError = call.result.isError === true;
  if (args.json) showJson({ ok: !isError, tool: call.tool, server: call.server, name: call.name, pin: call.gate?.result ?? null, result: call.result });
  else showResult(renderToolResult(call.result));
  if (isError) showNote(`error: the MCP tool ${call.name} on ${call.server} returned an error result (isError)`);
  return isError ? 1 : 0;
}

function reportGate(ctx: Context, outcome: GateOutcome): void {
  for (const w of outcome.warnings) showNote(`warning: ${w}`);
  if (outcome.result === "pinned") showNote(`pinned MCP server "${outcome.server}" on first use (tool.lock.json); review it with "kiwi mcp diff ${outcome.server}" later`);
  if (outcome.result === "repinned") showNote(`re-pinned MCP server "${outcome.server}" (--mcp-mode pin)`);
  if (outcome.result === "warned" && outcome.diff) showNote(renderDiff(outcome.server, outcome.diff, ctx));
  if (outcome.scan && outcome.scan.findings.length && (outcome.result === "pinned" || outcome.result === "repinned")) showNote(renderFindings(outcome.scan, ctx));
}

/** A refused drift shows the per-field changes, so the user sees why before reading the hint. */
export function showDriftDetails(error: KiwiError): void {
  const changes = error.details?.changes as { kind: string; name: string; change: string; severity: string; fields: string[] }[] | undefined;
  if (!changes?.length) return;
  showNote(renderDriftSummary(String(error.details?.server), changes));
}
