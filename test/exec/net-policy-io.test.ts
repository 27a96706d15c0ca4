// The lookups behind the host policy: Bun.dns.lookup stands in for node:dns/promises, so its answers
// and its error codes must be the ones node:dns gives (kiwi's messages show the code).
import { expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { lookupAll, resolveHostAddresses } from "../../src/exec/net-policy-io.ts";

test("lookupAll answers what node:dns/promises' lookup(all, verbatim) answers, in the same order", async () => {
  const node = (await lookup("localhost", { all: true, verbatim: true })).map((a) => a.address);
  expect(await lookupAll("localhost")).toEqual(node);
  expect(node).toContain("127.0.0.1");
});

test("a name that does not resolve fails with node's error code (no DNS_ prefix)", async () => {
  const failure = (p: Promise<unknown>) => p.then(() => "resolved", (e: NodeJS.ErrnoException) => e.code);
  const ours = await failure(lookupAll("no-such-host.invalid"));
  expect(ours).toMatch(/^E[A-Z_]+$/);
  expect(ours).toBe(await failure(lookup("no-such-host.invalid", { all: true, verbatim: true })));
});

test("IP literals (bracketed or not) are not looked up", async () => {
  expect(await resolveHostAddresses("[::1]")).toEqual([]);
  expect(await resolveHostAddresses("10.0.0.1")).toEqual([]);
});
