// The project's ignore file, .ai/kiwi-ignore.yaml: what an entry may say, what is wrong with one
// (each an ignore/invalid warning at its line, the entry ignoring nothing), and what a check lets
// through with it. Tools are built through the real parsers (_tools.ts); the file's text is given.
import { describe, expect, test } from "bun:test";
import type { Finding } from "../../src/findings/verdict.ts";
import type { Project } from "../../src/manifest/discover-io.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";
import type { IgnoreFileText, Tool } from "../../src/manifest/model.ts";
import { type CheckOptions, checkProject, withFindings } from "../../src/validate/check-project.ts";
import { entriesFor, holdExpired, parseIgnoreFile, withEntries } from "../../src/validate/ignore-file.ts";
import { toolFromJson, toolFromYaml } from "./_tools.ts";

const file = (text: string, day = "2026-11-28"): IgnoreFileText => ({ text, stat: [text.length, 1, 1, 1], digest: "d", day });

function projectOf(tools: Tool[], ignores?: string | IgnoreFileText): Project {
  const project: Project = { root: "/project", toolsDir: "/project/.ai/tools", tools: [...tools, ...builtinTools().filter((b) => !tools.some((t) => t.id === b.id))], findings: [] };
  if (ignores !== undefined) project.ignoreFile = typeof ignores === "string" ? file(ignores) : ignores;
  return project;
}

/** A JSON tool that asks for shell, network and filesystem access: security/risky-combination at /requires. */
const deploy = () =>
  toolFromJson(JSON.stringify({ tool_id: "deploy", tool_type: "script", version: "1.0.0", executor: "bash_runtime", config: { entrypoint: "main.sh" }, requires: ["shell.execute", { "net.outbound": ["deploy.example.com"] }, { "fs.write": ["./out"] }] }, null, 2), { file: ".ai/tools/deploy/tool.json", files: ["main.sh"] });
const other = () => toolFromYaml("tool_id: other\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig: { entrypoint: main.sh }\n", { file: ".ai/tools/other/tool.yaml", files: ["main.sh"], form: "directory" });

function check(ignores: string | undefined, options: CheckOptions = { strict: true, complete: "all" }, tools = [deploy(), other()]) {
  return checkProject(projectOf(tools, ignores), options);
}

const rules = (fs: readonly Finding[]) => fs.map((f) => [f.rule, f.file, f.line]);

