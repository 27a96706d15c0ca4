// Applying kiwi-ignore comments and ignore-file entries to findings: a rule whose findings are
// errors or warnings (skill/field) has its warnings let through and its errors kept.
import { describe, expect, test } from "bun:test";
import type { Finding } from "../../src/findings/verdict.ts";
import { isIgnorable } from "../../src/findings/rules.ts";
import { applyIgnores } from "../../src/validate/ignores.ts";

const SKILL = ".ai/tools/pdf-tools/SKILL.md";
const unknownField: Finding = { rule: "skill/field", severity: "warning", file: SKILL, line: 4, column: 1, message: "version is not an Agent Skills field", hint: "put your own fields under metadata" };
const wrongType: Finding = { rule: "skill/field", severity: "error", file: SKILL, line: 5, column: 1, message: "metadata is not a mapping of strings to strings", hint: "quote the values" };
const comment = (line: number) => ({ line, column: 20, target: line, rules: ["skill/field"], invalid: [], reason: "ours" });

describe("a rule whose findings are errors or warnings (skill/field)", () => {
  test("may be named by a comment or entry; its warnings may be let through, its errors may not", () => {
    expect([isIgnorable("skill/field"), isIgnorable("skill/field", "warning"), isIgnorable("skill/field", "error")]).toEqual([true, true, false]);
    expect([isIgnorable("api/method"), isIgnorable("api/method", "warning")]).toEqual([false, false]);
  });

  test("a comment lets its unknown-field warning through, as any warning; on its wrong-type error it is ignore/invalid and the error stands", () => {
    const { kept, ignored } = applyIgnores([unknownField, wrongType], [{ file: SKILL, tool: "pdf-tools", directives: [comment(4), comment(5)] }]);
    expect(ignored.map((f) => [f.rule, f.severity, f.line])).toEqual([["skill/field", "warning", 4]]);
    expect(kept.map((f) => [f.rule, f.severity, f.line, f.message])).toEqual([
      ["skill/field", "error", 5, "metadata is not a mapping of strings to strings"],
      ["ignore/invalid", "warning", 5, "the kiwi-ignore comment names skill/field, whose finding on line 5 is an error, which cannot be ignored (its warnings can)"],
    ]);
  });

  test("an ignore-file entry lets only the warning through", () => {
    const entry = { line: 2, column: 5, rule: "skill/field", file: SKILL, report: true };
    const { kept, ignored } = applyIgnores([unknownField, wrongType], [], [entry]);
    expect([ignored.map((f) => f.severity), kept.map((f) => f.severity)]).toEqual([["warning"], ["error"]]);
  });
});
