// kiwi's filtering proxy: the request parsers (pure), and the proxy itself against real loopback
// listeners, with the resolver swapped to play DNS answers a test cannot get from real DNS
// (a public name that resolves to loopback: rebinding).
import { afterAll, describe, expect, test } from "bun:test";
import { type AddressInfo, type Socket, createConnection, createServer } from "node:net";
import { parseHostPolicy } from "../../src/exec/net-policy.ts";
import { closingResponseHead, isSocks5, parseHttpRequest, parseSocks5, renderRefusals, splitHostPort } from "../../src/exec/net-proxy.ts";
import { startNetProxy } from "../../src/exec/net-proxy-io.ts";
import { runHttp } from "../../src/exec/http.ts";
import type { HttpPlan } from "../../src/exec/plan.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);
const policy = (...hosts: string[]) => parseHostPolicy("t", hosts.length ? [{ name: "net.outbound", hosts, pointer: "/requires/0" }] : [{ name: "net.outbound", pointer: "/requires/0" }]);

describe("parseHttpRequest", () => {
  test("CONNECT host:port, with the bytes after the head kept for the tunnel", () => {
    const r = parseHttpRequest(enc("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n\x16\x03\x01"));
    expect(r.kind).toBe("target");
    if (r.kind === "target") {
      expect([r.target.protocol, r.target.host, r.target.port]).toEqual(["connect", "api.example.com", 443]);
      expect(Array.from(r.target.rest!)).toEqual([0x16, 3, 1]);
    }
  });

  test("an absolute-form request is rewritten to origin form, hop headers dropped, one request per connection", () => {
    const r = parseHttpRequest(enc("POST http://[::1]:8080/a/b?c=1 HTTP/1.1\r\nHost: [::1]:8080\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi"));
    expect(r.kind).toBe("target");
    if (r.kind === "target") {
      expect([r.target.protocol, r.target.host, r.target.port]).toEqual(["http", "::1", 8080]);
      expect(text(r.target.forward)).toBe("POST /a/b?c=1 HTTP/1.1\r\nHost: [::1]:8080\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
    }
  });

  test("a missing Host header is added from the URL", () => {
    const r = parseHttpRequest(enc("GET http://example.com/ HTTP/1.0\r\n\r\n"));
    expect(r.kind === "target" && text(r.target.forward)).toBe("GET / HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n");
  });

  test("waits for the whole head", () => {
    expect(parseHttpRequest(enc("GET http://example.com/ HTTP/1.1\r\nHost: exa")).kind).toBe("more");
  });

  test.each([
    ["GET /relative HTTP/1.1\r\n\r\n", "a proxy request needs an absolute http:// URL (got /relative)"],
    ["GET https://example.com/ HTTP/1.1\r\n\r\n", "only http:// URLs are forwarded as requests; use CONNECT for https: (got https://example.com/)"],
    ["CONNECT example.com HTTP/1.1\r\n\r\n", "CONNECT needs host:port (got example.com)"],
    ["CONNECT example.com:0 HTTP/1.1\r\n\r\n", "CONNECT needs host:port (got example.com:0)"],
    ["HELLO\r\n\r\n", "not an HTTP/1.x proxy request"],
  ])("%j is refused with 400: %s", (head, why) => {
    const r = parseHttpRequest(enc(head));
    expect(r.kind).toBe("bad");
    if (r.kind === "bad") {
      expect(r.reason).toBe(why);
      expect(text(r.reply)).toStartWith("HTTP/1.1 400 Bad Request\r\n");
    }
  });

  test("a head past 64 KiB is 431", () => {
    const r = parseHttpRequest(enc(`GET http://example.com/ HTTP/1.1\r\nX: ${"a".repeat(70_000)}`));
    expect(r.kind === "bad" && text(r.reply)).toStartWith("HTTP/1.1 431 ");
  });
});

describe("header bytes", () => {
  test("a rewritten request or response head keeps every header byte: a Latin-1 value is not turned into U+FFFD", () => {
    const latin1 = (s: string) => Uint8Array.from([...s].map((c) => c.charCodeAt(0)));
    const r = parseHttpRequest(latin1("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\nX-Name: Ren\u00e9e\r\n\r\n"));
    if (r.kind !== "target" || r.target.protocol !== "http") throw new Error("expected a forwarded request");
    expect(Array.from(r.target.forward!)).toEqual(Array.from(latin1("GET / HTTP/1.1\r\nHost: example.com\r\nX-Name: Ren\u00e9e\r\nConnection: close\r\n\r\n")));
    const head = closingResponseHead(latin1('HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename="caf\u00e9.pdf"\r\n\r\n'))!;
    expect(Array.from(head.head)).toEqual(Array.from(latin1('HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename="caf\u00e9.pdf"\r\nConnection: close\r\n\r\n')));
    // UTF-8 in a header passes byte for byte too.
    const utf8 = closingResponseHead(enc("HTTP/1.1 200 OK\r\nX-City: Montr\u00e9al\r\n\r\n"))!;
    expect(text(utf8.head)).toBe("HTTP/1.1 200 OK\r\nX-City: Montr\u00e9al\r\nConnection: close\r\n\r\n");
  });
});

describe("closingResponseHead", () => {
  test("the final head says Connection: close whatever the origin said; the body is not part of it", () => {
    const r = closingResponseHead(enc("HTTP/1.1 200 OK\r\nconnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok"))!;
    expect([text(r.head), r.length, r.final]).toEqual(["HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n", 85, true]);
  });

  test("a 100 Continue passes as it is (the final head follows); an unfinished head waits", () => {
    const interim = "HTTP/1.1 100 Continue\r\n\r\n";
    expect(closingResponseHead(enc(`${interim}HTTP/1.1 201 Created\r\n`))).toEqual({ head: enc(interim), length: interim.length, final: false });
    expect(closingResponseHead(enc("HTTP/1.1 200 OK\r\nConnection: keep-"))).toBeNull();
  });
});

describe("parseSocks5", () => {
  test("greeting, then CONNECT by name, IPv4 and IPv6", () => {
    expect(isSocks5(5)).toBe(true);
    expect(isSocks5("G".charCodeAt(0))).toBe(false);
    const g = parseSocks5(Uint8Array.of(5, 2, 2, 0), false);
    expect(g).toMatchObject({ kind: "greeting", consumed: 4 });
    const byName = parseSocks5(Uint8Array.of(5, 1, 0, 3, 11, ...enc("example.com"), 1, 187), true);
    expect(byName.kind === "target" && [byName.target.host, byName.target.port]).toEqual(["example.com", 443]);
    const v4 = parseSocks5(Uint8Array.of(5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90), true);
    expect(v4.kind === "target" && [v4.target.host, v4.target.port]).toEqual(["127.0.0.1", 8080]);
    const v6 = parseSocks5(Uint8Array.of(5, 1, 0, 4, ...new Array(15).fill(0), 1, 0, 80), true);
    expect(v6.kind === "target" && v6.target.host).toBe("0:0:0:0:0:0:0:1");
  });

  test("only no-auth and CONNECT exist here", () => {
    expect(parseSocks5(Uint8Array.of(5, 1, 2), false)).toMatchObject({ kind: "bad", reply: Uint8Array.of(5, 0xff) });
    expect(parseSocks5(Uint8Array.of(5, 2, 0, 1, 1, 2, 3, 4, 0, 80), true)).toMatchObject({ kind: "bad", reason: "SOCKS5 command 2 is not supported (only CONNECT)" });
    expect(parseSocks5(Uint8Array.of(5, 1, 0, 9, 0, 0), true)).toMatchObject({ kind: "bad", reason: "SOCKS5 address type 9 is not supported" });
    expect(parseSocks5(Uint8Array.of(5, 1, 0, 3, 11), true).kind).toBe("more");
  });
});

test("splitHostPort", () => {
  expect(splitHostPort("[::1]:443")).toEqual({ host: "::1", port: 443 });
  expect(splitHostPort("a.b:65536")).toBeNull();
  expect(splitHostPort("a.b")).toBeNull();
});

test("refusals are reported once per destination and rule, with a count", () => {
  const r = { host: "::1", port: 80, rule: "loopback address", reason: "::1 is a loopback address, refused unless declared", hint: 'declare it, e.g. net.outbound: ["::1"]' };
  expect(renderRefusals("t", [r, r, { ...r, port: 81 }])).toEqual([
    `kiwi: refused t's connection to [::1]:80 (2 times): ::1 is a loopback address, refused unless declared; declare it, e.g. net.outbound: ["::1"]`,
    `kiwi: refused t's connection to [::1]:81: ::1 is a loopback address, refused unless declared; declare it, e.g. net.outbound: ["::1"]`,
  ]);
});

/** Sends raw bytes to the proxy and collects everything it answers until it closes. */
async function exchange(address: string, bytes: Uint8Array): Promise<string> {
  const port = Number(address.split(":").at(-1));
  return new Promise((done, fail) => {
    const s = createConnection({ host: "127.0.0.1", port }, () => s.write(bytes));
    let out = "";
    s.on("data", (d) => (out += d.toString("latin1")));
    s.on("end", () => done(out));
    s.on("error", fail);
  });
}

const origin = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => new Response(`origin ${new URL(req.url).pathname} host=${req.headers.get("host")}`) }) as { port: number; stop(force: boolean): void };
afterAll(() => origin.stop(true));

