// The http_client primitive: sends an HttpPlan's request through fetch and nothing else. Redirects
// are followed by hand so a hop to another host is refused unless the tool allows it; retries are
// for idempotent methods only; the response is capped, checked and optionally transformed.
import { KiwiError } from "../errors.ts";
import { applyJsonPath, parseJsonPath } from "./jsonpath.ts";
import type { HttpPlan } from "./plan.ts";
import { readBodyCapped } from "./body-io.ts";
import { INTERRUPT_SIGNALS, interruptedError } from "./interrupt.ts";
import { MAX_JSON_DEPTH, nestingDepth } from "../integrity/value.ts";
import { parseJsonKeepingNumbers } from "../integrity/canonical.ts";
import type { ProxyFailure, Refusal } from "./net-proxy.ts";
import { proxyFor } from "./env-proxy.ts";
import { charsetOf, decodeCharset } from "./charset.ts";

export interface HttpOptions {
  /** Removes secret values from any text before it enters a message. */
  redact: (text: string) => string;
  /** Waits between attempts (injectable so tests can count the backoff instead of sleeping it). */
  sleep?: (ms: number) => Promise<void>;
  /** Refuses a URL the tool may not contact (net-policy-io.ts); called before the request and every redirect hop. */
  checkUrl?: (url: URL) => Promise<void>;
  /**
   * kiwi's filtering proxy (net-proxy-io.ts): requests go through it, so the connection is made
   * to the address the policy checked (no second lookup that DNS rebinding could answer differently).
   */
  proxy?: HttpProxy;
}

/** kiwi's filtering proxy as a request sees it: where it listens, what it refused and could not reach. */
export interface HttpProxy {
  url: string;
  refusals(): readonly Refusal[];
  failures(): readonly ProxyFailure[];
}

export interface HttpOutcome {
  status: number;
  /** The URL that answered, after redirects (redacted). */
  url: string;
  attempts: number;
  /** What kiwi prints on stdout: the body as received, or the transform's JSON. */
  output: Uint8Array;
  /** The charset the body declared, when `output` is that body as received (a transform prints UTF-8). */
  charset?: string;
}

/** Statuses worth another attempt of an idempotent request. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** Backoff before attempt n+1: 200 ms, 400 ms, 800 ms… capped; Retry-After is honoured up to the cap. */
export const BACKOFF_BASE_MS = 200;
export const BACKOFF_CAP_MS = 5_000;
const EXCERPT_CHARS = 300;

/**
 * Runs the request, with retries; throws E_EXEC_FAILED for every failure it can name. Ctrl-C
 * (SIGINT, SIGTERM, SIGHUP) abandons the request or the wait between attempts and ends the call as
 * E_INTERRUPTED with exit 128+N, as it ends a subprocess tool.
 */
export async function runHttp(plan: HttpPlan, options: HttpOptions): Promise<HttpOutcome> {
  const interrupt = new AbortController();
  const handlers = INTERRUPT_SIGNALS.map((sig) => {
    const handler = () => {
      if (!interrupt.signal.aborted) interrupt.abort(sig);
    };
    process.on(sig, handler);
    return [sig, handler] as const;
  });
  try {
    return await attemptAll(plan, options, interrupt.signal);
  } catch (error) {
    if (interrupt.signal.aborted) throw interruptedError(plan.tool, interrupt.signal.reason as string, `abandoned its ${plan.http.method} request`);
    throw error;
  } finally {
    for (const [sig, handler] of handlers) process.off(sig, handler);
  }
}

async function attemptAll(plan: HttpPlan, options: HttpOptions, interrupted: AbortSignal): Promise<HttpOutcome> {
  const req = plan.http;
  const sleep = options.sleep ?? ((ms: number) => Bun.sleep(ms));
  const attempts = 1 + req.retries;
  let last: KiwiError | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let retryAfterMs: number | undefined;
    try {
      const answer = await attemptOnce(plan, options, interrupted);
      if (answer.ok) return { ...answer.outcome, attempts: attempt };
      last = answer.error;
      if (!RETRY_STATUSES.has(answer.status)) throw last;
      retryAfterMs = answer.retryAfterMs;
    } catch (error) {
      if (!(error instanceof Retryable)) throw error;
      last = error.error;
    }
    if (attempt < attempts) await untilAborted(sleep(Math.min(retryAfterMs ?? BACKOFF_BASE_MS * 2 ** (attempt - 1), BACKOFF_CAP_MS)), interrupted);
  }
  const err = last!;
  throw new KiwiError(err.code, attempts > 1 ? `${err.message} (after ${attempts} attempts)` : err.message, { hint: err.hint, details: { ...err.details, attempts } });
}

