// The http_client primitive against real servers on 127.0.0.1 (port 0): transforms, errors,
// retries, timeouts, caps, redirects and secrets.
import { afterAll, describe, expect, test } from "bun:test";
import { runHttp } from "../../src/exec/http.ts";
import { type HttpPlan, type PlanTool, buildPlan } from "../../src/exec/plan.ts";
import { makeRedactor } from "../../src/exec/template.ts";
import { assertUrlAllowedIo } from "../../src/exec/net-policy-io.ts";
import { parseHostPolicy } from "../../src/exec/net-policy.ts";
import type { Limits } from "../../src/manifest/model.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";

const httpClient = builtinTools().find((t) => t.id === "http_client")!;
const servers: ReturnType<typeof Bun.serve>[] = [];
afterAll(() => servers.forEach((s) => s.stop(true)));

function serve(fetch: (req: Request) => Response | Promise<Response>) {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch });
  servers.push(server);
  return server;
}

const ENV = { API_TOKEN: "tok-SECRET-123", DB_PASSWORD: 'pa"ss\\wörd' };

function plan(config: Record<string, unknown>, params: Record<string, unknown> = {}, limits: Limits = {}, redact = false): HttpPlan {
  const tool: PlanTool = { id: "weather", version: "1.0.0", type: "api", config, limits, manifestFile: ".ai/tools/weather.yaml" };
  return buildPlan({ chain: [{ tool, integrity: null, runDir: null }, { tool: httpClient, integrity: null, runDir: null }], params, env: ENV, host: { which: () => null, userAgent: "kiwi/test" }, mode: "unlocked", redact }) as HttpPlan;
}

