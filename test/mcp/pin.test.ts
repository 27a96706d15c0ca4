// Pins: built from listings, stored as canonical snapshots, re-verified when read back.
import { describe, expect, test } from "bun:test";
import { hashInterface } from "../../src/mcp/interface.ts";
import { parseWireListing } from "../../src/mcp/listing.ts";
import { listingFromPin, parsePin, pinFromListing, pinMatches } from "../../src/mcp/pin.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { renderCanonicalJson } from "../../src/integrity/canonical.ts";

const text = JSON.stringify({
  serverInfo: { name: "weather", version: "1.2.0" },
  protocolVersion: "2025-06-18",
  instructions: "Use metric units.",
  tools: [
    { name: "zeta", description: "z", _meta: { x: 1 } },
    { name: "alpha", description: "a", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
  ],
  resources: [{ uri: "file:///b", name: "b" }, { uri: "file:///a", name: "a" }],
});

describe("pins", () => {
  test("record the name, version, protocol, both hashes and a sorted snapshot without _meta", () => {
    const listing = parseWireListing(text, "l.json");
    const pin = pinFromListing(listing);
    const hashes = hashInterface(listing);
    expect(Object.keys(pin)).toEqual(["name", "version", "protocol_version", "interface_hash", "full_hash", "interface"]);
    expect(pin.name).toBe("weather");
    expect(pin.interface_hash).toBe(`sha256:${hashes.interface_hash}`);
    expect(pin.full_hash).toBe(`sha256:${hashes.full_hash}`);
    expect(renderCanonicalJson(pin.interface)).toBe(
      '{"instructions":"Use metric units.","resources":[{"name":"a","uri":"file:///a"},{"name":"b","uri":"file:///b"}],"tools":[{"annotations":{"readOnlyHint":true},"description":"a","inputSchema":{"type":"object"},"name":"alpha"},{"description":"z","name":"zeta"}]}',
    );
  });

  test("round-trip through lockfile JSON text with both hashes re-derived", () => {
    const pin = pinFromListing(parseWireListing('{"serverInfo":{"name":"n"},"tools":[{"name":"t","inputSchema":{"default":3.0}}]}', "l"));
    const reread = parsePin(parseJsonLossless(renderCanonicalJson(pin as never)).value, "weather_mcp");
    expect(reread).toEqual(pin);
    expect(pinMatches(pin, reread)).toBe(true);
    expect(hashInterface(listingFromPin(reread, "x")).full_hash).toBe(pin.full_hash.slice(7));
  });

  test.each([
    ["a snapshot edited by hand", (p: Record<string, unknown>) => ((p.interface as { tools: { description: string }[] }).tools[0]!.description = "evil"), "do not match the stored interface snapshot"],
    ["a missing name", (p: Record<string, unknown>) => delete p.name, 'has no string "name"'],
    ["a missing snapshot", (p: Record<string, unknown>) => delete p.interface, 'has no "interface" snapshot'],
  ])("reject %s", (_what, edit, message) => {
    const pin = JSON.parse(JSON.stringify(pinFromListing(parseWireListing(text, "l"))));
    edit(pin);
    expect(() => parsePin(parseJsonLossless(JSON.stringify(pin)).value, "weather_mcp")).toThrow(message);
  });

  test("a renamed server with an identical interface does not match its pin", () => {
    const pin = pinFromListing(parseWireListing(text, "l"));
    const renamed = pinFromListing(parseWireListing(text.replace('"weather"', '"weather2"'), "l"));
    expect(renamed.full_hash).toBe(pin.full_hash);
    expect(pinMatches(pin, renamed)).toBe(false);
  });
});
