// The project's ignore file, .ai/kiwi-ignore.yaml, from the compiled binary: what JSON manifests
// (a tool.json, an Agent Plugin's mcp.json) could not let through before, in kiwi check, kiwi lock
// (whose memos must notice the file) and the pre-commit hook (a commit of the file alone).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { git, repoEnv, run } from "./git-helpers.ts";

afterAll(cleanupTemps);

const SLOW = 60_000;
// Built here, not written out: a scanner of this repository must not find a key in its tests.
const token = "ghp_" + "Kw9".repeat(12);
/** A tool.json whose header holds a vendor's published sample key: an error, and JSON has no comments. */
const sample = JSON.stringify({ tool_id: "docs_example", tool_type: "api", version: "1.0.0", executor: "http_client", config: { url: "https://api.example.test/v1", headers: { "X-Example": token } }, requires: [{ "net.outbound": ["api.example.test"] }] }, null, 2);
const ENTRY = "ignore:\n  - rule: security/secret-literal\n    tool: docs_example\n    pointer: /config/headers/X-Example\n    reason: the vendor's published sample key\n";
const IGNORE_FILE = ".ai/kiwi-ignore.yaml";

describe("kiwi check with .ai/kiwi-ignore.yaml", () => {
  test("a key in a tool.json fails the check; an entry naming it lets it through, said in the summary, --json and SARIF", async () => {
    const dir = makeProject({ ".ai/tools/docs_example/tool.json": sample });
    const before = await runKiwi(["check"], { cwd: dir });
    expect(before.exitCode).toBe(1);
    expect(before.stdout).toContain(".ai/tools/docs_example/tool.json:9:7  error  security/secret-literal");

    writeFileSync(join(dir, IGNORE_FILE), ENTRY);
    const human = await runKiwi(["check"], { cwd: dir });
    expect([human.exitCode, human.stdout]).toEqual([0, ""]);
    expect(human.stderr).toMatch(/^✔ 1 tool checked, no problems, 1 ignored by \.ai\/kiwi-ignore\.yaml \(\d+ ms\)\n$/);
    const json = await runKiwi(["check", "--json"], { cwd: dir });
    const doc = JSON.parse(json.stdout) as { ok: boolean; findings: unknown[]; ignored: { rule: string; file: string; pointer: string; ignored_by: unknown }[] };
    expect([json.exitCode, doc.ok, doc.findings]).toEqual([0, true, []]);
    expect(doc.ignored.map((f) => [f.rule, f.file, f.pointer, f.ignored_by])).toEqual([["security/secret-literal", ".ai/tools/docs_example/tool.json", "/config/headers/X-Example", { file: IGNORE_FILE, line: 2, reason: "the vendor's published sample key" }]]);
    const sarif = await runKiwi(["check", "--format", "sarif"], { cwd: dir });
    const results = (JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; suppressions?: unknown }[] }[] }).runs[0]!.results;
    expect(results.map((r) => [r.ruleId, r.suppressions])).toEqual([["security/secret-literal", [{ kind: "external", justification: "the vendor's published sample key" }]]]);
    for (const r of [before, human, json, sarif]) expect(r.stdout + r.stderr).not.toContain(token.slice(0, 8));
  });

  test("--strict's risky mix in a JSON manifest and in an Agent Plugin's mcp.json, each let through by its entry", async () => {
    const dir = makeProject({
      ".ai/tools/deploy/tool.json": JSON.stringify({ tool_id: "deploy", tool_type: "script", version: "1.0.0", executor: "bash_runtime", config: { entrypoint: "main.sh" }, requires: ["shell.execute", { "net.outbound": ["deploy.example.test"] }, { "fs.write": ["./out"] }] }, null, 2),
      ".ai/tools/deploy/main.sh": "echo deployed\n",
      ".ai/tools/notes-plugin/plugin.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "notes-plugin", version: "1.0.0" }),
      ".ai/tools/notes-plugin/mcp.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", mcpServers: { notes: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/server.js"], env: { NOTES_TOKEN: token } } } }, null, 2),
      ".ai/tools/notes-plugin/server.js": "process.stdin.resume();\n",
    });
    const strict = await runKiwi(["check", "--strict", "--json"], { cwd: dir });
    const findings = (JSON.parse(strict.stdout) as { findings: { rule: string; file: string; tool: string; severity: string }[] }).findings;
    expect(strict.exitCode).toBe(1);
    const errors = findings.filter((f) => f.severity === "error").map((f) => [f.rule, f.file, f.tool]);
    expect(errors).toContainEqual(["security/risky-combination", ".ai/tools/deploy/tool.json", "deploy"]);
    expect(errors).toContainEqual(["security/secret-literal", ".ai/tools/notes-plugin/mcp.json#notes", "notes"]);

    writeFileSync(join(dir, IGNORE_FILE), "ignore:\n  - rule: security/risky-combination\n    tool: deploy\n    reason: runs the release over ssh, by design\n  # The plugin's server, by the file it is in.\n  - rule: security/secret-literal\n    file: .ai/tools/notes-plugin/mcp.json\n    reason: a revoked token the plugin's docs show\n");
    const passed = await runKiwi(["check", "--strict", "--json"], { cwd: dir });
    const doc = JSON.parse(passed.stdout) as { findings: { rule: string; severity: string }[]; ignored: { rule: string; ignored_by: { line: number } }[] };
    expect(doc.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(doc.ignored.map((f) => [f.rule, f.ignored_by.line]).sort()).toEqual([["security/risky-combination", 2], ["security/secret-literal", 6]]);
  });

  test("a misspelt entry is a warning at its line, and the finding it meant still fails the check (kiwi check <the file> checks everything)", async () => {
    const dir = makeProject({ ".ai/tools/docs_example/tool.json": sample, [IGNORE_FILE]: "ignore:\n  - rule: security/secret-literal\n    tool: docs_exmaple\n" });
    const r = await runKiwi(["check", IGNORE_FILE], { cwd: dir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain(`${IGNORE_FILE}:2:5  warning  ignore/invalid  the entry for security/secret-literal names the tool "docs_exmaple", which the project does not have, so it ignores nothing\n    hint: did you mean "docs_example"?`);
    expect(r.stdout).toContain("error  security/secret-literal");
  });

  test("an ignore file kiwi cannot read as text ignores nothing and says why", async () => {
    const dir = makeProject({ ".ai/tools/docs_example/tool.json": sample, "elsewhere.yaml": ENTRY });
    symlinkSync(join(dir, "elsewhere.yaml"), join(dir, IGNORE_FILE));
    const r = await runKiwi(["check"], { cwd: dir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain(`${IGNORE_FILE}  warning  ignore/invalid  the ignore file is a symbolic link: kiwi reads the ignore file only as a regular file, so it ignores nothing`);
  });
});

describe("kiwi lock with .ai/kiwi-ignore.yaml", () => {
  test("locks while the entry is there, refuses once it is gone (nothing below .ai/tools changed), and locks again when it is back", async () => {
    const dir = makeProject({ ".ai/tools/docs_example/tool.json": sample, [IGNORE_FILE]: ENTRY });
    // Past the racy margin (2 s) of every write, so each memo of the lock (its index, its tree
    // memo, its remembered check) is recorded and trusted: each must notice the ignore file.
    const settle = () => Bun.sleep(2100);
    await settle();
    const env = hermeticEnv(); // one cache for every lock
    expect((await runKiwi(["lock"], { cwd: dir, env })).exitCode).toBe(0);
    const again = await runKiwi(["lock", "--json"], { cwd: dir, env });
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, written: false });

    writeFileSync(join(dir, IGNORE_FILE), "ignore: []\n");
    await settle();
    const refused = await runKiwi(["lock"], { cwd: dir, env });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain("security/secret-literal");

    rmSync(join(dir, IGNORE_FILE));
    expect((await runKiwi(["lock"], { cwd: dir, env })).exitCode).not.toBe(0);

    writeFileSync(join(dir, IGNORE_FILE), ENTRY);
    expect((await runKiwi(["lock"], { cwd: dir, env })).exitCode).toBe(0);
  }, SLOW);
});

describe("the pre-commit hook with .ai/kiwi-ignore.yaml", () => {
  const env = repoEnv({ KIWI_MCP_MODE: "off" });
  const kiwi = (root: string, args: string[]) => runKiwi(args, { cwd: root, env });

  test("a commit of the ignore file alone judges every tool: dropping an entry is blocked, the staged memo answering the same", async () => {
    const root = makeTemp("kiwi-ignore-hook-");
    await git(root, env, "init", "-q", "-b", "main", ".");
    expect((await kiwi(root, ["init"])).exitCode).toBe(0);
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    writeFileSync(join(root, ".ai/tools/docs_example.json"), sample);
    writeFileSync(join(root, IGNORE_FILE), ENTRY);
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "-A");
    const staged = await kiwi(root, ["check", "--staged"]);
    expect([staged.exitCode, staged.stdout]).toEqual([0, ""]);
    expect(staged.stderr).toContain("1 ignored by .ai/kiwi-ignore.yaml");
    const commit = (message: string) => run(["git", "commit", "-q", "-m", message], root, env);
    expect((await commit("an example key, let through by the ignore file")).exitCode).toBe(0);

    writeFileSync(join(root, IGNORE_FILE), "ignore: []\n");
    await git(root, env, "add", IGNORE_FILE);
    for (const attempt of ["first", "again, the staged memo answering"]) {
      const blocked = await commit(attempt);
      expect(blocked.exitCode).toBe(1);
      expect(blocked.stderr).toContain(".ai/tools/docs_example.json:9:7  error  security/secret-literal");
      expect(blocked.stderr).toContain("the ignore file changed, so every tool was checked");
    }

    // One version staged, another in the working copy: kiwi checks the working copy and says so.
    writeFileSync(join(root, IGNORE_FILE), `# reviewed\n${ENTRY}`);
    await git(root, env, "add", IGNORE_FILE);
    writeFileSync(join(root, IGNORE_FILE), `${ENTRY}  - rule: security/host-any\n    tool: docs_example\n`);
    const warned = await kiwi(root, ["check", "--staged"]);
    expect(warned.exitCode).toBe(0);
    expect(warned.stderr).toContain(`warning: ${IGNORE_FILE} has changes that are not staged; kiwi checked the working copy`);
    expect(warned.stdout).toContain(`${IGNORE_FILE}:6:5  warning  ignore/unused`);
  }, SLOW);

  test("a remembered staged verdict is not replayed once the ignore file changes, staged or not", async () => {
    const root = makeTemp("kiwi-ignore-memo-");
    await git(root, env, "init", "-q", "-b", "main", ".");
    expect((await kiwi(root, ["init"])).exitCode).toBe(0);
    writeFileSync(join(root, ".ai/tools/docs_example.json"), sample);
    writeFileSync(join(root, IGNORE_FILE), ENTRY);
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "-A");
    // Past the racy margin, so the verdict is remembered (and the second check answers from it).
    await Bun.sleep(2100);
    for (let i = 0; i < 2; i++) expect((await kiwi(root, ["check", "--staged"])).exitCode).toBe(0);
    writeFileSync(join(root, IGNORE_FILE), "ignore: []\n");
    const blocked = await kiwi(root, ["check", "--staged"]);
    expect(blocked.exitCode).toBe(1);
    expect(blocked.stdout).toContain("error  security/secret-literal");
  }, SLOW);
});

