// kiwi's filtering proxy for one call: HTTP CONNECT, plain HTTP (absolute form) and SOCKS5 on one
// listener (a Unix socket bound into a sandbox, or 127.0.0.1 for kiwi's own fetch). Every request
// is checked against the tool's declared hosts, the name is resolved here, every address it
// resolves to is checked (so rebinding and loopback tricks are refused), and the connection goes
// to an address that was checked. Refusals are kept for the caller to report after the run.
//
// Bun's own sockets (Bun.listen / Bun.connect), as in net-bridge-io.ts, rather than node:net: the
// proxy starts on every host-filtered call and loading node:net's streams cost ~3 ms of it.
// Backpressure is kept by hand: what a socket cannot take yet is queued and its peer stops reading
// until it drains. Both sides allow half-open connections, so a client that shuts down its sending
// side still gets the whole answer (the FIN is passed on once what came before it is written).
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket, SocketHandler } from "bun";
import ipaddr from "ipaddr.js";
import { KiwiError } from "../errors.ts";
import { type HostPolicy, type HostVerdict, checkHostAllowed } from "./net-policy.ts";
import { lookupAll } from "./net-policy-io.ts";
import { type ProxyTarget, type Refusal, SOCKS_REPLY, httpReply, isSocks5, parseHttpRequest, parseSocks5, socksReply } from "./net-proxy.ts";

