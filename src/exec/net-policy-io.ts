// Resolves a URL's host (DNS, /etc/hosts) so net-policy.ts can check the addresses a name stands for,
// not only the name: a public-looking name that resolves to 127.0.0.1 is still a request to loopback.
import ipaddr from "ipaddr.js";
import { KiwiError } from "../errors.ts";
import { assertUrlAllowed, type HostPolicy } from "./net-policy.ts";

/**
 * Every address `host` resolves to (/etc/hosts, then DNS), both families, in the resolver's order.
 * Bun.dns.lookup is what node:dns/promises' `lookup(host, { all: true, verbatim: true })` calls
 * underneath in Bun, and with `verbatim` it neither sorts nor filters: the same answers, without
 * loading node:dns on every http_client call. Error codes are given node's names (ENOTFOUND, not
 * Bun's DNS_ENOTFOUND), as kiwi's messages show them.
 */
export async function lookupAll(host: string): Promise<string[]> {
  try {
    return (await Bun.dns.lookup(host, {})).map((a) => a.address);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (typeof e.code === "string" && e.code.startsWith("DNS_")) e.code = e.code.slice(4);
    throw error;
  }
}

/** Every address a host name resolves to (none for an IP literal). */
export async function resolveHostAddresses(hostname: string): Promise<string[]> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  if (ipaddr.isValid(host)) return [];
  return lookupAll(host);
}

/**
 * Throws E_SANDBOX unless the policy allows `url`, after resolving its host. Call before the first
 * request and before following each redirect.
 */
export async function assertUrlAllowedIo(url: URL, policy: HostPolicy): Promise<void> {
  if (!policy.enforced) return;
  assertUrlAllowed(url, policy); // the name itself (allow-list, literal IPs) before any lookup
  let addresses: string[];
  try {
    addresses = await resolveHostAddresses(url.hostname);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new KiwiError("E_EXEC_FAILED", `${policy.toolId}: cannot resolve ${url.hostname} (${code ?? String(error)})`, {
      hint: "check the host name and your network; kiwi resolves hosts to check their addresses before connecting",
      // `stage: "lookup"`: a network error, which the http_client primitive retries as it retries a failed connection.
      details: { tool: policy.toolId, url: url.href, ...(code !== undefined ? { code } : {}), stage: "lookup" },
    });
  }
  assertUrlAllowed(url, policy, addresses);
}
