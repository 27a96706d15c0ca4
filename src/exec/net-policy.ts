// Which hosts an http_client tool may contact: the allow-list from its declared net.outbound hosts,
// and the SSRF rule that loopback, private and link-local addresses need a declaration naming them.
// Checked before every request and every redirect hop. Pure: DNS answers come in from net-policy-io.ts.
import ipaddr from "ipaddr.js";
import { KiwiError } from "../errors.ts";
import { type HostRule, coversEverything, hostEntryProblem, inRange, parseHostRule, ruleMatches } from "../manifest/host-rule.ts";
import type { Capability } from "../manifest/model.ts";

export interface HostPolicy {
  toolId: string;
  /** False with --sandbox=off: nothing is checked. */
  enforced: boolean;
  /** True when net.outbound lists hosts: only those may be contacted. */
  restricted: boolean;
  rules: HostRule[];
  /** Declared entries that are not hosts (a URL with a path, garbage); they match nothing. */
  invalid: string[];
  /** Manifest pointers of the net.outbound declarations. */
  pointers: string[];
}

/** A verdict; a refusal names the rule that refused (`not declared`, `loopback address`, …). */
export type HostVerdict = { ok: true; rule?: string } | { ok: false; message: string; hint: string; rule?: string; reason?: string };

/** Builds the policy from the capabilities declared along the chain. */
export function parseHostPolicy(toolId: string, capabilities: readonly Capability[], enforced = true): HostPolicy {
  const caps = capabilities.filter((c) => c.name === "net.outbound");
  const rules: HostRule[] = [];
  const invalid: string[] = [];
  for (const raw of caps.flatMap((c) => c.hosts ?? [])) {
    const rule = parseHostRule(raw);
    if (rule) rules.push(rule);
    else invalid.push(raw);
  }
  return { toolId, enforced, restricted: rules.length + invalid.length > 0, rules, invalid, pointers: caps.map((c) => c.pointer) };
}

/**
 * Refuses a policy kiwi cannot enforce as written: a malformed entry (it would silently match
 * nothing) or, without `allowAnyHost`, an entry that admits every host. E_NET_POLICY.
 */
export function assertPolicyUsable(policy: HostPolicy, options: { allowAnyHost?: boolean } = {}): void {
  if (!policy.enforced) return;
  const at = policy.pointers.join(", ");
  for (const raw of policy.invalid) {
    throw new KiwiError("E_NET_POLICY", `${policy.toolId} declares net.outbound host ${JSON.stringify(raw)} (${at}): ${hostEntryProblem(raw)}`, {
      hint: "write a host, optionally with a port: api.example.com, *.example.com, 203.0.113.7:8443, [::1]:80 or 10.0.0.0/8",
      details: { tool: policy.toolId, host: raw, pointer: at },
    });
  }
  const any = policy.rules.find(coversEverything);
  if (any && options.allowAnyHost !== true) {
    throw new KiwiError("E_NET_POLICY", `${policy.toolId} declares net.outbound host ${JSON.stringify(any.raw)} (${at}), which admits every host`, {
      hint: "list the hosts the tool needs, or pass --allow-any-host to run it anyway (private addresses stay refused)",
      details: { tool: policy.toolId, host: any.raw, pointer: at },
    });
  }
}

export type AddressClass = "public" | "loopback" | "private" | "link-local" | "unique-local" | "unspecified" | "multicast" | "broadcast" | "shared (carrier-grade NAT)" | "reserved";

/** Classifies an IP in any form ipaddr.js reads (octal, hex, IPv4-mapped, NAT64, 6to4, Teredo). */
export function classifyAddress(text: string): AddressClass {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(text.replace(/^\[(.*)\]$/, "$1"));
  } catch {
    return "reserved";
  }
  if (addr.kind() === "ipv6") {
    const embedded = embeddedIpv4(addr as ipaddr.IPv6);
    if (embedded) return classifyAddress(embedded.toString());
  }
  const range: string = addr.range(); // the typings miss some names (deprecatedSiteLocal)
  switch (range) {
    case "unicast":
    case "as112":
    case "as112v6":
    case "amt":
      return "public";
    case "loopback":
      return "loopback";
    case "private":
    case "deprecatedSiteLocal": // fec0::/10
      return "private";
    case "linkLocal":
      return "link-local";
    case "uniqueLocal":
      return "unique-local";
    case "unspecified":
      return "unspecified";
    case "multicast":
      return "multicast";
    case "broadcast":
      return "broadcast";
    case "carrierGradeNat":
      return "shared (carrier-grade NAT)";
    default:
      return "reserved";
  }
}

