// Talks to one MCP server through the official SDK Client over kiwi's transports: connect
// (initialize), extract the interface (every list, every page, losslessly), call a tool, and
// always close, which shuts a started server down and reaps it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { KiwiError } from "../errors.ts";
import { LosslessCapture } from "./capture.ts";
import { createHttpTransport, type HttpSpec } from "./http-io.ts";
import { DEFAULT_LISTING_LIMITS, DEFAULT_TRANSPORT_LIMITS, type ListingLimits, type TransportLimits } from "./limits.ts";
import { LIST_KINDS, type WireListing, type WireObject, emptyListing, isWireObject } from "./listing.ts";
import { PROTOCOL_REVISIONS, mapSessionError, sessionTimeoutError } from "./session-errors.ts";
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
  sandbox?: { mode: "bubblewrap" | "none"; network: "none" | "filtered" | "host" };
}

export { PROTOCOL_REVISIONS };

const SCHEMAS = {
  "tools/list": ListToolsResultSchema,
  "prompts/list": ListPromptsResultSchema,
  "resources/list": ListResourcesResultSchema,
  "resources/templates/list": ListResourceTemplatesResultSchema,
} as const;

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
  ) {
    this.limits = limits;
    this.deadline = Date.now() + limits.sessionTimeoutMs;
  }

  /** The initialize result as sent (lossless): serverInfo, protocolVersion, capabilities, instructions. */
  initResult: WireObject = {};

  /** How the server runs ("bubblewrap" or "none" for stdio), recorded in the pins taken from this session. */
  sandbox?: "bubblewrap" | "none";

  /** What the transport tolerated but the user should hear about (a stdio server's banner lines). */
  noticeSource: () => string[] = () => [];

  /** The session's warnings so far. */
  warnings(): string[] {
    return this.noticeSource();
  }

  /** The whole interface: initialize data plus every list the server advertises, every page. */
  async extractListing(): Promise<WireListing> {
    const init = this.initResult;
    const listing = emptyListing();
    if (isWireObject(init.serverInfo)) listing.serverInfo = init.serverInfo;
    if (typeof init.protocolVersion === "string") listing.protocolVersion = init.protocolVersion;
    if (isWireObject(init.capabilities)) listing.capabilities = init.capabilities;
    if (typeof init.instructions === "string") listing.instructions = init.instructions;
    const caps = isWireObject(init.capabilities) ? init.capabilities : {};
    for (const { key, method, capability } of LIST_KINDS) {
      // Only advertised capabilities are listed (a server may answer others with an error).
      if (caps[capability] === undefined || caps[capability] === null) continue;
      listing[key] = await this.listAll(method, key);
    }
    return listing;
  }

  /** Follows nextCursor to the end; refuses cursor loops and listings past the limits. */
  private async listAll(method: keyof typeof SCHEMAS, key: string): Promise<WireObject[]> {
    const items: WireObject[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > this.limits.maxPages) {
        throw new KiwiError("E_MCP", `${this.label} kept paging ${method} past ${this.limits.maxPages} pages`, {
          hint: "the server's pagination never ends; report it to the server's author",
        });
      }
      await this.request(method, cursor === undefined ? {} : { cursor }, SCHEMAS[method]);
      const result = this.capture.takeResult(method);
      const list = isWireObject(result) ? result[key] : undefined;
      if (!Array.isArray(list)) throw new KiwiError("E_MCP", `${this.label} answered ${method} without a "${key}" array`);
      for (const item of list) {
        if (!isWireObject(item)) throw new KiwiError("E_MCP", `${this.label} listed a ${key} entry that is not an object`);
        items.push(item);
      }
      if (items.length > this.limits.maxItems) {
        throw new KiwiError("E_MCP", `${this.label} lists more than ${this.limits.maxItems} ${key} (${items.length} so far)`, {
          hint: "an interface this large is refused as hostile or broken; no model can use it safely",
          details: { limit: this.limits.maxItems },
        });
      }
      const next = isWireObject(result) ? result.nextCursor : undefined;
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

  /** Calls a tool and returns the SDK's (plain) result. */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>> {
    return (await this.request("tools/call", { name, arguments: args }, CallToolResultSchema, timeoutMs)) as Record<string, unknown>;
  }

  /** One request with the per-request and session timeouts, errors mapped to KiwiError. */
  async request(method: string, params: Record<string, unknown>, schema: Parameters<Client["request"]>[1], timeoutMs?: number): Promise<unknown> {
    const left = this.deadline - Date.now();
    if (left <= 0) throw this.timeoutError(method, this.limits.sessionTimeoutMs, "session");
    const timeout = Math.min(timeoutMs ?? this.limits.requestTimeoutMs, left);
    let result: unknown;
    try {
      result = await this.client.request({ method, params } as never, schema, { timeout, maxTotalTimeout: timeout });
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
    return mapSessionError(error, { label: this.label, failure: this.failure(), stderrSummary: this.stderrSummary }, method, timeoutMs);
  }

  private timeoutError(method: string, ms: number, what: "request" | "session"): KiwiError {
    return sessionTimeoutError(this.label, method, ms, what, this.stderrSummary);
  }
}

/** Starts or reaches a server and runs initialize; on failure everything started is stopped. */
export async function openSession(target: McpTarget, options: SessionOptions): Promise<McpSession> {
  const limits = { ...DEFAULT_LISTING_LIMITS, ...options.limits };
  const transportLimits = { ...DEFAULT_TRANSPORT_LIMITS, ...options.transportLimits };
  const capture = new LosslessCapture(new Set(["initialize", ...Object.keys(SCHEMAS)]));
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
  // Hostile outputSchemas are never compiled by the SDK: kiwi validates through its own safe compiler.
  const client = new Client({ name: "kiwi", version: options.clientVersion }, { capabilities: {} });
  const session = new McpSession(client, transport, capture, failure, options.label, limits, stderrSummary);
  session.sandbox = options.sandbox?.mode;
  if (transport instanceof StdioProcessTransport) {
    const stdio = transport;
    session.noticeSource = () => {
      const warning = stdio.noise.warning(options.label);
      return warning === undefined ? [] : [warning];
    };
  }
  const startMs = limits.startTimeoutMs ?? limits.requestTimeoutMs;
  try {
    // The SDK bounds initialize, not the transport's start (an SSE stream that never opens):
    // a fatal tap failure or the request timeout ends the wait either way.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const guard = new Promise<never>((_, reject) => {
      void whenFailed.then(reject);
      timer = setTimeout(() => reject(new McpError(ErrorCode.RequestTimeout, "start timed out")), startMs + 1_000);
    });
    try {
      await Promise.race([client.connect(transport, { timeout: startMs, maxTotalTimeout: startMs }), guard]);
    } finally {
      clearTimeout(timer);
    }
    const failed = failure();
    if (failed) throw failed;
    const init = capture.takeResult("initialize");
    session.initResult = isWireObject(init) ? init : {};
  } catch (error) {
    const mapped = session.mapError(error, "initialize", startMs);
    await session.close();
    throw options.sandbox?.mode === "bubblewrap" ? withSandboxHint(mapped, options.sandbox.network) : mapped;
  }
  return session;
}

/**
 * A server that fails to start inside kiwi's sandbox most often lacks what the sandbox withholds:
 * the network (npx and uvx fetch the package at start) or a writable cache (~/.npm). Says so.
 */
function withSandboxHint(error: KiwiError, network: "none" | "filtered" | "host"): KiwiError {
  const reach = network === "none" ? "no network and only the paths it declares" : network === "filtered" ? "only its declared hosts, through kiwi's proxy, and only the paths it declares" : "only the paths it declares";
  const hint = `${error.hint ? `${error.hint}; ` : ""}it ran in kiwi's sandbox (${reach}): a server started with npx or uvx fetches its package at start, so declare net.outbound for the registry and fs.write for its cache (~/.npm), or run once with --sandbox=off (KIWI_SANDBOX=off) to see whether the sandbox is the cause`;
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