/** `wait`, or a rejection as soon as `signal` aborts. */
function untilAborted(wait: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    wait.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, reject);
  });
}

/** A failure another attempt might not have (network error, timeout). */
class Retryable extends Error {
  constructor(readonly error: KiwiError) {
    super(error.message);
  }
}

type Attempt = { ok: true; outcome: Omit<HttpOutcome, "attempts"> } | { ok: false; status: number; error: KiwiError; retryAfterMs?: number };

async function attemptOnce(plan: HttpPlan, options: HttpOptions, interrupted: AbortSignal): Promise<Attempt> {
  const req = plan.http;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  const onInterrupt = () => controller.abort();
  interrupted.addEventListener("abort", onInterrupt, { once: true });
  // The URL being asked: the tool's, or the last redirect's, so a timeout names the host that kept it waiting.
  const asking: { url?: URL } = {};
  const shownUrl = () => options.redact(asking.url?.href ?? req.url);
  try {
    if (interrupted.aborted) throw interrupted.reason;
    const { res, url } = await sendFollowingRedirects(plan, controller.signal, options, asking);
    const body = await readCapped(res, req.maxResponseBytes, plan, url, options);
    const where = `${req.method} ${options.redact(url.href)}`;
    if (res.status < 200 || res.status > 299) {
      const excerpt = options.redact(excerptOf(body, res.headers.get("content-type")));
      // Through the environment's proxy (--sandbox=off) the answer may be the proxy's own (403, 407, 502).
      const via = options.proxy ? undefined : proxyFor(url, process.env);
      const hint = res.status === 407 ? "the proxy wants credentials" : res.status === 401 || res.status === 403 ? "check the credentials the tool reads from the environment" : res.status >= 500 ? "the server failed; try again later" : "check the parameters against the API's documentation";
      return {
        ok: false,
        status: res.status,
        retryAfterMs: retryAfter(res.headers.get("retry-after")),
        error: new KiwiError("E_EXEC_FAILED", `${plan.tool}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""} from ${where}${via ? ` through the proxy ${options.redact(via.url)} (${via.variable})` : ""}${excerpt ? `: ${excerpt}` : ""}`, {
          hint: via ? `${hint}; the answer may be the proxy's: check that it lets ${url.hostname} through, or name ${url.hostname} in NO_PROXY` : hint,
          details: { tool: plan.tool, status: res.status, url: options.redact(url.href), bodyExcerpt: excerpt },
        }),
      };
    }
    const charset = req.responseTransform ? undefined : charsetOf(res.headers.get("content-type"));
    return { ok: true, outcome: { status: res.status, url: options.redact(url.href), output: renderedOutput(plan, res, url, body, options, where), ...(charset ? { charset } : {}) } };
  } catch (error) {
    // A name that did not resolve before the request (net-policy-io.ts) is a network error, retried
    // as a connection that failed is (and as fetch's own failed lookup is, with --sandbox=off).
    if (error instanceof KiwiError && error.details?.stage === "lookup" && !interrupted.aborted) throw new Retryable(error);
    if (error instanceof KiwiError) throw error;
    if (timedOut) {
      throw new Retryable(new KiwiError("E_EXEC_FAILED", `${plan.tool}: ${req.method} ${shownUrl()} timed out after ${req.timeoutMs} ms`, {
        hint: "raise limits.timeout_ms (or config.timeout, in seconds) if the API is slow",
        details: { tool: plan.tool, timeoutMs: req.timeoutMs },
      }));
    }
    const reason = options.redact((error as Error)?.message ?? String(error));
    // Without kiwi's proxy (--sandbox=off) fetch goes through the environment's HTTP(S)_PROXY: a
    // connection that failed may have been to that proxy, not to the host the message names.
    const envProxy = options.proxy ? undefined : proxyFor(asking.url ?? new URL(req.url), process.env);
    if (envProxy) {
      const host = (asking.url ?? new URL(req.url)).hostname;
      throw new Retryable(new KiwiError("E_EXEC_FAILED", `${plan.tool}: ${req.method} ${shownUrl()} failed through the proxy ${options.redact(envProxy.url)} (${envProxy.variable}): ${reason}`, {
        hint: `kiwi's fetch goes through the proxy in ${envProxy.variable} for this address: check that it runs and lets ${host} through, or name ${host} in NO_PROXY`,
        details: { tool: plan.tool, code: (error as NodeJS.ErrnoException)?.code, proxy: options.redact(envProxy.url) },
        cause: error,
      }));
    }
    throw new Retryable(new KiwiError("E_EXEC_FAILED", `${plan.tool}: ${req.method} ${shownUrl()} failed: ${reason}`, {
      hint: "check the host is reachable and the URL is right",
      details: { tool: plan.tool, code: (error as NodeJS.ErrnoException)?.code },
      cause: error,
    }));
  } finally {
    clearTimeout(timer);
    interrupted.removeEventListener("abort", onInterrupt);
  }
}

