// What a 2026-07-28 listing adds to a pin, in pure terms: the discover result (volatile fields never
// hashed), the credential fingerprint of an HTTP server, and the Skills extension's entries.
import { describe, expect, test } from "bun:test";
import { credentialIdentity, redactUrl } from "../../src/mcp/credential.ts";
import { diffListings } from "../../src/mcp/interface-diff.ts";
import { hashInterface } from "../../src/mcp/interface.ts";
import { parseWireListing } from "../../src/mcp/listing.ts";
import { parsePin, pinFromListing } from "../../src/mcp/pin.ts";
import { negotiationFor } from "../../src/ops/mcp-inspect-io.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";

const tools = [{ name: "add", description: "Adds.", inputSchema: { type: "object" } }];
const discover = (extra: Record<string, unknown>) => ({ supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, ...extra });

describe("the discover component", () => {
  test("ttlMs, cacheScope, resultType and _meta change neither hash", () => {
    const a = parseWireListing(JSON.stringify({ tools, discover: discover({ ttlMs: 0, cacheScope: "private", resultType: "complete" }) }), "a");
    const b = parseWireListing(JSON.stringify({ tools, discover: discover({ ttlMs: 3_600_000, cacheScope: "public", _meta: { "io.modelcontextprotocol/serverInfo": { name: "x", version: "9" } } }) }), "b");
    expect(hashInterface(a)).toEqual(hashInterface(b));
  });

  test("is in the full hash only: the kiji-compatible hash of the same tools is the handshake server's", () => {
    const stateless = parseWireListing(JSON.stringify({ tools, discover: discover({}) }), "a");
    const handshake = parseWireListing(JSON.stringify({ tools }), "b");
    expect(hashInterface(stateless).interface_hash).toBe(hashInterface(handshake).interface_hash);
    expect(hashInterface(stateless).full_hash).not.toBe(hashInterface(handshake).full_hash);
  });

  test("a changed capability is a notice, a new supported revision is info", () => {
    const before = parseWireListing(JSON.stringify({ tools, discover: discover({}) }), "a");
    const after = parseWireListing(JSON.stringify({ tools, discover: { supportedVersions: ["2026-07-28", "2026-12-01"], capabilities: { tools: {}, prompts: {} } } }), "b");
    const diff = diffListings(before, after);
    expect(diff.changes).toHaveLength(1);
    expect(diff.changes[0]!.fields.map((f) => [f.field, f.severity])).toEqual([
      ["discover.capabilities", "notice"],
      ["discover.supportedVersions", "info"],
    ]);
  });

  test("a pin keeps it, and a hand-edited one is rejected", () => {
    const pin = pinFromListing(parseWireListing(JSON.stringify({ serverInfo: { name: "m" }, protocolVersion: "2026-07-28", tools, discover: discover({}) }), "a"));
    expect(pin.protocol_version).toBe("2026-07-28");
    const stored = parseJsonLossless(JSON.stringify(pin), { positions: false }).value;
    expect(parsePin(stored, "m")).toEqual(pin);
    const edited = parseJsonLossless(JSON.stringify({ ...pin, interface: { ...pin.interface, discover: discover({ capabilities: {} }) } }), { positions: false }).value;
    expect(() => parsePin(edited, "m")).toThrow("the stored hashes do not match the stored interface snapshot");
  });
});

describe("credentialIdentity", () => {
  test("is none without a credential header", () => {
    expect(credentialIdentity("https://a.example/mcp", { accept: "application/json" })).toBe("none");
    expect(credentialIdentity("https://a.example/mcp", { authorization: "" })).toBe("none");
  });

  test("tells credentials apart, never contains the secret, and is salted with the origin", () => {
    const one = credentialIdentity("https://a.example/mcp", { Authorization: "Bearer s3cret-one" });
    expect(one).toMatch(/^scrypt:[0-9a-f]{32}$/);
    expect(one).not.toContain("s3cret");
    expect(credentialIdentity("https://a.example/other", { authorization: "Bearer s3cret-one" })).toBe(one);
    expect(credentialIdentity("https://a.example/mcp", { Authorization: "Bearer s3cret-two" })).not.toBe(one);
    expect(credentialIdentity("https://b.example/mcp", { Authorization: "Bearer s3cret-one" })).not.toBe(one);
    expect(credentialIdentity("https://a.example/mcp", { "X-API-Key": "k" })).not.toBe(credentialIdentity("https://a.example/mcp", { "X-API-Key": "l" }));
  });

  test("covers a key in the URL (query parameter or userinfo) as it covers a header", () => {
    const none = credentialIdentity("https://a.example/mcp?region=eu", {});
    expect(none).toBe("none");
    const keyed = credentialIdentity("https://a.example/mcp?api_key=s3cret-one", {});
    expect(keyed).toMatch(/^scrypt:[0-9a-f]{32}$/);
    expect(credentialIdentity("https://a.example/mcp?api_key=s3cret-two", {})).not.toBe(keyed);
    expect(credentialIdentity("https://a.example/mcp?key=one", {})).not.toBe(credentialIdentity("https://a.example/mcp?key=two", {}));
    const user = credentialIdentity("https://bob:pw1@a.example/mcp", {});
    expect(user).toMatch(/^scrypt:/);
    expect(credentialIdentity("https://bob:pw2@a.example/mcp", {})).not.toBe(user);
    // A header-only fingerprint is unchanged by a URL without credentials (existing pins still match).
    const header = credentialIdentity("https://a.example/mcp", { authorization: "Bearer x" });
    expect(credentialIdentity("https://a.example/mcp?region=eu", { authorization: "Bearer x" })).toBe(header);
    expect(credentialIdentity("https://a.example/mcp?token=t", { authorization: "Bearer x" })).not.toBe(header);
  });

  test("redactUrl hides userinfo and credential query values, keeps the rest", () => {
    expect(redactUrl("https://bob:pw@a.example/mcp?api_key=s3cret&region=eu")).toBe("https://***:***@a.example/mcp?api_key=***&region=eu");
    expect(redactUrl("https://a.example/mcp?region=eu")).toBe("https://a.example/mcp?region=eu");
    expect(redactUrl("not a url")).toBe("not a url");
  });
});

describe("negotiationFor", () => {
  test.each([
    [undefined, "auto"],
    [{}, "auto"],
    [{ protocol_version: "2026-07-28" }, "auto"],
    [{ protocol_version: "2025-11-25" }, "handshake"],
    [{ protocol_version: "2024-11-05" }, "handshake"],
  ] as const)("a pin %j is spoken to with %s", (pin, expected) => {
    expect(negotiationFor(pin)).toBe(expected);
  });
});
