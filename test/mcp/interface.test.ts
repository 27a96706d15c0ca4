// The interface hash against the shared vectors, from the wire listing to the hash, byte for byte.
// test/fixtures/vectors/mcp-interface.json is a verbatim copy of shared/vectors/mcp-interface.json
// (the normative vectors that go with shared/specs/mcp-interface.md); a test keeps the two equal.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { renderCanonicalJson } from "../../src/integrity/canonical.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { Float } from "../../src/integrity/value.ts";
import { fullComponents, hashComponents, hashInterface, interfaceComponents, normalizeUri, requiredFlag } from "../../src/mcp/interface.ts";
import { checkWireListing, parseWireListing, serverName } from "../../src/mcp/listing.ts";
import { needs } from "../helpers/needs.ts";
import type { KiwiError } from "../../src/errors.ts";

const VECTORS_FILE = join(import.meta.dir, "..", "fixtures", "vectors", "mcp-interface.json");
const SHARED_FILE = join(import.meta.dir, "..", "..", "..", "shared", "vectors", "mcp-interface.json");
const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

type Vector = { [key: string]: CanonicalValue };
const doc = parseJsonLossless(readFileSync(VECTORS_FILE, "utf8")).value as { vectors: Vector[] };
const rows = doc.vectors.map((v) => [v.name as string, v] as const);

describe("interface hash vectors", () => {
  test.skipIf(!needs(existsSync(SHARED_FILE), "../shared is not beside the repository"))("the fixture copy equals shared/vectors/mcp-interface.json", () => {
    expect(readFileSync(VECTORS_FILE, "utf8")).toBe(readFileSync(SHARED_FILE, "utf8"));
  });

  test.each(rows)("%s: components, canonical texts, digests and hash match", (_name, vector) => {
    const listing = checkWireListing(vector.listing!, "vector");
    const components = interfaceComponents(listing);
    expect(components.map(renderCanonicalJson)).toEqual((vector.components as CanonicalValue[]).map(renderCanonicalJson));
    const hashed = hashComponents(components);
    expect(hashed.components.map((c) => c.canonical)).toEqual(vector.component_canonical_json as string[]);
    expect(hashed.components.map((c) => c.sha256)).toEqual(vector.component_hashes as string[]);
    expect(hashed.hash).toBe(vector.interface_hash as string);
    expect(hashInterface(listing).interface_hash).toBe(vector.interface_hash as string);
  });

  test("the vector set covers the empty interface, ordering, unicode, 3 vs 3.0, prompts and instructions", () => {
    expect(rows.length).toBeGreaterThanOrEqual(8);
    expect(rows.find(([n]) => n === "empty_interface")![1].interface_hash).toBe(EMPTY);
  });
});

describe("interface components", () => {
  test("3 and 3.0 in a schema give different hashes when parsed from text", () => {
    const a = parseWireListing('{"tools":[{"name":"t","inputSchema":{"default":3}}]}', "a.json");
    const b = parseWireListing('{"tools":[{"name":"t","inputSchema":{"default":3.0}}]}', "b.json");
    expect(hashInterface(a).interface_hash).not.toBe(hashInterface(b).interface_hash);
    expect(hashInterface(a).full_hash).not.toBe(hashInterface(b).full_hash);
  });

  test.each([
    ["https://Example.COM", "https://example.com/"],
    ["HTTP://example.com:80/a/../b", "http://example.com/b"],
    ["file:///tmp/x y", "file:///tmp/x%20y"],
    ["test://static/resource/1", "test://static/resource/1"],
    ["not a uri", "not a uri"],
  ])("normalises the resource uri %s to %s", (uri, href) => {
    expect(normalizeUri(uri)).toBe(href);
  });

  test("a resource becomes uri, name, description and mime_type with defaults", () => {
    const listing = parseWireListing(
      '{"resources":[{"uri":"https://Example.COM","name":"home","title":"ignored","_meta":{"x":1}},{"uri":"file:///a","name":"a","description":"d","mimeType":"text/plain"}]}',
      "r.json",
    );
    expect(interfaceComponents(listing).map(renderCanonicalJson)).toEqual([
      '{"description":"","mime_type":"","name":"home","type":"resource","uri":"https://example.com/"}',
      '{"description":"d","mime_type":"text/plain","name":"a","type":"resource","uri":"file:///a"}',
    ]);
  });

  test("a tool keeps output_schema only when present and non-empty, and an empty input schema becomes {}", () => {
    const listing = parseWireListing(
      '{"tools":[{"name":"a","description":null,"inputSchema":{},"outputSchema":{}},{"name":"b","outputSchema":{"type":"object"}}]}',
      "t.json",
    );
    expect(interfaceComponents(listing).map(renderCanonicalJson)).toEqual([
      '{"description":"","input_schema":{},"name":"a","type":"tool"}',
      '{"description":"","input_schema":{},"name":"b","output_schema":{"type":"object"},"type":"tool"}',
    ]);
  });

  test("empty instructions add no component", () => {
    expect(hashInterface(parseWireListing('{"instructions":""}', "i.json")).interface_hash).toBe(EMPTY);
    expect(hashInterface(parseWireListing('{"instructions":""}', "i.json")).full_hash).toBe(EMPTY);
  });
});