/**
 * fetch, through kiwi's proxy when there is one; a connection the proxy refused is E_SANDBOX naming
 * `tool`, and one it could not make fails as a direct connection would (not as the proxy's 502 for
 * the URL). An http_client call and an HTTP MCP server's requests go this way.
 */
export async function fetchVia(tool: string, url: URL, init: RequestInit, proxy: HttpProxy | undefined): Promise<Response> {
  if (!proxy) return fetch(url, init);
  const before = proxy.refusals().length;
  const failuresBefore = proxy.failures().length;
  const refused = () => {
    const r = proxy.refusals()[before];
    if (r) return new KiwiError("E_SANDBOX", `${tool} may not contact ${r.host}:${r.port}: ${r.reason}`, { hint: r.hint, details: { tool, host: r.host, port: r.port, rule: r.rule } });
    const f = proxy.failures()[failuresBefore];
    return f ? Object.assign(new Error(f.reason), f.code !== undefined ? { code: f.code } : {}) : undefined;
  };
  let res: Response;
  try {
    res = await fetch(url, { ...init, proxy: proxy.url } as RequestInit);
  } catch (error) {
    throw refused() ?? error;
  }
  const refusal = refused();
  if (refusal) {
    await res.body?.cancel().catch(() => {});
    throw refusal;
  }
  return res;
}

/** Sends the request and follows its redirects; `asking.url` is set to each redirect's target as it is asked. */
async function sendFollowingRedirects(plan: HttpPlan, signal: AbortSignal, options: HttpOptions, asking: { url?: URL }): Promise<{ res: Response; url: URL }> {
  const req = plan.http;
  const origin = new URL(req.url);
  let url = origin;
  let method = req.method;
  let body = req.body;
  const headers = { ...req.headers };
  for (let hop = 0; ; hop++) {
    await options.checkUrl?.(url);
    const res = await fetchVia(plan.tool, url, { method, headers, body, redirect: "manual", signal }, options.proxy);
    const location = res.headers.get("location");
    if (!REDIRECT_STATUSES.has(res.status) || location === null) return { res, url };
    await res.body?.cancel().catch(() => {});
    const refuse = (why: string, hint: string) =>
      new KiwiError("E_EXEC_FAILED", `${plan.tool}: ${why}`, { hint, details: { tool: plan.tool, from: options.redact(url.href), status: res.status } });
    if (hop >= req.maxRedirects) throw refuse(`more than ${req.maxRedirects} redirects from ${options.redact(origin.href)}`, "call the final URL directly");
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw refuse(`the redirect from ${options.redact(url.href)} points at an invalid URL`, "the server sent a malformed Location header");
    }
    const shownNext = options.redact(`${next.protocol}//${next.host}`);
    if (next.protocol !== "http:" && next.protocol !== "https:") throw refuse(`the redirect to ${shownNext} is not http or https`, "the server redirected out of HTTP");
    if (url.protocol === "https:" && next.protocol === "http:") throw refuse(`the redirect from https to ${shownNext} (plain http) is refused`, "kiwi never downgrades a request to plain http");
    const sameHost = next.host === origin.host;
    if (!sameHost && !req.allowRedirectHosts.includes(next.hostname.toLowerCase()) && !req.allowRedirectHosts.includes(next.host.toLowerCase())) {
      throw refuse(
        `the redirect from ${options.redact(`${origin.protocol}//${origin.host}`)} to another host (${next.host}) is refused`,
        `if ${next.hostname} is trusted, add it to config.allow_redirect_hosts of ${plan.tool}`,
      );
    }
    if (!sameHost) {
      // Credentials meant for one host are never replayed to another: the usual ones, and any
      // header that carries a secret's value (X-Api-Key: ${API_KEY}).
      delete headers.authorization;
      delete headers.cookie;
      delete headers["proxy-authorization"];
      for (const [name, value] of Object.entries(headers)) if (options.redact(value) !== value) delete headers[name];
    }
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      if (method !== "HEAD") method = "GET";
      body = undefined;
      delete headers["content-type"];
    }
    url = next;
    asking.url = next;
  }
}

