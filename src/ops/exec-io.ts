// `kiwi exec <tool>` as one use case: verify the chain, validate the parameters and plan
// (prepare-exec-io.ts), then, unless it is a dry run, run the verified copy through its primitive
// (exec/run-io.ts) or, for an mcp_tool, call it on its server (mcp-exec-io.ts). What the user sees
// comes in as hooks from the command; what only some calls need (the MCP SDK, the HTTP client, the
// proxy) loads only for them.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Plan } from "../exec/plan.ts";
import { redactError, runPrepared } from "../exec/run-io.ts";
import type { OutputSinks } from "../exec/subprocess.ts";
import type { Refusal } from "../exec/net-proxy.ts";
import { jitAtFullSpeed } from "../self.ts";
import type { GateOptions, GateOutcome } from "./mcp-gate-io.ts";
import type { McpCall } from "./mcp-exec-io.ts";
import { type ExecRequest, type PreparedExec, prepareExec } from "./prepare-exec-io.ts";

export type { ExecRequest };

/** How an mcp_tool call is gated against its pin, and how the gate's outcome is reported. */
export interface McpGateHooks {
  gate: GateOptions;
  onGate: (outcome: GateOutcome) => void;
}

/** What the command hands in: where output and notes go. */
export interface ExecHooks {
  /** A warning of the preparation, shown before anything runs. */
  warn: (message: string) => void;
  /** Where a subprocess's or an HTTP tool's output goes. */
  sinks: () => OutputSinks;
  /** What kiwi's proxy refused the tool, reported once the run is over (also when it failed). */
  refused: (prepared: { refusals: readonly Refusal[]; plan: { tool: string } }) => void;
  /** The gate of an mcp_tool call, built only for one (its prompt and rendering load then). */
  mcpGate: () => Promise<McpGateHooks>;
}

export type ExecOutcome =
  /** --dry-run: the plan with secret values as `***`; nothing ran. */
  | { kind: "plan"; shown: Plan; warnings: string[] }
  /** A subprocess or HTTP tool ran; its output went to the sinks. */
  | { kind: "ran"; exitCode: number; durationMs: number; refusals: Refusal[] }
  /** An mcp_tool was called on its server. */
  | { kind: "mcp"; call: McpCall };

/** Verifies, plans and (unless `request.dryRun`) runs one call of `request.toolId`. */
export async function execTool(ctx: Context, request: ExecRequest, hooks: ExecHooks): Promise<ExecOutcome> {
  const prepared = prepareExec(ctx, request);
  for (const warning of prepared.warnings) hooks.warn(warning);
  if (request.dryRun) {
    prepared.cleanup();
    return { kind: "plan", shown: prepared.shown, warnings: prepared.warnings };
  }
  // The tool starts now. Where kiwi's own code keeps working through the call (speaking MCP, the
  // filtering proxy), it may run long enough to want the JIT. Pumping a plain tool's output does
  // not: the JIT's background compiles then only took a core from the tool (a warm python exec
  // ~1 ms slower; even 15 MB of output was no faster with it).
  const mcp = prepared.chain.links[0]?.tool.type === "mcp_tool";
  if (mcp || prepared.netPolicy !== undefined) jitAtFullSpeed();
  try {
    if (mcp) return { kind: "mcp", call: await callMcpTool(ctx, prepared, await hooks.mcpGate()) };
    const started = performance.now();
    const exitCode = await runPrepared(prepared, hooks.sinks());
    return { kind: "ran", exitCode, durationMs: Math.round(performance.now() - started), refusals: prepared.refusals };
  } catch (error) {
    throw error instanceof KiwiError ? redactError(error, prepared.redact) : error;
  } finally {
    hooks.refused(prepared);
  }
}

/** An mcp_tool call (the MCP SDK loads only here). */
async function callMcpTool(ctx: Context, prepared: PreparedExec, hooks: McpGateHooks): Promise<McpCall> {
  const { runMcpTool } = await import("./mcp-exec-io.ts");
  return runMcpTool(ctx, prepared, hooks.gate, hooks.onGate);
}
