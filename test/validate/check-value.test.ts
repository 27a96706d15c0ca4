// The direct parameter validator must give ajv's verdicts on every schema validate/parameters.ts
// builds: same errors (pointer and keyword) for the same values.
import { describe, expect, test } from "bun:test";
import { checkValue, compileParamSchema } from "../../src/validate/check-value.ts";
import type { SchemaError } from "../../src/validate/check-value.ts";
import { compileLockedSchema } from "../../src/exec/schema.ts";
import { buildParametersSchema } from "../../src/validate/parameters.ts";

const tool = (parameters: unknown[]) => ({ id: "t", manifestFile: "t.yaml", parameters, pointers: { parameters: "/parameters" }, locate: () => undefined });

const PARAMETERS = [
  { name: "title", type: "string", required: true, minLength: 2, maxLength: 5 },
  { name: "code", type: "string", pattern: "^[A-Z]{2}\\d$" },
  { name: "emoji", type: "string", maxLength: 2 },
  { name: "email", type: "string", format: "email" },
  { name: "id", type: "string", format: "uuid" },
  { name: "site", type: "string", format: "uri" },
  { name: "when", type: "string", format: "date-time" },
  { name: "n", type: "integer", minimum: 1, maximum: 10 },
  { name: "r", type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
  { name: "on", type: "boolean" },
  { name: "tags", type: "array", minItems: 1, maxItems: 2 },
  { name: "opts", type: "object" },
  { name: "mode", type: "string", enum: ["a", "b"], default: "a" },
  { name: "level", type: "integer", enum: [1, 2, 3] },
  { name: "pair", type: "array", enum: [[1, 2], ["x"]] },
  { name: "note", type: "string", non_empty: true },
];

const VALUES: unknown[] = [
  {},
  { title: "ok" },
  { title: "x" },
  { title: "toolong" },
  { title: 5 },
  { title: "ok", extra: 1, other: null },
  { title: "ok", code: "AB1" },
  { title: "ok", code: "ab1" },
  { title: "ok", emoji: "😀😀" },
  { title: "ok", emoji: "😀😀😀" },
  { title: "ok", email: "a@b.co" },
  { title: "ok", email: "not-an-email" },
  { title: "ok", id: "123e4567-e89b-12d3-a456-426614174000" },
  { title: "ok", id: "123" },
  { title: "ok", site: "https://example.com/x?y" },
  { title: "ok", site: "relative/path" },
  { title: "ok", when: "2026-01-02T03:04:05Z" },
  { title: "ok", when: "2026-13-45T99:00:00Z" },
  { title: "ok", when: "yesterday" },
  { title: "ok", n: 0 },
  { title: "ok", n: 10 },
  { title: "ok", n: 11 },
  { title: "ok", n: 2.5 },
  { title: "ok", n: "3" },
  { title: "ok", r: 0 },
  { title: "ok", r: 0.5 },
  { title: "ok", r: 1 },
  { title: "ok", on: "true" },
  { title: "ok", tags: [] },
  { title: "ok", tags: [1, 2, 3] },
  { title: "ok", tags: "x" },
  { title: "ok", opts: [] },
  { title: "ok", opts: null },
  { title: "ok", mode: "c" },
  { title: "ok", level: 2 },
  { title: "ok", level: 2.0 },
  { title: "ok", level: "2" },
  { title: "ok", pair: [1, 2] },
  { title: "ok", pair: [2, 1] },
  { title: "ok", note: "" },
  { title: "toolong", n: 99, r: 5, tags: [], mode: "z", email: "x", bogus: true },
  [],
  "string",
  null,
];

const key = (errors: SchemaError[]) => errors.map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`).sort();

describe("the direct parameter validator agrees with ajv", () => {
  const built = buildParametersSchema(tool(PARAMETERS));
  const direct = compileParamSchema(built.schema)!;
  const ajv = compileLockedSchema(built.schema, "test");

  test("the schema is inside the supported subset", () => {
    expect(built.ok).toBe(true);
    expect(direct).toBeDefined();
  });

  test.each(VALUES.map((v) => [JSON.stringify(v), v]))("%s", (_name, value) => {
    expect(key(direct(value))).toEqual(key(ajv(value)));
  });

  test.each([
    [{ type: "object", additionalProperties: false, properties: { a: { type: "string", items: {} } } }],
    [{ type: "object", properties: {} }],
    [{ type: "object", additionalProperties: false, properties: { a: { anyOf: [] } } }],
    [{ type: "object", additionalProperties: false, properties: { a: { type: "string", format: "hostname" } } }],
    [{ type: "object", additionalProperties: false, properties: { a: { type: "string", pattern: "^(a+)+$" } } }],
  ])("declines a schema outside the subset: %p", (schema) => {
    expect(compileParamSchema(schema)).toBeUndefined();
  });
});

describe("one checker for kiwi check and kiwi exec", () => {
  // checkValue (declared defaults and enum members) and compileParamSchema (a call's parameters)
  // are one checker: whatever one accepts, the other accepts.
  const built = buildParametersSchema(tool(PARAMETERS));
  const direct = compileParamSchema(built.schema)!;
  const properties = built.schema.properties as Record<string, Record<string, unknown>>;
  const samples: unknown[] = ["", "ok", "AB1", "x@y.test", 0, 5, 0.5, 11, true, null, [], [1, 2], ["x"], {}, { b: 2, a: 1 }];
  test.each(Object.keys(properties).map((name) => [name]))("%s", (name) => {
    const { default: _default, description: _description, ...contract } = properties[name]!;
    for (const value of samples) expect([value, checkValue(contract, value) === undefined]).toEqual([value, direct({ [name]: value }).filter((e) => e.instancePath !== "").length === 0]);
  });
});