/** The body, refused past `cap` bytes; `url` is the one that answered (after redirects). */
async function readCapped(res: Response, cap: number, plan: HttpPlan, url: URL, options: HttpOptions): Promise<Uint8Array> {
  const tooBig = () =>
    new KiwiError("E_EXEC_FAILED", `${plan.tool}: the response from ${options.redact(url.href)} is larger than ${cap} bytes`, {
      hint: "raise limits.output_bytes in the tool's manifest, or ask the API for less (paging, filters)",
      details: { tool: plan.tool, maxResponseBytes: cap },
    });
  return readBodyCapped(res, cap, tooBig);
}

/**
 * The response as printed. The request succeeded: a failure here is no network error to retry
 * (the catch-all around the request would take it for one), so it leaves as a KiwiError.
 */
function renderedOutput(plan: HttpPlan, res: Response, url: URL, body: Uint8Array, options: HttpOptions, where: string): Uint8Array {
  try {
    return renderOutput(plan, res, url, body, options);
  } catch (error) {
    if (error instanceof KiwiError) throw error;
    throw new KiwiError("E_EXEC_FAILED", `${plan.tool}: the response from ${where} could not be printed: ${options.redact((error as Error)?.message ?? String(error))}`, {
      hint: "leave out response_transform to print the body as received",
      details: { tool: plan.tool },
      cause: error,
    });
  }
}

/** `url` is the one that answered (after redirects), which messages name. */
function renderOutput(plan: HttpPlan, res: Response, url: URL, body: Uint8Array, options: HttpOptions): Uint8Array {
  const req = plan.http;
  // No content by definition, whatever the Content-Type says (a DELETE answered 204 with
  // application/json, as many frameworks send it, succeeded).
  if (req.method === "HEAD" || res.status === 204 || res.status === 205) return new Uint8Array();
  const isJson = /\bjson\b/i.test(res.headers.get("content-type") ?? "");
  if (!req.responseTransform && !isJson) return body;
  const text = decodeText(body, res.headers.get("content-type"));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KiwiError("E_EXEC_FAILED", `${plan.tool}: the response from ${options.redact(url.href)} is not valid JSON (${(error as Error).message}): ${options.redact(excerptOf(body, res.headers.get("content-type")))}`, {
      hint: req.responseTransform ? "response_transform needs a JSON response; check the URL and the API's content type" : "the server said application/json but sent something else",
      details: { tool: plan.tool, bodyExcerpt: options.redact(excerptOf(body, res.headers.get("content-type"))) },
    });
  }
  if (!req.responseTransform) return body;
  // Applying the path and printing its result recurse: a response nested too deep is refused
  // plainly, not left to overflow the stack (or to print gigabytes of indentation).
  if (value !== null && typeof value === "object" && nestingDepth(value) > MAX_JSON_DEPTH) {
    throw new KiwiError("E_EXEC_FAILED", `${plan.tool}: the response from ${options.redact(url.href)} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, so response_transform is not applied to it`, {
      hint: "leave out response_transform to print the body as received",
      details: { tool: plan.tool, maxDepth: MAX_JSON_DEPTH },
    });
  }
  // Read again keeping each number's text, so the transform prints numbers as the API wrote them
  // (a 64-bit id keeps every digit). Only now: that parse's reviver recurses as deep as the document.
  const result = applyJsonPath(parseJsonPath(req.responseTransform), parseJsonKeepingNumbers(text), plan.tool);
  return new TextEncoder().encode(`${JSON.stringify(result, null, 2)}\n`);
}

/** The body as text, in the charset its Content-Type declares (else UTF-8). */
export function decodeText(body: Uint8Array, contentType: string | null): string {
  return decodeCharset(body, charsetOf(contentType));
}

function excerptOf(body: Uint8Array, contentType: string | null): string {
  const text = decodeText(body.subarray(0, EXCERPT_CHARS * 4), contentType).replace(/\s+/g, " ").trim();
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}