/** The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4, Teredo client, IPv4-compatible). */
function embeddedIpv4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const b = a.toByteArray();
  const v4 = (o: number, flip = false) => new ipaddr.IPv4(b.slice(o, o + 4).map((x) => (flip ? x ^ 0xff : x)));
  switch (a.range()) {
    case "ipv4Mapped":
    case "rfc6145":
    case "rfc6052":
      return v4(12);
    case "6to4":
      return v4(2);
    case "teredo":
      return v4(12, true);
  }
  // Deprecated IPv4-compatible ::a.b.c.d (not :: or ::1).
  if (b.slice(0, 12).every((x) => x === 0) && !(b[12] === 0 && b[13] === 0 && b[14] === 0 && (b[15] ?? 0) <= 1)) return v4(12);
  return null;
}

/**
 * Checks one URL against the policy. `addresses` are what the host resolves to (empty for an IP
 * literal, which is checked itself). A private address passes only when a declared name, wildcard,
 * IP or range covers it; `*` opens public hosts only.
 */
export function checkUrlAllowed(url: URL, policy: HostPolicy, addresses: readonly string[] = []): HostVerdict {
  if (!policy.enforced) return { ok: true };
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, message: `${policy.toolId} may not use ${url.protocol} (${url.href}): only http and https`, hint: "use an http:// or https:// URL" };
  }
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  return checkHostAllowed(url.hostname, port, policy, addresses, `${url.protocol}//${url.host}`);
}

/**
 * Checks one host and port (a URL's, or what a proxied connection asks for) against the policy;
 * `shown` is how the destination is named in a refusal.
 */
export function checkHostAllowed(hostname: string, port: number, policy: HostPolicy, addresses: readonly string[] = [], shown = `${hostname}:${port}`): HostVerdict {
  if (!policy.enforced) return { ok: true };
  const host = hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
  const literal = ipaddr.isValid(host) ? ipaddr.process(host) : null;
  const matches = policy.rules.filter((r) => ruleMatches(r, host, literal, port));
  if (policy.restricted && matches.length === 0) {
    const declared = [...policy.rules.map((r) => r.raw), ...policy.invalid].join(", ");
    return {
      ok: false,
      rule: "not declared",
      reason: `not among the declared net.outbound hosts (${declared})`,
      message: `${policy.toolId} may not contact ${withPort(host, port)}: it is not among the declared net.outbound hosts (${declared})`,
      hint: `add "${policy.rules.some((r) => r.port !== undefined) ? withPort(host, port) : host}" to net.outbound in the tool's manifest (${policy.pointers.join(", ")}) if it should be reachable`,
    };
  }
  const localName = host === "localhost" || host.endsWith(".localhost");
  const toCheck = literal ? [literal.toString()] : localName ? [...addresses, "127.0.0.1"] : addresses;
  for (const a of toCheck) {
    const cls = classifyAddress(a);
    if (cls === "public") continue;
    // A rule naming this host (not `*`) or an IP/range containing the address is an explicit declaration.
    const named = matches.some((r) => r.kind === "name" || r.kind === "wildcard");
    const parsed = ipaddr.isValid(a) ? ipaddr.process(a) : null;
    const covered = parsed !== null && policy.rules.some((r) => (r.kind === "ip" || r.kind === "cidr") && inRange(parsed, r) && (r.port === undefined || r.port === port));
    if (named || covered) continue;
    const kind = `${cls === "unspecified" ? "an" : "a"} ${cls} address`;
    const what = literal ? `${host} is ${kind}` : `${host} resolves to ${a}, ${kind}`;
    return {
      ok: false,
      rule: `${cls} address`,
      reason: `${what}, refused unless declared`,
      message: `${policy.toolId} may not contact ${shown}: ${what} (refused to prevent request forgery)`,
      hint: `declare it, e.g. net.outbound: ["${literal ? a : host}"], if the tool really must reach it`,
    };
  }
  return { ok: true, rule: matches[0]?.raw };
}

/** Throws E_SANDBOX when the URL is not allowed. */
export function assertUrlAllowed(url: URL, policy: HostPolicy, addresses: readonly string[] = []): void {
  const v = checkUrlAllowed(url, policy, addresses);
  if (!v.ok) throw new KiwiError("E_SANDBOX", v.message, { hint: v.hint, details: { tool: policy.toolId, url: url.href } });
}

/** `host:port`, an IPv6 address in brackets (`[::1]:8080`; `::1:8080` would be another address). */
function withPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** One line for `--dry-run`: which hosts the tool may contact and what is checked. */
export function describeHostPolicy(p: HostPolicy): string {
  if (!p.enforced) return "hosts: not checked (--sandbox=off)";
  const local = "loopback, private and link-local addresses refused unless declared";
  const dns = "names are resolved and their addresses checked before each request, and the request goes through kiwi's proxy, which connects only to an address it checked itself (a DNS answer that changes in between, rebinding, cannot slip a private address in)";
  const bad = p.invalid.length ? `; ignored (not hosts): ${p.invalid.join(", ")}` : "";
  if (!p.restricted) return `hosts: any public host (no net.outbound hosts declared); ${local}; ${dns}`;
  return `hosts: only ${p.rules.map((r) => r.raw).join(", ")} (${p.pointers.join(", ")}), checked before each request and redirect; ${local}; ${dns}${bad}`;
}
