// What a declared net.outbound host entry means: a name, a wildcard, `*`, an IP or a CIDR range,
// with an optional port, and why an entry is none of these. Read by `kiwi check` (a finding) and by
// exec's host policy (a refusal), so both judge an entry the same way. Pure.
import ipaddr from "ipaddr.js";

/** One declared host: `api.example.com`, `*.example.com`, `*`, an IP, a CIDR range; optional `:port`. */
export interface HostRule {
  raw: string;
  kind: "name" | "wildcard" | "any" | "ip" | "cidr";
  /** Lower-case name, or the suffix (with its leading dot) of a wildcard. */
  name?: string;
  range?: [ipaddr.IPv4 | ipaddr.IPv6, number];
  port?: number;
}

/** Parses one declared host entry; a scheme (`https://`) is tolerated, a path is not. */
export function parseHostRule(raw: string): HostRule | null {
  let s = raw.trim().toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, "");
  if (s === "*") return { raw, kind: "any" };
  const cidr = /^\[?([0-9a-f:.]+)\]?\/(\d{1,3})$/.exec(s);
  if (cidr) {
    try {
      return { raw, kind: "cidr", range: ipaddr.parseCIDR(`${cidr[1]}/${cidr[2]}`) };
    } catch {
      return null;
    }
  }
  if (s.endsWith("/")) s = s.slice(0, -1);
  if (s.includes("/")) return null;
  let port: number | undefined;
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(s);
  if (m) {
    port = Number(m[2]);
    s = m[1]!;
  }
  if (port !== undefined && (port < 1 || port > 65535)) return null;
  const bare = asciiName(s.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, ""));
  if (ipaddr.isValid(bare)) return { raw, kind: "ip", range: [ipaddr.process(bare), ipaddr.process(bare).kind() === "ipv4" ? 32 : 128], port };
  if (bare.startsWith("*.") && isHostName(bare.slice(2))) return { raw, kind: "wildcard", name: bare.slice(1), port };
  if (isHostName(bare)) return { raw, kind: "name", name: bare, port };
  return null;
}

/** Why a declared net.outbound entry is not a host rule (null when it is one), for errors and findings. */
export function hostEntryProblem(raw: string): string | null {
  if (parseHostRule(raw)) return null;
  const s = raw.trim().toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, "");
  if (s === "") return "it is empty";
  const port = /:(\d+)$/.exec(s);
  if (port && (Number(port[1]) < 1 || Number(port[1]) > 65535)) return `port ${port[1]} is out of range (1-65535)`;
  if (/:[^\]]*$/.test(s) && !/^\[/.test(s) && !ipaddr.isValid(s) && !port) return "its port is not a number";
  if (/\/\d+$/.test(s)) return "it is not a valid CIDR range";
  if (s.replace(/\/$/, "").includes("/")) return "it has a path: declare the host only";
  if (s.includes("*")) return "a wildcard may only be a whole first label (*.example.com) or * alone";
  return "it is not a host name, IP address or CIDR range";
}

/** A rule that admits every host: `*`, or a /0 range. */
export function coversEverything(rule: HostRule): boolean {
  return rule.kind === "any" || (rule.kind === "cidr" && rule.range![1] === 0);
}

/**
 * An internationalised name in the ASCII form URLs and clients use (`bücher.example` is
 * `xn--bcher-kva.example`, as `new URL` and curl write it), so a declaration matches the host a
 * request names. A wildcard's labels are converted after its `*.`; anything else is left as it is.
 */
function asciiName(s: string): string {
  if (!/[^\x00-\x7f]/.test(s)) return s;
  const wild = s.startsWith("*.") ? "*." : "";
  try {
    return wild + new URL(`http://${s.slice(wild.length)}/`).hostname;
  } catch {
    return s;
  }
}

/**
 * Whether `rule` admits `host` (lower case, no brackets, no trailing dot) on `port`; `literal` is
 * the host parsed as an IP, or null for a name. A name never matches an IP rule, nor an IP a name.
 */
export function ruleMatches(r: HostRule, host: string, literal: ipaddr.IPv4 | ipaddr.IPv6 | null, port: number): boolean {
  if (r.port !== undefined && r.port !== port) return false;
  switch (r.kind) {
    case "any":
      return true;
    case "name":
      return !literal && host === r.name;
    case "wildcard":
      return !literal && host.endsWith(r.name!) && host.length > r.name!.length;
    case "ip":
    case "cidr":
      return literal !== null && inRange(literal, r);
  }
}

/** Whether an address lies in an IP or CIDR rule's range. */
export function inRange(a: ipaddr.IPv4 | ipaddr.IPv6, r: HostRule): boolean {
  const [net, bits] = r.range!;
  return a.kind() === net.kind() && a.match(net as never, bits);
}

/** Whether any of `rules` admits a URL's host and port (as written in the URL: brackets, any case). */
export function admitsHost(rules: readonly HostRule[], hostname: string, port: number): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
  const literal = ipaddr.isValid(host) ? ipaddr.process(host) : null;
  return rules.some((r) => ruleMatches(r, host, literal, port));
}

function isHostName(s: string): boolean {
  return s.length > 0 && s.length <= 253 && s.split(".").every((l) => /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/.test(l));
}

/** What kind of address an IP is; anything but `public` needs a declaration. */
