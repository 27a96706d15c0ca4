// Untrusted patterns run in linear time. Each case below took 30 s or more (polynomial
// backtracking) on the RegExp engine before; none asserts a time, but each would exceed the test
// timeout if a backtracking engine were used again.
import { describe, expect, test } from "bun:test";
import { checkValue } from "../../src/validate/check-value.ts";
import { buildParametersSchema } from "../../src/validate/parameters.ts";
import { compileParamSchema } from "../../src/validate/check-value.ts";
import { compileUntrustedSchema } from "../../src/validate/json-schema.ts";
import { UnsupportedPattern, linearRegExp } from "../../src/validate/linear-regex.ts";
import { toolFromYaml } from "./_tools.ts";

const POLYNOMIAL = [
  ["^a*a*a*$", `${"a".repeat(20_000)}b`, "aaa"],
  ["^[a-z]+[a-z0-9]+[a-z]+$", `${"a".repeat(20_000)}!`, "abc"],
] as const;

describe("patterns on the linear-time engine", () => {
  test.each(POLYNOMIAL)("%s against 20,001 characters: kiwi check's checker", (pattern, value, good) => {
    expect(checkValue({ type: "string", pattern }, value)).toBe(`must match pattern "${pattern}"`);
    expect(checkValue({ type: "string", pattern }, good)).toBeUndefined();
  });

  test.each(POLYNOMIAL)("%s against 20,001 characters: exec's direct validator", (pattern, value) => {
    const validate = compileParamSchema({ type: "object", additionalProperties: false, properties: { p: { type: "string", pattern } }, required: ["p"] })!;
    expect(validate({ p: value }).map((e) => e.keyword)).toEqual(["pattern"]);
  });

  test.each(POLYNOMIAL)("%s against 20,001 characters: ajv, for child schemas and MCP schemas", (pattern, value, good) => {
    const compiled = compileUntrustedSchema({ type: "string", pattern });
    if (!compiled.ok) throw new Error(compiled.problem.message);
    expect(compiled.validate(value).map((e) => e.keyword)).toEqual(["pattern"]);
    expect(compiled.validate(good)).toEqual([]);
  });

  test("each pattern keeps its own matcher inside ajv (it keys them by their text)", () => {
    const compiled = compileUntrustedSchema({ type: "object", properties: { a: { type: "string", pattern: "^a+$" }, b: { type: "string", pattern: "^b+$" } } });
    if (!compiled.ok) throw new Error(compiled.problem.message);
    expect(compiled.validate({ a: "aa", b: "bb" })).toEqual([]);
    expect(compiled.validate({ a: "bb", b: "aa" }).length).toBe(2);
  });

  test("lookaround and backreferences are refused with a reason, at check time", () => {
    expect(() => linearRegExp("(?=a)a")).toThrow(UnsupportedPattern);
    const tool = toolFromYaml("tool_id: t\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nparameters:\n  - { name: p, type: string, pattern: '(a)\\1' }\n");
    expect(buildParametersSchema(tool).findings).toEqual([expect.objectContaining({ rule: "parameters/pattern", message: expect.stringContaining("linear-time engine") })]);
  });
});