describe("reading the ignore file", () => {
  test("an entry keeps its rule, what narrows it, its reason and where it starts", () => {
    const text = "# reviewed 2026-11\nignore:\n  - rule: security/risky-combination\n    tool: deploy\n    file: ./.ai/tools/deploy/tool.json\n    pointer: /requires\n    line: 12\n    reason: ' deploys over ssh by design '\n";
    expect(parseIgnoreFile(file(text))).toEqual({
      entries: [{ line: 3, column: 5, rule: "security/risky-combination", tool: "deploy", file: ".ai/tools/deploy/tool.json", pointer: "/requires", atLine: 12, reason: "deploys over ssh by design" }],
      expired: [],
      findings: [],
    });
  });

  test("an entry's place is the same however the list is written: block (read from the lines), unindented, flow (asked of the parser)", () => {
    const lines = (text: string) => parseIgnoreFile(file(text)).entries.map((e) => [e.line, e.column, e.tool]);
    expect(lines("ignore:\n  # first\n  - rule: security/host-any\n    tool: a\n    reason: |\n      - not an entry\n  - { rule: security/host-any, tool: b }\nother: 1\n")).toEqual([[3, 5, "a"], [7, 5, "b"]]);
    expect(lines("ignore:\n- rule: security/host-any\n  tool: a\n- rule: security/host-any\n  tool: b\n")).toEqual([[2, 3, "a"], [4, 3, "b"]]);
    expect(lines("ignore: [{ rule: security/host-any, tool: a },\n  { rule: security/host-any, tool: b }]\n")).toEqual([[1, 10, "a"], [2, 3, "b"]]);
  });

  test.each([
    ["an empty file", ""],
    ["comments only", "# nothing ignored yet\n"],
    ["an empty list", "ignore: []\n"],
    ["a key with no value", "ignore:\n"],
  ])("%s ignores nothing and says nothing", (_name, text) => {
    expect(parseIgnoreFile(file(text))).toEqual({ entries: [], expired: [], findings: [] });
  });

  test.each([
    ["YAML that does not parse", "ignore:\n  - rule: [unclosed\n", 3, /^the ignore file is not valid YAML \(.+\), so it ignores nothing$/],
    ["a list at the top", "- rule: security/host-any\n", 1, /^the ignore file is not a mapping, so it ignores nothing$/],
    ['"ignore" not a list', "ignore: security/host-any\n", 1, /^"ignore" is not a list, so it ignores nothing$/],
  ])("%s: the whole file ignores nothing", (_name, text, line, message) => {
    const parsed = parseIgnoreFile(file(text));
    expect(parsed.entries).toEqual([]);
    expect(parsed.findings.map((f) => [f.rule, f.severity, f.file, f.line])).toEqual([["ignore/invalid", "warning", ".ai/kiwi-ignore.yaml", line]]);
    expect(parsed.findings[0]!.message).toMatch(message);
    expect(parsed.findings[0]!.hint).toBeTruthy();
  });

  test("a file kiwi cannot read as text says why", () => {
    const parsed = parseIgnoreFile({ unreadable: "is a symbolic link: kiwi reads the ignore file only as a regular file", stat: [1, 1, 1, 1], digest: "", day: "2026-11-28" });
    expect(parsed.findings.map((f) => f.message)).toEqual(["the ignore file is a symbolic link: kiwi reads the ignore file only as a regular file, so it ignores nothing"]);
  });

  test("a key kiwi does not read beside ignore: is named, with the one it is near; the entries still count", () => {
    const parsed = parseIgnoreFile(file("ignores: []\nignore:\n  - rule: security/host-any\n    tool: x\n"));
    expect(parsed.entries.map((e) => e.rule)).toEqual(["security/host-any"]);
    expect(parsed.findings.map((f) => [f.line, f.message, f.hint])).toEqual([[1, 'the ignore file has a key "ignores", which kiwi does not read', 'did you mean "ignore"?']]);
  });

  test.each([
    ["not a mapping", "- security/host-any", 2, "entry 1 is not a mapping, so it ignores nothing", "write each entry as rule: plus the keys that narrow it (tool, file, pointer, line) and a reason"],
    ["a misspelt key", "- rule: security/host-any\n    tool: x\n    pointr: /requires", 4, 'entry 1 has a key "pointr", which kiwi does not read, so it ignores nothing', 'did you mean "pointer"?'],
    ["no rule", "- tool: x\n    reason: why", 2, "entry 1 names no rule, so it ignores nothing", "name the rule it lets through, as kiwi check prints it: rule: security/risky-combination"],
    ["a rule that is no string", "- rule: 7\n    tool: x", 2, "entry 1 has a rule that is not a string, so it ignores nothing", "write the rule id as kiwi check prints it: rule: security/risky-combination"],
    ["a misspelt rule", "- rule: security/risky-combo\n    tool: x", 2, "entry 1 names security/risky-combo, which is not one of kiwi's rules, so it ignores nothing", "did you mean security/risky-combination?"],
    ["an ignore rule", "- rule: ignore/unused\n    tool: x", 2, "entry 1 names ignore/unused, which reports on kiwi-ignore comments and entries themselves: it cannot be ignored, so it ignores nothing", "fix or remove the comment or entry it reports"],
    ["an error kiwi cannot run past", "- rule: security/path\n    tool: x", 2, "entry 1 names security/path, an error kiwi cannot lock or run past: it cannot be ignored, so it ignores nothing", "fix what it reports; only warnings, infos and errors about how a value looks (an example key) can be ignored"],
    ["an empty tool", "- rule: security/host-any\n    tool: ''", 3, "entry 1 has a tool that is not a non-empty string, so it ignores nothing", "name the tool by its id, as kiwi check prints it"],
    ["a file outside the project", "- rule: security/host-any\n    file: ../other/.ai/tools/x.yaml", 3, 'entry 1 names the file "../other/.ai/tools/x.yaml", which is not a path inside the project, so it ignores nothing', "name the file by its path from the project root, as kiwi check prints it (.ai/tools/…)"],
    ["an absolute file", "- rule: security/host-any\n    file: /etc/x.yaml", 3, 'entry 1 names the file "/etc/x.yaml", which is not a path inside the project, so it ignores nothing', "name the file by its path from the project root, as kiwi check prints it (.ai/tools/…)"],
    ["a pointer without its slash", "- rule: security/host-any\n    tool: x\n    pointer: requires", 4, "entry 1 has a pointer that is not a JSON pointer, so it ignores nothing", 'write it as kiwi check --json prints it: "/requires" or "/config/env/TOKEN" ("" is the whole manifest)'],
    ["a line of 0", "- rule: security/host-any\n    file: .ai/tools/x.yaml\n    line: 0", 4, "entry 1 has a line that is not a positive whole number, so it ignores nothing", "write the line kiwi check prints after the file (path:line:column)"],
    ["a line in quotes", "- rule: security/host-any\n    file: .ai/tools/x.yaml\n    line: '12'", 4, "entry 1 has a line that is not a positive whole number, so it ignores nothing", "write the line kiwi check prints after the file (path:line:column)"],
    ["a line without its file", "- rule: security/host-any\n    tool: x\n    line: 12", 4, "entry 1 names a line but no file, so it ignores nothing", "name the file the line is in (file: .ai/tools/…), as kiwi check prints it"],
    ["a pointer without a tool or file", "- rule: security/host-any\n    pointer: /requires", 3, "entry 1 names a pointer but no tool or file, so it ignores nothing", "name the tool (or the file) whose manifest the pointer is in"],
    ["an expires that is no day", "- rule: security/host-any\n    tool: x\n    expires: 2027-02-30", 4, "entry 1 has an expires that is not a date, so it ignores nothing", "write the day (UTC) from which it should ignore nothing, as YYYY-MM-DD: expires: 2027-03-31"],
    ["an expires with a time", "- rule: security/host-any\n    tool: x\n    expires: 2027-03-01T12:00:00Z", 4, "entry 1 has an expires that is not a date, so it ignores nothing", "write the day (UTC) from which it should ignore nothing, as YYYY-MM-DD: expires: 2027-03-31"],
    ["an expires that is a number", "- rule: security/host-any\n    tool: x\n    expires: 20270301", 4, "entry 1 has an expires that is not a date, so it ignores nothing", "write the day (UTC) from which it should ignore nothing, as YYYY-MM-DD: expires: 2027-03-31"],
  ])("an entry with %s ignores nothing, and says so at its line", (_name, entry, line, message, hint) => {
    const parsed = parseIgnoreFile(file(`ignore:\n  ${entry}\n  - rule: security/host-any\n    tool: fine\n`));
    expect(parsed.entries.map((e) => e.tool)).toEqual(["fine"]);
    expect(parsed.findings.map((f) => [f.rule, f.severity, f.file, f.line, f.message, f.hint])).toEqual([["ignore/invalid", "warning", ".ai/kiwi-ignore.yaml", line, message, hint]]);
  });
});