describe("the proxy", () => {
  test("forwards a declared plain-HTTP request to the address it resolved the name to, Host kept", async () => {
    const proxy = await startNetProxy({ loopback: true }, policy(`api.test:${origin.port}`), async (h) => (h === "api.test" ? ["127.0.0.1"] : []));
    try {
      const out = await exchange(proxy.address, enc(`GET http://api.test:${origin.port}/x HTTP/1.1\r\nHost: api.test:${origin.port}\r\n\r\n`));
      expect(out).toStartWith("HTTP/1.1 200");
      expect(out).toEndWith(`origin /x host=api.test:${origin.port}`);
      expect(proxy.refusals()).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  test("a public name that resolves to loopback (rebinding) is refused there, and nothing is connected", async () => {
    const proxy = await startNetProxy({ loopback: true }, policy(), async () => ["127.0.0.1"]);
    try {
      const out = await exchange(proxy.address, enc(`CONNECT rebind.example.com:${origin.port} HTTP/1.1\r\n\r\n`));
      expect(out).toStartWith("HTTP/1.1 403 Forbidden\r\n");
      expect(out).toContain("X-Kiwi-Refused: loopback address");
      expect(proxy.refusals()).toEqual([
        {
          host: "rebind.example.com",
          port: origin.port,
          rule: "loopback address",
          reason: "rebind.example.com resolves to 127.0.0.1, a loopback address, refused unless declared",
          hint: 'declare it, e.g. net.outbound: ["rebind.example.com"], if the tool really must reach it',
        },
      ]);
    } finally {
      await proxy.close();
    }
  });

  test("an undeclared name is refused before any lookup", async () => {
    let looked = 0;
    const proxy = await startNetProxy({ loopback: true }, policy("api.example.com"), async () => {
      looked++;
      return ["93.184.216.34"];
    });
    try {
      const out = await exchange(proxy.address, Uint8Array.of(5, 1, 0, 5, 1, 0, 3, 8, ...enc("evil.com"), 0, 80));
      expect(Array.from(enc(out))).toEqual([5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
      expect(looked).toBe(0);
      expect(proxy.refusals().map((r) => r.rule)).toEqual(["not declared"]);
    } finally {
      await proxy.close();
    }
  });

  test("SOCKS5 CONNECT to a declared address tunnels bytes both ways", async () => {
    const proxy = await startNetProxy({ loopback: true }, policy(`127.0.0.1:${origin.port}`));
    try {
      const req = enc(`GET /socks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const out = await exchange(proxy.address, Uint8Array.of(5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, origin.port >> 8, origin.port & 255, ...req));
      expect(out.slice(0, 12)).toBe(String.fromCharCode(5, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0));
      expect(out).toEndWith("origin /socks host=x");
    } finally {
      await proxy.close();
    }
  });
});

describe("http_client through the proxy (DNS pinning)", () => {
  const plan = (url: string): HttpPlan =>
    ({
      plan: 1,
      tool: "weather",
      mode: "locked",
      chain: [],
      params: {},
      config: {},
      secrets: [],
      limits: { timeoutMs: 10_000, killGraceMs: 0, outputBytes: 1 << 20, declared: [] },
      primitive: "http_client",
      http: { method: "GET", url, headers: {}, retries: 0, maxRedirects: 0, timeoutMs: 10_000, maxResponseBytes: 1 << 20, allowRedirectHosts: [] },
    }) as unknown as HttpPlan;

  test("the check saw a public address, the connection's own lookup a loopback one: refused as E_SANDBOX, the origin never reached", async () => {
    let hits = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response("secret")) });
    const proxy = await startNetProxy({ loopback: true }, policy(), async () => ["127.0.0.1"]);
    try {
      const run = runHttp(plan(`http://rebind.example.com:${server.port}/`), { redact: (s) => s, checkUrl: async () => {}, proxy: { url: proxy.address, refusals: proxy.refusals, failures: proxy.failures } });
      await expect(run).rejects.toMatchObject({ code: "E_SANDBOX", message: `weather may not contact rebind.example.com:${server.port}: rebind.example.com resolves to 127.0.0.1, a loopback address, refused unless declared` });
      expect(hits).toBe(0);
    } finally {
      await proxy.close();
      server.stop(true);
    }
  });
});

describe("http_client through the proxy: a connection it cannot make", () => {
  const plan = (url: string): HttpPlan =>
    ({ tool: "weather", primitive: "http_client", http: { method: "GET", url, headers: {}, retries: 0, maxRedirects: 0, timeoutMs: 10_000, maxResponseBytes: 1 << 20, allowRedirectHosts: [] } }) as unknown as HttpPlan;

  test.each(["http", "https"])("fails over %s as a direct connection would, naming the host and the system's reason, not as an HTTP 502 from the URL or a proxy the user never set", async (scheme) => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("x") });
    const port = closed.port;
    closed.stop(true);
    const proxy = await startNetProxy({ loopback: true }, policy("127.0.0.1"));
    try {
      const url = `${scheme}://127.0.0.1:${port}/v1`;
      const error = await runHttp(plan(url), { redact: (s) => s, proxy: { url: proxy.address, refusals: proxy.refusals, failures: proxy.failures } }).catch((e) => e);
      expect(error).toMatchObject({ code: "E_EXEC_FAILED", message: `weather: GET ${url} failed: cannot connect to 127.0.0.1:${port} (ECONNREFUSED)`, hint: "check the host is reachable and the URL is right", details: { code: "ECONNREFUSED" } });
    } finally {
      await proxy.close();
    }
  });
});

describe("the proxy's sockets", () => {
  /** A raw TCP origin: reads until the client's FIN, then answers `answer(received)` and closes. */
  function rawOrigin(answer: (received: Buffer) => Buffer): Promise<{ port: number; close(): void }> {
    return new Promise((done) => {
      const server = createServer({ allowHalfOpen: true }, (s) => {
        const parts: Buffer[] = [];
        s.on("data", (d: Buffer) => parts.push(d));
        s.on("end", () => s.end(answer(Buffer.concat(parts))));
        s.on("error", () => {});
      });
      server.listen(0, "127.0.0.1", () => done({ port: (server.address() as AddressInfo).port, close: () => server.close() }));
    });
  }

  /** Opens a tunnel through the proxy (CONNECT or SOCKS5), hands the socket over once it is established. */
  function tunnel(address: string, how: "connect" | "socks5", port: number): Promise<{ socket: Socket; early: Buffer }> {
    const proxyPort = Number(address.split(":").at(-1));
    return new Promise((done, fail) => {
      const s = createConnection({ host: "127.0.0.1", port: proxyPort, allowHalfOpen: true });
      s.on("error", fail);
      s.once("connect", () => {
        if (how === "connect") s.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
        else s.write(Uint8Array.of(5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, port >> 8, port & 255));
      });
      let got = Buffer.alloc(0);
      const onData = (d: Buffer) => {
        got = Buffer.concat([got, d]);
        const head = how === "connect" ? got.indexOf("\r\n\r\n") + 4 : got.byteLength >= 12 ? 12 : 0;
        if (head <= 3) return;
        s.off("data", onData);
        s.pause();
        if (how === "connect") expect(got.subarray(0, head).toString()).toStartWith("HTTP/1.1 200 ");
        else expect(Array.from(got.subarray(0, head))).toEqual([5, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        done({ socket: s, early: got.subarray(head) });
      };
      s.on("data", onData);
    });
  }

  const readAll = (s: Socket, early: Buffer): Promise<Buffer> =>
    new Promise((done, fail) => {
      const parts = [early];
      s.on("data", (d: Buffer) => parts.push(d));
      s.on("end", () => done(Buffer.concat(parts)));
      s.on("error", fail);
      s.resume();
    });

  const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

  test("a large upload and download through CONNECT arrive whole while the client reads slowly (backpressure)", async () => {
    const upload = Buffer.alloc(8 << 20);
    for (let i = 0; i < upload.length; i++) upload[i] = (i * 7 + (i >> 12)) & 255;
    const download = Buffer.alloc(24 << 20);
    for (let i = 0; i < download.length; i++) download[i] = (i * 13 + (i >> 10)) & 255;
    const target = await rawOrigin((got) => Buffer.concat([Buffer.from(`${sha(got)}\n`), download]));
    const proxy = await startNetProxy({ loopback: true }, policy(`127.0.0.1:${target.port}`));
    try {
      const { socket, early } = await tunnel(proxy.address, "connect", target.port);
      socket.end(upload);
      // Not reading for a while: the proxy's writes to this client fill up and it must stop reading the origin.
      await Bun.sleep(300);
      const out = await readAll(socket, early);
      const nl = out.indexOf("\n");
      expect(out.subarray(0, nl).toString()).toBe(sha(upload));
      expect(out.byteLength - nl - 1).toBe(download.byteLength);
      expect(sha(out.subarray(nl + 1))).toBe(sha(download));
    } finally {
      await proxy.close();
      target.close();
    }
  }, 30_000);

  test("a client that half-closes after its request still gets the whole answer (SOCKS5 and CONNECT)", async () => {
    const target = await rawOrigin((got) => Buffer.from(`got ${got.byteLength} bytes: ${got.toString()}`));
    const proxy = await startNetProxy({ loopback: true }, policy(`127.0.0.1:${target.port}`));
    try {
      for (const how of ["socks5", "connect"] as const) {
        const { socket, early } = await tunnel(proxy.address, how, target.port);
        socket.end("ping");
        expect((await readAll(socket, early)).toString()).toBe("got 4 bytes: ping");
      }
      // The request and the FIN sent at once, before the tunnel is up: both wait for the upstream.
      const proxyPort = Number(proxy.address.split(":").at(-1));
      const eager = createConnection({ host: "127.0.0.1", port: proxyPort, allowHalfOpen: true });
      eager.end(`CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\n\r\nping`);
      expect((await readAll(eager, Buffer.alloc(0))).toString()).toBe("HTTP/1.1 200 Connection Established\r\n\r\ngot 4 bytes: ping");
    } finally {
      await proxy.close();
      target.close();
    }
  });

  test("an origin that answers keep-alive to a plain request is passed on as Connection: close, so the client's next request (for another host) is not sent down the same connection", async () => {
    // Raw origins that answer every request they read with keep-alive, whatever the request said.
    const keepAlive = (name: string, seen: string[]) =>
      new Promise<{ port: number; close(): void }>((done) => {
        const server = createServer((socket) => {
          let buf = "";
          socket.on("data", (d: Buffer) => {
            buf += d.toString("latin1");
            for (let end = buf.indexOf("\r\n\r\n"); end !== -1; end = buf.indexOf("\r\n\r\n")) {
              const line = buf.slice(0, buf.indexOf("\r\n"));
              buf = buf.slice(end + 4);
              seen.push(line);
              const body = `${name}: ${line}`;
              // The head in two writes: the proxy must wait for all of it.
              socket.write("HTTP/1.1 200 OK\r\nConnection: keep-al");
              setTimeout(() => socket.write(`ive\r\nContent-Length: ${body.length}\r\n\r\n${body}`), 20);
            }
          });
          socket.on("error", () => {});
        });
        server.listen(0, "127.0.0.1", () => done({ port: (server.address() as AddressInfo).port, close: () => server.close() }));
      });
    const seenA: string[] = [];
    const seenB: string[] = [];
    const [a, b] = [await keepAlive("A", seenA), await keepAlive("B", seenB)];
    const proxy = await startNetProxy({ loopback: true }, policy(`a.test:${a.port}`, `b.test:${b.port}`), async () => ["127.0.0.1"]);
    try {
      const first = await fetch(`http://a.test:${a.port}/one`, { proxy: proxy.address } as RequestInit);
      expect([first.headers.get("connection"), await first.text()]).toEqual(["close", "A: GET /one HTTP/1.1"]);
      const second = await fetch(`http://b.test:${b.port}/two`, { proxy: proxy.address } as RequestInit);
      expect(await second.text()).toBe("B: GET /two HTTP/1.1");
      expect([seenA, seenB]).toEqual([["GET /one HTTP/1.1"], ["GET /two HTTP/1.1"]]);
    } finally {
      await proxy.close();
      a.close();
      b.close();
    }
  });

  test("a refused SOCKS5 request gets reply 2 (not allowed), is recorded with host, port and rule, and nothing is connected", async () => {
    let connected = 0;
    const target = await rawOrigin(() => (connected++, Buffer.from("x")));
    const proxy = await startNetProxy({ loopback: true }, policy());
    try {
      const out = await exchange(proxy.address, Uint8Array.of(5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, target.port >> 8, target.port & 255));
      expect(Array.from(enc(out))).toEqual([5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
      expect(proxy.refusals()).toMatchObject([{ host: "127.0.0.1", port: target.port, rule: "loopback address" }]);
      expect(connected).toBe(0);
    } finally {
      await proxy.close();
      target.close();
    }
  });

  test("a name whose DNS answer is a private address is refused after the lookup (CONNECT and plain HTTP)", async () => {
    const proxy = await startNetProxy({ loopback: true }, policy(), async (h) => (h === "intranet.example.com" ? ["93.184.216.34", "10.1.2.3"] : []));
    try {
      const viaConnect = await exchange(proxy.address, enc("CONNECT intranet.example.com:443 HTTP/1.1\r\n\r\n"));
      expect(viaConnect).toStartWith("HTTP/1.1 403 Forbidden\r\n");
      expect(viaConnect).toContain("X-Kiwi-Refused: private address");
      const viaHttp = await exchange(proxy.address, enc("GET http://intranet.example.com/admin HTTP/1.1\r\nHost: intranet.example.com\r\n\r\n"));
      expect(viaHttp).toContain("X-Kiwi-Refused: private address");
      expect(proxy.refusals()).toMatchObject([
        { host: "intranet.example.com", port: 443, rule: "private address", reason: "intranet.example.com resolves to 10.1.2.3, a private address, refused unless declared" },
        { host: "intranet.example.com", port: 80, rule: "private address" },
      ]);
    } finally {
      await proxy.close();
    }
  });

  test("an address nobody listens on is answered 502 (HTTP) and 5 (SOCKS5), not left hanging", async () => {
    const closedPort = await new Promise<number>((done) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => done(port));
      });
    });
    const proxy = await startNetProxy({ loopback: true }, policy(`127.0.0.1:${closedPort}`));
    try {
      const viaHttp = await exchange(proxy.address, enc(`GET http://127.0.0.1:${closedPort}/ HTTP/1.1\r\n\r\n`));
      expect(viaHttp).toStartWith("HTTP/1.1 502 Bad Gateway\r\n");
      expect(viaHttp).toContain(`kiwi proxy: cannot connect to 127.0.0.1:${closedPort} (ECONNREFUSED)`);
      const viaSocks = await exchange(proxy.address, Uint8Array.of(5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, closedPort >> 8, closedPort & 255));
      expect(Array.from(enc(viaSocks))).toEqual([5, 0, 5, 5, 0, 1, 0, 0, 0, 0, 0, 0]);
    } finally {
      await proxy.close();
    }
  });

  test("a process that ran a call through the proxy and closed it exits on its own: no socket or timer left behind", async () => {
    const script = `
      import { startNetProxy } from ${JSON.stringify(new URL("../../src/exec/net-proxy-io.ts", import.meta.url).pathname)};
      import { parseHostPolicy } from ${JSON.stringify(new URL("../../src/exec/net-policy.ts", import.meta.url).pathname)};
      const origin = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("hello") });
      const proxy = await startNetProxy({ loopback: true }, parseHostPolicy("t", [{ name: "net.outbound", hosts: ["127.0.0.1"], pointer: "/requires/0" }]));
      const res = await fetch("http://127.0.0.1:" + origin.port + "/", { proxy: proxy.address });
      console.log(await res.text());
      // A client that never finishes its head: the head timer must not outlive close().
      await Bun.connect({ hostname: "127.0.0.1", port: Number(proxy.address.split(":").at(-1)), socket: { data() {} } });
      await Bun.sleep(20);
      await proxy.close();
      origin.stop(true);
    `;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const killer = setTimeout(() => child.kill(), 10_000);
    const code = await child.exited;
    clearTimeout(killer);
    expect(await new Response(child.stdout).text()).toBe("hello\n");
    expect([code, child.signalCode]).toEqual([0, null]);
  }, 15_000);
});
