// kiwi's filtering proxy for one call: HTTP CONNECT, plain HTTP (absolute form) and SOCKS5 on one
// listener (a Unix socket bound into a sandbox, or 127.0.0.1 for kiwi's own fetch). Every request
// is checked against the tool's declared hosts, the name is resolved here, every address it
// resolves to is checked (so rebinding and loopback tricks are refused), and the connection goes
// to an address that was checked. Refusals are kept for the caller to report after the run.
//
// Bun's own sockets (Bun.listen / Bun.connect), as in net-bridge-io.ts, rather than node:net: the
// proxy starts on every host-filtered call and loading node:net's streams cost ~3 ms of it. The
// bytes are relayed by net-relay-io.ts (backpressure, half-close), shared with the bridge.
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket, SocketHandler } from "bun";
import ipaddr from "ipaddr.js";
import { KiwiError } from "../errors.ts";
import { type HostPolicy, type HostVerdict, checkHostAllowed } from "./net-policy.ts";
import { lookupAll } from "./net-policy-io.ts";
import { type Relay, closed, finished, flush, forward, freshRelay, link, send, sendAndClose } from "./net-relay-io.ts";
import { type ProxyFailure, type ProxyTarget, type Refusal, MAX_HEAD_BYTES, SOCKS_REPLY, closingResponseHead, httpReply, isSocks5, parseHttpRequest, parseSocks5, socksReply } from "./net-proxy.ts";

