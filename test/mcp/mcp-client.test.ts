// The MCP client against REAL servers: the reference servers from npm and SDK-built fixtures over
// stdio, streamable HTTP and legacy SSE; faults end in clear errors and leave no process behind.
import { NoiseLines } from "../../src/mcp/stdio-io.ts";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KiwiError } from "../../src/errors.ts";
import { type NetProxy, startNetProxy } from "../../src/exec/net-proxy-io.ts";
import { parseHostPolicy } from "../../src/exec/net-policy.ts";
import { type McpTarget, PROTOCOL_REVISIONS, withSession } from "../../src/mcp/mcp-client-io.ts";
import { hashInterface } from "../../src/mcp/interface.ts";
import { parseWireListing } from "../../src/mcp/listing.ts";
import type { ListingLimits } from "../../src/mcp/server-limits.ts";
import { liveGroups } from "../../src/mcp/reaper-io.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { EVERYTHING, FILESYSTEM, FIXTURE, MODERN, RAW, eventually, isAlive, marker, processesMatching, startHttpFixture, startModernHttp, stdioTarget } from "./servers.ts";

const temp = mkdtempSync(join(tmpdir(), "kiwi-mcp-client-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const options = (limits: Partial<ListingLimits> = {}) => ({ label: 'MCP server "test"', clientVersion: "0.0.0-test", limits: { requestTimeoutMs: 15_000, ...limits } });
const list = (target: McpTarget, limits?: Partial<ListingLimits>) => withSession(target, options(limits), (s) => s.extractListing());

/** Runs `fn` against a marked server and proves no process with the marker survives. */
async function leavesNoProcess<T>(fn: (mark: string) => Promise<T>): Promise<T> {
  const mark = marker();
  try {
    return await fn(mark);
  } finally {
    expect(await eventually(() => processesMatching(mark).length === 0)).toBe(true);
    expect(liveGroups()).toBe(0);
  }
}

describe("reference servers over stdio", () => {
  test("server-everything: every list kind, serverInfo, and the same hashes on every run", async () => {
    const [a, b] = await leavesNoProcess(async (mark) => [await list(stdioTarget(EVERYTHING, ["stdio", mark])), await list(stdioTarget(EVERYTHING, ["stdio", mark]))]);
    expect(a.serverInfo?.name).toBe("mcp-servers/everything");
    expect(PROTOCOL_REVISIONS).toContain(a.protocolVersion!);
    expect(a.tools.map((t) => t.name)).toContain("echo");
    expect(a.prompts.length).toBeGreaterThan(0);
    expect(a.resources.length).toBeGreaterThan(0);
    expect(a.resourceTemplates.length).toBeGreaterThan(0);
    expect(hashInterface(b)).toEqual(hashInterface(a));
  });

  test("server-filesystem: lists its tools and calls list_directory on a temp dir", async () => {
    writeFileSync(join(temp, "hello.txt"), "hi");
    const result = await leavesNoProcess((mark) =>
      withSession(stdioTarget(FILESYSTEM, [temp, mark]), options(), async (s) => {
        const listing = await s.extractListing();
        expect(listing.tools.map((t) => t.name)).toContain("list_directory");
        expect(listing.prompts).toEqual([]); // not advertised, so never listed
        return s.callTool("list_directory", { path: temp });
      }),
    );
    expect(JSON.stringify(result.content)).toContain("hello.txt");
    expect(result.isError).toBeFalsy();
  });
});

describe("the SDK-built fixture", () => {
  test("gives the same interface over stdio, streamable HTTP and legacy SSE", async () => {
    const stdio = await leavesNoProcess((mark) => list(stdioTarget(FIXTURE, [mark])));
    const hashes = hashInterface(stdio);
    for (const kind of ["http", "sse"] as const) {
      const server = await startHttpFixture(kind);
      try {
        const listing = await list({ kind: "http", url: server.url, headers: {}, transport: kind === "http" ? "streamable-http" : "sse" });
        expect(hashInterface(listing).interface_hash).toBe(hashes.interface_hash);
        expect(hashInterface(listing).full_hash).toBe(hashes.full_hash);
      } finally {
        await server.stop();
      }
    }
    expect(stdio.tools.map((t) => t.name).sort()).toEqual(["add", "echo", "fail"]);
    expect(stdio.instructions).toBe("Use add for sums.");
  });

  test("follows every nextCursor: a paged listing hashes like the unpaged one", async () => {
    const paged = await leavesNoProcess((mark) => list(stdioTarget(FIXTURE, [mark], { FIXTURE_MODE: "paged" })));
    const whole = await list(stdioTarget(FIXTURE));
    expect(paged.tools.length).toBe(3);
    expect(hashInterface(paged).full_hash).toBe(hashInterface(whole).full_hash);
  });

  test("calls a tool over streamable HTTP and returns structuredContent", async () => {
    const server = await startHttpFixture("http");
    try {
      const result = await withSession({ kind: "http", url: server.url, headers: {}, transport: "streamable-http" }, options(), (s) => s.callTool("add", { a: 2, b: 40 }));
      expect(result.structuredContent).toEqual({ sum: 42 });
    } finally {
      await server.stop();
    }
  });

  test("an HTTP server is reached through kiwi's proxy: each request connects to an address the proxy checked itself", async () => {
    const server = await startHttpFixture("http");
    // The names resolve only in the proxy (an injected resolver): fetch could not have looked them up itself.
    const resolve = async (host: string) => (host === "mcp.example.com" ? ["127.0.0.1"] : host === "rebind.example.com" ? ["127.0.0.1"] : []);
    const port = new URL(server.url).port;
    const via = (proxy: NetProxy) => ({ url: proxy.address, refusals: proxy.refusals, failures: proxy.failures });
    const at = (host: string, proxy: NetProxy): McpTarget => ({ kind: "http", url: server.url.replace(`127.0.0.1:${port}`, `${host}:${port}`), headers: {}, transport: "streamable-http", proxy: via(proxy) });
    const declared = await startNetProxy({ loopback: true }, parseHostPolicy("mcp", [{ name: "net.outbound", hosts: ["mcp.example.com"], pointer: "/requires/0" }]), resolve);
    const anyPublic = await startNetProxy({ loopback: true }, parseHostPolicy("mcp", []), resolve);
    try {
      const result = await withSession(at("mcp.example.com", declared), options(), (s) => s.callTool("add", { a: 2, b: 40 }));
      expect(result.structuredContent).toEqual({ sum: 42 });
      // A name the host check took for public, answering loopback to the connection: refused there.
      const refused = (await list(at("rebind.example.com", anyPublic)).catch((e) => e)) as KiwiError;
      expect(refused).toMatchObject({ code: "E_SANDBOX", message: `MCP server "test" may not contact rebind.example.com:${port}: rebind.example.com resolves to 127.0.0.1, a loopback address, refused unless declared` });
    } finally {
      await Promise.all([declared.close(), anyPublic.close(), server.stop()]);
    }
  });

  test("reads a resumable streamable HTTP server, whose SSE streams open with an empty priming event", async () => {
    // An SDK server with an event store (server-everything's streamable HTTP is one) primes every
    // stream with `id: …` and an empty `data:` for clients of 2025-11-25; the event carries no message.
    const server = await startHttpFixture("http", { FIXTURE_EVENT_STORE: "1" });
    try {
      const target: McpTarget = { kind: "http", url: server.url, headers: {}, transport: "streamable-http" };
      const listing = await list(target);
      expect(listing.protocolVersion).toBe("2025-11-25");
      expect(listing.tools.map((t) => t.name).sort()).toEqual(["add", "echo", "fail"]);
      const result = await withSession(target, options(), (s) => s.callTool("add", { a: 2, b: 40 }));
      expect(result.structuredContent).toEqual({ sum: 42 });
    } finally {
      await server.stop();
    }
  });

  test("lists 10,000 tools within the default limits", async () => {
    const listing = await leavesNoProcess((mark) => list(stdioTarget(FIXTURE, [mark], { FIXTURE_MODE: "many-tools" })));
    expect(listing.tools.length).toBe(10_000);
  });

  test("drains a 64 MiB stderr flood and keeps working", async () => {
    const listing = await leavesNoProcess((mark) => list(stdioTarget(FIXTURE, [mark], { FIXTURE_MODE: "stderr-flood" })));
    expect(listing.tools.length).toBe(3);
  });
});

describe("picking a revision", () => {
  test("a legacy stdio server that exits on the server/discover probe is started again and spoken to with initialize", async () => {
    const listing = await leavesNoProcess((mark) => list(stdioTarget(RAW, [mark], { RAW_MODE: "exit-on-probe" })));
    expect(listing.protocolVersion).toBe("2025-11-25");
    expect(listing.discover).toBeUndefined();
    expect(listing.tools.map((t) => t.name)).toEqual(["get_forecast"]);
  });

  test("the v2 fixture speaking only 2026-07-28 gives the same interface over stdio and streamable HTTP", async () => {
    const stdio = await leavesNoProcess((mark) => list(stdioTarget(MODERN, [mark])));
    expect(stdio.protocolVersion).toBe("2026-07-28");
    expect(stdio.discover).toEqual({ supportedVersions: ["2026-07-28"], capabilities: { tools: { listChanged: true }, prompts: { listChanged: true } } });
    const server = await startModernHttp();
    try {
      const http = await list({ kind: "http", url: server.url, headers: {}, transport: "streamable-http" });
      expect(hashInterface(http)).toEqual(hashInterface(stdio));
    } finally {
      await server.stop();
    }
  });

  test("a server pinned under a handshake revision is spoken to with initialize, without a probe", async () => {
    const listing = await leavesNoProcess((mark) =>
      withSession(stdioTarget(RAW, [mark], { RAW_MODE: "banner" }), { ...options(), negotiation: "handshake" }, async (s) => [await s.extractListing(), s.warnings()] as const),
    );
    expect(listing[0].protocolVersion).toBe("2025-11-25");
    expect(listing[1][0]).toContain('"handling initialize", "handling tools/list"');
  });
});

describe("wire text is captured losslessly", () => {
  test("a live default of 3.0 hashes exactly like the int_vs_float_default vector", async () => {
    const vectors = parseJsonLossless(readFileSync(join(import.meta.dir, "..", "fixtures", "vectors", "mcp-interface.json"), "utf8")).value as {
      vectors: { name: string; interface_hash: string }[];
    };
    const expected = vectors.vectors.find((v) => v.name === "int_vs_float_default")!.interface_hash;
    const listing = await leavesNoProcess((mark) => list(stdioTarget(RAW, [mark], { RAW_MODE: "float-default" })));
    expect(hashInterface(listing).interface_hash).toBe(expected);
  });

  test("skips log lines before and between messages (as the SDK clients do) and reports them, capped", async () => {
    const warnings = await leavesNoProcess((mark) =>
      withSession(stdioTarget(RAW, [mark], { RAW_MODE: "banner" }), options(), async (s) => {
        expect((await s.extractListing()).tools.map((t) => t.name)).toEqual(["get_forecast"]);
        return s.warnings();
      }),
    );
    expect(warnings).toEqual([
      // kiwi probes with server/discover first; this server answers it with an error, so it gets initialize.
      'MCP server "test" wrote 4 lines on stdout that are not JSON-RPC, skipped: "Starting raw MCP server...", "handling server/discover", "handling initialize" (and 1 more); MCP stdio servers should log to stderr',
    ]);
  });

  test.each([
    ["a second answer to the same request is not the one hashed: the first, which the SDK settled with, is", "answer-twice"],
    ['an answer whose id is the request\'s as a string ("1" for 1), which the SDK accepts, is captured too', "string-ids"],
    ["an answer whose id is written as a float (1.0 for 1), which JSON.parse reads as 1, is captured too", "float-ids"],
  ])("%s", async (_what, mode) => {
    const listing = await leavesNoProcess((mark) => list(stdioTarget(RAW, [mark], { RAW_MODE: mode })));
    expect(listing.tools.map((t) => t.name)).toEqual(["get_forecast"]);
  });

  test("a tool whose description is null is listed, hashed as its --listing file is, and called", async () => {
    const target = stdioTarget(RAW, [], { RAW_MODE: "null-description" });
    const listing = await list(target);
    expect(listing.tools.map((t) => [t.name, t.description])).toEqual([["echo", null]]);
    const file = parseWireListing(JSON.stringify({ serverInfo: { name: "raw", version: "0.1.0" }, protocolVersion: listing.protocolVersion, capabilities: { tools: {} }, tools: [{ name: "echo", description: null, inputSchema: { type: "object", properties: { text: { type: "string" } } } }] }), "file");
    expect(hashInterface(listing)).toEqual(hashInterface(file));
    const result = await withSession(target, options(), (s) => s.callTool("echo", { text: "hi" }, undefined, listing.tools[0]));
    expect(result.content).toEqual([{ type: "text", text: "hi" }]);
  });

  test("speaks the older 2024-11-05 revision when the server answers with it", async () => {
    const listing = await list(stdioTarget(RAW, [], { RAW_MODE: "old-protocol" }));
    expect(listing.protocolVersion).toBe("2024-11-05");
  });
});

describe("faults are bounded, clear, and leave no process", () => {
  const STATE = join(temp, "pid");
  test.each([
    ["a server that never answers initialize", RAW, { RAW_MODE: "silent" }, {}, /did not answer initialize within 1 s/],
    ["a line that opens like JSON but is not JSON", RAW, { RAW_MODE: "garbage" }, {}, /cannot parse as JSON/],
    ["JSON that is not JSON-RPC", RAW, { RAW_MODE: "not-jsonrpc" }, {}, /not valid JSON-RPC 2.0/],
    ["a result the MCP schema refuses, named by its pointer on one line", RAW, { RAW_MODE: "no-input-schema" }, {}, /sent an invalid tools\/list result: \/tools\/0\/inputSchema: Invalid input: expected object, received undefined \(and 1 more problem\)$/],
    ["an unknown protocol revision", RAW, { RAW_MODE: "bad-protocol" }, {}, /protocol version is not supported: 1999-01-01/],
    ["a server that closes its stdout and lives on (no waiting out the timeout)", RAW, { RAW_MODE: "close-stdout" }, {}, /closed its stdout but kept running, so it can no longer answer/],
    ["a cursor loop", FIXTURE, { FIXTURE_MODE: "cursor-loop" }, {}, /cursor "same-cursor" twice: a cursor loop/],
    ["a crash mid-listing", FIXTURE, { FIXTURE_MODE: "crash-mid-listing" }, {}, /exited with code 3 before the session ended \(after kiwi sent tools\/list\); its stderr ends with:\n {4}fixture: crashing on purpose/],
    ["a 50 MB description", FIXTURE, { FIXTURE_MODE: "huge-description" }, {}, /sent a message larger than 16 MiB/],
    ["JSON nested 600 levels deep", FIXTURE, { FIXTURE_MODE: "deep-json" }, {}, /nesting deeper than 256 levels/],
    ["more tools than the item limit", FIXTURE, { FIXTURE_MODE: "many-tools", FIXTURE_COUNT: "600" }, { maxItems: 500 }, /lists more than 500 tools/],
    ["a server whose grandchild would outlive it", RAW, { RAW_MODE: "spawn-child", RAW_PID_FILE: STATE }, {}, /did not answer initialize within 1 s/],
  ] as const)("%s", async (_what, script, env, limits, message) => {
    // Only a fault that IS a timeout gets a short one; every other fault must show itself before a
    // timeout a loaded machine could hit first (a node server can take seconds to start there).
    const expectsTimeout = /did not answer/.test(message.source);
    const error = await leavesNoProcess((mark) => list(stdioTarget(script, [mark], env), { requestTimeoutMs: expectsTimeout ? 1_000 : 15_000, ...limits }).then(() => undefined, (e) => e));
    expect(error).toBeInstanceOf(KiwiError);
    expect((error as KiwiError).code).toBe("E_MCP");
    expect((error as KiwiError).message).toMatch(message);
    expect((error as KiwiError).hint).toBeTruthy();
    if ((env as Record<string, string>).RAW_MODE === "spawn-child") expect(await eventually(() => !isAlive(Number(readFileSync(STATE, "utf8"))))).toBe(true);
  });

  test("a command that does not exist is E_EXEC_FAILED naming it", async () => {
    const target = { kind: "stdio" as const, argv: ["/nonexistent/kiwi-mcp-server"], cwd: temp, env: {} };
    const error = (await list(target).catch((e) => e)) as KiwiError;
    expect(error.code).toBe("E_EXEC_FAILED");
    expect(error.message).toContain("could not start");
    expect(liveGroups()).toBe(0);
  });

  test("an HTTP server that is not there is E_MCP naming the URL", async () => {
    const error = (await list({ kind: "http", url: "http://127.0.0.1:9/mcp", headers: {}, transport: "streamable-http" }).catch((e) => e)) as KiwiError;
    expect(error.code).toBe("E_MCP");
    expect(error.message).toContain("http://127.0.0.1:9/mcp");
  });

  test("without kiwi's proxy, an HTTP server reached through HTTP_PROXY that refused names the proxy, not the server", async () => {
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = "http://127.0.0.1:9";
    try {
      const error = (await list({ kind: "http", url: "http://mcp.example.invalid/mcp", headers: {}, transport: "streamable-http" }).catch((e) => e)) as KiwiError;
      expect(error.code).toBe("E_MCP");
      expect(error.message).toContain("could not be reached at http://mcp.example.invalid/mcp through the proxy http://127.0.0.1:9 (HTTP_PROXY)");
      expect(error.hint).toContain("NO_PROXY");
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
  });
});

describe("an HTTP server that refuses a request with a status", () => {
  /** A streamable HTTP server on 127.0.0.1 port 0 that answers `method` with `status` and JSON-RPC otherwise. */
  function refusing(method: string, status: number, text = "go away") {
    return Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        if (req.method !== "POST") return new Response(null, { status: 405 }); // no standalone SSE stream
        const msg = (await req.json()) as { id?: number; method: string; params?: { protocolVersion?: string } };
        if (msg.method === method && status === 200) return Response.json({ jsonrpc: "2.0", id: msg.id, error: { code: -32000, message: text } });
        if (msg.method === method) return new Response(text, { status, headers: { "content-type": "text/plain" } });
        if (msg.id === undefined) return new Response(null, { status: 202 });
        const result =
          msg.method === "initialize"
            ? { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "refusing", version: "1.0.0" } }
            : msg.method === "tools/list"
              ? { tools: [{ name: "a", inputSchema: { type: "object" } }] }
              : undefined;
        const body = result ? { jsonrpc: "2.0", id: msg.id, result } : { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "method not found" } };
        return Response.json(body);
      },
    });
  }

  test.each([
    ["initialize", 401, /answered initialize with HTTP 401: go away/, /check config\.headers/],
    ["initialize", 403, /answered initialize with HTTP 403: go away/, /check config\.headers/],
    ["initialize", 404, /answered initialize with HTTP 404: go away/, /check config\.url/],
    ["initialize", 500, /answered initialize with HTTP 500: go away/, /server failed handling the request/],
    ["tools/list", 503, /answered tools\/list with HTTP 503: go away/, /server failed handling the request/],
    ["tools/list", 404, /answered tools\/list with HTTP 404: go away/, /no longer knows this session/],
  ] as const)("%s answered with HTTP %d names the status and a fix for an HTTP server, not its command", async (method, status, message, hint) => {
    const server = refusing(method, status);
    try {
      const error = (await list({ kind: "http", url: `http://127.0.0.1:${server.port}/mcp`, headers: {}, transport: "streamable-http" }).catch((e) => e)) as KiwiError;
      expect(error).toBeInstanceOf(KiwiError);
      expect(error.code).toBe("E_MCP");
      expect(error.message).toMatch(message);
      expect(error.hint).toMatch(hint);
      expect(error.hint).not.toContain("command");
      expect(error.details).toMatchObject({ method, status });
    } finally {
      server.stop(true);
    }
  });

  test.each([
    ["a key query parameter", "/mcp?api_key=secret", {}, "check config.url (its userinfo or key query parameter) in the server's manifest and the environment variables it expands"],
    ["userinfo", "/mcp", {}, "check config.url (its userinfo or key query parameter) in the server's manifest and the environment variables it expands"],
    ["an Authorization header", "/mcp", { Authorization: "Bearer secret" }, "check config.headers in the server's manifest and the environment variables it expands"],
    ["a header and a URL key", "/mcp?key=secret", { Authorization: "Bearer secret" }, "check config.headers and config.url (its userinfo or key query parameter) in the server's manifest and the environment variables they expand"],
  ] as const)("a 401 names where the refused credential is: %s", async (what, path, headers, hint) => {
    const server = refusing("initialize", 401);
    try {
      const url = what === "userinfo" ? `http://user:secret@127.0.0.1:${server.port}${path}` : `http://127.0.0.1:${server.port}${path}`;
      const error = (await list({ kind: "http", url, headers, transport: "streamable-http" }).catch((e) => e)) as KiwiError;
      expect(error).toBeInstanceOf(KiwiError);
      expect(error.hint).toBe(`the server refused the credentials kiwi sent: ${hint}`);
    } finally {
      server.stop(true);
    }
  });

  test.each([
    ["an HTTP error page", 500],
    ["a JSON-RPC error message", 200],
  ] as const)("the server's words in %s are shown with escapes made visible, not sent to the terminal", async (_what, status) => {
    const server = refusing("tools/list", status, "boom\u001b[2J\u200B gone");
    try {
      const error = (await list({ kind: "http", url: `http://127.0.0.1:${server.port}/mcp`, headers: {}, transport: "streamable-http" }).catch((e) => e)) as KiwiError;
      expect(error.message).toEndWith(": boom<U+001B>[2J<U+200B ZWSP> gone");
    } finally {
      server.stop(true);
    }
  });
});

