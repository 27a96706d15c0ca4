// What a failed MCP request means, as one KiwiError naming the server, the method and the fix:
// timeouts, a closed connection, a JSON-RPC error answer, an unsupported revision, an invalid result.
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError, SseError, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/client";
import { KiwiError } from "../errors.ts";
import { renderVisible } from "./visible.ts";

/** The stateless revision, reached through `server/discover` (no initialize handshake). */
export const MODERN_REVISION = "2026-07-28";

/** Revisions spoken over the initialize handshake (the SDK's list, newest first). */
export const HANDSHAKE_REVISIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;

/** Every protocol revision kiwi's client speaks, newest first. */
export const PROTOCOL_REVISIONS: readonly string[] = [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS];

/** True for a revision of the stateless era (2026-07-28 and later; revisions are ISO dates). */
export function isModernRevision(revision: string | undefined): boolean {
  return revision !== undefined && revision >= MODERN_REVISION;
}

export interface SessionFacts {
  /** `MCP server "github_mcp"`. */
  label: string;
  /** The transport's own fatal problem, if it saw one: it explains the SDK's error better. */
  failure: KiwiError | undefined;
  stderrSummary: () => string;
  /** True for a server reached over HTTP: it has no command to run by hand, only a URL and headers. */
  http?: boolean;
  /** For an HTTP server, the manifest fields that carry the credential it was sent (none: []). */
  credentialFields?: readonly string[];
}

/** Maps whatever a request threw to one KiwiError. */
export function mapSessionError(error: unknown, facts: SessionFacts, method: string, timeoutMs: number): KiwiError {
  const { label } = facts;
  if (facts.failure) return facts.failure;
  if (error instanceof KiwiError) return error;
  const status = httpStatusOf(error);
  if (status !== undefined) return httpStatusError(label, method, status, error as Error, facts.credentialFields ?? []);
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return sessionTimeoutError(label, method, timeoutMs, "request", facts.stderrSummary);
    if (error.code === SdkErrorCode.ConnectionClosed) {
      return new KiwiError("E_MCP", `${label} closed the connection during ${method}${facts.stderrSummary()}`, {
        hint: "run the server's command by hand to see why it stops",
      });
    }
    if (error.code === SdkErrorCode.InvalidResult || error.code === SdkErrorCode.UnsupportedResultType) {
      return new KiwiError("E_MCP", `${label} sent an invalid ${method} result: ${invalidResultSummary(error.message, method)}`, {
        hint: "the server's answer does not follow the MCP schema; report it to the server's author",
        details: { method },
      });
    }
    if (error.code === SdkErrorCode.EraNegotiationFailed) {
      return new KiwiError("E_MCP", `${label} could not agree on a protocol revision: ${error.message}`, {
        hint: `kiwi speaks MCP protocol revisions ${PROTOCOL_REVISIONS.join(", ")}; check the server's documentation`,
        details: { method },
      });
    }
  }
  if (error instanceof ProtocolError) {
    if (error.code === ProtocolErrorCode.UnsupportedProtocolVersion) {
      return new KiwiError("E_MCP", `${label} does not speak the protocol revision kiwi asked for: ${error.message}`, {
        hint: `kiwi speaks MCP protocol revisions ${PROTOCOL_REVISIONS.join(", ")}; if the server was pinned under an older revision, re-pin it with "kiwi mcp pin"`,
        details: { method, code: error.code },
      });
    }
    // The server's own words reach a terminal: hidden characters and escapes are shown, not sent.
    return new KiwiError("E_MCP", `${label} answered ${method} with error ${error.code}: ${renderVisible(error.message.replace(/^MCP error -?\d+: /, ""))}`, {
      hint: "the server refused the request; check the server's documentation and logs",
      details: { method, code: error.code },
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/protocol version is not supported/i.test(message)) {
    return new KiwiError("E_MCP", `${label}: ${message}`, {
      hint: `kiwi speaks MCP protocol revisions ${PROTOCOL_REVISIONS.join(", ")}; upgrade the server or kiwi`,
    });
  }
  if (error instanceof Error && error.name === "ZodError") {
    return new KiwiError("E_MCP", `${label} sent an invalid ${method} result: ${zodSummary(error)}`, {
      hint: "the server's answer does not follow the MCP schema; report it to the server's author",
    });
  }
  const hint = facts.http ? "check that config.url names the server's MCP endpoint and that the server is up" : "run the server's command by hand to check it works";
  return new KiwiError("E_MCP", `${label}: ${method} failed: ${message}`, { hint, cause: error });
}

/**
 * The HTTP status of a refused request: the streamable HTTP transport throws SdkHttpError, the
 * legacy SSE transport an SseError (its stream) or a plain Error "… (HTTP 404): …" (its POSTs).
 */
function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof SdkHttpError) return error.status;
  if (error instanceof SseError && typeof error.code === "number" && error.code >= 300) return error.code;
  const match = error instanceof Error ? /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(error.message) : null;
  return match ? Number(match[1]) : undefined;
}

