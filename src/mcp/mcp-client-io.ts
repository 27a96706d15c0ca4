// Talks to one MCP server through the official SDK Client (v2, @modelcontextprotocol/client) over
// kiwi's transports: pick a revision (server/discover first, else initialize), extract the
// interface (discover plus every list, every page, losslessly), call a tool, and always close,
// which shuts a started server down and reaps it.
import { Client, SdkError, SdkErrorCode, type Transport } from "@modelcontextprotocol/client";
import { toPlain, isMapping } from "../integrity/value.ts";
import { KiwiError } from "../errors.ts";
import { LosslessCapture } from "./capture.ts";
import { credentialFields, credentialIdentity } from "./credential.ts";
import { assertSameList, checkDiscoverAnswer, discoverServerInfo } from "./discover.ts";
import { createHttpTransport, type HttpSpec } from "./http-io.ts";
import { DEFAULT_LISTING_LIMITS, DEFAULT_TRANSPORT_LIMITS, type ListingLimits, type TransportLimits } from "./server-limits.ts";
import { LIST_KINDS, type ListKey, type WireListing, type WireObject, advertises, discoverComponent, emptyListing, nullDescriptionsDropped, withoutMeta } from "./listing.ts";
import { PROTOCOL_REVISIONS, mapSessionError, sessionTimeoutError } from "./session-errors.ts";
import { checkSkillEntries } from "./skills.ts";
import { type StdioSpec, StdioProcessTransport } from "./stdio-io.ts";

/** How to reach a server: a process to start, or a URL. */
export type McpTarget = ({ kind: "stdio" } & StdioSpec) | ({ kind: "http" } & HttpSpec);

export interface SessionOptions {
  /** Names the server in every message, e.g. `MCP server "github_mcp"`. */
  label: string;
  clientVersion: string;
  limits?: Partial<ListingLimits>;
  transportLimits?: Partial<TransportLimits>;
  /** How a stdio server runs: recorded in pins, and named when it fails to start. */
  sandbox?: { mode: "bubblewrap" | "none"; network: "none" | "filtered" | "host"; /** The server's `config.package`: it runs from the installed copy, not npx or uvx. */ package?: string };
  /**
   * How the revision is picked. `auto` (the default): `server/discover` first, and the initialize
   * handshake when the server shows no 2026-07-28 support. `handshake`: initialize straight away,
   * for a server pinned under a handshake revision (its pin stays comparable) and for legacy SSE.
   */
  negotiation?: Negotiation;
}

export type Negotiation = "auto" | "handshake";

export { PROTOCOL_REVISIONS };

/** Methods whose results kiwi keeps losslessly (the interface is hashed over them). */
const CAPTURED = ["initialize", "server/discover", "skills/get", ...LIST_KINDS.map((k) => k.method)];

/** An open session: the SDK client, what initialize said, and how to end it. */
export class McpSession {
  readonly limits: ListingLimits;
  private readonly deadline: number;

  constructor(
    readonly client: Client,
    private readonly transport: Transport,
    private readonly capture: LosslessCapture,
    private readonly failure: () => KiwiError | undefined,
    readonly label: string,
    limits: ListingLimits,
    private readonly stderrSummary: () => string,
    private readonly http = false,
  ) {
    this.limits = limits;
    this.deadline = Date.now() + limits.sessionTimeoutMs;
  }

  /** The initialize result as sent (lossless): serverInfo, protocolVersion, capabilities, instructions. */
  initResult: WireObject = {};

  /** The `server/discover` result as sent (lossless), on a 2026-07-28 connection. */
  discoverResult?: WireObject;

  /** The revision agreed on: a handshake revision, or 2026-07-28 through server/discover. */
  protocolVersion?: string;

  /** For an HTTP server, which credential the requests presented ("none", or a fingerprint). */
  credential?: string;

  /** For an HTTP server, the manifest fields that carry that credential (a refusal's hint names them). */
  credentialFields: readonly string[] = [];

  /** How the server runs ("bubblewrap" or "none" for stdio), recorded in the pins taken from this session. */
  sandbox?: "bubblewrap" | "none";

  /** What the transport tolerated but the user should hear about (a stdio server's banner lines). */
  noticeSource: () => string[] = () => [];

  /** The session's warnings so far. */
  warnings(): string[] {
    return this.noticeSource();
  }

  /** True on a 2026-07-28 connection (no session; every request carries its revision in `_meta`). */
  get stateless(): boolean {
    return this.discoverResult !== undefined;
  }

