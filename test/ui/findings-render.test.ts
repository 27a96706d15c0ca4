import { describe, expect, test } from "bun:test";
import type { Finding, IgnoredFinding } from "../../src/findings/verdict.ts";
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

  test("an Agent Plugin server's findings are its mcp.json's, at a path an editor opens, each naming its server", () => {
    const plugin: Finding[] = [
      { rule: "security/secret-literal", severity: "error", file: ".ai/tools/p/mcp.json#notes", line: 11, column: 9, tool: "notes", message: "config.env.NOTES_TOKEN holds a key" },
      { rule: "security/risky-combination", severity: "warning", file: ".ai/tools/p/mcp.json#files", line: 14, column: 5, tool: "files", message: "files mixes shell, network and filesystem access" },
      { rule: "plugin/mcp", severity: "warning", file: ".ai/tools/p/mcp.json", line: 2, column: 3, message: "server x is skipped" },
    ];
    expect(renderFindingsHuman(plugin, { color: false })).toBe(
      ".ai/tools/p/mcp.json:11:9  error  security/secret-literal  server notes: config.env.NOTES_TOKEN holds a key\n" +
        ".ai/tools/p/mcp.json:14:5  warning  security/risky-combination  server files: files mixes shell, network and filesystem access\n" +
        ".ai/tools/p/mcp.json:2:3  warning  plugin/mcp  server x is skipped\n",
    );
  });

  test("show a control character quoted from a manifest instead of sending it to the terminal", () => {
    const quoted: Finding[] = [
      { rule: "universal/version-semver", severity: "error", file: ".ai/tools/\u001b[2Jb.yaml", line: 3, column: 1, tool: "b", message: 'version "1.0.0\u001b[2J" is not a semantic version', hint: "use an executor meant for api\u001b[31m tools\nor another" },
    ];
    expect(renderFindingsHuman(quoted, { color: false })).toBe(
      '.ai/tools/<U+001B>[2Jb.yaml:3:1  error  universal/version-semver  version "1.0.0<U+001B>[2J" is not a semantic version\n    hint: use an executor meant for api<U+001B>[31m tools\nor another\n',
    );
  });

  test("clip a long quoted value, saying how long it is; --json keeps the message whole", () => {
    const long: Finding[] = [{ rule: "api/method", severity: "error", file: ".ai/tools/w.yaml", line: 6, column: 3, message: `method ${JSON.stringify("X".repeat(200000))} is not one of GET`, hint: "use GET" }];
    expect(renderFindingsHuman(long, { color: false })).toBe(`.ai/tools/w.yaml:6:3  error  api/method  method "${"X".repeat(80)}…" (200000 characters) is not one of GET\n    hint: use GET\n`);
    expect((findingsDocument(long, { toolsChecked: 1, counts: { error: 1, warning: 0, info: 0 } }).findings as { message: string }[])[0]!.message.length).toBe(200027);
    // A cut never leaves half an escape behind.
    const escaped: Finding[] = [{ ...long[0]!, message: `method ${JSON.stringify(`${"X".repeat(78)}\u001b${"Y".repeat(200)}`)} is not one of GET` }];
    expect(renderFindingsHuman(escaped, { color: false })).toContain(`method "${"X".repeat(78)}…" (`);
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

  test("the summary says how many findings ignore comments let through, whatever else it says", () => {
    const byComment = { ignoredBy: { line: 3 } };
    const summary = (counts: { error: number; warning: number; info: number }, blocked = false) => renderFindingsSummary({ counts, toolsChecked: 2, elapsedMs: 3, ignored: [byComment, byComment] }, { color: false }, blocked);
    expect(summary({ error: 0, warning: 0, info: 0 })).toBe("✔ 2 tools checked, no problems, 2 ignored by kiwi-ignore comments (3 ms)\n");
    expect(summary({ error: 0, warning: 0, info: 0 }, true)).toBe("· 2 tools checked, no problems in the manifests, 2 ignored by kiwi-ignore comments (3 ms)\n");
    expect(summary({ error: 1, warning: 0, info: 0 })).toBe("✖ 1 error, 0 warnings, 0 infos in 2 tools checked, 2 ignored by kiwi-ignore comments (3 ms)\n");
  });

  test("the summary names the ignore file when its entries let findings through, and says how many each did", () => {
    const byComment = { ignoredBy: { line: 3 } };
    const byFile = { ignoredBy: { file: ".ai/kiwi-ignore.yaml", line: 2 } };
    const summary = (ignored: { ignoredBy: { file?: string; line: number } }[]) => renderFindingsSummary({ counts: { error: 0, warning: 0, info: 0 }, toolsChecked: 1, elapsedMs: 3, ignored }, { color: false });
    expect(summary([byFile])).toBe("✔ 1 tool checked, no problems, 1 ignored by .ai/kiwi-ignore.yaml (3 ms)\n");
    expect(summary([byFile, byComment, byFile])).toBe("✔ 1 tool checked, no problems, 3 ignored (1 by kiwi-ignore comments, 2 by .ai/kiwi-ignore.yaml) (3 ms)\n");
    // A staged check of two projects names each one's file.
    expect(summary([byFile, { ignoredBy: { file: "sub/.ai/kiwi-ignore.yaml", line: 4 } }])).toBe("✔ 1 tool checked, no problems, 2 ignored by .ai/kiwi-ignore.yaml and sub/.ai/kiwi-ignore.yaml (3 ms)\n");
  });
});

