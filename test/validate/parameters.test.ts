import { describe, expect, test } from "bun:test";
import { type ParameterMemo, buildParametersSchema, checkParameters, compileParameters } from "../../src/validate/parameters.ts";
import { toolFromJson, toolFromYaml } from "./_tools.ts";

const withParams = (yaml: string) => toolFromYaml(`tool_id: t\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nparameters:\n${yaml}`);

describe("buildParametersSchema", () => {
  test("compiles a list of declarations into one closed object schema with defaults", () => {
    const tool = withParams(
      [
        "  - { name: city, type: string, required: true, non_empty: true, description: City name }",
        "  - { name: days, type: integer, default: 3, minimum: 1, maximum: 14 }",
        "  - { name: units, type: string, enum: [metric, imperial], default: metric }",
        "  - { name: id, type: string, format: uuid, pattern: '^[0-9a-f-]+$' }",
        "  - { name: tags, type: array, nonEmpty: true }",
      ].join("\n"),
    );
    const result = buildParametersSchema(tool);
    expect(result.findings).toEqual([]);
    expect(result.schema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      additionalProperties: false,
      properties: {
        city: { type: "string", minLength: 1, description: "City name" },
        days: { type: "integer", minimum: 1, maximum: 14, default: 3 },
        units: { type: "string", enum: ["metric", "imperial"], default: "metric" },
        id: { type: "string", format: "uuid", pattern: "^[0-9a-f-]+$" },
        tags: { type: "array", minItems: 1 },
      },
      required: ["city"],
    });
  });

  test("no parameters gives a schema that accepts only an empty object", () => {
    const compiled = compileParameters(toolFromYaml("tool_id: t\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\n"));
    expect(compiled.validate!({})).toEqual([]);
    expect(compiled.validate!({ extra: 1 })[0]?.keyword).toBe("additionalProperties");
  });

  test("compileParameters validates call arguments", () => {
    const compiled = compileParameters(withParams("  - { name: n, type: integer, required: true, exclusiveMinimum: 0 }\n"));
    expect(compiled.ok).toBe(true);
    expect(compiled.validate!({ n: 2 })).toEqual([]);
    expect(compiled.validate!({ n: 0 })[0]?.keyword).toBe("exclusiveMinimum");
    expect(compiled.validate!({})[0]?.keyword).toBe("required");
    expect(compiled.validate!({ n: 1, m: 2 })[0]?.keyword).toBe("additionalProperties");
  });

  test.each([
    ["a map instead of a list", "  city: string\n", "parameters/not-a-list", "/parameters", 5],
    ["a scalar entry", "  - city\n", "parameters/entry", "/parameters/0", 6],
    ["a missing name", "  - { type: string }\n", "parameters/name", "/parameters/0", 6],
    ["a name with spaces", "  - { name: 'my city', type: string }\n", "parameters/name", "/parameters/0/name", 6],
    // A plain object takes __proto__ as its prototype, not a key: no call could ever pass it.
    ["the name __proto__", "  - { name: __proto__, type: string, required: true }\n", "parameters/name", "/parameters/0/name", 6],
    ["a duplicate name", "  - { name: a, type: string }\n  - { name: a, type: integer }\n", "parameters/duplicate-name", "/parameters/1/name", 7],
    ["an unknown type", "  - { name: a, type: text }\n", "parameters/type", "/parameters/0/type", 6],
    ["a missing type", "  - { name: a }\n", "parameters/type", "/parameters/0", 6],
    ["a default of the wrong type", "  - { name: a, type: integer, default: ten }\n", "parameters/default", "/parameters/0/default", 6],
    ["a default outside the enum", "  - { name: a, type: string, enum: [x, y], default: z }\n", "parameters/default", "/parameters/0/default", 6],
    ["a default breaking a bound", "  - { name: a, type: integer, minimum: 5, default: 1 }\n", "parameters/default", "/parameters/0/default", 6],
    ["an empty enum", "  - { name: a, type: string, enum: [] }\n", "parameters/enum", "/parameters/0/enum", 6],
    ["an enum of the wrong type", "  - { name: a, type: integer, enum: [a, b] }\n", "parameters/enum", "/parameters/0/enum/0", 6],
    ["a duplicate enum value", "  - { name: a, type: string, enum: [x, x] }\n", "parameters/enum", "/parameters/0/enum/1", 6],
    // It would be passed on as 12345678901234567000: what runs would not be what was hashed.
    ["an integer default past 2^53", "  - { name: a, type: integer, default: 12345678901234567890 }\n", "parameters/default", "/parameters/0/default", 6],
    ["an integer enum member past 2^53", "  - { name: a, type: integer, enum: [1, -12345678901234567890] }\n", "parameters/enum", "/parameters/0/enum/1", 6],
    // The same member with its keys in another order: JSON Schema (and checkValue) call them equal.
    ["a duplicate enum member in another key order", "  - { name: a, type: object, enum: [{ a: 1, b: 2 }, { b: 2, a: 1 }] }\n", "parameters/enum", "/parameters/0/enum/1", 6],
    ["minLength above maxLength", "  - { name: a, type: string, minLength: 5, maxLength: 2 }\n", "parameters/constraint", "/parameters/0/minLength", 6],
    ["non_empty with maxLength 0", "  - { name: a, type: string, maxLength: 0, non_empty: true }\n", "parameters/constraint", "/parameters/0/non_empty", 6],
    ["minimum above maximum", "  - { name: a, type: number, minimum: 5, maximum: 2 }\n", "parameters/constraint", "/parameters/0/minimum", 6],
    ["an empty exclusive range", "  - { name: a, type: number, exclusiveMinimum: 2, maximum: 2 }\n", "parameters/constraint", "/parameters/0/exclusiveMinimum", 6],
    ["a negative length", "  - { name: a, type: string, maxLength: -1 }\n", "parameters/constraint", "/parameters/0/maxLength", 6],
    ["a contract for another type", "  - { name: a, type: integer, minLength: 1 }\n", "parameters/constraint", "/parameters/0/minLength", 6],
    ["non_empty on a boolean", "  - { name: a, type: boolean, non_empty: true }\n", "parameters/constraint", "/parameters/0/non_empty", 6],
    ["required that is not a boolean", "  - { name: a, type: string, required: yes please }\n", "parameters/constraint", "/parameters/0/required", 6],
    ["an invalid pattern", "  - { name: a, type: string, pattern: '[' }\n", "parameters/pattern", "/parameters/0/pattern", 6],
    ["an unsafe pattern", "  - { name: a, type: string, pattern: '^(a|a)*$' }\n", "parameters/pattern", "/parameters/0/pattern", 6],
    ["an unknown format", "  - { name: a, type: string, format: phone }\n", "parameters/format", "/parameters/0/format", 6],
    ["a format on a number", "  - { name: a, type: number, format: uuid }\n", "parameters/format", "/parameters/0/format", 6],
    ["a misspelt field", "  - { name: a, type: string, requried: true }\n", "parameters/unknown-field", "/parameters/0/requried", 6],
    ["a description that is no text", "  - { name: a, type: string, description: [a, b] }\n", "parameters/constraint", "/parameters/0/description", 6],
  ])("reports %s", (_name, yaml, rule, pointer, line) => {
    const result = buildParametersSchema(withParams(yaml));
    expect(result.findings.map((f) => [f.rule, f.pointer, f.line, f.file])).toEqual([[rule, pointer, line, ".ai/tools/t/tool.yaml"]]);
    expect(result.ok).toBe(rule === "parameters/unknown-field");
    // Every finding says what to do about it.
    expect(result.findings.filter((f) => !f.hint).map((f) => f.message)).toEqual([]);
    // The check's path (a memo shared by the tools of one check) reports the same, fresh and remembered.
    const memo: ParameterMemo = new Map();
    expect(checkParameters(withParams(yaml), memo)).toEqual(result.findings);
    expect(checkParameters(withParams(yaml), memo)).toEqual(result.findings);
  });

  test("checkParameters judges a list once per memo and places each tool's findings in its own manifest", () => {
    const yaml = "  - { name: a, type: text }\n  - { name: b, type: integer, default: -0.0 }\n";
    const first = withParams(yaml);
    // The same list two lines further down its file.
    const second = toolFromYaml(`tool_id: u\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\ndescription: d\nlanguage: python\nparameters:\n${yaml}`);
    const memo: ParameterMemo = new Map();
    expect(checkParameters(first, memo)).toEqual(buildParametersSchema(first).findings);
    expect(checkParameters(second, memo)).toEqual(buildParametersSchema(second).findings);
    expect(checkParameters(second, memo).map((f) => [f.tool, f.line])).toEqual([["u", 8]]);
    // -0 has no exact text (JSON folds it into 0), so the list was judged afresh, never remembered.
    expect(memo.size).toBe(0);
    const plain = withParams("  - { name: a, type: text }\n");
    checkParameters(plain, memo);
    checkParameters(plain, memo);
    expect(memo.size).toBe(1);
  });

  test("reads magray parameters from config.parameters and reports them there", () => {
    const tool = toolFromJson(
      JSON.stringify({ name: "m", version: "1.0.0", type: "script", entry_point: "main.py", config: { parameters: [{ name: "x", type: "nope" }] } }, null, 2),
    );
    const result = buildParametersSchema(tool);
    expect(result.findings.map((f) => [f.rule, f.pointer])).toEqual([["parameters/type", "/config/parameters/0/type"]]);
  });
});