  /**
   * The whole interface: what initialize (or server/discover) said plus every list the server
   * advertises, every page. On a 2026-07-28 connection tools/list is listed twice: the revision
   * requires it not to vary per connection, and a server whose tools change between two listings
   * cannot be pinned (E_MCP).
   */
  async extractListing(): Promise<WireListing> {
    const listing = emptyListing();
    const source = this.discoverResult ?? this.initResult;
    const serverInfo = this.discoverResult ? discoverServerInfo(this.discoverResult) : source.serverInfo;
    if (isMapping(serverInfo)) listing.serverInfo = serverInfo;
    if (this.protocolVersion) listing.protocolVersion = this.protocolVersion;
    else if (typeof source.protocolVersion === "string") listing.protocolVersion = source.protocolVersion;
    if (isMapping(source.capabilities)) listing.capabilities = source.capabilities;
    if (typeof source.instructions === "string") listing.instructions = source.instructions;
    if (this.discoverResult) listing.discover = discoverComponent(this.discoverResult);
    const caps = isMapping(source.capabilities) ? source.capabilities : {};
    for (const kind of LIST_KINDS) {
      // Only advertised capabilities are listed (a server may answer others with an error).
      if (!advertises(caps, kind)) continue;
      listing[kind.key] = await this.listAll(kind.method, kind.key);
    }
    if (listing.skills.length > 0) checkSkillEntries(listing.skills, this.label);
    if (this.stateless && advertises(caps, LIST_KINDS[0])) {
      const again = await this.listAll("tools/list", "tools");
      assertSameList(this.label, listing.tools, again);
    }
    return listing;
  }

  /** Follows nextCursor to the end; refuses cursor loops and listings past the limits. */
  private async listAll(method: string, key: ListKey): Promise<WireObject[]> {
    const items: WireObject[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > this.limits.maxPages) {
        throw new KiwiError("E_MCP", `${this.label} kept paging ${method} past ${this.limits.maxPages} pages`, {
          hint: "the server's pagination never ends; report it to the server's author",
        });
      }
      await this.request(method, cursor === undefined ? {} : { cursor });
      const result = this.capture.takeResult(method);
      const list = isMapping(result) ? result[key] : undefined;
      if (!Array.isArray(list)) throw new KiwiError("E_MCP", `${this.label} answered ${method} without a "${key}" array`);
      for (const item of list) {
        if (!isMapping(item)) throw new KiwiError("E_MCP", `${this.label} listed a ${key} entry that is not an object`);
        items.push(item);
      }
      if (items.length > this.limits.maxItems) {
        throw new KiwiError("E_MCP", `${this.label} lists more than ${this.limits.maxItems} ${key} (${items.length} so far)`, {
          hint: "an interface this large is refused as hostile or broken; no model can use it safely",
          details: { limit: this.limits.maxItems },
        });
      }
      const next = isMapping(result) ? result.nextCursor : undefined;
      if (next === undefined || next === null) return items;
      if (typeof next !== "string") throw new KiwiError("E_MCP", `${this.label} sent a ${method} nextCursor that is not a string`);
      if (seen.has(next)) {
        throw new KiwiError("E_MCP", `${this.label} sent the ${method} cursor ${JSON.stringify(next.slice(0, 60))} twice: a cursor loop`, {
          hint: "the server's pagination loops; report it to the server's author",
          details: { method, page },
        });
      }
      seen.add(next);
      cursor = next;
    }
  }

  /** The lossless result of the latest request of a captured method (skills/get, the lists…). */
  takeResult(method: string): ReturnType<LosslessCapture["takeResult"]> {
    return this.capture.takeResult(method);
  }

  /**
   * Calls a tool and returns the SDK's (plain) result. On a 2026-07-28 connection the call goes
   * through the SDK's callTool with the listed definition, so the `Mcp-Param-*` headers a tool
   * declares (SEP-2243) are sent over HTTP; the definition's outputSchema is left out, because
   * kiwi never lets the SDK compile a server's schema (its own safe compiler checks schemas).
   */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs?: number, definition?: WireObject): Promise<Record<string, unknown>> {
    if (!this.stateless || definition === undefined) return (await this.request("tools/call", { name, arguments: args }, timeoutMs)) as Record<string, unknown>;
    const { outputSchema: _unused, ...tool } = toPlain(withoutMeta(definition)) as Record<string, unknown>;
    const left = this.deadline - Date.now();
    if (left <= 0) throw this.timeoutError("tools/call", this.limits.sessionTimeoutMs, "session");
    const timeout = Math.min(timeoutMs ?? this.limits.requestTimeoutMs, left);
    try {
      const result = await this.client.callTool({ name, arguments: args }, { timeout, maxTotalTimeout: timeout, toolDefinition: tool as never });
      const failure = this.failure();
      if (failure) throw failure;
      return result as Record<string, unknown>;
    } catch (error) {
      throw this.mapError(error, "tools/call", timeout);
    }
  }

  /**
   * One request with the per-request and session timeouts, errors mapped to KiwiError. Spec
   * methods are checked by the SDK against the agreed revision's schema; extension methods
   * (skills/…) pass through and are checked by kiwi. On a 2026-07-28 connection the SDK adds the
   * revision, client info and capabilities to every request's `_meta`.
   */
  async request(method: string, params: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
    const left = this.deadline - Date.now();
    if (left <= 0) throw this.timeoutError(method, this.limits.sessionTimeoutMs, "session");
    const timeout = Math.min(timeoutMs ?? this.limits.requestTimeoutMs, left);
    let result: unknown;
    try {
      result = method.startsWith("skills/")
        ? await this.client.request({ method, params }, PASSTHROUGH, { timeout, maxTotalTimeout: timeout })
        : await this.client.request({ method, params } as never, { timeout, maxTotalTimeout: timeout });
    } catch (error) {
      throw this.mapError(error, method, timeout);
    }
    // The SDK may accept what kiwi's tap refused (oversized, not losslessly parseable): fail closed.
    const failure = this.failure();
    if (failure) throw failure;
    return result;
  }

  /** Ends the session; for a started server: EOF, SIGTERM, SIGKILL, reaped. Never throws. */
  async close(): Promise<void> {
    try {
      await this.client.close();
    } catch {
      // Closing is best effort at the protocol level; the transport still kills the process.
    }
    try {
      await this.transport.close();
    } catch {
      // Already closed.
    }
  }

  /** Maps whatever a request threw to one KiwiError (a transport's own failure wins). */
  mapError(error: unknown, method: string, timeoutMs: number): KiwiError {
    return mapSessionError(error, { label: this.label, failure: this.failure(), stderrSummary: this.stderrSummary, http: this.http, credentialFields: this.credentialFields }, method, timeoutMs);
  }

  private timeoutError(method: string, ms: number, what: "request" | "session"): KiwiError {
    return sessionTimeoutError(this.label, method, ms, what, this.stderrSummary);
  }
}

