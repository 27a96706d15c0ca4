// The wire formats of kiwi's filtering proxy (net-proxy-io.ts): what a client asks for (HTTP
// CONNECT, a plain HTTP request in absolute form, or SOCKS5 CONNECT), the request rewritten for the
// origin, and the refusals. Pure: bytes in, decisions out; sockets and DNS live in net-proxy-io.ts.

/** Where a proxied connection wants to go, and how to answer the client. */
export interface ProxyTarget {
  protocol: "connect" | "http" | "socks5";
  host: string;
  port: number;
  /** Bytes to send to the origin first (a plain HTTP request's rewritten head and body start). */
  forward?: Uint8Array;
  /** Bytes already read from the client after the request (the start of a tunnel's data). */
  rest?: Uint8Array;
}

/** A parse step: need more bytes, a target, or a malformed request with the answer to send. */
export type ParseResult = { kind: "more" } | { kind: "target"; target: ProxyTarget } | { kind: "bad"; reply: Uint8Array; reason: string };

/** A proxy request head larger than this is refused (431), as servers do. */
export const MAX_HEAD_BYTES = 64 * 1024;

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * An HTTP head as text, one character per byte: header values are octets (RFC 9110 obs-text), not
 * UTF-8, and a head the proxy rewrites must go on with every byte as it came (UTF-8 decoding made
 * a Latin-1 `é` in a header U+FFFD, sent on as three other bytes).
 */
function headText(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

/** The bytes of a head built from headText's characters (all below 256). */
function headBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** True when the first byte says SOCKS version 5 (an HTTP request starts with a letter). */
export function isSocks5(first: number): boolean {
  return first === 0x05;
}

/** A plain-text HTTP answer from the proxy itself; the connection closes after it. */
export function httpReply(status: number, reason: string, body: string, headers: Record<string, string> = {}): Uint8Array {
  const text = `${body}\n`;
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return enc.encode(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${enc.encode(text).byteLength}\r\nConnection: close\r\n${extra}\r\n${text}`);
}

/** Headers that belong to the hop between client and proxy, never forwarded to the origin. */
const HOP_HEADERS = new Set(["proxy-connection", "proxy-authorization", "proxy-authenticate", "connection", "keep-alive", "te", "trailer", "upgrade"]);

/** Parses an HTTP proxy request (CONNECT or absolute-form) from the bytes read so far. */
export function parseHttpRequest(buf: Uint8Array): ParseResult {
  const end = indexOfHeadEnd(buf);
  if (end === -1) {
    if (buf.byteLength > MAX_HEAD_BYTES) return bad(431, "Request Header Fields Too Large", `the request head is larger than ${MAX_HEAD_BYTES} bytes`);
    return { kind: "more" };
  }
  const head = headText(buf.subarray(0, end));
  const rest = buf.subarray(end + 4);
  const lines = head.split("\r\n");
  const m = /^([A-Z]+) (\S+) HTTP\/(1\.[01])$/.exec(lines[0] ?? "");
  if (!m) return bad(400, "Bad Request", "not an HTTP/1.x proxy request");
  const [, method, target, version] = m as unknown as [string, string, string, string];
  if (method === "CONNECT") {
    const hp = splitHostPort(target);
    if (!hp) return bad(400, "Bad Request", `CONNECT needs host:port (got ${target})`);
    return { kind: "target", target: { protocol: "connect", host: hp.host, port: hp.port, rest } };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return bad(400, "Bad Request", `a proxy request needs an absolute http:// URL (got ${target})`);
  }
  if (url.protocol !== "http:") return bad(400, "Bad Request", `only http:// URLs are forwarded as requests; use CONNECT for ${url.protocol} (got ${target})`);
  const headers = lines.slice(1).filter((l) => l.length > 0);
  const kept = headers.filter((l) => !HOP_HEADERS.has(l.slice(0, l.indexOf(":")).trim().toLowerCase()));
  if (!kept.some((l) => /^host\s*:/i.test(l))) kept.unshift(`Host: ${url.host}`);
  // One request per connection: a later request on a kept-alive connection could name another host.
  const rewritten = `${method} ${url.pathname}${url.search} HTTP/${version}\r\n${[...kept, "Connection: close"].join("\r\n")}\r\n\r\n`;
  const headOut = headBytes(rewritten);
  const forward = new Uint8Array(headOut.byteLength + rest.byteLength);
  forward.set(headOut);
  forward.set(rest, headOut.byteLength);
  const port = url.port ? Number(url.port) : 80;
  return { kind: "target", target: { protocol: "http", host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port, forward } };
}

/**
 * Where the head of the response to a plain HTTP request ends, and that head as the client must
 * get it: with `Connection: close` in place of any keep-alive. The request went upstream with
 * `Connection: close`, yet a server may answer keep-alive (an SSE endpoint sets it itself); a
 * client believing it would send its next request, perhaps for another host, down a connection
 * kiwi already joined to this one. A 1xx interim head passes as it is (the final head follows);
 * null until the head is whole.
 */
export function closingResponseHead(buf: Uint8Array): { head: Uint8Array; length: number; final: boolean } | null {
  const end = indexOfHeadEnd(buf);
  if (end === -1) return null;
  const lines = headText(buf.subarray(0, end)).split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1]);
  if (status >= 100 && status < 200 && status !== 101) return { head: buf.subarray(0, end + 4), length: end + 4, final: false };
  const kept = lines.slice(1).filter((l) => !["connection", "keep-alive", "proxy-connection"].includes(l.slice(0, l.indexOf(":")).trim().toLowerCase()));
  return { head: headBytes(`${[lines[0], ...kept, "Connection: close"].join("\r\n")}\r\n\r\n`), length: end + 4, final: true };
}

