import { describe, expect, test } from "bun:test";
import { compareCodePoints, renderCanonicalJson, renderFloat, renderLosslessJson, inCodePointOrder } from "../../src/integrity/canonical.ts";
import { Float, type CanonicalValue } from "../../src/integrity/value.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";

const canon = (json: string) => renderCanonicalJson(parseJsonLossless(json).value);

describe("canonical JSON text (shared/specs/canonical-json.md)", () => {
  test.each([
    ['{"b": 1, "a": [true, null]}', '{"a":[true,null],"b":1}'],
    ['{"x": 1.0, "y": 1}', '{"x":1.0,"y":1}'],
    ['{"s": "café ☕"}', '{"s":"caf\\u00e9 \\u2615"}'],
    ["[1e16, 1e-7, -0.0, 0.0001]", "[1e+16,1e-07,-0.0,0.0001]"],
    ["12345678901234567890", "12345678901234567890"],
    ["-12345678901234567890", "-12345678901234567890"],
    ["-0", "0"],
    ['"a/b"', '"a/b"'],
    ['"\\u007f \\u0000 \\t\\n\\r\\b\\f \\" \\\\"', '"\\u007f \\u0000 \\t\\n\\r\\b\\f \\" \\\\"'],
    ['"\\ud83d\\ude00"', '"\\ud83d\\ude00"'],
    ["{}", "{}"],
    ["[]", "[]"],
  ])("renders %s as %s", (input, expected) => {
    expect(canon(input)).toBe(expected);
  });

  test.each([
    [1, "1.0"],
    [100, "100.0"],
    [0.1, "0.1"],
    [0.0001, "0.0001"],
    [1e15, "1000000000000000.0"],
    [3.141592653589793, "3.141592653589793"],
    [1e16, "1e+16"],
    [1e22, "1e+22"],
    [1e-5, "1e-05"],
    [2.5e-8, "2.5e-08"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [-0, "-0.0"],
    [-1.5, "-1.5"],
    [123456789012345680000, "1.2345678901234568e+20"],
  ])("writes the float %p as Python's repr %s", (value, expected) => {
    expect(renderFloat(value)).toBe(expected);
  });

  test("keeps integer and float identity: 3 and 3.0 hash differently", () => {
    expect(renderCanonicalJson({ a: 3 })).toBe('{"a":3}');
    expect(renderCanonicalJson({ a: new Float(3) })).toBe('{"a":3.0}');
  });

  test("sorts keys by code point, not UTF-16 code unit", () => {
    // U+1F600 (astral, surrogates D83D..) sorts after U+FFFD by code point but before it by code unit.
    const value: CanonicalValue = { "\u{1F600}": 1, "\uFFFD": 2, a: 3 };
    expect(renderCanonicalJson(value)).toBe('{"a":3,"\\ufffd":2,"\\ud83d\\ude00":1}');
    expect(compareCodePoints("\uFFFD", "\u{1F600}")).toBeLessThan(0);
  });

  test("keeps a __proto__ key as data", () => {
    expect(canon('{"__proto__": {"x": 1}, "constructor": 2}')).toBe('{"__proto__":{"x":1},"constructor":2}');
  });

  test.each([[Number.NaN], [Number.POSITIVE_INFINITY], [Number.NEGATIVE_INFINITY]])("rejects the non-canonical number %p with a coded error", (n) => {
    expect(() => renderCanonicalJson({ n })).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID" }));
  });

  test("names where a non-canonical number sits, as an escaped JSON pointer", () => {
    expect(() => renderCanonicalJson({ a: [1, { "x/y~": Number.NaN }] })).toThrow('value at "/a/1/x~1y~0" is NaN');
  });

  test("sorts keys of plain ASCII and of BMP text alike by code point", () => {
    expect(renderCanonicalJson({ b: 1, B: 2, "\u00e9": 3, a: 4, "\ud7ff": 5 })).toBe('{"B":2,"a":4,"b":1,"\\u00e9":3,"\\ud7ff":5}');
  });

  test("does not normalise Unicode: NFC and NFD differ", () => {
    expect(renderCanonicalJson("\u00e9")).not.toBe(renderCanonicalJson("e\u0301"));
  });
});

describe("renderLosslessJson: the one renderer for output", () => {
  const value = JSON.parse('{"z": 1, "a": [true, null, "é"]}') as Record<string, CanonicalValue>;
  Object.defineProperty(value, "__proto__", { value: { big: 12345678901234567890n }, enumerable: true });
  value.one = new Float(1);
  value.negZero = new Float(-0);
  value.half = 0.5;

  test("keeps key order, integers past 2^53, the .0 of integral floats and __proto__ as a key", () => {
    expect(renderLosslessJson(value)).toBe('{"z":1,"a":[true,null,"é"],"__proto__":{"big":12345678901234567890},"one":1.0,"negZero":-0.0,"half":0.5}');
  });

  test("parseJsonLossless gives the same value back", () => {
    const back = parseJsonLossless(renderLosslessJson(value)).value;
    expect(renderCanonicalJson(back)).toBe(renderCanonicalJson(value));
  });

  test("indents like JSON.stringify for people", () => {
    expect(renderLosslessJson({ n: 12345678901234567890n, f: new Float(2) }, 2)).toBe('{\n  "n": 12345678901234567890,\n  "f": 2.0\n}');
  });
});

describe("inCodePointOrder: items in code-point order of a key (here their path)", () => {
  const named = (...paths: string[]) => paths.map((path, i) => ({ path, i }));
  const sortByPath = (items: readonly { path: string; i: number }[]) => inCodePointOrder(items, (f) => f.path);
  test.each([
    ["already in order", named("a", "b/c", "b/d", "z"), ["a", "b/c", "b/d", "z"]],
    ["out of order", named("z", "a", "b/d", "b/c"), ["a", "b/c", "b/d", "z"]],
    ["in UTF-16 order but not code-point order (an astral character sorts after U+FFFD)", named("\u{1F600}.txt", "\uFFFD.txt"), ["\uFFFD.txt", "\u{1F600}.txt"]],
    ["empty", named(), []],
  ])("%s", (_, items, paths) => {
    const sorted = sortByPath(items);
    expect(sorted.map((f) => f.path)).toEqual(paths);
    expect(sorted).not.toBe(items);
  });

  test("keeps items with the same path in their order (stable), sorted or not", () => {
    expect(sortByPath(named("a", "a", "b")).map((f) => f.i)).toEqual([0, 1, 2]);
    expect(sortByPath(named("b", "a", "a")).map((f) => f.i)).toEqual([1, 2, 0]);
  });
});