describe("what a check lets through", () => {
  const entry = "ignore:\n  - rule: security/risky-combination\n    tool: deploy\n    reason: deploys over ssh by design\n";

  test("without the file, --strict fails a JSON manifest that no comment can let through", () => {
    const result = check(undefined);
    expect(result.ok).toBe(false);
    expect(rules(result.findings)).toEqual([["security/risky-combination", ".ai/tools/deploy/tool.json", 9]]);
  });

  test("an entry lets it through: not counted, listed as ignored with the entry's line and reason", () => {
    const result = check(entry);
    expect([result.ok, result.findings, result.counts]).toEqual([true, [], { error: 0, warning: 0, info: 0 }]);
    expect(result.ignored.map((f) => [f.rule, f.file, f.line, f.ignoredBy])).toEqual([["security/risky-combination", ".ai/tools/deploy/tool.json", 9, { file: ".ai/kiwi-ignore.yaml", line: 2, reason: "deploys over ssh by design" }]]);
  });

  test.each([
    ["its file", "    file: .ai/tools/deploy/tool.json\n"],
    ["its pointer", "    tool: deploy\n    pointer: /requires\n"],
    ["its file and line", "    file: .ai/tools/deploy/tool.json\n    line: 9\n"],
    ["the rule alone, across the project", ""],
  ])("an entry naming %s matches", (_name, narrowing) => {
    expect(check(`ignore:\n  - rule: security/risky-combination\n${narrowing}`).ignored.map((f) => f.tool)).toEqual(["deploy"]);
  });

  test.each([
    ["another tool", "    tool: other\n", "for tool other"],
    ["another pointer", "    tool: deploy\n    pointer: /config\n", "for tool deploy, at /config"],
    ["another line", "    file: .ai/tools/deploy/tool.json\n    line: 11\n", "for .ai/tools/deploy/tool.json, line 11"],
  ])("an entry naming %s lets nothing through, and says so as ignore/unused", (_name, narrowing, where) => {
    const result = check(`ignore:\n  - rule: security/risky-combination\n${narrowing}`);
    expect(result.ok).toBe(false);
    expect(result.ignored).toEqual([]);
    expect(rules(result.findings)).toEqual([
      ["ignore/unused", ".ai/kiwi-ignore.yaml", 2],
      ["security/risky-combination", ".ai/tools/deploy/tool.json", 9],
    ]);
    expect(result.findings[0]!.message).toBe(`the entry for security/risky-combination lets nothing through: kiwi reports no such finding ${where}`);
  });

  test("an entry lets it through until the day it expires (UTC); from that day it ignores nothing and says so", () => {
    const dated = `${entry}    expires: 2026-12-01\n`;
    const before = checkProject(projectOf([deploy(), other()], file(dated, "2026-11-30")), { strict: true, complete: "all" });
    expect([before.ok, before.findings]).toEqual([true, []]);
    expect(before.ignored.map((f) => f.ignoredBy)).toEqual([{ file: ".ai/kiwi-ignore.yaml", line: 2, reason: "deploys over ssh by design", expires: "2026-12-01" }]);
    for (const day of ["2026-12-01", "2027-01-15"]) {
      const after = checkProject(projectOf([deploy(), other()], file(dated, day)), { strict: true, complete: "all" });
      expect(after.ok).toBe(false);
      expect(after.ignored).toEqual([]);
      expect(after.findings.map((f) => [f.rule, f.severity, f.file, f.line])).toEqual([
        ["ignore/expired", "warning", ".ai/kiwi-ignore.yaml", 2],
        ["security/risky-combination", "error", ".ai/tools/deploy/tool.json", 9],
      ]);
      expect(after.findings[0]!.message).toBe("entry 1 (security/risky-combination, tool deploy) expired on 2026-12-01, so it ignores nothing");
      expect(after.findings[0]!.hint).toBe("fix what it let through (kiwi check shows it again), or, if its reason still holds, give it a later date");
    }
    // The lock's check (no complete scope) says it too, and findings added later keep it.
    const lock = checkProject(projectOf([deploy(), other()], file(dated, "2026-12-01")), { strict: true });
    expect(lock.findings.map((f) => f.rule)).toEqual(["ignore/expired", "security/risky-combination"]);
    expect(withFindings(lock, []).findings.map((f) => f.rule)).toEqual(["ignore/expired", "security/risky-combination"]);
  });

  test("a broken entry lets nothing through: the finding it meant stays beside the warning", () => {
    const result = check("ignore:\n  - rule: security/risky-combination\n    tol: deploy\n");
    expect(result.ok).toBe(false);
    expect(rules(result.findings)).toEqual([
      ["ignore/invalid", ".ai/kiwi-ignore.yaml", 3],
      ["security/risky-combination", ".ai/tools/deploy/tool.json", 9],
    ]);
  });

  test("an entry naming a tool the project does not have is wrong, with the id it is near", () => {
    const result = check("ignore:\n  - rule: security/risky-combination\n    tool: deplyo\n");
    const own = result.findings.find((f) => f.file === ".ai/kiwi-ignore.yaml")!;
    expect([own.rule, own.line, own.message, own.hint]).toEqual(["ignore/invalid", 2, 'the entry for security/risky-combination names the tool "deplyo", which the project does not have, so it ignores nothing', 'did you mean "deploy"?']);
    expect(result.findings.filter((f) => f.file === ".ai/kiwi-ignore.yaml")).toHaveLength(1);
  });

  test("a check that does not judge everything says nothing of entries it cannot judge", () => {
    const stale = "ignore:\n  - rule: security/host-any\n    tool: other\n  - rule: security/host-any\n  - rule: security/host-any\n    tool: gone\n";
    // The lock's check (the pure layers only): no entry is said unused, and no tool id is judged.
    expect(check(stale, { strict: true }).findings.filter((f) => f.file === ".ai/kiwi-ignore.yaml")).toEqual([]);
    // A check of deploy alone judges an entry about deploy, not one about other or the whole project.
    const scoped = check(`${stale}  - rule: security/host-any\n    tool: deploy\n`, { strict: true, only: ["deploy"], complete: [deploy()] });
    expect(rules(scoped.findings.filter((f) => f.file === ".ai/kiwi-ignore.yaml"))).toEqual([["ignore/unused", ".ai/kiwi-ignore.yaml", 7]]);
  });

  test("what is wrong with the file itself is said by every check, the lock's and one tool's too", () => {
    for (const options of [{}, { only: ["other"] }, { complete: "all" as const }]) {
      expect(rules(check("ignore: oops\n", options).findings.filter((f) => f.file === ".ai/kiwi-ignore.yaml"))).toEqual([["ignore/invalid", ".ai/kiwi-ignore.yaml", 1]]);
    }
  });

  test("findings added after the check (a key in a tool's file) meet the entries too, and an entry they use is not unused", () => {
    const text = "ignore:\n  - rule: security/secret-literal\n    file: .ai/tools/deploy/notes.txt\n    reason: the vendor's sample key\n";
    const base = check(text, { complete: "all" });
    expect(rules(base.findings)).toEqual([["ignore/unused", ".ai/kiwi-ignore.yaml", 2], ["security/risky-combination", ".ai/tools/deploy/tool.json", 9]]);
    const key: Finding = { rule: "security/secret-literal", severity: "error", file: ".ai/tools/deploy/notes.txt", line: 3, column: 1, tool: "deploy", message: "a key" };
    const merged = withFindings(base, [key], { complete: "all" });
    expect(rules(merged.findings)).toEqual([["security/risky-combination", ".ai/tools/deploy/tool.json", 9]]);
    expect(merged.ignored.map((f) => [f.file, f.ignoredBy])).toEqual([[".ai/tools/deploy/notes.txt", { file: ".ai/kiwi-ignore.yaml", line: 2, reason: "the vendor's sample key" }]]);
  });

  test("an error only a comment may let through is let through by an entry too; one kiwi cannot run past is not", () => {
    const tool = toolFromYaml("tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: ../../etc/passwd\n", { file: ".ai/tools/p/tool.yaml", form: "directory" });
    const result = check("ignore:\n  - rule: security/path\n    tool: p\n", { complete: "all" }, [tool]);
    expect(result.ok).toBe(false);
    expect(result.findings.some((f) => f.rule === "security/path")).toBe(true);
  });
});

