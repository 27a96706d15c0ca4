// kiwi's filtering proxy: the request parsers (pure), and the proxy itself against real loopback
// listeners, with the resolver swapped to play DNS answers a test cannot get from real DNS
// (a public name that resolves to loopback: rebinding).
import { afterAll, describe, expect, test } from "bun:test";
import { createConnection } from "node:net";
import { parseHostPolicy } from "../../src/exec/net-policy.ts";
import { isSocks5, parseHttpRequest, parseSocks5, renderRefusals, splitHostPort } from "../../src/exec/net-proxy.ts";
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
      const run = runHttp(plan(`http://rebind.example.com:${server.port}/`), { redact: (s) => s, checkUrl: async () => {}, proxy: { url: proxy.address, refusals: proxy.refusals } });
      await expect(run).rejects.toMatchObject({ code: "E_SANDBOX", message: `weather may not contact rebind.example.com:${server.port}: rebind.example.com resolves to 127.0.0.1, a loopback address, refused unless declared` });
      expect(hits).toBe(0);
    } finally {
      await proxy.close();
      server.stop(true);
    }
  });
});
