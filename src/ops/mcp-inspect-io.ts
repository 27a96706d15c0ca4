// Connects to one project server through exec's verified plan and extracts its live interface.
// The plan (chain verified against tool.lock.json, ${VAR}s expanded, command found) comes from
// ops/prepare-exec-io.ts; this module only turns it into an MCP session and always closes it.
import pkg from "../../package.json" with { type: "json" };
import type { Context } from "../context.ts";
import { type PreparedExec, prepareExec } from "./prepare-exec-io.ts";
import { withHttpProxy, withPlanProxy } from "../exec/run-io.ts";
import { type Refusal, renderRefusals } from "../exec/net-proxy.ts";
import { resolveSandboxMode } from "../exec/sandbox-plan.ts";
import type { Tool } from "../manifest/model.ts";
import { type McpSession, type Negotiation, withSession } from "../mcp/mcp-client-io.ts";
import { type InterfaceHashes, hashInterface } from "../mcp/interface.ts";
import type { ListingLimits } from "../mcp/server-limits.ts";
import type { WireListing } from "../mcp/listing.ts";
import { type McpPin, pinFromListing, withCredential, withSandbox } from "../mcp/pin.ts";
import { isModernRevision } from "../mcp/session-errors.ts";
import { type PlanLike, limitsFor, serverLabel, targetFromPlan } from "../mcp/target.ts";

export interface LiveInterface {
  server: Tool;
  listing: WireListing;
  live: McpPin;
  hashes: InterfaceHashes;
  /** What the session tolerated (banner lines on stdout), for the command to show. */
  warnings: string[];
}

/** How the plan runs a stdio server ("bubblewrap" or "none"); undefined for HTTP servers. */
export function sandboxOf(plan: unknown): McpPin["sandbox"] {
  const p = plan as { primitive?: string; sandbox?: { active?: boolean } };
  return p.primitive === "subprocess" ? (p.sandbox?.active ? "bubblewrap" : "none") : undefined;
}

export interface InspectOptions {
  /** Run the server without comparing its chain with tool.lock.json (development, --unlocked). */
  unlocked: boolean;
  /** Overrides the server's own limits (kiwi lock uses shorter ones: a failure there is not fatal). */
  limits?: Partial<ListingLimits>;
  /** Hears what kiwi's proxy refused a host-filtered server, once the session is over. */
  onRefusals?: (refusals: Refusal[]) => void;
  /** How to pick the revision (default auto); `negotiationFor(pin)` keeps a pinned server on its revision. */
  negotiation?: Negotiation;
}

/**
 * How to speak to a server given its pin: one pinned under a handshake revision is spoken to with
 * initialize straight away (its pin stays comparable, and a server that dies on an unknown first
 * request is started once); an unpinned server, or one pinned under 2026-07-28, is probed with
 * server/discover first. `kiwi mcp pin`, `approve` and `hash` always probe.
 */
export function negotiationFor(pin: Pick<McpPin, "protocol_version"> | undefined): Negotiation {
  return pin?.protocol_version !== undefined && !isModernRevision(pin.protocol_version) ? "handshake" : "auto";
}

/** Opens a session on a project server (tool id), runs `fn`, and always shuts the server down. */
export async function withServerSession<T>(ctx: Context, serverId: string, options: InspectOptions, fn: (session: McpSession, server: Tool) => Promise<T>): Promise<T> {
  // Same sandbox as `kiwi exec` (KIWI_SANDBOX): a server is a subprocess tool like any other.
  const sandbox = resolveSandboxMode(undefined, ctx.env);
  const prepared = prepareExec(ctx, { toolId: serverId, unlocked: options.unlocked, sources: {}, dryRun: false, sandbox, server: true });
  try {
    const server = prepared.chain.links[0]!.tool;
    return await withSessionFor(prepared, server, (session) => fn(session, server), options.limits, options.negotiation);
  } finally {
    prepared.cleanup();
    if (prepared.refusals.length > 0) options.onRefusals?.(prepared.refusals);
  }
}

/** What this module needs of exec's prepared call: the verified plan, the host policy and where refusals go. */
export type PreparedLike = Pick<PreparedExec, "plan" | "checkUrl" | "netPolicy" | "refusals">;

/** A session on the server an already verified plan describes (exec of an mcp_tool uses this). */
export function withSessionFor<T>(prepared: PreparedLike, server: Tool, fn: (session: McpSession) => Promise<T>, limits?: Partial<ListingLimits>, negotiation?: Negotiation): Promise<T> {
  const target = targetFromPlan(prepared.plan as PlanLike, server, prepared.checkUrl);
  const mode = sandboxOf(prepared.plan);
  const network = (prepared.plan as { sandbox?: { network?: "none" | "filtered" | "host" } }).sandbox?.network ?? "host";
  // A host-filtered stdio server reaches the network only through kiwi's proxy, and an HTTP server
  // is reached through it: either way the proxy lives as long as the session.
  const options = { label: serverLabel(server.id), clientVersion: pkg.version, limits: { ...limitsFor(server), ...limits }, ...(mode ? { sandbox: { mode, network, ...(typeof server.config.package === "string" ? { package: server.config.package } : {}) } } : {}), ...(negotiation ? { negotiation } : {}) };
  if (target.kind === "http") return withHttpProxy(prepared, (proxy) => withSession(proxy ? { ...target, proxy } : target, options, fn));
  return withPlanProxy(prepared, () => withSession(target, options, fn));
}

/** Extracts a project server's live interface with both hashes and the pin it would get. */
export async function inspectServer(ctx: Context, serverId: string, options: InspectOptions): Promise<LiveInterface> {
  let refused: Refusal[] = [];
  const live = await withServerSession(ctx, serverId, { ...options, onRefusals: (r) => (refused = r) }, async (session, server) => liveInterfaceOf(server, await session.extractListing(), session.warnings(), session.sandbox, session.credential));
  return refused.length > 0 ? { ...live, warnings: [...live.warnings, ...renderRefusals(serverId, refused)] } : live;
}

/** The live interface record of an extracted listing. */
export function liveInterfaceOf(server: Tool, listing: WireListing, warnings: string[] = [], sandbox?: McpPin["sandbox"], credential?: string): LiveInterface {
  let live = pinFromListing(listing);
  if (sandbox !== undefined) live = withSandbox(live, sandbox);
  if (credential !== undefined) live = withCredential(live, credential);
  return { server, listing, live, hashes: hashInterface(listing), warnings };
}
