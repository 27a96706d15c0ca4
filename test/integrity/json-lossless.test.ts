import { describe, expect, test } from "bun:test";
import { Float } from "../../src/integrity/value.ts";
import { MAX_DEPTH, parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { ParseProblem } from "../../src/integrity/parse-problem.ts";

describe("lossless JSON parsing", () => {
  test("keeps 1.0 a float and 1 an integer", () => {
    const { value } = parseJsonLossless('{"f": 1.0, "i": 1, "e": 1e2, "x": 0.5}') as { value: Record<string, unknown> };
    expect(value.f).toBeInstanceOf(Float);
    expect(value.i).toBe(1);
    expect(value.e).toBeInstanceOf(Float);
    expect(value.x).toBe(0.5);
  });

  test("keeps integers past 2^53 exact", () => {
    expect(parseJsonLossless("[9007199254740993, 123]").value).toEqual([9007199254740993n, 123]);
  });

  test("reports duplicate keys as warnings with their offset, last one wins", () => {
    const result = parseJsonLossless('{"a": 1,\n "a": 2}');
    expect(result.value).toEqual({ a: 2 });
    expect(result.warnings).toEqual([{ message: 'duplicate key "a"', offset: 10, pointer: "/a" }]);
  });

  test("records the offset of each key by JSON pointer", () => {
    const result = parseJsonLossless('{"a": {"b/c": [10, 20]}}');
    expect(result.offsets.get("/a")).toBe(1);
    expect(result.offsets.get("/a/b~1c")).toBe(7);
    expect(result.offsets.get("/a/b~1c/1")).toBe(19);
  });

  test.each([
    ["", "the document is empty"],
    ["{", 'expected a quoted key but found end of input'],
    ['{"a" 1}', 'expected ":" after key "a" but found "1"'],
    ["[1,]", 'expected a value but found "]"'],
    ["[1] x", 'unexpected "x" after the end of the document'],
    ["01", 'unexpected "1" after the end of the document'],
    ['"a\nb"', "control character in string (escape it as \\u00XX)"],
    ['"\\x"', 'invalid escape "\\x"'],
    ["NaN", 'expected a value but found "N"'],
    ["1e999", "number 1e999 is too large to represent"],
    ["{'a': 1}", "expected a quoted key but found \"'\""],
  ])("rejects %p: %s", (text, message) => {
    expect(() => parseJsonLossless(text)).toThrow(message);
  });

  test.each([
    ["{\n  \"a\": tru\n}", "parse/syntax", 9],
    ["[".repeat(MAX_DEPTH + 2), "parse/too-deep", MAX_DEPTH + 1],
  ])("a syntax error is a ParseProblem with its rule and offset: %p", (text, rule, offset) => {
    let thrown: unknown;
    try {
      parseJsonLossless(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ParseProblem);
    expect([(thrown as ParseProblem).rule, (thrown as ParseProblem).offset]).toEqual([rule, offset]);
  });

  test("rejects nesting deeper than the cap without overflowing the stack", () => {
    const deep = "[".repeat(10_000) + "]".repeat(10_000);
    expect(() => parseJsonLossless(deep)).toThrow(ParseProblem);
    expect(() => parseJsonLossless(deep)).toThrow(`nesting deeper than ${MAX_DEPTH} levels`);
  });

  test("does not let __proto__ change the prototype", () => {
    const { value } = parseJsonLossless('{"__proto__": {"polluted": true}}') as { value: Record<string, unknown> };
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(value)).toEqual(["__proto__"]);
  });
});