/** A request the server answered with an HTTP error status: the status, what it said, and what to fix. */
function httpStatusError(label: string, method: string, status: number, error: Error, credentialFields: readonly string[]): KiwiError {
  const said = error.message.replace(/^Error POSTing to endpoint(?: \(HTTP \d{3}\))?: /, "").replace(/^SSE error: /, "").trim();
  const body = renderVisible(said.length > 300 ? `${said.slice(0, 300)}…` : said);
  const hint = hintForStatus(status, method, credentialFields);
  return new KiwiError("E_MCP", `${label} answered ${method} with HTTP ${status}${body ? `: ${body}` : ""}`, { hint, details: { method, status } });
}

/** A request (or the whole session) ran out of time. */
export function sessionTimeoutError(label: string, method: string, ms: number, what: "request" | "session", stderrSummary: () => string): KiwiError {
  const seconds = Math.round(ms / 100) / 10;
  return new KiwiError(
    "E_MCP",
    what === "session" ? `${label} did not finish within the session limit of ${seconds} s (at ${method})` : `${label} did not answer ${method} within ${seconds} s${stderrSummary()}`,
    { hint: "check the server starts and answers on its own; raise config.timeout (seconds) in its manifest if it is just slow", details: { method, timeoutMs: ms, limit: what } },
  );
}

/**
 * The SDK's "Invalid result for tools/list: [ {…zod issue…}, … ]" as one line: the first issue's
 * JSON pointer into the result and its message, and how many more there are.
 */
function invalidResultSummary(message: string, method: string): string {
  const text = message.replace(`Invalid result for ${method}: `, "");
  let issues: unknown;
  try {
    issues = JSON.parse(text);
  } catch {
    return text;
  }
  if (!Array.isArray(issues) || issues.length === 0) return text;
  const first = issues[0] as { path?: unknown[]; message?: unknown };
  const pointer = Array.isArray(first.path) && first.path.length ? `/${first.path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}: ` : "";
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length === 2 ? "" : "s"})` : "";
  return `${pointer}${String(first.message ?? "invalid")}${more}`;
}

function zodSummary(error: Error): string {
  const issues = (error as unknown as { issues?: { path: (string | number)[]; message: string }[] }).issues;
  const first = issues?.[0];
  return first ? `${first.path.length ? `/${first.path.join("/")}: ` : ""}${first.message}` : error.message;
}

/** What to fix for an HTTP error status, by status (for 404, whether a session was open; for 401
 * and 403, where the manifest put the credential: a key in config.url is not in config.headers). */
function hintForStatus(status: number, method: string, credentialFields: readonly string[]): string {
  if (status === 401 || status === 403) {
    const where = credentialFields.includes("config.url")
      ? `${credentialFields.includes("config.headers") ? "config.headers and " : ""}config.url (its userinfo or key query parameter)`
      : "config.headers";
    return `the server refused the credentials kiwi sent: check ${where} in the server's manifest and the environment variables ${credentialFields.length > 1 ? "they expand" : "it expands"}`;
  }
  // Streamable HTTP answers 404 to a request whose session id the server no longer knows.
  if (status === 404 && method !== "initialize" && method !== "server/discover") {
    return "the server no longer knows this session (streamable HTTP answers 404 to an expired session id); try again, and if it keeps happening check the server's session lifetime";
  }
  if (status === 404 || status === 405 || status === 410) return "check config.url in the server's manifest: no MCP endpoint answers there";
  if (status >= 300 && status < 400) return "the server redirects elsewhere: if that is the intended server, put its address in config.url";
  if (status === 429) return "the server is limiting requests; wait and try again";
  if (status >= 500) return "the server failed handling the request; check its logs, or try again later";
  return "the server rejected the request; check config.url and config.headers in the server's manifest";
}