/** A running proxy. */
export interface NetProxy {
  /** `unix:<path>` or `http://127.0.0.1:<port>`. */
  address: string;
  /** Connections refused so far, in order. */
  refusals(): Refusal[];
  /** Connections allowed but not made so far (no address, none answered), in order. */
  failures(): ProxyFailure[];
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

/** Where the proxy listens: a Unix socket (owned by `uid` when set) or an ephemeral loopback port. */
export type ProxyListen = { path: string; uid?: number } | { loopback: true };

/** Names the proxy resolves (injected in tests to simulate DNS answers, e.g. rebinding). */
export type Resolver = (host: string) => Promise<string[]>;

const CONNECT_TIMEOUT_MS = 30_000;
const HEAD_TIMEOUT_MS = 30_000;

/** One end of a proxied connection: a relay end, and for the client the request head being read. */
interface End extends Relay {
  /** Client only: the request head read so far, until a target is parsed. */
  head: Uint8Array | null;
  socks?: boolean;
  greeted: boolean;
  headTimer?: ReturnType<typeof setTimeout>;
  /** Upstream of a plain HTTP request only: its response head read so far, until it is rewritten to close. */
  responseHead?: Uint8Array | null;
}

const fresh = (): End => ({ ...freshRelay(), head: null, greeted: false });

/** Everything the proxy of one call has open, so `close` can cut it. */
interface Shared {
  policy: HostPolicy;
  resolve: Resolver;
  refused: Refusal[];
  failed: ProxyFailure[];
  open: Set<Socket<End>>;
  /** Upstream connections still being made: each cancels its attempt. */
  pending: Set<() => void>;
  stopped: boolean;
}

function onClose(shared: Shared, socket: Socket<End>): void {
  clearTimeout(socket.data.headTimer);
  shared.open.delete(socket);
  closed(socket);
}

const upstreamHandlers = (shared: Shared): SocketHandler<End> => ({
  data: (upstream, chunk) => (upstream.data.responseHead ? readResponseHead(upstream, chunk) : forward(upstream, chunk)),
  drain: flush,
  end: finished,
  close: (s) => onClose(shared, s),
  error: (s) => onClose(shared, s),
  connectError: () => {},
});

/** Starts the proxy; resolves once it is listening. */
export async function startNetProxy(listen: ProxyListen, policy: HostPolicy, resolve: Resolver = lookupAll): Promise<NetProxy> {
  const shared: Shared = { policy, resolve, refused: [], failed: [], open: new Set(), pending: new Set(), stopped: false };
  const handlers: SocketHandler<End> = {
    open(client) {
      client.data = fresh();
      client.data.head = new Uint8Array(0);
      shared.open.add(client);
      client.data.headTimer = setTimeout(() => client.terminate(), HEAD_TIMEOUT_MS);
    },
    data(client, chunk) {
      if (client.data.head) readHead(shared, client, chunk);
      else forward(client, chunk);
    },
    drain: flush,
    end(client) {
      // A FIN before the request was whole: there is nothing to answer.
      if (client.data.head) return void client.end();
      finished(client);
    },
    close: (s) => onClose(shared, s),
    error: (s) => onClose(shared, s),
  };
  let server: { stop(closeActiveConnections?: boolean): void };
  let port = 0;
  try {
    if ("path" in listen) server = Bun.listen<End>({ unix: listen.path, allowHalfOpen: true, socket: handlers });
    else {
      const tcp = Bun.listen<End>({ hostname: "127.0.0.1", port: 0, allowHalfOpen: true, socket: handlers });
      port = tcp.port;
      server = tcp;
    }
  } catch (error) {
    throw new KiwiError("E_EXEC_FAILED", `kiwi's network proxy for ${policy.toolId} could not listen (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      hint: "check that the temporary folder is writable",
      cause: error,
    });
  }
  if ("path" in listen) {
    // Only the tool's uid may connect; the folder is kiwi's own (0700).
    if (listen.uid !== undefined) chownSync(listen.path, listen.uid, listen.uid);
    chmodSync(listen.path, 0o600);
  }
  return {
    address: "path" in listen ? `unix:${listen.path}` : `http://127.0.0.1:${port}`,
    refusals: () => [...shared.refused],
    failures: () => [...shared.failed],
    close: async () => {
      shared.stopped = true;
      for (const cancel of shared.pending) cancel();
      for (const s of shared.open) s.terminate();
      server.stop(true);
    },
  };
}

/** A private folder for one call's proxy socket (bound into the sandbox); removed by `cleanup`. */
export function makeProxySocketDir(): { dir: string; socket: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "kiwi-net-"));
  return { dir, socket: join(dir, "proxy.sock"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Reads the request head (HTTP or SOCKS5) until a target is known, then connects it. */
function readHead(shared: Shared, client: Socket<End>, chunk: Uint8Array): void {
  const state = client.data;
  let buf = concat(state.head!, chunk);
  state.socks ??= isSocks5(buf[0]!);
  let r = state.socks ? parseSocks5(buf, state.greeted) : parseHttpRequest(buf);
  if (r.kind === "greeting") {
    send(client, r.reply);
    buf = buf.subarray(r.consumed);
    state.greeted = true;
    r = buf.byteLength === 0 ? { kind: "more" } : parseSocks5(buf, true);
    if (r.kind === "greeting") r = { kind: "more" };
  }
  if (r.kind === "more") {
    state.head = new Uint8Array(buf); // copied: Bun reuses its read buffer
    return;
  }
  state.head = null;
  clearTimeout(state.headTimer);
  if (r.kind === "bad") return sendAndClose(client, r.reply);
  client.pause();
  void connectTarget(shared, client, r.target);
}

async function connectTarget(shared: Shared, client: Socket<End>, target: ProxyTarget): Promise<void> {
  const { policy } = shared;
  const refuse = (v: Extract<HostVerdict, { ok: false }>) => {
    const rule = v.rule ?? "refused";
    shared.refused.push({ host: target.host, port: target.port, rule, reason: v.reason ?? v.message, hint: v.hint });
    sendAndClose(client, target.protocol === "socks5" ? socksReply(SOCKS_REPLY.notAllowed) : httpReply(403, "Forbidden", `kiwi: ${v.message}`, { "X-Kiwi-Refused": rule }));
  };
  const fail = (status: number, socksCode: number, why: string, code?: string) => {
    shared.failed.push({ host: target.host, port: target.port, reason: why, ...(code !== undefined ? { code } : {}) });
    sendAndClose(client, target.protocol === "socks5" ? socksReply(socksCode) : httpReply(status, status === 504 ? "Gateway Timeout" : "Bad Gateway", `kiwi proxy: ${why}`));
  };
  // The name first (the allow-list), so an undeclared host is never even looked up.
  const byName = checkHostAllowed(target.host, target.port, policy);
  if (!byName.ok) return refuse(byName);
  let addresses: string[];
  if (ipaddr.isValid(target.host)) addresses = [ipaddr.process(target.host).toString()];
  else {
    try {
      addresses = await shared.resolve(target.host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return fail(502, SOCKS_REPLY.hostUnreachable, `cannot resolve ${target.host} (${code ?? String(error)})`, code);
    }
    if (addresses.length === 0) return fail(502, SOCKS_REPLY.hostUnreachable, `${target.host} has no address`);
  }
  const verdict = checkHostAllowed(target.host, target.port, policy, addresses);
  if (!verdict.ok) return refuse(verdict);
  if (client.data.closed) return;
  let upstream: Socket<End>;
  try {
    upstream = await connectFirst(shared, addresses, target.port);
  } catch (error) {
    const timedOut = (error as Error).message === "timeout";
    const code = (error as NodeJS.ErrnoException).code;
    return fail(timedOut ? 504 : 502, timedOut ? SOCKS_REPLY.ttlExpired : SOCKS_REPLY.refused, `cannot connect to ${target.host}:${target.port} (${code ?? (error as Error).message})`, code);
  }
  if (client.data.closed || shared.stopped) return void upstream.terminate();
  shared.open.add(upstream);
  // One request per connection, which the client must be told (the origin's answer may say keep-alive).
  if (target.protocol === "http") upstream.data.responseHead = new Uint8Array(0);
  if (target.protocol === "connect") send(client, new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
  else if (target.protocol === "socks5") send(client, socksReply(SOCKS_REPLY.succeeded));
  let fits = true;
  if (target.forward) fits = send(upstream, target.forward) && fits;
  if (target.rest && target.rest.byteLength > 0) fits = send(upstream, target.rest) && fits;
  fits = link(client, upstream) && fits;
  if (fits) client.resume();
}

/**
 * Passes a plain HTTP response on with `Connection: close` in its final head (net-proxy.ts
 * closingResponseHead); from then on the bytes are relayed as they come. A head past the size a
 * request head may have is passed on as it is.
 */
function readResponseHead(upstream: Socket<End>, chunk: Uint8Array): void {
  let buf = concat(upstream.data.responseHead!, chunk);
  for (;;) {
    const r = closingResponseHead(buf);
    if (!r) {
      if (buf.byteLength <= MAX_HEAD_BYTES) {
        upstream.data.responseHead = new Uint8Array(buf); // copied: Bun reuses its read buffer
        return;
      }
      break;
    }
    forward(upstream, r.head);
    buf = buf.subarray(r.length);
    if (r.final) break;
  }
  upstream.data.responseHead = null;
  if (buf.byteLength > 0) forward(upstream, buf);
}

/** Connects to the first address that answers, in resolver order. */
async function connectFirst(shared: Shared, addresses: readonly string[], port: number): Promise<Socket<End>> {
  let last: unknown;
  for (const hostname of addresses) {
    try {
      return await connectOne(shared, hostname, port);
    } catch (error) {
      last = error;
      if (shared.stopped) break;
    }
  }
  throw last;
}

function connectOne(shared: Shared, hostname: string, port: number): Promise<Socket<End>> {
  return new Promise<Socket<End>>((done, fail) => {
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      shared.pending.delete(cancel);
    };
    const cancel = () => {
      if (settled) return;
      settle();
      fail(new Error(shared.stopped ? "stopped" : "timeout"));
    };
    const timer = setTimeout(cancel, CONNECT_TIMEOUT_MS);
    shared.pending.add(cancel);
    Bun.connect<End>({ hostname, port, allowHalfOpen: true, data: fresh(), socket: upstreamHandlers(shared) }).then(
      (s) => {
        // Given up on meanwhile (timeout, or the call ended): this late connection is cut.
        if (settled) return void s.terminate();
        settle();
        done(s);
      },
      (error: unknown) => {
        if (settled) return;
        settle();
        fail(error);
      },
    );
  });
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength === 0) return b;
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}
