import { describe, expect, test } from "bun:test";
import { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, compileUntrustedSchema, renderSchemaError } from "../../src/validate/json-schema.ts";

function compiled(schema: unknown) {
  const result = compileUntrustedSchema(schema);
  if (!result.ok) throw new Error(result.problem.message);
  return result;
}

describe("compileUntrustedSchema", () => {
  test("validates with every error reported, with instance paths", () => {
    const schema = compiled({ type: "object", required: ["a", "b"], properties: { a: { type: "string", minLength: 2 } } });
    const errors = schema.validate({ a: "x" });
    expect(errors.map((e) => [e.instancePath, e.keyword])).toEqual([
      ["", "required"],
      ["/a", "minLength"],
    ]);
    expect(renderSchemaError(errors[0]!)).toBe('the document is missing required property "b"');
  });

  test.each([
    ["uuid", "0b9d7a63-4f4b-4a4e-9d4c-7a3c2a1b0c9d", "not-a-uuid"],
    ["email", "a@example.com", "nope"],
    ["uri", "https://example.com/x", "not a uri"],
    ["date-time", "2024-01-02T03:04:05Z", "yesterday"],
  ])("checks format %s", (format, good, bad) => {
    const schema = compiled({ type: "string", format });
    expect(schema.validate(good)).toEqual([]);
    expect(schema.validate(bad)[0]?.keyword).toBe("format");
  });

  test("uses draft-07 when $schema says so, 2020-12 otherwise", () => {
    const d7 = compiled({ $schema: "http://json-schema.org/draft-07/schema#", definitions: { n: { type: "integer" } }, items: { $ref: "#/definitions/n" } });
    expect(d7.draft).toBe("draft-07");
    expect(d7.validate([1, "x"])[0]?.instancePath).toBe("/1");
    const d2020 = compiled({ prefixItems: [{ type: "string" }], items: false });
    expect(d2020.draft).toBe("2020-12");
    expect(d2020.validate(["a", "b"]).length).toBe(1);
  });

  test.each([
    ["a remote $ref", { $ref: "https://evil.example/schema.json" }, "remote-ref", "/$ref"],
    ["a relative $ref", { properties: { a: { $ref: "other.json" } } }, "remote-ref", "/properties/a/$ref"],
    ["an unresolvable local $ref", { $ref: "#/$defs/missing" }, "remote-ref", ""],
    ["an unsafe pattern", { properties: { x: { pattern: "^(a|a)*$" } } }, "unsafe-pattern", "/properties/x/pattern"],
    ["an unsafe patternProperties key", { patternProperties: { "(a+)+": {} } }, "unsafe-pattern", "/patternProperties/(a+)+"],
    ["an unsupported draft", { $schema: "http://json-schema.org/draft-04/schema#" }, "unsupported-draft", "/$schema"],
    ["an invalid keyword value", { type: "nope" }, "invalid", "/type"],
    ["a mistyped nested keyword", { properties: { a: { minLength: "two" } } }, "invalid", "/properties/a/minLength"],
    ["a non-schema", 42, "not-a-schema", ""],
  ])("refuses %s", (_name, schema, kind, pointer) => {
    const result = compileUntrustedSchema(schema, { subject: "child_schemas of x" });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problem.kind as string).toBe(kind);
      expect(result.problem.pointer).toBe(pointer);
      expect(result.problem.message.startsWith("child_schemas of x: ")).toBe(true);
    }
  });

  test("bounds depth and size before compiling", () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < MAX_SCHEMA_DEPTH + 5; i++) {
      const next = {};
      deep.items = next;
      deep = next;
    }
    const tooDeep = compileUntrustedSchema(root);
    expect(!tooDeep.ok && tooDeep.problem.kind).toBe("too-deep");
    const huge = { enum: Array.from({ length: MAX_SCHEMA_NODES + 1 }, (_, i) => i) };
    const tooLarge = compileUntrustedSchema(huge);
    expect(!tooLarge.ok && tooLarge.problem.kind).toBe("too-large");
  });

  test("treats $ref and pattern inside const/enum/default as data", () => {
    expect(compileUntrustedSchema({ const: { $ref: "https://x" }, default: { pattern: "(a+)+" } }).ok).toBe(true);
  });

  test("schemas sharing an $id do not collide", () => {
    const a = compiled({ $id: "kiwi:test/1", type: "string" });
    const b = compiled({ $id: "kiwi:test/1", type: "number" });
    expect(a.validate("s")).toEqual([]);
    expect(b.validate("s")[0]?.keyword).toBe("type");
  });

  test("caches by canonical text, whatever the key order", () => {
    expect(compileUntrustedSchema({ type: "string", minLength: 1 })).toBe(compileUntrustedSchema({ minLength: 1, type: "string" }));
  });
});
