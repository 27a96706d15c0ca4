import { describe, expect, test } from "bun:test";
import { planScaffold } from "../../src/init/scaffold-plan.ts";
import { TEMPLATES } from "../../src/init/templates.ts";

const paths = (list: { path: string }[]) => list.map((t) => t.path);

describe("planning the scaffold", () => {
  test("writes every template into an empty tree", () => {
    const plan = planScaffold(TEMPLATES, { paths: new Set(), toolIds: new Map() });
    expect(paths(plan.write)).toEqual(TEMPLATES.map((t) => t.path));
    expect(plan.skip).toEqual([]);
  });

  test.each([
    ["an existing file at the path", { paths: new Set([".ai/tools/greet.sh"]), toolIds: new Map() }, { path: ".ai/tools/greet.sh", reason: "already exists", kept: true }],
    [
      "a tool elsewhere with the same id",
      { paths: new Set<string>(), toolIds: new Map([["greet", ".ai/tools/mine/tool.yaml"]]) },
      { path: ".ai/tools/greet.sh", reason: 'the tool id "greet" is already defined by .ai/tools/mine/tool.yaml', kept: false },
    ],
  ])("never overwrites: leaves out the template for %s", (_name, existing, skipped) => {
    const plan = planScaffold(TEMPLATES, existing);
    expect(plan.skip).toEqual([skipped]);
    expect(paths(plan.write)).not.toContain(".ai/tools/greet.sh");
    expect(plan.write.length).toBe(TEMPLATES.length - 1);
  });

  test("writes nothing when everything is there", () => {
    const plan = planScaffold(TEMPLATES, { paths: new Set(TEMPLATES.map((t) => t.path)), toolIds: new Map() });
    expect([plan.write, plan.skip.length]).toEqual([[], TEMPLATES.length]);
  });
});