describe("entries kiwi check --add-ignores writes", () => {
  const finding = (f: Partial<Finding>): Finding => ({ rule: "security/host-any", severity: "warning", file: ".ai/tools/t.yaml", message: "m", ...f });

  test("by tool and pointer where a finding has both, else by file (a plugin server's: its mcp.json) and line; once each; never for what cannot be ignored", () => {
    const entries = entriesFor(
      [
        finding({ tool: "t", pointer: "/requires", line: 6 }),
        finding({ tool: "t", pointer: "/requires", line: 6 }),
        finding({ rule: "security/secret-literal", severity: "error", tool: "notes", file: ".ai/tools/p/mcp.json#notes", line: 11 }),
        finding({ rule: "discover/no-metadata", severity: "info", file: ".ai/tools/helper.py" }),
        finding({ rule: "security/path", severity: "error", tool: "t", pointer: "/config/entrypoint" }),
        finding({ rule: "ignore/unused", file: ".ai/kiwi-ignore.yaml", line: 2 }),
      ],
      "why",
    );
    expect(entries).toEqual([
      { rule: "security/host-any", tool: "t", pointer: "/requires", reason: "why" },
      { rule: "security/secret-literal", tool: "notes", file: ".ai/tools/p/mcp.json", line: 11, reason: "why" },
      { rule: "discover/no-metadata", file: ".ai/tools/helper.py", reason: "why" },
    ]);
    // What it writes reads back as valid entries that match those findings.
    const text = withEntries(undefined, entries);
    if (!("text" in text)) throw new Error(text.problem);
    expect(parseIgnoreFile(file(text.text)).findings).toEqual([]);
    expect(parseIgnoreFile(file(text.text)).entries.map((e) => [e.rule, e.tool, e.file, e.pointer, e.atLine])).toEqual([
      ["security/host-any", "t", undefined, "/requires", undefined],
      ["security/secret-literal", "notes", ".ai/tools/p/mcp.json", undefined, 11],
      ["discover/no-metadata", undefined, ".ai/tools/helper.py", undefined, undefined],
    ]);
  });

  test("a finding an expired entry names is held back, with that entry, so no new entry undoes its end date", () => {
    const parsed = parseIgnoreFile(file("ignore:\n  - rule: security/host-any\n    tool: crawl\n    expires: 2026-01-31\n  - rule: security/host-any\n    tool: live\n    expires: 2027-01-31\n"));
    expect(parsed.expired.map((e) => [e.line, e.tool, e.expires])).toEqual([[2, "crawl", "2026-01-31"]]);
    const crawl = finding({ tool: "crawl", pointer: "/requires" });
    const fresh = finding({ tool: "new", pointer: "/requires" });
    // An error that cannot be ignored is no entry's, expired or not.
    const path = finding({ rule: "security/path", severity: "error", tool: "crawl", pointer: "/config/entrypoint" });
    const { open, held } = holdExpired([crawl, fresh, path], parsed.expired);
    expect(open).toEqual([fresh, path]);
    expect(held.map((h) => [h.finding, h.entry.line])).toEqual([[crawl, 2]]);
    expect(entriesFor(open, "why")).toEqual([{ rule: "security/host-any", tool: "new", pointer: "/requires", reason: "why" }]);
  });

  test.each([
    ["an empty list in flow style", "ignore: []\n", "ignore:\n  - rule: security/host-any\n    tool: t\n    reason: why\n"],
    ["a list with comments around it", "# reviewed\nignore:\n  - rule: a/b # x\n    tool: y\n\n# trailing\n", "# reviewed\nignore:\n  - rule: a/b # x\n    tool: y\n  - rule: security/host-any\n    tool: t\n    reason: why\n\n# trailing\n"],
    ['"ignore:" with only a comment under it', "ignore:\n  # none yet\n", "ignore:\n  # none yet\n  - rule: security/host-any\n    tool: t\n    reason: why\n"],
    ["no ignore key yet", "# nothing\n", "# nothing\n\nignore:\n  - rule: security/host-any\n    tool: t\n    reason: why\n"],
  ])("adds to %s, keeping what it held", (_name, before, after) => {
    expect(withEntries(before, [{ rule: "security/host-any", tool: "t", reason: "why" }])).toEqual({ text: after });
  });

  test.each([
    ["CRLF line ends", "# reviewed\r\nignore:\r\n  - rule: a/b\r\n    tool: y\r\n"],
    ["a byte-order mark and CRLF line ends", "\ufeff# reviewed\r\nignore:\r\n  - rule: a/b\r\n    tool: y\r\n"],
    ["a byte-order mark", "\ufeff# reviewed\nignore:\n  - rule: a/b\n    tool: y\n"],
  ])("adds to a file with %s, keeping them, so only the new entry's lines differ", (_name, before) => {
    const eol = before.includes("\r\n") ? "\r\n" : "\n";
    const r = withEntries(before, [{ rule: "security/host-any", tool: "t", reason: "why" }]);
    expect(r).toEqual({ text: `${before}  - rule: security/host-any${eol}    tool: t${eol}    reason: why${eol}` });
  });

  test.each([
    ["not YAML", "ignore: [unclosed\n", /^it is not valid YAML/],
    ["a list", "- a\n", /^it is not a mapping$/],
    ["ignore: as text", "ignore: all\n", /^"ignore" is not a list$/],
    // The library parses it, then throws reading it: that was E_INTERNAL.
    ["YAML with an alias to no anchor", "ignore:\n  - rule: security/host-any\n    tool: *crawl\n", /^it is not valid YAML \(.*crawl\)$/],
  ])("refuses a file that is %s", (_name, before, problem) => {
    const r = withEntries(before, [{ rule: "security/host-any", tool: "t", reason: "why" }]);
    expect("problem" in r && r.problem).toMatch(problem);
  });
});