describe("an HTTP server's Content-Type, read as the SDK reads it", () => {
  /** A streamable HTTP server on 127.0.0.1 port 0 answering every request with `contentType`, as JSON or as one SSE event. */
  function serving(contentType: string, sse: boolean) {
    return Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        if (req.method !== "POST") return new Response(null, { status: 405 });
        const msg = (await req.json()) as { id?: number; method: string; params?: { protocolVersion?: string } };
        if (msg.id === undefined) return new Response(null, { status: 202 });
        const result =
          msg.method === "initialize"
            ? { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "typed", version: "1.0.0" } }
            : msg.method === "tools/list"
              ? { tools: [{ name: "a", inputSchema: { type: "object", properties: { n: { type: "number", default: 3.0 } } } }] }
              : undefined;
        const body = JSON.stringify(result ? { jsonrpc: "2.0", id: msg.id, result } : { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "method not found" } });
        return new Response(sse ? `event: message\ndata: ${body}\n\n` : body, { headers: { "content-type": contentType } });
      },
    });
  }

  test.each([
    ["Application/JSON", false],
    ["APPLICATION/JSON; charset=UTF-8", false],
    ["Text/Event-Stream", true],
  ] as const)("%s is captured (media types are case-insensitive), not an internal error", async (contentType, sse) => {
    const server = serving(contentType, sse);
    try {
      const listing = await list({ kind: "http", url: `http://127.0.0.1:${server.port}/mcp`, headers: {}, transport: "streamable-http" });
      expect(listing.tools.map((t) => t.name)).toEqual(["a"]);
    } finally {
      server.stop(true);
    }
  });

  test("an error page of any other type is bounded like a message", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("x".repeat(64 * 1024), { status: 500, headers: { "content-type": "text/html" } }) });
    try {
      const target = { kind: "http" as const, url: `http://127.0.0.1:${server.port}/mcp`, headers: {}, transport: "streamable-http" as const };
      const error = (await withSession(target, { ...options(), transportLimits: { maxMessageBytes: 1024 } }, (s) => s.extractListing()).catch((e) => e)) as KiwiError;
      expect(error.code).toBe("E_MCP");
      expect(error.message).toContain("sent a message larger than 1 KiB");
    } finally {
      server.stop(true);
    }
  });
});

describe("NoiseLines", () => {
  test("keeps the first three lines, each cut at 160 characters, and counts the rest", () => {
    const noise = new NoiseLines();
    noise.add("x".repeat(200));
    for (const line of ["b", "c", "d", "e"]) noise.add(line);
    expect(noise.warning('MCP server "s"')).toBe(`MCP server "s" wrote 5 lines on stdout that are not JSON-RPC, skipped: "${"x".repeat(160)}…", "b", "c" (and 2 more); MCP stdio servers should log to stderr`);
    expect(new NoiseLines().warning("x")).toBeUndefined();
  });

  test("quotes a banner with its invisible and bidi characters made visible", () => {
    const noise = new NoiseLines();
    noise.add("Starting\u200B \u202Eserver");
    expect(noise.warning('MCP server "s"')).toContain('skipped: "Starting<U+200B ZWSP> <U+202E RLO>server"');
  });
});
