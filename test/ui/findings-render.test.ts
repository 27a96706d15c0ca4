import { describe, expect, test } from "bun:test";
import type { Finding } from "../../src/findings/verdict.ts";
import { findingsDocument, renderFindingsHuman, renderFindingsSummary, sarifDocument } from "../../src/ui/findings-render.ts";
import { RULES } from "../../src/findings/rules.ts";

const findings: Finding[] = [
  { rule: "api/method", severity: "error", file: ".ai/tools/w.yaml", line: 6, column: 3, pointer: "/config/method", tool: "w", message: 'method "FETCH" is not one of GET', hint: "use GET" },
  { rule: "universal/unknown-field", severity: "warning", file: ".ai/tools/w.yaml", line: 9, column: 1, pointer: "/descripton", tool: "w", message: 'unknown field "descripton"' },
  { rule: "parse/empty", severity: "error", file: ".ai/tools/my tool.yaml", message: "the file is empty" },
];

describe("human findings", () => {
  test("are grouped by file, one line each, hint below", () => {
    expect(renderFindingsHuman(findings, { color: false })).toMatchInlineSnapshot(`
"${""}.ai/tools/w.yaml:6:3  error  api/method  method "FETCH" is not one of GET
    hint: use GET
.ai/tools/w.yaml:9:1  warning  universal/unknown-field  unknown field "descripton"

.ai/tools/my tool.yaml  error  parse/empty  the file is empty
"
`);
  });

  test("are coloured only when the context allows it", () => {
    expect(renderFindingsHuman(findings, { color: false })).not.toContain("\x1b[");
    expect(renderFindingsHuman([], { color: false })).toBe("");
  });

  test.each([
    [{ error: 0, warning: 0, info: 0 }, 1, "✔ 1 tool checked, no problems (12 ms)\n"],
    [{ error: 2, warning: 1, info: 0 }, 3, "✖ 2 errors, 1 warning, 0 infos in 3 tools checked (12 ms)\n"],
    [{ error: 0, warning: 2, info: 1 }, 3, "! 0 errors, 2 warnings, 1 info in 3 tools checked (12 ms)\n"],
  ])("summarise %p", (counts, toolsChecked, text) => {
    expect(renderFindingsSummary({ counts, toolsChecked, elapsedMs: 12.4 }, { color: false })).toBe(text);
  });
});

describe("machine findings", () => {
  test("the JSON document has a fixed shape and no absolute paths or times", () => {
    const doc = findingsDocument(findings, { toolsChecked: 1, counts: { error: 2, warning: 1, info: 0 } });
    expect(Object.keys(doc)).toEqual(["ok", "tools_checked", "counts", "findings"]);
    expect((doc.findings as object[])[2]).toEqual({ rule: "parse/empty", severity: "error", file: ".ai/tools/my tool.yaml", message: "the file is empty" });
    expect(doc.ok).toBe(false);
  });

  test("SARIF lists every rule once, at a stable index, and encodes URIs", () => {
    const sarif = sarifDocument(findings, "9.9.9") as { runs: { tool: { driver: { rules: { id: string; defaultConfiguration: { level: string } }[] } }; results: Record<string, unknown>[] }[] };
    const run = sarif.runs[0]!;
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual(Object.keys(RULES));
    expect(run.tool.driver.rules.find((r) => r.id === "discover/no-metadata")!.defaultConfiguration.level).toBe("note");
    expect(run.results[1]!.level).toBe("warning");
    expect(run.results[2]).toMatchObject({
      ruleId: "parse/empty",
      ruleIndex: Object.keys(RULES).indexOf("parse/empty"),
      locations: [{ physicalLocation: { artifactLocation: { uri: ".ai/tools/my%20tool.yaml", uriBaseId: "%SRCROOT%" } } }],
    });
    expect((run.results[0]!.message as { text: string }).text).toBe('method "FETCH" is not one of GET (hint: use GET)');
  });
});
