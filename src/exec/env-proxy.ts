// Which proxy fetch sends a URL through when kiwi's own proxy is not in the way (a registry
// request; an http_client call or HTTP MCP server under --sandbox=off): the environment's
// HTTP_PROXY / HTTPS_PROXY, unless NO_PROXY names the host. For messages only: a connection that
// failed was to the proxy, and "cannot reach <host>" alone sends the user the wrong way. Pure.

/** The proxy and the variable that named it, with any user:password in its URL hidden. */
export interface EnvProxy {
  url: string;
  variable: "HTTP_PROXY" | "HTTPS_PROXY";
}

/**
 * The proxy Bun's fetch sends `url` through: HTTPS_PROXY or HTTP_PROXY by scheme (either case),
 * unless NO_PROXY names the host (exactly, as a domain suffix, with its port, or `*`).
 */
export function proxyFor(url: URL, env: Readonly<Record<string, string | undefined>>): EnvProxy | undefined {
  const https = url.protocol === "https:";
  const proxy = https ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  if (!proxy) return undefined;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const bypass = (env.NO_PROXY ?? env.no_proxy ?? "").split(",").map((n) => n.trim().toLowerCase()).filter(Boolean);
  const bypassed = bypass.some((n) => n === "*" || n === host || n === `${host}:${url.port}` || host.endsWith(n.startsWith(".") ? n : `.${n}`));
  return bypassed ? undefined : { url: withoutCredentials(proxy), variable: https ? "HTTPS_PROXY" : "HTTP_PROXY" };
}

/** A proxy URL fit for a message: http://user:secret@proxy:3128 shows as http://***@proxy:3128. */
function withoutCredentials(proxy: string): string {
  return proxy.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^@/]*@/i, (_, scheme: string | undefined) => `${scheme ?? ""}***@`);
}
