import { describe, expect, test } from "bun:test";
import { applyParamDefaults, coerceParam, mergeParamSources, renderViolation, toViolations } from "../../src/exec/params.ts";
import { resolveCallParams } from "../../src/exec/call-params.ts";
import type { Tool } from "../../src/manifest/model.ts";

const schema = {
  type: "object",
  additionalProperties: false,
  properties: {
    city: { type: "string" },
    days: { type: "integer" },
    ratio: { type: "number" },
    metric: { type: "boolean" },
    tags: { type: "array", items: { type: "string" } },
    counts: { type: "array", items: { type: "integer" } },
    opts: { type: "object" },
    level: { enum: [1, 2, "max"] },
  },
};

/** A tool with a `parameters` list, as discovery would give it. */
function toolWith(parameters: unknown[]): Tool {
  return { id: "t", manifestFile: ".ai/tools/t.yaml", parameters, pointers: { parameters: "/parameters" }, locate: () => undefined } as unknown as Tool;
}

describe("coercing --param values to the declared type", () => {
  test.each([
    ["city", "Paris", "Paris"],
    ["city", "42", "42"],
    ["days", "7", 7],
    ["days", "-3", -3],
    ["days", "7.5", "7.5"],
    ["days", "99999999999999999999", "99999999999999999999"],
    ["days", " +7 ", 7],
    ["days", "+", "+"],
    ["days", "-", "-"],
    ["days", "", ""],
    ["days", "1-2", "1-2"],
    ["days", "--1", "--1"],
    ["days", "7\n", 7],
    ["days", "0x10", "0x10"],
    ["days", "1e3", "1e3"],
    ["days", "١", "١"],
    ["ratio", "0.25", 0.25],
    ["ratio", "1e3", 1000],
    ["ratio", "abc", "abc"],
    ["metric", "true", true],
    ["metric", "no", false],
    ["metric", "maybe", "maybe"],
    ["tags", '["a","b"]', ["a", "b"]],
    ["opts", '{"a":1}', { a: 1 }],
    ["opts", "{broken", "{broken"],
    ["level", "2", 2],
    ["level", "max", "max"],
    ["unknown", "x", "x"],
  ])("%s=%s becomes %p", (name, raw, expected) => {
    const prop = (schema.properties as Record<string, any>)[name];
    expect(coerceParam(raw, prop)).toEqual(expected);
  });

  test("repeating an array parameter appends coerced items", () => {
    expect(mergeParamSources({ pairs: ["tags=a", "tags=b", "counts=1", "counts=2"] }, schema)).toEqual({ tags: ["a", "b"], counts: [1, 2] });
  });

  test("a value keeps every '=' after the first", () => {
    expect(mergeParamSources({ pairs: ["city=a=b=c"] }, schema)).toEqual({ city: "a=b=c" });
  });

  test.each([["city"], ["=x"]])("refuses --param %s without a name=value shape", (pair) => {
    expect(() => mergeParamSources({ pairs: [pair] }, schema)).toThrow(expect.objectContaining({ code: "E_USAGE" }));
  });

  test("refuses a scalar parameter given twice", () => {
    expect(() => mergeParamSources({ pairs: ["city=a", "city=b"] }, schema)).toThrow(expect.objectContaining({ code: "E_USAGE", message: expect.stringContaining("more than once") }));
  });
});

