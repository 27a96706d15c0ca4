// `kiwi exec <mcp_tool>` once exec has verified the chain and validated the parameters against
// the manifest: start or reach the server, compare its live interface (and name) with the pin
// under the mode, validate the parameters against the live inputSchema, call the tool.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { toPlain } from "../integrity/value.ts";
import type { Tool } from "../manifest/model.ts";
import { assertNoViolations, toViolations } from "../exec/params.ts";
import type { PreparedExec } from "./prepare-exec-io.ts";
import { compileUntrustedSchema } from "../validate/json-schema.ts";
import { type GateOptions, type GateOutcome, gateServer } from "./mcp-gate-io.ts";
import { liveInterfaceOf, negotiationFor, withSessionFor } from "./mcp-inspect-io.ts";
import type { WireObject } from "../mcp/listing.ts";
import { readMcpProject } from "../mcp/mcp-project-io.ts";
import { interceptInterrupts } from "../mcp/reaper-io.ts";
import { interruptedError } from "../exec/interrupt.ts";
import { callLimitsFor } from "../mcp/target.ts";
import { suggest } from "../resolve/suggest.ts";
import { renderVisible } from "../mcp/visible.ts";

export interface McpCall {
  server: string;
  tool: string;
  /** The MCP tool's name on the server (`config.tool_name`). */
  name: string;
  /** The SDK's result: content, structuredContent, isError, … */
  result: Record<string, unknown>;
  gate?: GateOutcome;
}

/** True when the prepared call is of an mcp_tool (exec hands those to runMcpTool). */
export function isMcpToolCall(prepared: Pick<PreparedExec, "chain">): boolean {
  return prepared.chain.links[0]?.tool.type === "mcp_tool";
}

/** Runs an mcp_tool call end to end; the server is always shut down, run dirs cleaned. */
export async function runMcpTool(ctx: Context, prepared: PreparedExec, gate: Omit<GateOptions, "interactive"> & { interactive: boolean }, onGate?: (outcome: GateOutcome) => void): Promise<McpCall> {
  const leaf = prepared.chain.links[0]!.tool;
  const server = prepared.chain.links[1]?.tool;
  if (!server || server.type !== "mcp_server") {
    throw new KiwiError("E_CHAIN", `${leaf.manifestFile}: the mcp_tool ${leaf.id} must name an mcp_server as its executor, not ${server ? `${server.id} (${server.type})` : "nothing"}`, {
      hint: "set executor to the id of the mcp_server tool that serves it",
    });
  }
  const name = mcpToolName(leaf);
  const project = readMcpProject(ctx);
  // Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops the server and ends the call as E_INTERRUPTED, as it
  // ends any tool's run: one error, or one --json document, and exit 128+N.
  let interrupt: (signal: NodeJS.Signals) => void = () => {};
  const interrupted = new Promise<never>((_, reject) => {
    interrupt = (signal) => reject(interruptedError(leaf.id, signal, `stopped the call on MCP server "${server.id}"`, { server: server.id }));
  });
  const release = interceptInterrupts((signal) => interrupt(signal));
  try {
    return await Promise.race([interrupted, withSessionFor(prepared, server, async (session) => {
      const listing = await session.extractListing();
      const live = liveInterfaceOf(server, listing, session.warnings(), session.sandbox, session.credential);
      const outcome = await gateServer(project, live, gate);
      onGate?.(outcome);
      const tool = listing.tools.find((t) => t.name === name);
      if (!tool) {
        // The server's own names, hidden characters made visible: a hint is printed on a terminal.
        const names = listing.tools.map((t) => renderVisible(String(t.name)));
        throw new KiwiError("E_MCP", `MCP server "${server.id}" has no tool named ${JSON.stringify(name)} (asked for by ${leaf.id})`, {
          hint: names.length ? `${didYouMean(name, names)}its tools: ${names.slice(0, 20).join(", ")}${names.length > 20 ? ", …" : ""}; fix config.tool_name in ${leaf.manifestFile}` : "the server lists no tools",
        });
      }
      assertLiveSchemaAccepts(leaf, server, tool, prepared.plan.params);
      const result = await session.callTool(name, prepared.plan.params, leaf.limits.timeoutMs, tool).catch((error: unknown) => {
        throw callTimeoutNamed(error, leaf);
      });
      return { server: server.id, tool: leaf.id, name, result, gate: outcome };
    }, callLimitsFor(server, leaf.limits.timeoutMs), negotiationFor(project.pins[server.id]))]);
  } finally {
    release();
    prepared.cleanup();
  }
}

/**
 * A tools/call that ran out of the mcp_tool's own limits.timeout_ms says to raise that limit: the
 * session's hint names the server's config.timeout, which bounds every other request.
 */
function callTimeoutNamed(error: unknown, leaf: Pick<Tool, "limits" | "manifestFile">): unknown {
  if (!(error instanceof KiwiError) || error.details?.method !== "tools/call" || error.details.limit !== "request") return error;
  if (leaf.limits.timeoutMs === undefined || error.details.timeoutMs !== leaf.limits.timeoutMs) return error;
  return new KiwiError(error.code, error.message, {
    hint: `raise limits.timeout_ms (${leaf.limits.timeoutMs} ms) in ${leaf.manifestFile} if the tool needs longer`,
    details: error.details,
    cause: error,
  });
}

/** The MCP tool name an mcp_tool calls: `config.tool_name`, else its own id. */
export function mcpToolName(tool: Pick<Tool, "id" | "config">): string {
  return typeof tool.config.tool_name === "string" && tool.config.tool_name !== "" ? tool.config.tool_name : tool.id;
}

/**
 * Validates the call's parameters against the server's live inputSchema, compiled by the safe
 * compiler (depth/size caps, no remote $ref, ReDoS-screened patterns): a hostile schema is refused.
 */
export function assertLiveSchemaAccepts(leaf: Pick<Tool, "id">, server: Pick<Tool, "id">, tool: WireObject, params: Record<string, unknown>): void {
  const schema = tool.inputSchema === undefined || tool.inputSchema === null ? { type: "object" } : toPlain(tool.inputSchema);
  const compiled = compileUntrustedSchema(schema, { subject: `inputSchema of ${String(tool.name)} on MCP server "${server.id}"` });
  if (!compiled.ok) {
    throw new KiwiError("E_MCP", `${compiled.problem.message}${compiled.problem.pointer ? ` (at ${compiled.problem.pointer})` : ""}; kiwi will not validate against it, so the call is refused`, {
      hint: "the server's inputSchema is unsafe to compile (hostile pattern, remote $ref, or too deep/large); report it to the server's author",
      details: { server: server.id, tool: tool.name, problem: compiled.problem },
    });
  }
  const errors = compiled.validate(params);
  assertNoViolations(toViolations(errors, params, schema as Record<string, unknown>), leaf.id, `${leaf.id} (live inputSchema of ${String(tool.name)})`);
}

/** `did you mean "read_graph"? ` when a listed name is close, else nothing. */
function didYouMean(name: string, names: string[]): string {
  const near = suggest(name, names);
  return near ? `did you mean "${near}"? ` : "";
}
