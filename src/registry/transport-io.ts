// How a registry request travels: TLS roots (SSL_CERT_FILE or the system bundle), redirects
// followed by hand, retries of what changes nothing, and what a connection that failed says
// (a stall, a cut, a refusal, a proxy in the way). oci-client-io.ts speaks the distribution API
// and its auth over it.
import { readFileSync } from "node:fs";
import { KiwiError } from "../errors.ts";
import { proxyFor } from "../exec/env-proxy.ts";

/** Where a client's requests go: its registry (for messages), the environment's proxies, the CAs. */
export interface Route {
  registry: string;
  env: Readonly<Record<string, string | undefined>>;
  tls: { ca?: string };
}

const MAX_REDIRECTS = 5;
/** Waits before the second and third try of a GET or HEAD that met a passing fault. */
export const RETRY_DELAYS_MS = [250, 1000];
/** Answers that say "try again": a timeout, too many requests, a server, gateway or service briefly failing. */
const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const MAX_RETRY_AFTER_MS = 10_000;

/**
 * fetch with redirects followed by hand: at most five, never from HTTPS down to HTTP, and the
 * Authorization header is dropped when the redirect leaves the registry's origin (blob
 * downloads are redirected to storage with their own signed URL, per the distribution spec).
 */
export async function fetchFollowing(route: Route, method: string, url: string, headers: Record<string, string>, body?: Uint8Array): Promise<Response> {
  let current = new URL(url);
  const origin = current.origin;
  for (let hop = 0; ; hop++) {
    const sent = current.origin === origin ? headers : Object.fromEntries(Object.entries(headers).filter(([k]) => k !== "authorization"));
    const res = await fetchRetrying(route, method, current, { method, headers: sent, body, redirect: "manual", tls: route.tls, decompress: false } as RequestInit);
    if (res.status < 300 || res.status >= 400 || res.status === 304) return res;
    const location = res.headers.get("location");
    await res.body?.cancel();
    if (!location || (method !== "GET" && method !== "HEAD")) return res;
    if (hop >= MAX_REDIRECTS) throw new KiwiError("E_REGISTRY", `${route.registry} redirected more than ${MAX_REDIRECTS} times for ${url}`, { hint: "the registry is misconfigured" });
    const next = registryUrl(route.registry, location, current, "a redirect's Location");
    if (current.protocol === "https:" && next.protocol !== "https:") {
      throw new KiwiError("E_REGISTRY", `${route.registry} redirected ${current} to the insecure ${next}`, { hint: "kiwi never follows a redirect from HTTPS to HTTP" });
    }
    current = next;
  }
}

/**
 * One fetch; a GET or HEAD (which change nothing) is sent again after a passing fault, as
 * docker, ORAS and npm do: a 408, 429, 500, 502, 503 or 504 answer, or a connection reset (a blob
 * download cut midway too: getBlob). Two more tries,
 * after 0.25 s and 1 s, or after the server's Retry-After (10 s at most).
 */
async function fetchRetrying(route: Route, method: string, url: URL, init: RequestInit): Promise<Response> {
  const idempotent = method === "GET" || method === "HEAD";
  for (let attempt = 0; ; attempt++) {
    const again = idempotent && attempt < RETRY_DELAYS_MS.length;
    let res: Response;
    try {
      res = await fetch(url, init);
    } catch (error) {
      if (again && isReset(error)) {
        await Bun.sleep(RETRY_DELAYS_MS[attempt]!);
        continue;
      }
      throw unreachable(route.registry, url, error, route.env);
    }
    if (!again || !RETRY_STATUSES.has(res.status)) return res;
    const wait = retryAfterMs(res.headers.get("retry-after")) ?? RETRY_DELAYS_MS[attempt]!;
    await res.body?.cancel();
    await Bun.sleep(wait);
  }
}

/** Where distributions keep the system CA bundle (Debian/Ubuntu, Fedora/RHEL, Alpine/macOS). */
const SYSTEM_CA_FILES = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"];
let systemCa: { ca?: string } | undefined;