/** A running proxy. */
export interface NetProxy {
  /** `unix:<path>` or `http://127.0.0.1:<port>`. */
  address: string;
  /** Connections refused so far, in order. */
  refusals(): Refusal[];
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

/** Where the proxy listens: a Unix socket (owned by `uid` when set) or an ephemeral loopback port. */
export type ProxyListen = { path: string; uid?: number } | { loopback: true };

/** Names the proxy resolves (injected in tests to simulate DNS answers, e.g. rebinding). */
export type Resolver = (host: string) => Promise<string[]>;

const CONNECT_TIMEOUT_MS = 30_000;
const HEAD_TIMEOUT_MS = 30_000;

/** One end of a proxied connection. */
interface End {
  /** The other end, once the upstream is connected. */
  peer: Socket<End> | null;
  /** Bytes waiting for this socket to drain (its peer is paused meanwhile). */
  queue: Uint8Array[];
  /** Send FIN here once the queue is written (the peer sent FIN, or a reply ends the connection). */
  ending: boolean;
  /** Close this socket outright after its last write (a reply, or a peer that closed) rather than half-close it. */
  closeAfter: boolean;
  /** What this end read before its peer existed (the client while the upstream connects). */
  held: Uint8Array[];
  /** This end sent FIN or closed: nothing more comes from it. */
  done: boolean;
  /** kiwi sent FIN here: nothing more goes to it. */
  shut: boolean;
  closed: boolean;
  /** Client only: the request head read so far, until a target is parsed. */
  head: Uint8Array | null;
  socks?: boolean;
  greeted: boolean;
  headTimer?: ReturnType<typeof setTimeout>;
}

const fresh = (peer: Socket<End> | null = null): End => ({ peer, queue: [], ending: false, closeAfter: false, held: [], done: false, shut: false, closed: false, head: null, greeted: false });

/** Everything the proxy of one call has open, so `close` can cut it. */
interface Shared {
  policy: HostPolicy;
  resolve: Resolver;
  refused: Refusal[];
  open: Set<Socket<End>>;
  /** Upstream connections still being made: each cancels its attempt. */
  pending: Set<() => void>;
  stopped: boolean;
}

/** Writes `bytes` to `to` now, or queues what does not fit; false when something had to wait. */
function send(to: Socket<End>, bytes: Uint8Array): boolean {
  if (to.data.closed) return true;
  if (to.data.queue.length === 0) {
    const written = to.write(bytes);
    if (written >= bytes.length) return true;
    bytes = bytes.subarray(Math.max(written, 0));
  }
  to.data.queue.push(new Uint8Array(bytes)); // copied: Bun reuses its read buffer
  return false;
}

/**
 * Sends FIN to `s`. Bun's `end()` closes both ways, so a socket whose other side may still talk is
 * only shut down for writing; one that already sent its FIN (or is told to close) is ended.
 */
function sendFin(s: Socket<End>): void {
  if (s.data.closed || s.data.shut) return;
  s.data.shut = true;
  if (s.data.done || s.data.closeAfter) s.end();
  else s.shutdown();
}

/** Sends FIN to `s` once its queue is written. */
function finAfterQueue(s: Socket<End>): void {
  if (s.data.queue.length === 0) sendFin(s);
  else s.data.ending = true;
}

/** Sends `bytes`, then closes the connection (once they are written). */
function sendAndEnd(to: Socket<End>, bytes: Uint8Array): void {
  to.data.closeAfter = true;
  send(to, bytes);
  finAfterQueue(to);
}

/** Passes what `from` read to its peer; when the peer cannot take it all, `from` stops reading. */
function forward(from: Socket<End>, chunk: Uint8Array): void {
  const to = from.data.peer;
  if (!to) {
    from.data.held.push(new Uint8Array(chunk));
    return;
  }
  if (!send(to, chunk)) from.pause();
}

function flush(socket: Socket<End>): void {
  const queue = socket.data.queue;
  while (queue.length > 0) {
    const head = queue[0]!;
    const written = socket.write(head);
    if (written < head.length) {
      queue[0] = head.subarray(Math.max(written, 0));
      return;
    }
    queue.shift();
  }
  socket.data.peer?.resume();
  if (socket.data.ending) sendFin(socket);
}

/** `socket` sent FIN: its peer gets FIN once what came before is written; done both ways, it closes. */
function finished(socket: Socket<End>): void {
  if (socket.data.done) return;
  socket.data.done = true;
  if (socket.data.shut && !socket.data.closed) socket.end();
  const peer = socket.data.peer;
  if (peer && !peer.data.closed) finAfterQueue(peer);
}

/** Closes `s` outright once what it is owed is written (its peer is gone). */
function closeAfterQueue(s: Socket<End>): void {
  s.data.closeAfter = true;
  s.data.shut = false; // a half-close already sent becomes a full close
  finAfterQueue(s);
}

function closed(shared: Shared, socket: Socket<End>): void {
  if (socket.data.closed) return;
  socket.data.closed = true;
  socket.data.done = true;
  socket.data.queue.length = 0;
  clearTimeout(socket.data.headTimer);
  shared.open.delete(socket);
  // Nothing more can go either way here: the peer gets what it is owed, then is closed; if it was
  // paused waiting for this socket to drain, it reads again (what it sends now is dropped).
  const peer = socket.data.peer;
  if (peer && !peer.data.closed) {
    closeAfterQueue(peer);
    peer.resume();
  }
}

const upstreamHandlers = (shared: Shared): SocketHandler<End> => ({
  data: forward,
  drain: flush,
  end: finished,
  close: (s) => closed(shared, s),
  error: (s) => closed(shared, s),
  connectError: () => {},
});

/** Starts the proxy; resolves once it is listening. */
export async function startNetProxy(listen: ProxyListen, policy: HostPolicy, resolve: Resolver = lookupAll): Promise<NetProxy> {
  const shared: Shared = { policy, resolve, refused: [], open: new Set(), pending: new Set(), stopped: false };
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
    end: finished,
    close: (s) => closed(shared, s),
    error: (s) => closed(shared, s),
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
  if (r.kind === "bad") return sendAndEnd(client, r.reply);
  client.pause();
  void connectTarget(shared, client, r.target);
}

async function connectTarget(shared: Shared, client: Socket<End>, target: ProxyTarget): Promise<void> {
  const { policy } = shared;
  const refuse = (v: Extract<HostVerdict, { ok: false }>) => {
    const rule = v.rule ?? "refused";
    shared.refused.push({ host: target.host, port: target.port, rule, reason: v.reason ?? v.message, hint: v.hint });
    sendAndEnd(client, target.protocol === "socks5" ? socksReply(SOCKS_REPLY.notAllowed) : httpReply(403, "Forbidden", `kiwi: ${v.message}`, { "X-Kiwi-Refused": rule }));
  };
  const fail = (status: number, socksCode: number, why: string) => {
    sendAndEnd(client, target.protocol === "socks5" ? socksReply(socksCode) : httpReply(status, status === 504 ? "Gateway Timeout" : "Bad Gateway", `kiwi proxy: ${why}`));
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
      return fail(502, SOCKS_REPLY.hostUnreachable, `cannot resolve ${target.host} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
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
    return fail(timedOut ? 504 : 502, timedOut ? SOCKS_REPLY.ttlExpired : SOCKS_REPLY.refused, `cannot connect to ${target.host}:${target.port} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (client.data.closed || shared.stopped) return void upstream.terminate();
  shared.open.add(upstream);
  upstream.data.peer = client;
  client.data.peer = upstream;
  if (target.protocol === "connect") send(client, new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
  else if (target.protocol === "socks5") send(client, socksReply(SOCKS_REPLY.succeeded));
  let fits = true;
  if (target.forward) fits = send(upstream, target.forward) && fits;
  if (target.rest && target.rest.byteLength > 0) fits = send(upstream, target.rest) && fits;
  for (const chunk of client.data.held.splice(0)) fits = send(upstream, chunk) && fits;
  // What the upstream answered before it was linked, and a FIN or close either side sent meanwhile
  // (their handlers ran while there was no peer to pass it to).
  for (const chunk of upstream.data.held.splice(0)) send(client, chunk);
  if (upstream.data.closed) closeAfterQueue(client);
  else if (upstream.data.done) finAfterQueue(client);
  if (client.data.done) finAfterQueue(upstream);
  if (fits) client.resume();
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
