import { describe, expect, test } from "bun:test";
import { applyJsonPath, parseJsonPath, selectJsonPath } from "../../src/exec/jsonpath.ts";
import { parseJsonKeepingNumbers } from "../../src/integrity/canonical.ts";

const doc = {
  forecast: { daily: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], city: "Paris" },
  items: [{ name: "a", tags: ["x"] }, { name: "b", tags: ["y", "z"] }],
  "odd key": { "it's": 1 },
};

describe("response_transform paths", () => {
  test.each([
    ["$", doc],
    ["$.forecast.city", "Paris"],
    ["$['forecast']['city']", "Paris"],
    ['$["forecast"].city', "Paris"],
    ["$.forecast.daily[0]", 1],
    ["$.forecast.daily[-1]", 10],
    ["$['odd key']['it\\'s']", 1],
    ["$.items[1].tags[1]", "z"],
  ])("a definite path %s gives its one value", (path, expected) => {
    expect(applyJsonPath(parseJsonPath(path), doc, "t")).toEqual(expected);
  });

  test.each([
    ["$.forecast.daily[0:7]", [1, 2, 3, 4, 5, 6, 7]],
    ["$.forecast.daily[8:]", [9, 10]],
    ["$.forecast.daily[:2]", [1, 2]],
    ["$.forecast.daily[-2:]", [9, 10]],
    ["$.forecast.daily[20:30]", []],
    ["$.items[*].name", ["a", "b"]],
    ["$.items.*.name", ["a", "b"]],
    ["$.items[*].tags[0]", ["x", "y"]],
    ["$.forecast.*", [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "Paris"]],
  ])("a path with a slice or wildcard %s gives every match as an array", (path, expected) => {
    expect(applyJsonPath(parseJsonPath(path), doc, "t")).toEqual(expected);
  });

  test("a definite path that matches nothing is an error naming the path", () => {
    expect(() => applyJsonPath(parseJsonPath("$.forecast.hourly"), doc, "weather")).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining("$.forecast.hourly matched nothing") }),
    );
  });

  test("a number kept as its text is a leaf: no member, not even rawJSON, and no wildcard match", () => {
    const kept = parseJsonKeepingNumbers('{"id": 1234567890123456789}');
    expect(selectJsonPath(parseJsonPath("$.id.rawJSON"), kept)).toEqual([]);
    expect(selectJsonPath(parseJsonPath("$.id.*"), kept)).toEqual([]);
    expect(JSON.stringify(selectJsonPath(parseJsonPath("$.*"), kept))).toBe("[1234567890123456789]");
  });

  test("member names never reach the prototype", () => {
    expect(selectJsonPath(parseJsonPath("$.constructor"), {})).toEqual([]);
    expect(selectJsonPath(parseJsonPath("$['__proto__']"), {})).toEqual([]);
  });

  test.each([
    ["forecast", 'starts with "$"'],
    ["$..name", "recursive descent"],
    ["$.items[?(@.name)]", "filters"],
    ["$.items[0,1]", "unions"],
    ["$.items[0:4:2]", "slice steps"],
    ["$.items[", "unclosed"],
    ["$.items[x]", "must be an integer"],
    ["$.", "member name"],
    ["$ .a", "unexpected"],
  ])("refuses %s outside the documented subset", (path, why) => {
    expect(() => parseJsonPath(path)).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID", message: expect.stringContaining(why) }));
  });
});
