// A parameters file: a list (YAML or JSON) as written, or a JSON Schema's properties as a list.
import { describe, expect, test } from "bun:test";
import { parametersFromFile } from "../../src/manifest/parameters-file.ts";

describe("a parameters file", () => {
  test("a YAML list is the parameters list", () => {
    expect(parametersFromFile("- { name: q, type: string, required: true }\n", "params.yaml")).toEqual({ ok: true, parameters: [{ name: "q", type: "string", required: true }] });
  });

  test.each([
    ["a YAML list", "- { name: q, type: string, required: true }\r\n", "params.yaml"],
    ["a JSON list", '[{ "name": "q", "type": "string", "required": true }]\r\n', "params.json"],
  ])("%s saved with a byte-order mark (and CRLF) reads as without it", (_what, text, name) => {
    expect(parametersFromFile(`\ufeff${text}`, name)).toEqual({ ok: true, parameters: [{ name: "q", type: "string", required: true }] });
  });

  test("a JSON Schema's properties become the list, required ones marked; a nested schema is kept as written for the check to report, annotations are dropped", () => {
    const schema = { type: "object", properties: { q: { type: "string", minLength: 2, description: "query", title: "Query" }, tags: { type: "array", items: { type: "string" }, maxItems: 3 } }, required: ["q"] };
    expect(parametersFromFile(JSON.stringify(schema), "params.json")).toEqual({
      ok: true,
      parameters: [
        { name: "q", type: "string", description: "query", minLength: 2, required: true },
        { name: "tags", type: "array", maxItems: 3, items: { type: "string" } },
      ],
    });
  });

  test("an optional type written [T, null] is T, and a property with only an enum takes its values' type", () => {
    const schema = { type: "object", properties: { q: { type: ["string", "null"] }, n: { type: ["null", "integer"] }, mode: { enum: ["fast", "slow"] }, level: { enum: [1, 2] }, ratio: { enum: [1, 2.5] }, mixed: { enum: ["a", 1] } } };
    expect(parametersFromFile(JSON.stringify(schema), "params.json")).toEqual({
      ok: true,
      parameters: [
        { name: "q", type: "string" },
        { name: "n", type: "integer" },
        { name: "mode", enum: ["fast", "slow"], type: "string" },
        { name: "level", enum: [1, 2], type: "integer" },
        { name: "ratio", enum: [1, 2.5], type: "number" },
        { name: "mixed", enum: ["a", 1] },
      ],
    });
  });

  test("an optional value as Pydantic writes it (anyOf one schema and null) is that schema; a null default and a null enum value go; a wider union is kept as a type list for the check to name", () => {
    const schema = {
      type: "object",
      properties: {
        count: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }], default: null, description: "how many" },
        mode: { type: ["string", "null"], enum: ["fast", null], default: null },
        level: { enum: ["low", null] },
        key: { oneOf: [{ type: "integer" }, { type: "string" }] },
      },
    };
    expect(parametersFromFile(JSON.stringify(schema), "params.json")).toEqual({
      ok: true,
      parameters: [
        { name: "count", type: "integer", minimum: 1, description: "how many" },
        { name: "mode", type: "string", enum: ["fast"] },
        { name: "level", enum: ["low"], type: "string" },
        { name: "key", type: ["integer", "string"], oneOf: [{ type: "integer" }, { type: "string" }] },
      ],
    });
  });

  test.each([
    ["{ not json", "params.json", "it is not valid JSON"],
    ["a: [unclosed", "params.yaml", "it is not valid YAML"],
    ['{"type": "object"}', "params.json", "it holds neither a parameters list nor a JSON Schema with properties"],
    ["just text", "params.yml", "it holds neither a parameters list nor a JSON Schema with properties"],
  ])("%s (%s) holds none: %s", (text, name, problem) => {
    const read = parametersFromFile(text, name);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toContain(problem);
  });
});