describe("kiwi check --add-ignores", () => {
  // A key in a tool.json (an error kiwi may let through), a key in a script (by file and line),
  // and a path leaving its tool (an error it may not).
  const tools = () => ({
    ".ai/tools/docs_example/tool.json": sample,
    ".ai/tools/notify.sh": `#!/usr/bin/env bash\n# ---\n# tool_id: notify\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\ncurl -H "Authorization: token ${token}" https://api.github.com/user\n`,
    ".ai/tools/p/tool.yaml": "tool_id: p\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: ../../etc/passwd\n",
  });

  test("writes an entry for every finding kiwi can let through, keeps the file's comments, reports what remains, and adds nothing twice", async () => {
    const dir = makeProject({ ...tools(), [IGNORE_FILE]: "# Reviewed by the platform team.\nignore:\n  # none yet\n" });
    const r = await runKiwi(["check", "--add-ignores"], { cwd: dir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain("error  security/path");
    expect(r.stdout).not.toContain("secret-literal");
    expect(r.stderr).toContain(`added 2 entries to ${IGNORE_FILE}: review each one, and say in its reason why the finding is let through`);
    const written = readFileSync(join(dir, IGNORE_FILE), "utf8");
    expect(written.startsWith("# Reviewed by the platform team.\nignore:\n  # none yet\n")).toBe(true);
    expect(written).toMatch(/ {2}- rule: security\/secret-literal\n {4}tool: docs_example\n {4}pointer: \/config\/headers\/X-Example\n {4}reason: "added by kiwi check --add-ignores on \d{4}-\d\d-\d\d: say why it is let through, or fix it"\n/);
    expect(written).toMatch(/ {2}- rule: security\/secret-literal\n {4}tool: notify\n {4}file: \.ai\/tools\/notify\.sh\n {4}line: 8\n/);
    expect(written).not.toContain(token.slice(0, 8));

    const after = await runKiwi(["check"], { cwd: dir });
    expect(after.exitCode).toBe(1);
    expect(after.stdout).not.toContain("secret-literal");
    expect(after.stderr).toContain(`2 ignored by ${IGNORE_FILE}`);
    const again = await runKiwi(["check", "--add-ignores", "--json"], { cwd: dir });
    const doc = JSON.parse(again.stdout) as { ok: boolean; added: unknown[]; ignore_file: string; findings: { rule: string }[] };
    expect([again.exitCode, doc.ok, doc.added, doc.ignore_file]).toEqual([1, false, [], IGNORE_FILE]);
    // What remains is what no entry may let through: the path leaving its tool (and the schema it breaks).
    expect(doc.findings.map((f) => f.rule).sort()).toEqual(["child-schema/mismatch", "security/path"]);
    expect(readFileSync(join(dir, IGNORE_FILE), "utf8")).toBe(written);
  });

  test("creates the file when there is none, and exits 0 once nothing but what it let through was found", async () => {
    const { [".ai/tools/p/tool.yaml"]: _, ...fine } = tools();
    const dir = makeProject(fine);
    const r = await runKiwi(["check", "--add-ignores"], { cwd: dir });
    expect([r.exitCode, r.stdout]).toEqual([0, ""]);
    expect(readFileSync(join(dir, IGNORE_FILE), "utf8")).toStartWith("# Findings this project lets through on purpose (kiwi check reads this file): say why in each reason.\n\nignore:\n  - rule: ");
    expect((await runKiwi(["check"], { cwd: dir })).exitCode).toBe(0);
  });

  test("--expires dates every entry it adds; a day that has come, a non-date, or --expires alone is a usage error and writes nothing", async () => {
    const { [".ai/tools/p/tool.yaml"]: _, ...fine } = tools();
    const dir = makeProject(fine);
    for (const [args, message] of [
      [["--add-ignores", "--expires", "2020-01-01"], /--expires 2020-01-01 is not after today \(\d{4}-\d\d-\d\d, UTC\): an entry that expires then ignores nothing/],
      [["--add-ignores", "--expires", "31/03/2027"], /--expires "31\/03\/2027" is not a date \(YYYY-MM-DD\)/],
      [["--expires", "2999-01-01"], /--expires goes with --add-ignores/],
    ] as const) {
      const u = await runKiwi(["check", ...args], { cwd: dir });
      expect(u.exitCode).toBe(2);
      expect(u.stderr).toMatch(message);
      expect(u.stderr).toContain("hint:");
      expect(existsSync(join(dir, IGNORE_FILE))).toBe(false);
    }
    const r = await runKiwi(["check", "--add-ignores", "--expires", "2999-01-01"], { cwd: dir });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`added 2 entries to ${IGNORE_FILE}, each expiring on 2999-01-01: review each one`);
    const written = readFileSync(join(dir, IGNORE_FILE), "utf8");
    expect(written.match(/\n {4}expires: 2999-01-01\n/g)?.length).toBe(2);
    const json = JSON.parse((await runKiwi(["check", "--json"], { cwd: dir })).stdout) as { ignored: { ignored_by: { expires?: string } }[] };
    expect(json.ignored.map((f) => f.ignored_by.expires)).toEqual(["2999-01-01", "2999-01-01"]);
    // The day comes (written here as past): the entries ignore nothing, each says so, the findings are back.
    writeFileSync(join(dir, IGNORE_FILE), written.replaceAll("2999-01-01", "2020-01-01"));
    const expired = await runKiwi(["check"], { cwd: dir });
    expect(expired.exitCode).toBe(1);
    expect(expired.stdout.match(/warning {2}ignore\/expired {2}entry \d \(security\/secret-literal, tool \w+\) expired on 2020-01-01, so it ignores nothing/g)?.length).toBe(2);
    expect(expired.stdout.match(/error {2}security\/secret-literal/g)?.length).toBe(2);
    // A baseline run now adds no undated entry behind the expired ones' backs: it names each, and the file stays as it was.
    const dated = readFileSync(join(dir, IGNORE_FILE), "utf8");
    const baseline = await runKiwi(["check", "--add-ignores"], { cwd: dir });
    expect(baseline.exitCode).toBe(1);
    expect(baseline.stdout.match(/error {2}security\/secret-literal/g)?.length).toBe(2);
    expect(baseline.stderr).not.toMatch(/^added \d/m);
    const lines = [...dated.matchAll(/^ {2}- /gm)].map((m) => dated.slice(0, m.index).split("\n").length);
    for (const line of lines) expect(baseline.stderr).toContain(`added no entry for 1 finding that ${IGNORE_FILE}:${line} let through until it expired on 2020-01-01: fix it, or, if its reason still holds, give that entry a later date`);
    expect(readFileSync(join(dir, IGNORE_FILE), "utf8")).toBe(dated);
    const doc = JSON.parse((await runKiwi(["check", "--add-ignores", "--json"], { cwd: dir })).stdout) as { added: unknown[]; not_added: { rule: string; expired_entry: unknown }[] };
    expect(doc.added).toEqual([]);
    expect(doc.not_added.map((n) => [n.rule, n.expired_entry])).toEqual(lines.map((line) => ["security/secret-literal", { file: IGNORE_FILE, line, expires: "2020-01-01" }]));
  });

  test("a file it cannot add to is left as it was (E_INPUT_INVALID); --staged and SARIF do not go with it", async () => {
    const dir = makeProject({ ...tools(), [IGNORE_FILE]: "ignore: [unclosed\n" });
    const r = await runKiwi(["check", "--add-ignores"], { cwd: dir });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`error[E_INPUT_INVALID]: cannot add entries to ${IGNORE_FILE}: it is not valid YAML`);
    expect(readFileSync(join(dir, IGNORE_FILE), "utf8")).toBe("ignore: [unclosed\n");
    const listed = makeProject({ ...tools(), [IGNORE_FILE]: "ignore: security/host-any\n" });
    expect((await runKiwi(["check", "--add-ignores"], { cwd: listed })).stderr).toContain(`cannot add entries to ${IGNORE_FILE}: "ignore" is not a list`);
    for (const extra of [["--staged"], ["--format", "sarif"]]) {
      const u = await runKiwi(["check", "--add-ignores", ...extra], { cwd: dir });
      expect(u.exitCode).toBe(2);
      expect(u.stderr).toContain("error[E_USAGE]: --add-ignores does not go with");
    }
  });
});
