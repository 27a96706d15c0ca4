// kiwi's filtering proxy for one call: HTTP CONNECT, plain HTTP (absolute form) and SOCKS5 on one
// listener (a Unix socket bound into a sandbox, or 127.0.0.1 for kiwi's own fetch). Every request
// is checked against the tool's declared hosts, the name is resolved here, every address it
// resolves to is checked (so rebinding and loopback tricks are refused), and the connection goes
// to an address that was checked. Refusals are kept for the caller to report after the run.
import { lookup } from "node:dns/promises";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { type Server, type Socket, createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ipaddr from "ipaddr.js";
import { KiwiError } from "../errors.ts";
import { type HostPolicy, type HostVerdict, checkHostAllowed } from "./net-policy.ts";
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

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Starts the proxy; resolves once it is listening. */
export async function startNetProxy(listen: ProxyListen, policy: HostPolicy, resolve: Resolver = systemResolver): Promise<NetProxy> {
  const refused: Refusal[] = [];
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    handle(client, policy, resolve, refused, open);
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    if ("path" in listen) server.listen(listen.path, done);
    else server.listen(0, "127.0.0.1", done);
  }).catch((error: unknown) => {
    throw new KiwiError("E_EXEC_FAILED", `kiwi's network proxy for ${policy.toolId} could not listen (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      hint: "check that the temporary folder is writable",
      cause: error,
    });
  });
  if ("path" in listen) {
    // Only the tool's uid may connect; the folder is kiwi's own (0700).
    if (listen.uid !== undefined) chownSync(listen.path, listen.uid, listen.uid);
    chmodSync(listen.path, 0o600);
  }
  const addr = server.address();
  return {
    address: "path" in listen ? `unix:${listen.path}` : `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`,
    refusals: () => [...refused],
    close: () =>
      new Promise<void>((done) => {
        for (const s of open) s.destroy();
        server.close(() => done());
      }),
  };
}

/** A private folder for one call's proxy socket (bound into the sandbox); removed by `cleanup`. */
export function makeProxySocketDir(): { dir: string; socket: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "kiwi-net-"));
  return { dir, socket: join(dir, "proxy.sock"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function handle(client: Socket, policy: HostPolicy, resolve: Resolver, refused: Refusal[], open: Set<Socket>): void {
  let buf: Uint8Array = new Uint8Array(0);
  let socks: boolean | undefined;
  let greeted = false;
  const headTimer = setTimeout(() => client.destroy(), HEAD_TIMEOUT_MS);
  client.on("error", () => client.destroy());
  const onData = (chunk: Uint8Array) => {
    buf = concat(buf, chunk);
    socks ??= isSocks5(buf[0]!);
    let r = socks ? parseSocks5(buf, greeted) : parseHttpRequest(buf);
    if (r.kind === "greeting") {
      client.write(r.reply);
      buf = buf.subarray(r.consumed);
      greeted = true;
      if (buf.byteLength === 0) return;
      r = parseSocks5(buf, true);
      if (r.kind === "greeting") return;
    }
    if (r.kind === "more") return;
    client.off("data", onData);
    client.pause();
    clearTimeout(headTimer);
    if (r.kind === "bad") {
      client.end(r.reply);
      return;
    }
    void connectTarget(client, r.target, policy, resolve, refused, open);
  };
  client.on("data", onData);
  client.on("close", () => clearTimeout(headTimer));
}

async function connectTarget(client: Socket, target: ProxyTarget, policy: HostPolicy, resolve: Resolver, refused: Refusal[], open: Set<Socket>): Promise<void> {
  const refuse = (v: Extract<HostVerdict, { ok: false }>) => {
    const rule = v.rule ?? "refused";
    refused.push({ host: target.host, port: target.port, rule, reason: v.reason ?? v.message, hint: v.hint });
    client.end(target.protocol === "socks5" ? socksReply(SOCKS_REPLY.notAllowed) : httpReply(403, "Forbidden", `kiwi: ${v.message}`, { "X-Kiwi-Refused": rule }));
  };
  const fail = (status: number, socksCode: number, why: string) => {
    client.end(target.protocol === "socks5" ? socksReply(socksCode) : httpReply(status, status === 504 ? "Gateway Timeout" : "Bad Gateway", `kiwi proxy: ${why}`));
  };
  // The name first (the allow-list), so an undeclared host is never even looked up.
  const byName = checkHostAllowed(target.host, target.port, policy);
  if (!byName.ok) return refuse(byName);
  let addresses: string[];
  if (ipaddr.isValid(target.host)) addresses = [ipaddr.process(target.host).toString()];
  else {
    try {
      addresses = await resolve(target.host);
    } catch (error) {
      return fail(502, SOCKS_REPLY.hostUnreachable, `cannot resolve ${target.host} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    if (addresses.length === 0) return fail(502, SOCKS_REPLY.hostUnreachable, `${target.host} has no address`);
  }
  const verdict = checkHostAllowed(target.host, target.port, policy, addresses);
  if (!verdict.ok) return refuse(verdict);
  let upstream: Socket;
  try {
    upstream = await connectFirst(addresses, target.port);
  } catch (error) {
    const timedOut = (error as Error).message === "timeout";
    return fail(timedOut ? 504 : 502, timedOut ? SOCKS_REPLY.ttlExpired : SOCKS_REPLY.refused, `cannot connect to ${target.host}:${target.port} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (client.destroyed) {
    upstream.destroy();
    return;
  }
  open.add(upstream);
  upstream.on("close", () => open.delete(upstream));
  const cut = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", cut);
  upstream.on("error", cut);
  if (target.protocol === "connect") client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
  else if (target.protocol === "socks5") client.write(socksReply(SOCKS_REPLY.succeeded));
  if (target.forward) upstream.write(target.forward);
  if (target.rest && target.rest.byteLength > 0) upstream.write(target.rest);
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
}

/** Connects to the first address that answers, in resolver order. */
async function connectFirst(addresses: readonly string[], port: number): Promise<Socket> {
  let last: unknown;
  for (const host of addresses) {
    try {
      return await new Promise<Socket>((done, fail) => {
        const s = createConnection({ host, port });
        const timer = setTimeout(() => {
          s.destroy();
          fail(new Error("timeout"));
        }, CONNECT_TIMEOUT_MS);
        s.once("connect", () => {
          clearTimeout(timer);
          s.removeAllListeners("error");
          done(s);
        });
        s.once("error", (e) => {
          clearTimeout(timer);
          fail(e);
        });
      });
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength === 0) return b;
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}