/**
 * Starts or reaches a server and agrees on a revision: `server/discover` first (2026-07-28), the
 * initialize handshake when the server shows no support for it. A stdio server that exits on the
 * probe (SDKs that end the process on any request before initialize do) is started again and
 * spoken to with initialize. On failure everything started is stopped.
 */
export async function openSession(target: McpTarget, options: SessionOptions): Promise<McpSession> {
  // Legacy HTTP+SSE is a 2024-11-05 transport: no 2026-07-28 server speaks it.
  const negotiation = options.negotiation ?? (target.kind === "http" && target.transport === "sse" ? "handshake" : "auto");
  try {
    return await connectOnce(target, options, negotiation);
  } catch (error) {
    if (negotiation === "auto" && target.kind === "stdio" && error instanceof ProbeClosed) return connectOnce(target, options, "handshake");
    throw error;
  }
}

/**
 * Whatever handler the SDK installs as the transport's onmessage receives each message with null
 * list descriptions dropped (see nullDescriptionsDropped), so a live server is read as its
 * `--listing` file is. One seam for every transport: each delivers parsed messages there.
 */
function sdkSeesNullDescriptionsDropped(transport: Transport): void {
  let handler = transport.onmessage;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (handler === undefined ? undefined : (message: Parameters<NonNullable<Transport["onmessage"]>>[0], extra?: unknown) => handler!(nullDescriptionsDropped(message), extra as never)),
    set: (next: Transport["onmessage"]) => {
      handler = next;
    },
  });
}

/** A stdio server closed its pipe while answering the server/discover probe: a legacy server. */
class ProbeClosed extends Error {}