/**
 * The CAs registry TLS is verified against: SSL_CERT_FILE when set, else the system bundle (so a
 * corporate CA added with update-ca-certificates works), else Bun's built-in Mozilla roots.
 */
export function caBundle(sslCertFile: string | undefined): { ca?: string } {
  if (sslCertFile) {
    try {
      return { ca: readFileSync(sslCertFile, "utf8") };
    } catch (error) {
      throw new KiwiError("E_IO", `SSL_CERT_FILE ${sslCertFile} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`, { hint: "point SSL_CERT_FILE at a PEM bundle, or unset it" });
    }
  }
  if (!systemCa) {
    systemCa = {};
    for (const file of SYSTEM_CA_FILES) {
      try {
        systemCa = { ca: readFileSync(file, "utf8") };
        break;
      } catch {
        // Not this distribution's path.
      }
    }
  }
  return systemCa;
}

/** A URL the registry sent (a Location, a realm), resolved; one that is no URL is the registry's fault, named. */
export function registryUrl(registry: string, text: string, base: string | URL | undefined, what: string): URL {
  try {
    return new URL(text, base);
  } catch {
    throw new KiwiError("E_REGISTRY", `${registry} sent ${what} ${JSON.stringify(text.slice(0, 200))}, which is not a URL`, { hint: "the registry (or a proxy in front of it) is misconfigured" });
  }
}

/** A connection the server (or something between) closed under the request. */
export function isReset(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "ECONNRESET" || code === "EPIPE" || code === "ConnectionClosed";
}

/** Retry-After in seconds (an HTTP date is not worth a clock comparison here), capped; undefined when absent or odd. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
}

/** Bun's fetch gives up on a connection idle for too long (5 minutes by default) with a TimeoutError. */
export function isTimeout(error: unknown): boolean {
  return (error as { name?: unknown } | undefined)?.name === "TimeoutError";
}

/** What went wrong, for a message: the errno code (ECONNRESET), else the error's own words. */
export function failureDetail(error: unknown): string {
  if (isTimeout(error)) return "no data came for too long (timed out)";
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string" && code !== "") return code;
  return error instanceof Error ? error.message : String(error);
}

/** A fetch that failed, as the registry's user can act on it. */
export function unreachable(registry: string, url: URL, error: unknown, env: Readonly<Record<string, string | undefined>>): KiwiError {
  if (isTimeout(error)) {
    return new KiwiError("E_REGISTRY", `${registry} (${url.origin}) did not answer: ${failureDetail(error)}`, { hint: "the registry or the network stalled; try again later" });
  }
  if (isReset(error)) {
    // Reached, then cut (after the retries): not a registry that is down or misaddressed.
    return new KiwiError("E_REGISTRY", `${registry} (${url.origin}) closed the connection under the request: ${failureDetail(error)}`, {
      hint: "the registry or something between it and kiwi (a proxy, a load balancer) cut the connection; try again later",
    });
  }
  const detail = failureDetail(error);
  const proxy = proxyFor(url, env);
  if (proxy) {
    // The connection that failed was to the proxy: "nothing listens at <registry>" would send the user the wrong way.
    return new KiwiError("E_REGISTRY", `cannot reach ${registry} (${url.origin}) through the proxy ${proxy.url}: ${detail}`, {
      hint: `kiwi goes through the proxy in ${proxy.variable} for this address: check that it runs and lets ${registry} through, or name ${url.hostname} in NO_PROXY`,
    });
  }
  const tlsProblem = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|TLS|SSL/i.test(detail);
  const refused = detail === "ConnectionRefused" || detail === "ECONNREFUSED";
  return new KiwiError("E_REGISTRY", `cannot reach ${registry} (${url.origin}): ${detail}`, {
    hint: tlsProblem
      ? "the registry's certificate is not trusted: set SSL_CERT_FILE to its CA bundle"
      : refused
        ? `nothing accepts connections at ${registry}: start the registry, or check the host and port`
        : "check that the registry is running and the address is right; plain HTTP is only used for loopback or --insecure-registry",
  });
}