function run(p: HttpPlan, sleeps: number[] = []) {
  return runHttp(p, { redact: makeRedactor([ENV.API_TOKEN]), sleep: async (ms) => void sleeps.push(ms) });
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("the http_client primitive", () => {
  test("applies response_transform to the JSON response", async () => {
    const daily = Array.from({ length: 10 }, (_, i) => ({ day: i }));
    const s = serve(() => Response.json({ forecast: { daily } }));
    const out = await run(plan({ method: "GET", url_template: `http://127.0.0.1:${s.port}/v1/{city}`, response_transform: "$.forecast.daily[0:7]" }, { city: "Oslo" }));
    expect(out.status).toBe(200);
    expect(JSON.parse(text(out.output))).toEqual(daily.slice(0, 7));
  });

  test("a transform prints each number as the API wrote it: a 64-bit id keeps every digit", async () => {
    const body = '{"items":[{"id":1234567890123456789,"price":10.50,"ratio":1.0,"huge":1e400,"n":-0,"small":7}]}';
    const s = serve(() => new Response(body, { headers: { "content-type": "application/json" } }));
    const url = `http://127.0.0.1:${s.port}/`;
    expect(text((await run(plan({ method: "GET", url, response_transform: "$.items[0].id" }))).output)).toBe("1234567890123456789\n");
    expect(text((await run(plan({ method: "GET", url, response_transform: "$.items[*]" }))).output)).toBe(
      '[\n  {\n    "id": 1234567890123456789,\n    "price": 10.50,\n    "ratio": 1.0,\n    "huge": 1e400,\n    "n": -0,\n    "small": 7\n  }\n]\n',
    );
  });

  test("a response nested 40,000 levels deep is refused once for its transform, not retried as a network failure after a stack overflow", async () => {
    const deep = `{"a": ${"[".repeat(40_000)}${"]".repeat(40_000)}}`;
    let hits = 0;
    const s = serve(() => (hits++, new Response(deep, { headers: { "content-type": "application/json" } })));
    const url = `http://127.0.0.1:${s.port}/deep`;
    await expect(run(plan({ method: "GET", url, response_transform: "$" }))).rejects.toMatchObject({
      code: "E_EXEC_FAILED",
      message: `weather: the response from ${url} nests arrays and objects more than 1000 levels deep, so response_transform is not applied to it`,
    });
    expect(hits).toBe(1);
    // Without a transform the body is printed as received, at any depth.
    expect(text((await run(plan({ method: "GET", url }))).output)).toBe(deep);
  });

  test("a transform reads the body in the charset its Content-Type declares; an unknown label reads as UTF-8", async () => {
    const latin1 = Uint8Array.from([...'{"city":"Montr\u00e9al"}'].map((c) => c.charCodeAt(0)));
    const types: Record<string, string> = { "/latin1": "application/json; charset=iso-8859-1", "/cp1252": 'application/json;charset="windows-1252"', "/utf16": "application/json; charset=utf-16le" };
    const s = serve((req) => {
      const path = new URL(req.url).pathname;
      if (path === "/utf16") return new Response(Buffer.from('{"city":"Montr\u00e9al"}', "utf16le"), { headers: { "content-type": types[path]! } });
      if (path === "/bogus") return new Response('{"city":"Montr\u00e9al"}', { headers: { "content-type": "application/json; charset=x-no-such" } });
      if (path === "/bad") return new Response(Uint8Array.from([0x7b, 0xe9]), { status: 400, headers: { "content-type": "application/json; charset=iso-8859-1" } });
      return new Response(latin1, { headers: { "content-type": types[path]! } });
    });
    for (const path of ["/latin1", "/cp1252", "/utf16", "/bogus"]) {
      expect(text((await run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}${path}`, response_transform: "$.city" }))).output)).toBe('"Montr\u00e9al"\n');
    }
    // An error's excerpt is read the same way.
    await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/bad` }))).rejects.toMatchObject({ message: expect.stringMatching(/HTTP 400 .*: \{\u00e9$/) });
  });

  test("without a transform the body is passed through byte for byte", async () => {
    const s = serve(() => new Response("plain\ntext", { headers: { "content-type": "text/plain" } }));
    const out = await run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/` }));
    expect(text(out.output)).toBe("plain\ntext");
  });

  test("parameters reach the server as single encoded path and query components", async () => {
    const seen: string[] = [];
    const s = serve((req) => {
      seen.push(new URL(req.url).pathname + new URL(req.url).search);
      return Response.json({ ok: true });
    });
    await run(plan({ method: "GET", url_template: `http://127.0.0.1:${s.port}/v1/{city}/forecast`, query: { q: "{q}" } }, { city: "../admin?x=1#y\r\n", q: "a&b=c" }));
    expect(seen).toEqual(["/v1/..%2Fadmin%3Fx%3D1%23y%0D%0A/forecast?q=a%26b%3Dc"]);
  });

  test("HTTP 500 is an error with the status and a body excerpt, retried for GET", async () => {
    let hits = 0;
    const s = serve(() => {
      hits++;
      return new Response("database exploded", { status: 500 });
    });
    const sleeps: number[] = [];
    await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/x` }), sleeps)).rejects.toMatchObject({
      code: "E_EXEC_FAILED",
      message: `weather: HTTP 500 Internal Server Error from GET http://127.0.0.1:${s.port}/x: database exploded (after 3 attempts)`,
    });
    expect(hits).toBe(3);
    expect(sleeps).toEqual([200, 400]);
  });

  test("a non-idempotent POST is never retried", async () => {
    let hits = 0;
    const s = serve(() => {
      hits++;
      return new Response("no", { status: 503 });
    });
    await expect(run(plan({ method: "POST", url: `http://127.0.0.1:${s.port}/x`, retries: 5 }))).rejects.toMatchObject({ message: expect.stringContaining("HTTP 503") });
    expect(hits).toBe(1);
  });

  test("a transient failure followed by success returns the success, honouring Retry-After", async () => {
    let hits = 0;
    const s = serve(() => (++hits < 3 ? new Response("busy", { status: 503, headers: { "retry-after": "1" } }) : Response.json({ v: 1 })));
    const sleeps: number[] = [];
    const out = await run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/` }), sleeps);
    expect(out.attempts).toBe(3);
    expect(sleeps).toEqual([1000, 1000]);
  });

  test("a 4xx other than 408/429 is not retried", async () => {
    let hits = 0;
    const s = serve(() => {
      hits++;
      return new Response("missing", { status: 404 });
    });
    await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/` }))).rejects.toMatchObject({ message: expect.stringContaining("HTTP 404 Not Found") });
    expect(hits).toBe(1);
  });

  test("a server that never answers times out", async () => {
    const s = serve(() => new Promise<Response>(() => {}));
    await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/slow`, retries: 0 }, {}, { timeoutMs: 200 }))).rejects.toMatchObject({
      code: "E_EXEC_FAILED",
      message: `weather: GET http://127.0.0.1:${s.port}/slow timed out after 200 ms`,
    });
  });

  test.each([204, 205])("a %d answer under a JSON content type succeeds with no output, transform or not", async (status) => {
    const s = serve(() => new Response(null, { status, headers: { "content-type": "application/json" } }));
    const url = `http://127.0.0.1:${s.port}/items/7`;
    for (const config of [{ method: "DELETE", url }, { method: "DELETE", url, response_transform: "$.id" }]) {
      const out = await run(plan(config));
      expect([out.status, text(out.output)]).toEqual([status, ""]);
    }
  });

  test("invalid JSON under a JSON content type is an error with an excerpt", async () => {
    const s = serve(() => new Response("{not json", { headers: { "content-type": "application/json" } }));
    await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/` }))).rejects.toMatchObject({ code: "E_EXEC_FAILED", message: expect.stringMatching(/is not valid JSON .*: \{not json$/) });
  });

  test("a response larger than the cap is refused, declared or streamed", async () => {
    const big = "x".repeat(5000);
    const declared = serve(() => new Response(big));
    const streamed = serve(() => new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } })));
    for (const s of [declared, streamed]) {
      await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/` }, {}, { outputBytes: 1000 }))).rejects.toMatchObject({ message: expect.stringContaining("is larger than 1000 bytes") });
    }
  });

  test("after a redirect, a body too large or not JSON is reported against the URL that answered", async () => {
    const s = serve((req) => {
      const path = new URL(req.url).pathname;
      if (path === "/old-big") return Response.redirect("/big", 302);
      if (path === "/old-bad") return Response.redirect("/bad", 302);
      if (path === "/big") return new Response("x".repeat(5000));
      return new Response("{not json", { headers: { "content-type": "application/json" } });
    });
    const base = `http://127.0.0.1:${s.port}`;
    await expect(run(plan({ method: "GET", url: `${base}/old-big` }, {}, { outputBytes: 1000 }))).rejects.toMatchObject({ message: `weather: the response from ${base}/big is larger than 1000 bytes` });
    await expect(run(plan({ method: "GET", url: `${base}/old-bad` }))).rejects.toMatchObject({ message: expect.stringContaining(`weather: the response from ${base}/bad is not valid JSON`) });
    // A timeout on the redirect's target names it too.
    const slow = serve(async (req) => (new URL(req.url).pathname === "/old" ? Response.redirect("/slow", 302) : (await Bun.sleep(2000), new Response("late"))));
    await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${slow.port}/old`, retries: 0 }, {}, { timeoutMs: 200 }))).rejects.toMatchObject({ message: `weather: GET http://127.0.0.1:${slow.port}/slow timed out after 200 ms` });
  });

  test("a redirect on the same host is followed", async () => {
    const s = serve((req) => (new URL(req.url).pathname === "/old" ? Response.redirect("/new", 302) : Response.json({ at: new URL(req.url).pathname })));
    const out = await run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/old` }));
    expect(JSON.parse(text(out.output))).toEqual({ at: "/new" });
    expect(out.url).toBe(`http://127.0.0.1:${s.port}/new`);
  });

  test("a redirect to another host is refused unless allowed, and credentials never follow it", async () => {
    const auth: (string | null)[] = [];
    const other = serve((req) => {
      auth.push(req.headers.get("authorization"));
      return Response.json({ reached: true });
    });
    const s = serve(() => Response.redirect(`http://localhost:${other.port}/steal`, 302));
    const config = { method: "GET", url: `http://127.0.0.1:${s.port}/`, headers: { Authorization: "Bearer ${API_TOKEN}" } };
    await expect(run(plan(config))).rejects.toMatchObject({ code: "E_EXEC_FAILED", message: `weather: the redirect from http://127.0.0.1:${s.port} to another host (localhost:${other.port}) is refused` });
    expect(auth).toEqual([]);
    const out = await run(plan({ ...config, allow_redirect_hosts: ["localhost"] }));
    expect(JSON.parse(text(out.output))).toEqual({ reached: true });
    expect(auth).toEqual([null]);
  });

  test("a header carrying a secret's value never follows a redirect to another host; other headers do", async () => {
    const seen: Record<string, string | null>[] = [];
    const other = serve((req) => (seen.push({ key: req.headers.get("x-api-key"), signed: req.headers.get("x-signed"), trace: req.headers.get("x-trace") }), Response.json({ reached: true })));
    const s = serve(() => Response.redirect(`http://localhost:${other.port}/download`, 302));
    const headers = { "X-Api-Key": "${API_TOKEN}", "X-Signed": "v1=${API_TOKEN};t=1", "X-Trace": "abc" };
    const out = await run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/`, headers, allow_redirect_hosts: ["localhost"] }));
    expect(JSON.parse(text(out.output))).toEqual({ reached: true });
    expect(seen).toEqual([{ key: null, signed: null, trace: "abc" }]);
  });

  test("secret values never appear in errors, even when the server echoes them", async () => {
    const s = serve((req) => new Response(`bad token ${req.headers.get("authorization")}`, { status: 401 }));
    const error = await run(plan({ method: "GET", url: `http://127.0.0.1:${s.port}/`, headers: { Authorization: "Bearer ${API_TOKEN}" } })).catch((e) => e);
    expect(error.message).toBe(`weather: HTTP 401 Unauthorized from GET http://127.0.0.1:${s.port}/: bad token Bearer ***`);
    expect(JSON.stringify(error.details)).not.toContain(ENV.API_TOKEN);
  });

  test("a secret sent in a JSON body and echoed back escaped by the server is removed from the error", async () => {
    const s = serve(async (req) => new Response(`rejected ${await req.text()}`, { status: 422 }));
    const p = plan({ method: "POST", url: `http://127.0.0.1:${s.port}/login`, body: { user: "me", password: "${DB_PASSWORD}" } });
    expect(p.http.body).toBe('{"user":"me","password":"pa\\"ss\\\\wörd"}');
    const error = await runHttp(p, { redact: makeRedactor([ENV.DB_PASSWORD]) }).catch((e) => e);
    expect(error.message).toBe(`weather: HTTP 422 Unprocessable Entity from POST http://127.0.0.1:${s.port}/login: rejected {"user":"me","password":"***"}`);
    expect(error.details.bodyExcerpt).toBe('rejected {"user":"me","password":"***"}');
  });

  test("a name that does not resolve before the request is a network error: retried like a refused connection", async () => {
    const sleeps: number[] = [];
    const policy = parseHostPolicy("weather", []);
    const p = plan({ method: "GET", url: "http://no-such-host.invalid/v1", retries: 2 });
    const error = await runHttp(p, { redact: (s) => s, sleep: async (ms) => void sleeps.push(ms), checkUrl: (url) => assertUrlAllowedIo(url, policy) }).catch((e) => e);
    expect(error).toMatchObject({ code: "E_EXEC_FAILED", message: expect.stringMatching(/^weather: cannot resolve no-such-host\.invalid \(E[A-Z_]+\) \(after 3 attempts\)$/), details: { stage: "lookup", attempts: 3 } });
    expect(sleeps).toEqual([200, 400]);
  });

  test("a refused connection is an error naming the URL, after the retries", async () => {
    const s = serve(() => new Response("x"));
    const port = s.port;
    s.stop(true);
    await expect(run(plan({ method: "GET", url: `http://127.0.0.1:${port}/gone`, retries: 1 }))).rejects.toMatchObject({
      code: "E_EXEC_FAILED",
      message: expect.stringMatching(new RegExp(`^weather: GET http://127\\.0\\.0\\.1:${port}/gone failed: .* \\(after 2 attempts\\)$`)),
    });
  });

  test("without kiwi's proxy (--sandbox=off), a connection the environment's HTTP_PROXY refused names that proxy", async () => {
    const s = serve(() => new Response("x"));
    const port = s.port;
    s.stop(true);
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = `http://user:hunter2@127.0.0.1:${port}`;
    try {
      await expect(run(plan({ method: "GET", url: "http://api.example.invalid/v1", retries: 0 }))).rejects.toMatchObject({
        code: "E_EXEC_FAILED",
        message: expect.stringMatching(new RegExp(`^weather: GET http://api\\.example\\.invalid/v1 failed through the proxy http://\\*\\*\\*@127\\.0\\.0\\.1:${port} \\(HTTP_PROXY\\): `)),
        hint: "kiwi's fetch goes through the proxy in HTTP_PROXY for this address: check that it runs and lets api.example.invalid through, or name api.example.invalid in NO_PROXY",
      });
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
  });

  test("without kiwi's proxy, an HTTP error status that came through the environment's HTTP_PROXY says so", async () => {
    const proxy = serve(() => new Response("no way", { status: 403 }));
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.port}`;
    try {
      await expect(run(plan({ method: "GET", url: "http://api.example.invalid/v1", retries: 0 }))).rejects.toMatchObject({
        message: `weather: HTTP 403 Forbidden from GET http://api.example.invalid/v1 through the proxy http://127.0.0.1:${proxy.port} (HTTP_PROXY): no way`,
        hint: "check the credentials the tool reads from the environment; the answer may be the proxy's: check that it lets api.example.invalid through, or name api.example.invalid in NO_PROXY",
      });
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
  });

  test("a POST sends the parameters as its JSON body", async () => {
    let body: unknown;
    const s = serve(async (req) => {
      body = await req.json();
      return Response.json({ created: true }, { status: 201 });
    });
    await run(plan({ method: "POST", url: `http://127.0.0.1:${s.port}/items` }, { name: "x", n: 2 }));
    expect(body).toEqual({ name: "x", n: 2 });
  });
});