async function connectOnce(target: McpTarget, options: SessionOptions, negotiation: Negotiation): Promise<McpSession> {
  const limits = { ...DEFAULT_LISTING_LIMITS, ...options.limits };
  const transportLimits = { ...DEFAULT_TRANSPORT_LIMITS, ...options.transportLimits };
  const capture = new LosslessCapture(new Set(CAPTURED));
  let transport: Transport;
  let failure: () => KiwiError | undefined;
  let whenFailed: Promise<KiwiError> = new Promise(() => {});
  let stderrSummary = () => "";
  if (target.kind === "stdio") {
    const stdio = new StdioProcessTransport(target, capture, transportLimits, options.label);
    transport = stdio;
    failure = () => stdio.failure;
    stderrSummary = () => stdio.stderr.summary();
  } else {
    const http = createHttpTransport(target, capture, transportLimits, options.label);
    transport = http.transport;
    failure = http.failure;
    whenFailed = http.whenFailed;
  }
  sdkSeesNullDescriptionsDropped(transport);
  const startMs = limits.startTimeoutMs ?? limits.requestTimeoutMs;
  // Hostile outputSchemas are never compiled by the SDK (kiwi calls tools with plain requests and
  // never lists through the SDK's cache): kiwi validates through its own safe compiler.
  const client = new Client(
    { name: "kiwi", version: options.clientVersion },
    { capabilities: {}, ...(negotiation === "auto" ? { versionNegotiation: { mode: "auto", probe: { timeoutMs: startMs } } } : {}) },
  );
  const session = new McpSession(client, transport, capture, failure, options.label, limits, stderrSummary, target.kind === "http");
  session.sandbox = options.sandbox?.mode;
  if (target.kind === "http") {
    session.credential = credentialIdentity(target.url, target.headers);
    session.credentialFields = credentialFields(target.url, target.headers);
  }
  if (transport instanceof StdioProcessTransport) {
    const stdio = transport;
    session.noticeSource = () => {
      const warning = stdio.noise.warning(options.label);
      return warning === undefined ? [] : [warning];
    };
  }
  try {
    // The SDK bounds the handshake, not the transport's start (an SSE stream that never opens):
    // a fatal tap failure or the request timeout ends the wait either way.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const guard = new Promise<never>((_, reject) => {
      void whenFailed.then(reject);
      timer = setTimeout(() => reject(new SdkError(SdkErrorCode.RequestTimeout, "start timed out")), startMs * (negotiation === "auto" ? 2 : 1) + 1_000);
    });
    try {
      await Promise.race([client.connect(transport, { timeout: startMs, maxTotalTimeout: startMs, ...(negotiation === "handshake" ? { prior: { kind: "legacy" as const } } : {}) }), guard]);
    } finally {
      clearTimeout(timer);
    }
    const failed = failure();
    if (failed) throw failed;
    session.protocolVersion = client.getNegotiatedProtocolVersion();
    if (client.getProtocolEra() === "modern") {
      const discover = capture.takeResult("server/discover");
      if (!isMapping(discover)) throw new KiwiError("E_MCP", `${options.label} sent a server/discover result that is not an object`);
      session.discoverResult = discover;
    } else {
      const broken = checkDiscoverAnswer(capture.peekResult("server/discover"), options.label);
      if (broken) throw broken;
      const init = capture.takeResult("initialize");
      session.initResult = isMapping(init) ? init : {};
    }
  } catch (error) {
    const broken = error instanceof KiwiError ? undefined : checkDiscoverAnswer(capture.peekResult("server/discover"), options.label);
    if (broken) {
      await session.close();
      throw broken;
    }
    if (negotiation === "auto" && target.kind === "stdio" && closedDuringProbe(error)) {
      await session.close();
      throw new ProbeClosed();
    }
    const method = capture.lastSent ?? (negotiation === "auto" ? "server/discover" : "initialize");
    const mapped = session.mapError(error, method, startMs);
    await session.close();
    throw options.sandbox?.mode === "bubblewrap" ? withSandboxHint(mapped, options.sandbox.network, options.sandbox.package) : mapped;
  }
  return session;
}

/** The SDK's verdict for a stdio server that closed its pipe while the probe was pending. */
function closedDuringProbe(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed && /closed during the server\/discover probe/.test(error.message);
}

/** A result schema that accepts any value: extension results are checked by kiwi itself. */
const PASSTHROUGH = { "~standard": { version: 1 as const, vendor: "kiwi", validate: (value: unknown) => ({ value }) } };

/**
 * A server that fails to start inside kiwi's sandbox most often lacks what the sandbox withholds:
 * the network (npx and uvx fetch the package at start) or a writable cache (~/.npm). Says so. A
 * `config.package` server runs from its installed copy and fetches nothing: what it lacks is
 * what it reaches for itself.
 */
function withSandboxHint(error: KiwiError, network: "none" | "filtered" | "host", pkg?: string): KiwiError {
  const reach = network === "none" ? "no network and only the paths it declares" : network === "filtered" ? "only its declared hosts, through kiwi's proxy, and only the paths it declares" : "only the paths it declares";
  const cause =
    pkg === undefined
      ? "a server started with npx or uvx fetches its package at start, so declare net.outbound for the registry and fs.write for its cache (~/.npm)"
      : `it runs from its installed package (${pkg}) and fetches nothing at start, so what it lacks is what it reaches for itself: declare fs.read or fs.write for what it reads or writes (a config or cache under your home) and net.outbound for a host it calls`;
  const hint = `${error.hint ? `${error.hint}; ` : ""}it ran in kiwi's sandbox (${reach}): ${cause}, or run once with --sandbox=off (KIWI_SANDBOX=off) to see whether the sandbox is the cause`;
  return new KiwiError(error.code, error.message, { hint, details: { ...error.details, sandbox: "bubblewrap", network }, exitCode: error.exitCode, cause: error.cause });
}

/** Opens a session, runs `fn`, and always closes the session (and reaps a started server). */
export async function withSession<T>(target: McpTarget, options: SessionOptions, fn: (session: McpSession) => Promise<T>): Promise<T> {
  const session = await openSession(target, options);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}