describe("merging parameter sources", () => {
  test("later sources override earlier ones key by key: stdin < file < --params < --param", () => {
    const merged = mergeParamSources(
      {
        stdin: { text: '{"city":"stdin","days":1,"ratio":0.5}' },
        file: { path: "p.json", text: '{"city":"file","days":2}' },
        json: '{"city":"json"}',
        pairs: ["metric=yes"],
      },
      schema,
    );
    expect(merged).toEqual({ city: "json", days: 2, ratio: 0.5, metric: true });
  });

  test("a leading byte order mark is skipped in every JSON source, as in a manifest (Windows editors and PowerShell write one)", () => {
    const bom = "\uFEFF";
    expect(mergeParamSources({ stdin: { text: `${bom}{"city":"stdin","ratio":0.5}` }, file: { path: "p.json", text: `${bom}{"days":2}` }, json: `${bom}{"metric":true}` }, schema)).toEqual({ city: "stdin", ratio: 0.5, days: 2, metric: true });
    expect(() => mergeParamSources({ json: `${bom}${bom}{}` }, schema)).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID" }));
  });

  test("a document nested deeper than 1000 levels is refused naming its source, not left to overflow the stack later (40,000 levels did)", () => {
    const deep = (levels: number) => `{"opts": {"a": ${"[".repeat(levels)}${"]".repeat(levels)}}}`;
    expect(() => mergeParamSources({ file: { path: "deep.json", text: deep(40_000) } }, schema)).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID", message: "--params-file deep.json nests arrays and objects more than 1000 levels deep" }),
    );
    expect(() => mergeParamSources({ json: deep(999) }, schema)).toThrow(expect.objectContaining({ message: "--params nests arrays and objects more than 1000 levels deep" }));
    // The params object is level 1, opts 2, then 998 arrays: 1000 levels exactly.
    expect(Object.keys(mergeParamSources({ json: deep(998) }, schema))).toEqual(["opts"]);
    expect(() => mergeParamSources({ pairs: [`opts={"a": ${"[".repeat(40_000)}${"]".repeat(40_000)}}`] }, schema)).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID", message: "--param opts nests arrays and objects more than 1000 levels deep" }),
    );
  });

  test("empty stdin means no parameters", () => {
    expect(mergeParamSources({ stdin: { text: "  \n" } }, schema)).toEqual({});
  });

  test.each([
    ['{"a":', "--params is not valid JSON"],
    ["[1,2]", "must be a JSON object of parameters (got an array)"],
    ["null", "(got null)"],
  ])("refuses --params %s naming the source", (json, message) => {
    expect(() => mergeParamSources({ json }, schema)).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID", message: expect.stringContaining(message) }));
  });

  // JSON.parse would round these to 12345678901234567000 and kiwi would pass that on.
  test.each([
    ['{"days": 12345678901234567890}', "--params holds the integer 12345678901234567890, which is past 2^53"],
    ['{"opts": {"a": [-12345678901234567890]}}', "--params holds the integer -12345678901234567890, which is past 2^53"],
  ])("refuses --params %s rather than round an integer past 2^53", (json, message) => {
    expect(() => mergeParamSources({ json }, schema)).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID", message: expect.stringContaining(message) }));
  });

  test("refuses 2^53 + 1, the first integer past it, which has no more digits than 2^53 - 1", () => {
    expect(() => mergeParamSources({ json: '{"days": 9007199254740993}' }, schema)).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID", message: expect.stringContaining("--params holds the integer 9007199254740993") }),
    );
  });

  // Texts without a run of 16 digits skip the exact parse: both ways must give the same values.
  test("parses a document the same whether or not it holds a run of 16 digits", () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: i, name: `row ${i}`, score: i * 1.5, big: 999_999_999_999_999 - i, flags: [true, null, -i] }));
    const plain = mergeParamSources({ json: JSON.stringify({ rows }) }, schema);
    const exact = mergeParamSources({ json: JSON.stringify({ rows, serial: "12345678901234567890" }) }, schema);
    expect(exact).toEqual({ ...plain, serial: "12345678901234567890" });
    expect((plain.rows as unknown[])[499]).toEqual({ id: 499, name: "row 499", score: 748.5, big: 999_999_999_999_500, flags: [true, null, -499] });
  });

  test("accepts what JSON numbers carry exactly: 2^53 - 1, 1e20 written as a float, 2.5", () => {
    expect(mergeParamSources({ json: '{"days": 9007199254740991, "ratio": 1e20, "opts": {"x": 2.5}}' }, schema)).toEqual({ days: 9007199254740991, ratio: 1e20, opts: { x: 2.5 } });
  });

  test("refuses an integer past 2^53 inside a --param JSON value, naming the parameter", () => {
    expect(() => mergeParamSources({ pairs: ['opts={"id": 12345678901234567890}'] }, schema)).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID", message: expect.stringContaining("--param opts holds the integer 12345678901234567890") }),
    );
  });

  test("a __proto__ key stays an own parameter and never reaches the prototype", () => {
    const merged = mergeParamSources({ json: '{"__proto__": {"polluted": true}}' }, schema);
    expect(Object.hasOwn(merged, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("defaults", () => {
  test("fill only what the call left out, as independent copies", () => {
    const s = { properties: { unit: { type: "string", default: "metric" }, list: { type: "array", default: [] }, days: { type: "integer", default: 3 } } };
    const a = applyParamDefaults({ days: 5 }, s);
    expect(a).toEqual({ unit: "metric", list: [], days: 5 });
    (a.list as unknown[]).push(1);
    expect(applyParamDefaults({}, s).list).toEqual([]);
  });
});

describe("validating a call against the tool's parameters", () => {
  const tool = toolWith([
    { name: "title", type: "string", required: true, minLength: 3, maxLength: 10 },
    { name: "priority", type: "integer", minimum: 1, maximum: 100, default: 50 },
    { name: "ratio", type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
    { name: "email", type: "string", format: "email" },
    { name: "id", type: "string", format: "uuid" },
    { name: "site", type: "string", format: "uri" },
    { name: "when", type: "string", format: "date-time" },
    { name: "code", type: "string", pattern: "^[A-Z]{3}$" },
    { name: "mode", type: "string", enum: ["fast", "slow"] },
    { name: "tags", type: "array", non_empty: true },
    { name: "note", type: "string", non_empty: true },
  ]);

  test("applies defaults and accepts a valid call", () => {
    expect(resolveCallParams(tool, { json: '{"title":"hello"}' })).toEqual({ title: "hello", priority: 50 });
  });

  test("reports every violation at once with pointer, rule and offending value", () => {
    let error: any;
    try {
      resolveCallParams(tool, {
        json: JSON.stringify({
          priority: 150,
          ratio: 1,
          email: "nope",
          id: "123",
          site: "not a uri",
          when: "yesterday",
          code: "abcd",
          mode: "medium",
          tags: [],
          note: "",
          extra: true,
        }),
      });
    } catch (e) {
      error = e;
    }
    expect(error?.code).toBe("E_PARAMS_INVALID");
    const lines = (error.details.violations as any[]).map(renderViolation);
    expect(lines).toEqual([
      'params/code: must match the pattern "^[A-Z]{3}$" (got "abcd")',
      'params/email: must be a valid email (got "nope")',
      "params/extra: is not a declared parameter (declared: title, priority, ratio, email, id, site, when, code, mode, tags, note) (got true)",
      'params/id: must be a valid uuid (got "123")',
      'params/mode: must be one of "fast", "slow" (got "medium")',
      'params/note: must not be empty (got "")',
      "params/priority: must be <= 100 (got 150)",
      "params/ratio: must be < 1 (got 1)",
      'params/site: must be a valid uri (got "not a uri")',
      "params/tags: must not be empty (got [])",
      "params/title: is required",
      'params/when: must be a valid date-time (got "yesterday")',
    ]);
    expect(error.message).toContain("params/priority: must be <= 100 (got 150)");
    expect(error.details.violations.find((v: any) => v.pointer === "/priority")).toEqual({ pointer: "/priority", rule: "maximum", message: "must be <= 100", value: 150 });
  });

  test.each([
    ['{"title":"ab"}', "params/title: must be at least 3 characters long"],
    ['{"title":"abcdefghijkl"}', "params/title: must be at most 10 characters long"],
    ['{"title":"abc","priority":0}', "params/priority: must be >= 1 (got 0)"],
    ['{"title":"abc","ratio":0}', "params/ratio: must be > 0 (got 0)"],
    ['{"title":"abc","priority":"high"}', 'params/priority: must be integer (got "high")'],
    ['{"title":"abc","titel":"x"}', 'params/titel: is not a declared parameter (did you mean "title"?)'],
  ])("%s is refused: %s", (json, line) => {
    expect(() => resolveCallParams(tool, { json })).toThrow(expect.objectContaining({ code: "E_PARAMS_INVALID", message: expect.stringContaining(line) }));
  });

  test("a --param that cannot be coerced is reported with the text given", () => {
    expect(() => resolveCallParams(tool, { pairs: ["title=hello", "priority=lots"] })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('params/priority: must be integer (got "lots")') }),
    );
  });

  test("a tool without parameters accepts no parameters", () => {
    expect(resolveCallParams(toolWith([]), {})).toEqual({});
    expect(() => resolveCallParams(toolWith([]), { pairs: ["x=1"] })).toThrow(expect.objectContaining({ code: "E_PARAMS_INVALID" }));
  });

  test("malformed declarations stop the call with E_CHECK_FAILED", () => {
    expect(() => resolveCallParams(toolWith([{ name: "x", type: "strnig" }]), {})).toThrow(expect.objectContaining({ code: "E_CHECK_FAILED" }));
  });

  test("toViolations drops anyOf wrappers and keeps nested pointers", () => {
    const v = toViolations(
      [
        { instancePath: "/tags/1", keyword: "type", params: { type: "string" }, message: "must be string" },
        { instancePath: "", keyword: "anyOf", params: {}, message: "must match a schema in anyOf" },
      ],
      { tags: ["a", 2] },
      undefined,
    );
    expect(v).toEqual([{ pointer: "/tags/1", rule: "type", message: "must be string", value: 2 }]);
  });
});
