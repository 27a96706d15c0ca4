// The bounds a server's session gets: its own (config.timeout, config.startup_timeout) and, for the
// session that ends in kiwi exec's tools/call, the call's own timeout on top of them.
import { describe, expect, test } from "bun:test";
import { callLimitsFor, limitsFor } from "../../src/mcp/target.ts";

const server = (timeoutMs?: number, startup?: number) => ({ limits: timeoutMs === undefined ? {} : { timeoutMs }, config: startup === undefined ? {} : { startup_timeout: startup } });

describe("callLimitsFor", () => {
  test.each([
    ["a server with kiwi's defaults, a call of 300 s", server(), 300_000, { sessionTimeoutMs: 120_000 + 300_000 }],
    ["a server with config.timeout 60 s, a call of 200 s", server(60_000), 200_000, { requestTimeoutMs: 60_000, sessionTimeoutMs: 240_000 + 200_000 }],
    ["a call without a timeout of its own keeps the server's bounds", server(60_000), undefined, { requestTimeoutMs: 60_000, sessionTimeoutMs: 240_000 }],
    ["and so does a server with kiwi's defaults", server(), undefined, {}],
  ] as const)("%s", (_, srv, call, expected) => {
    expect(callLimitsFor(srv, call)).toEqual(expected);
  });

  test("the call's limit is added to the whole session, never taken from it", () => {
    const base = limitsFor(server(10_000, 20));
    expect(callLimitsFor(server(10_000, 20), 150_000)).toEqual({ ...base, sessionTimeoutMs: base.sessionTimeoutMs! + 150_000 });
  });
});