function bad(status: number, reason: string, why: string): ParseResult {
  return { kind: "bad", reply: httpReply(status, reason, `kiwi proxy: ${why}`), reason: why };
}

function indexOfHeadEnd(buf: Uint8Array): number {
  for (let i = 0; i + 3 < buf.byteLength; i++) if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  return -1;
}

/** `host:port`, `[v6]:port`; null when the port is missing or out of range. */
export function splitHostPort(s: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(s);
  if (!m) return null;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return null;
  return { host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port };
}

/** SOCKS5 reply codes (RFC 1928 §6). */
export const SOCKS_REPLY = { succeeded: 0, failure: 1, notAllowed: 2, networkUnreachable: 3, hostUnreachable: 4, refused: 5, ttlExpired: 6, commandUnsupported: 7, addressUnsupported: 8 } as const;

/** A SOCKS5 reply with an unspecified bound address (clients ignore it for CONNECT). */
export function socksReply(code: number): Uint8Array {
  return Uint8Array.of(5, code, 0, 1, 0, 0, 0, 0, 0, 0);
}

/**
 * Parses a SOCKS5 greeting plus CONNECT request (RFC 1928) from the bytes read so far. Only the
 * "no authentication" method and the CONNECT command exist here; `greeted` says the method reply
 * was already sent (the greeting's bytes are then gone from `buf`).
 */
export function parseSocks5(buf: Uint8Array, greeted: boolean): ParseResult | { kind: "greeting"; consumed: number; reply: Uint8Array } {
  if (!greeted) {
    if (buf.byteLength < 2) return { kind: "more" };
    const n = buf[1]!;
    if (buf.byteLength < 2 + n) return { kind: "more" };
    const methods = buf.subarray(2, 2 + n);
    if (!methods.includes(0)) return { kind: "bad", reply: Uint8Array.of(5, 0xff), reason: "the SOCKS5 client offers no method without authentication" };
    return { kind: "greeting", consumed: 2 + n, reply: Uint8Array.of(5, 0) };
  }
  if (buf.byteLength < 5) return { kind: "more" };
  if (buf[0] !== 5) return { kind: "bad", reply: socksReply(SOCKS_REPLY.failure), reason: "not a SOCKS5 request" };
  if (buf[1] !== 1) return { kind: "bad", reply: socksReply(SOCKS_REPLY.commandUnsupported), reason: `SOCKS5 command ${buf[1]} is not supported (only CONNECT)` };
  const atyp = buf[3];
  let host: string;
  let at: number;
  if (atyp === 1) {
    if (buf.byteLength < 10) return { kind: "more" };
    host = Array.from(buf.subarray(4, 8)).join(".");
    at = 8;
  } else if (atyp === 3) {
    const len = buf[4]!;
    if (buf.byteLength < 5 + len + 2) return { kind: "more" };
    host = dec.decode(buf.subarray(5, 5 + len));
    at = 5 + len;
  } else if (atyp === 4) {
    if (buf.byteLength < 22) return { kind: "more" };
    const words: string[] = [];
    for (let i = 0; i < 16; i += 2) words.push(((buf[4 + i]! << 8) | buf[5 + i]!).toString(16));
    host = words.join(":");
    at = 20;
  } else {
    return { kind: "bad", reply: socksReply(SOCKS_REPLY.addressUnsupported), reason: `SOCKS5 address type ${atyp} is not supported` };
  }
  const port = (buf[at]! << 8) | buf[at + 1]!;
  if (port === 0) return { kind: "bad", reply: socksReply(SOCKS_REPLY.notAllowed), reason: "SOCKS5 request for port 0" };
  return { kind: "target", target: { protocol: "socks5", host, port, rest: buf.subarray(at + 2) } };
}

/** One connection the proxy refused: where it wanted to go and which rule said no. */
export interface Refusal {
  host: string;
  port: number;
  /** The rule that refused: `not declared`, `loopback address`, … */
  rule: string;
  /** Why, in a phrase: `not among the declared net.outbound hosts (api.example.com)`. */
  reason: string;
  hint: string;
}

/** A connection the proxy allowed but could not make: the name did not resolve, or no address answered. */
export interface ProxyFailure {
  host: string;
  port: number;
  /** What went wrong, in a phrase: `cannot connect to api.example.com:443 (ECONNREFUSED)`. */
  reason: string;
  /** The system's error code, when there is one (ENOTFOUND, ECONNREFUSED…). */
  code?: string;
}

/** The lines printed on stderr after a run: each refused destination once, with its count. */
export function renderRefusals(toolId: string, refusals: readonly Refusal[]): string[] {
  return summarizeRefusals(refusals).map((r) => `kiwi: refused ${toolId}'s connection to ${r.host.includes(":") ? `[${r.host}]` : r.host}:${r.port}${r.count > 1 ? ` (${r.count} times)` : ""}: ${r.reason}; ${r.hint}`);
}

/** Each refused destination and rule once, with how often it was refused (for --json). */
export function summarizeRefusals(refusals: readonly Refusal[]): (Refusal & { count: number })[] {
  const seen = new Map<string, Refusal & { count: number }>();
  for (const r of refusals) {
    const key = `${r.host}\0${r.port}\0${r.rule}`;
    const s = seen.get(key);
    if (s) s.count++;
    else seen.set(key, { ...r, count: 1 });
  }
  return [...seen.values()];
}