describe("machine findings", () => {
  test("the JSON document has a fixed shape and no absolute paths or times", () => {
    const doc = findingsDocument(findings, { toolsChecked: 1, counts: { error: 2, warning: 1, info: 0 } });
    expect(Object.keys(doc)).toEqual(["ok", "tools_checked", "counts", "findings", "ignored"]);
    expect(doc.ignored).toEqual([]);
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

  test("SARIF locates an Agent Plugin server's finding in its mcp.json, naming the server as the tool", () => {
    const server: Finding = { rule: "security/secret-literal", severity: "error", file: ".ai/tools/p/mcp.json#srv", line: 1, column: 84, pointer: "/mcpServers/srv/env/GH_TOKEN", tool: "srv", message: "config.env.GH_TOKEN holds …" };
    const sarif = sarifDocument([server], "9.9.9") as { runs: { results: Record<string, unknown>[] }[] };
    expect(sarif.runs[0]!.results[0]).toMatchObject({
      locations: [{ physicalLocation: { artifactLocation: { uri: ".ai/tools/p/mcp.json", uriBaseId: "%SRCROOT%" }, region: { startLine: 1, startColumn: 84 } } }],
      properties: { tool: "srv" },
    });
  });

  const ignored: IgnoredFinding[] = [
    { rule: "security/secret-literal", severity: "error", file: ".ai/tools/gh.yaml", line: 8, column: 5, pointer: "/config/env/GH_TOKEN", tool: "gh", message: "config.env.GH_TOKEN holds what looks like a GitHub token (ghp_…)", ignoredBy: { line: 8, reason: "a revoked sample" } },
    { rule: "security/host-any", severity: "warning", file: ".ai/tools/gh.yaml", line: 10, column: 3, message: "net.outbound admits every host", ignoredBy: { line: 9 } },
    { rule: "security/risky-combination", severity: "warning", file: ".ai/tools/deploy/tool.json", line: 6, column: 3, pointer: "/requires", tool: "deploy", message: "deploy combines shell, network and filesystem access", ignoredBy: { file: ".ai/kiwi-ignore.yaml", line: 2, reason: "deploys over ssh" } },
  ];

  test("the JSON document lists what ignore comments let through apart, each with the comment's line and reason", () => {
    const doc = findingsDocument([], { toolsChecked: 1, counts: { error: 0, warning: 0, info: 0 } }, ignored);
    expect(doc.ok).toBe(true);
    expect(doc.ignored).toEqual([
      { rule: "security/secret-literal", severity: "error", file: ".ai/tools/gh.yaml", line: 8, column: 5, pointer: "/config/env/GH_TOKEN", tool: "gh", message: "config.env.GH_TOKEN holds what looks like a GitHub token (ghp_…)", ignored_by: { line: 8, reason: "a revoked sample" } },
      { rule: "security/host-any", severity: "warning", file: ".ai/tools/gh.yaml", line: 10, column: 3, message: "net.outbound admits every host", ignored_by: { line: 9 } },
      { rule: "security/risky-combination", severity: "warning", file: ".ai/tools/deploy/tool.json", line: 6, column: 3, pointer: "/requires", tool: "deploy", message: "deploy combines shell, network and filesystem access", ignored_by: { file: ".ai/kiwi-ignore.yaml", line: 2, reason: "deploys over ssh" } },
    ]);
  });

  test("SARIF keeps an ignored finding as a result suppressed in source (by a comment) or externally (by the ignore file), its reason the justification", () => {
    const sarif = sarifDocument(findings.slice(0, 1), "9.9.9", ignored) as { runs: { results: Record<string, unknown>[] }[] };
    const results = sarif.runs[0]!.results;
    expect(results.map((r) => [r.ruleId, r.level, r.suppressions])).toEqual([
      ["api/method", "error", undefined],
      ["security/secret-literal", "error", [{ kind: "inSource", justification: "a revoked sample" }]],
      ["security/host-any", "warning", [{ kind: "inSource" }]],
      ["security/risky-combination", "warning", [{ kind: "external", justification: "deploys over ssh" }]],
    ]);
    expect(results[1]).toMatchObject({ locations: [{ physicalLocation: { artifactLocation: { uri: ".ai/tools/gh.yaml" }, region: { startLine: 8, startColumn: 5 } } }] });
  });
});