describe("full hash", () => {
  const base = { name: "delete_file", description: "Deletes a file.", inputSchema: { type: "object" }, annotations: { destructiveHint: true } };
  const hashOf = (tool: object, extra: object = {}) =>
    hashInterface(parseWireListing(JSON.stringify({ tools: [tool], ...extra }), "l.json"));

  test.each([
    ["a flipped destructiveHint", { ...base, annotations: { destructiveHint: false } }],
    ["a flipped readOnlyHint", { ...base, annotations: { destructiveHint: true, readOnlyHint: true } }],
    ["a new title", { ...base, title: "Delete a file" }],
    ["new icons", { ...base, icons: [{ src: "https://x.example/i.png" }] }],
  ])("catches %s that the interface hash misses", (_what, changed) => {
    const before = hashOf(base);
    const after = hashOf(changed);
    expect(after.interface_hash).toBe(before.interface_hash);
    expect(after.full_hash).not.toBe(before.full_hash);
  });

  test("catches a changed resource template that the interface hash misses", () => {
    const a = hashOf(base, { resourceTemplates: [{ uriTemplate: "file:///{path}", name: "file" }] });
    const b = hashOf(base, { resourceTemplates: [{ uriTemplate: "file:///{path}", name: "file", description: "read any file" }] });
    expect(b.interface_hash).toBe(a.interface_hash);
    expect(b.full_hash).not.toBe(a.full_hash);
  });

  test("ignores _meta and listing order", () => {
    const a = hashInterface(parseWireListing(JSON.stringify({ tools: [base, { name: "x" }] }), "a"));
    const b = hashInterface(parseWireListing(JSON.stringify({ tools: [{ name: "x", _meta: { t: 1 } }, { ...base, _meta: { n: 2 } }] }), "b"));
    expect(b.full_hash).toBe(a.full_hash);
    expect(b.interface_hash).toBe(a.interface_hash);
  });

  test("nests each wire object under its kind so a wire field named type cannot collide", () => {
    const listing = parseWireListing('{"tools":[{"name":"t","type":"prompt"}],"resourceTemplates":[{"uriTemplate":"a://{x}","name":"a"}]}', "c");
    expect(fullComponents(listing).map(renderCanonicalJson)).toEqual([
      '{"tool":{"name":"t","type":"prompt"},"type":"tool"}',
      '{"resource_template":{"name":"a","uriTemplate":"a://{x}"},"type":"resource_template"}',
    ]);
  });
});

describe("wire listing files", () => {
  test.each([
    ["[]", "the listing must be a JSON object"],
    ['{"tools":{}}', '"tools" must be an array'],
    ['{"tools":[1]}', "each tool must be an object"],
    ['{"tools":[{"description":"x"}]}', 'the tool has no string "name"'],
    ['{"resources":[{"name":"x"}]}', 'the resource has no string "uri"'],
    ['{"instructions":5}', '"instructions" must be a string'],
    ['{"serverInfo":{"name":5}}', 'listing.json at /serverInfo/name: "serverInfo.name" must be a string'],
    ['{"serverInfo":{"name":"w","version":[1,2]}}', 'listing.json at /serverInfo/version: "serverInfo.version" must be a string'],
    ['{"tools":[', "is not valid JSON"],
    ['{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}', 'at /jsonrpc: unknown key "jsonrpc" in a wire listing'],
    ['{"tools":[],"nextCursor":"p2"}', 'at /nextCursor: unknown key "nextCursor" in a wire listing'],
    ['{"tool":[{"name":"a"}]}', 'at /tool: unknown key "tool" in a wire listing'],
  ])("rejects %s with a message naming the problem", (text, message) => {
    expect(() => parseWireListing(text, "listing.json")).toThrow(message);
  });

  test("a serverInfo without a name or version (absent or null) is read as unnamed, not refused", () => {
    for (const text of ['{"serverInfo":{}}', '{"serverInfo":{"name":null,"version":null}}']) {
      expect(serverName(parseWireListing(text, "listing.json"))).toBeUndefined();
    }
    expect(serverName(parseWireListing('{"serverInfo":{"name":"weather"}}', "listing.json"))).toBe("weather");
  });

  test("says what to do with a saved JSON-RPC response or one page of a list", () => {
    const hintOf = (text: string) => {
      try {
        parseWireListing(text, "listing.json");
      } catch (error) {
        return (error as KiwiError).hint;
      }
    };
    expect(hintOf('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}')).toStartWith("this is a JSON-RPC message: save its result's keys");
    expect(hintOf('{"tools":[],"nextCursor":"p2"}')).toStartWith("this is one page of a paginated list");
    expect(parseWireListing('{"_meta":{"x":1},"tools":[]}', "listing.json").tools).toEqual([]);
  });
});

describe("requiredFlag (pydantic's lax bool, as the reference reads prompt arguments)", () => {
  test.each([
    [true, true], [false, false], [null, false], [undefined, false],
    [1, true], [0, false], [new Float(1), true], [new Float(0), false], [1n, true],
    ["true", true], ["True", true], ["YES", true], ["on", true], ["t", true], ["y", true], ["1", true],
    ["false", false], ["Off", false], ["no", false], ["f", false], ["n", false], ["0", false],
  ] as [CanonicalValue | undefined, boolean][])("%p -> %p", (value, expected) => {
    expect(requiredFlag(value, "p", "a")).toBe(expected);
  });

  test.each([["maybe"], [2], [0.5], [" true"], [[]], [{}]] as [CanonicalValue][])("refuses %p", (value) => {
    expect(() => requiredFlag(value, "p", "a")).toThrow(expect.objectContaining({ code: "E_MCP" }));
  });
});
