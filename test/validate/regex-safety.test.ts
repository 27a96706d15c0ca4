import { describe, expect, test } from "bun:test";
import { MAX_PATTERN_LENGTH, checkRegexSafety } from "../../src/validate/regex-safety.ts";

describe("checkRegexSafety", () => {
  test.each([
    ["^[a-z0-9_-]+$"],
    ["\\.py$"],
    ["(a|b)*"],
    ["([a-z]|[0-9])+"],
    ["^(\\d{1,3}\\.){3}\\d{1,3}$"],
    ["^[a-z]+(-[a-z]+)*$"],
    ["^(?:\\s*,\\s*\\w+)*$"],
    ["(/[^/]+)*"],
    ["\\p{L}+"],
    ["(?<year>\\d{4})-\\k<year>"],
    ["a{2,}"],
  ])("accepts the safe pattern %s", (pattern) => {
    expect(checkRegexSafety(pattern)).toEqual({ ok: true });
  });

  test.each([
    ["(a+)+", "nested unbounded repetition"],
    ["(\\w+\\s?)*", "nested unbounded repetition"],
    ["(a*)*", "nested unbounded repetition"],
    ["(x+x+)+y", "nested unbounded repetition"],
    ["(,\\w+\\w+)*", "nested unbounded repetition"],
    ["((-[a-z]+)*)*", "nested unbounded repetition"],
    ["^(a|a)*$", "repeated alternation"],
    ["(a|ab)*", "repeated alternation"],
    ["([a-z]|b)+", "repeated alternation"],
    ["(a{1,500}){1,500}", "nested unbounded repetition"],
    ["[", "not a valid regular expression"],
    ["\\-", "not a valid regular expression"],
  ])("rejects %s", (pattern, reason) => {
    const verdict = checkRegexSafety(pattern);
    expect(verdict.ok).toBe(false);
    expect(!verdict.ok && verdict.reason).toContain(reason);
  });

  test("rejects a pattern longer than the cap before parsing it", () => {
    const verdict = checkRegexSafety("a".repeat(MAX_PATTERN_LENGTH + 1));
    expect(verdict.ok).toBe(false);
  });

  test("accepted patterns really run in linear time on hostile input", () => {
    // Not a timing assertion: the same inputs would take minutes on the rejected shapes.
    for (const pattern of ["^[a-z]+(-[a-z]+)*$", "^(?:\\s*,\\s*\\w+)*$"]) {
      expect(checkRegexSafety(pattern).ok).toBe(true);
      expect(new RegExp(pattern, "u").test(`${"a-".repeat(5000)}!`)).toBe(false);
    }
  });
});
