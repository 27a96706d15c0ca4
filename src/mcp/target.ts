// From exec's verified plan of an mcp_server (or an mcp_tool on it) to how kiwi reaches the
// server: the subprocess primitive's argv/env/cwd, or the http_client primitive's URL and headers.
// Pure: the plan was built (chain verified, ${VAR}s expanded, command found on PATH) by exec.
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import type { McpTarget } from "./mcp-client-io.ts";
import { DEFAULT_LISTING_LIMITS, type ListingLimits } from "./server-limits.ts";

/** The transports an mcp_server manifest may name in `config.transport`. */
export const MCP_TRANSPORTS = ["stdio", "streamable-http", "sse"] as const;
export type McpTransportName = (typeof MCP_TRANSPORTS)[number];

/** The parts of exec's plan this module reads (kept structural so exec's plan may grow freely). */
export type PlanLike =
  | { primitive: "subprocess"; subprocess: { argv: string[]; launch?: string[]; files?: string[]; cwd: string; env: Record<string, string> } }
  | { primitive: "http_client"; http: { url: string; headers: Record<string, string> } };

/** The transport a server manifest declares (default: stdio with a command, streamable-http with a url). */
export function transportOf(server: Pick<Tool, "id" | "config" | "manifestFile">): McpTransportName {
  const declared = server.config.transport;
  if (declared === undefined) return typeof server.config.url === "string" ? "streamable-http" : "stdio";
  // rye-os spells streamable HTTP "http".
  if (declared === "http") return "streamable-http";
  if (typeof declared === "string" && (MCP_TRANSPORTS as readonly string[]).includes(declared)) return declared as McpTransportName;
  throw new KiwiError("E_CHECK_FAILED", `${server.manifestFile}: config.transport of ${server.id} is ${JSON.stringify(declared)}`, {
    hint: `use one of ${MCP_TRANSPORTS.join(", ")}`,
  });
}

/** How to reach the server the plan describes; `checkUrl` is exec's host policy for HTTP servers. */
export function targetFromPlan(plan: PlanLike, server: Pick<Tool, "id" | "config" | "manifestFile">, checkUrl?: (url: URL) => Promise<void>): McpTarget {
  const transport = transportOf(server);
  if (plan.primitive === "subprocess") {
    if (transport !== "stdio") throw mismatch(server, transport, "subprocess");
    const spec = plan.subprocess;
    return { kind: "stdio", argv: spec.launch ?? spec.argv, cwd: spec.cwd, env: spec.env, ...(spec.launch && spec.files ? { files: spec.files } : {}) };
  }
  if (transport === "stdio") throw mismatch(server, transport, "http_client");
  return { kind: "http", url: plan.http.url, headers: plan.http.headers, transport, ...(checkUrl ? { checkUrl } : {}) };
}

/**
 * Listing limits for a server: its declared timeout (`config.timeout` seconds) per request, and
 * kiwi_mcp's `config.startup_timeout` (seconds) for start and initialize.
 */
export function limitsFor(server: Pick<Tool, "limits" | "config">): Partial<ListingLimits> {
  const startup = server.config.startup_timeout;
  const startMs = typeof startup === "number" && startup > 0 ? startup * 1000 : undefined;
  const timeout = server.limits.timeoutMs !== undefined && server.limits.timeoutMs > 0 ? server.limits.timeoutMs : undefined;
  if (startMs === undefined && timeout === undefined) return {};
  // The session spans the start and the requests after it.
  const session = Math.max(DEFAULT_LISTING_LIMITS.sessionTimeoutMs, (timeout ?? 0) * 4, (startMs ?? 0) + (timeout ?? DEFAULT_LISTING_LIMITS.requestTimeoutMs) * 3);
  return { ...(timeout !== undefined ? { requestTimeoutMs: timeout } : {}), ...(startMs !== undefined ? { startTimeoutMs: startMs } : {}), sessionTimeoutMs: session };
}

/**
 * The bounds of a session that ends in a tools/call of `kiwi exec`: the server's, with the whole
 * session longer by the call's own timeout (the mcp_tool's limits.timeout_ms), so a call the tool
 * allows 300 s is not cut at the session's 120 s by the start and the listing before it.
 */
export function callLimitsFor(server: Pick<Tool, "limits" | "config">, callTimeoutMs: number | undefined): Partial<ListingLimits> {
  const limits = limitsFor(server);
  if (callTimeoutMs === undefined || callTimeoutMs <= 0) return limits;
  return { ...limits, sessionTimeoutMs: (limits.sessionTimeoutMs ?? DEFAULT_LISTING_LIMITS.sessionTimeoutMs) + callTimeoutMs };
}

/** `MCP server "github_mcp"`: how messages name a server. */
export function serverLabel(id: string): string {
  return `MCP server "${id}"`;
}

function mismatch(server: Pick<Tool, "id" | "manifestFile">, transport: string, primitive: string): KiwiError {
  return new KiwiError("E_CHAIN", `${server.manifestFile}: ${server.id} declares transport ${transport} but its executor chain ends at ${primitive}`, {
    hint: transport === "stdio" ? "a stdio server runs on subprocess: set executor: subprocess" : "an HTTP server is reached through http_client: set executor: http_client",
  });
}