describe("checkValue agrees with ajv on the contracts it checks", () => {
  const { checkValue } = require("../../src/validate/parameters.ts") as typeof import("../../src/validate/parameters.ts");
  const { compileUntrustedSchema } = require("../../src/validate/json-schema.ts") as typeof import("../../src/validate/json-schema.ts");
  const contracts = [
    { type: "string", minLength: 2, maxLength: 4 },
    { type: "string", pattern: "^[a-z]+$" },
    { type: "string", format: "uuid" },
    { type: "string", format: "email" },
    { type: "string", format: "uri" },
    { type: "string", format: "date-time" },
    { type: "integer", minimum: 1, exclusiveMaximum: 10 },
    { type: "number", exclusiveMinimum: 0, maximum: 1.5 },
    { type: "boolean" },
    { type: "array", minItems: 1, maxItems: 2 },
    { type: "object" },
    { type: "string", enum: ["a", "b"] },
    // Object members compare without regard to key order (it failed: JSON.stringify compared text).
    { type: "object", enum: [{ a: 1, b: 2 }] },
    { type: "array", enum: [[1, { x: 1, y: 2 }]] },
  ];
  const values = ["", "a", "ab", "abcde", "ABC", "0b9d7a63-4f4b-4a4e-9d4c-7a3c2a1b0c9d", "x@y.test", "https://x.test/a?b", "2024-01-02T03:04:05Z", "2024-13-02", 0, 1, 9, 10, 1.5, 2.5, -1, true, null, [], [1], [1, 2, 3], {}, { a: 1 }, "😀😀", { b: 2, a: 1 }, { a: 1, b: 2 }, [1, { y: 2, x: 1 }], [{ x: 1, y: 2 }, 1]];
  test.each(contracts.map((c) => [JSON.stringify(c), c]))("%s", (_name, contract) => {
    const compiled = compileUntrustedSchema(contract);
    if (!compiled.ok) throw new Error(compiled.problem.message);
    for (const value of values) expect([value, checkValue(contract, value) === undefined]).toEqual([value, compiled.validate(value).length === 0]);
  });
});
