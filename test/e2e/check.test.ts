// `kiwi check` through the compiled binary: the fixture tree of every tool type and form, the
// three output formats, scoping to paths, --strict, and exit codes.
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KIWI_BIN, REPO_ROOT, hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { git, repoEnv, run } from "./git-helpers.ts";

afterAll(cleanupTemps);

const FIXTURE = join(REPO_ROOT, "test", "fixtures", "trees", "every-form");

/** A private copy of the fixture tree, so a test can break it. */
function fixtureCopy(): string {
  const dir = makeTemp("kiwi-check-");
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

/** Breaks three tools of the copy in three different ways. */
function brokenCopy(): string {
  const dir = fixtureCopy();
  const weather = join(dir, ".ai/tools/apis/weather.yaml");
  writeFileSync(weather, readFileSync(weather, "utf8").replace("method: GET", "method: FETCH"));
  const dp = join(dir, ".ai/tools/scripts/data_processor/main.py");
  writeFileSync(dp, "def main(:\n    pass\n");
  const pr = join(dir, ".ai/tools/mcp/github_create_pr.yml");
  writeFileSync(pr, readFileSync(pr, "utf8").replace("executor: github_mcp", "executor: github_mpc"));
  return dir;
}

describe("kiwi check on the fixture tree of every type and form", () => {
  test("passes with exit 0, nothing on stdout and a summary on stderr", async () => {
    const r = await runKiwi(["check", "--cwd", FIXTURE]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^✔ 16 tools checked, no problems \(\d+ ms\)\n$/);
  });

  test("--json gives one stable document", async () => {
    const r = await runKiwi(["check", "--cwd", FIXTURE, "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, tools_checked: 16, counts: { error: 0, warning: 0, info: 0 }, findings: [], ignored: [] });
    expect(r.stderr).toBe("");
  });
});

describe("kiwi check on a broken tree", () => {
  test("groups findings by file, one line each with the hint below, and exits 1", async () => {
    const dir = brokenCopy();
    const r = await runKiwi(["check"], { cwd: dir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(
      [
        '.ai/tools/apis/weather.yaml:6:3  error  api/method  method "FETCH" is not one of GET, POST, PUT, PATCH, DELETE, HEAD',
        "    hint: use one of them, in capitals: method: GET",
        "",
        '.ai/tools/mcp/github_create_pr.yml:4:1  error  chain/missing-executor  executor "github_mpc" of github_create_pr does not exist',
        '    hint: did you mean "github_mcp"?',
        "",
        ".ai/tools/scripts/data_processor/main.py:1:10  error  script/syntax  Python syntax error: invalid syntax",
        "    hint: fix the script; kiwi checked it with python3's ast.parse without running it",
        "",
      ].join("\n"),
    );
    expect(r.stderr).toMatch(/^✖ 3 errors, 0 warnings, 0 infos in 16 tools checked \(\d+ ms\)\n$/);
  });

  test("--json lists every finding with rule, position, pointer and tool", async () => {
    const r = await runKiwi(["check", "--json"], { cwd: brokenCopy() });
    expect(r.exitCode).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.counts).toEqual({ error: 3, warning: 0, info: 0 });
    expect(doc.findings[0]).toEqual({
      rule: "api/method",
      severity: "error",
      file: ".ai/tools/apis/weather.yaml",
      line: 6,
      column: 3,
      pointer: "/config/method",
      tool: "weather",
      message: 'method "FETCH" is not one of GET, POST, PUT, PATCH, DELETE, HEAD',
      hint: "use one of them, in capitals: method: GET",
    });
    expect(r.stderr).toBe("");
  });

  test("--format sarif gives SARIF 2.1.0 with stable rule ids and repository-relative URIs", async () => {
    const r = await runKiwi(["check", "--format", "sarif"], { cwd: brokenCopy() });
    expect(r.exitCode).toBe(1);
    const sarif = JSON.parse(r.stdout);
    expect(sarif.version).toBe("2.1.0");
    const run = sarif.runs[0];
    expect(run.tool.driver.name).toBe("kiwi");
    const ruleIds = run.tool.driver.rules.map((rule: { id: string }) => rule.id);
    expect(ruleIds).toContain("api/method");
    const result = run.results.find((x: { ruleId: string }) => x.ruleId === "api/method");
    expect(ruleIds[result.ruleIndex]).toBe("api/method");
    expect(result.level).toBe("error");
    expect(result.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: ".ai/tools/apis/weather.yaml", uriBaseId: "%SRCROOT%" },
      region: { startLine: 6, startColumn: 3 },
    });
    expect(r.stdout).not.toContain(REPO_ROOT);
  });

  test("reports on the given paths only, while chain rules still see the whole tree", async () => {
    const dir = brokenCopy();
    const r = await runKiwi(["check", ".ai/tools/apis", "github_create_pr", "--json"], { cwd: dir });
    expect(r.exitCode).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.findings.map((f: { rule: string }) => f.rule)).toEqual(["api/method", "chain/missing-executor"]);
    expect(doc.tools_checked).toBe(2);
  });

  test("from a subfolder, human output names files from there, as --staged does; --json and SARIF keep project-relative paths", async () => {
    const dir = brokenCopy();
    const env = repoEnv();
    await git(dir, env, "init", "-q", ".");
    await git(dir, env, "add", ".ai/tools/apis/weather.yaml");
    const here = join(dir, ".ai/tools/apis");
    const plain = await run([KIWI_BIN, "check", "weather"], here, env);
    expect(plain.exitCode).toBe(1);
    expect(plain.stdout).toStartWith("weather.yaml:6:3  error  api/method  ");
    const staged = await run([KIWI_BIN, "check", "--staged"], here, env);
    expect(staged.stdout).toStartWith("weather.yaml:6:3  error  api/method  ");
    const top = await run([KIWI_BIN, "check", "weather"], dir, env);
    expect(top.stdout).toStartWith(".ai/tools/apis/weather.yaml:6:3  error  api/method  ");
    const json = JSON.parse((await run([KIWI_BIN, "check", "weather", "--json"], here, env)).stdout) as { findings: { file: string }[] };
    expect(json.findings.map((f) => f.file)).toEqual([".ai/tools/apis/weather.yaml"]);
    const sarif = JSON.parse((await run([KIWI_BIN, "check", "weather", "--format", "sarif"], here, env)).stdout) as { runs: { results: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[] };
    expect(sarif.runs[0]!.results[0]!.locations[0]!.physicalLocation.artifactLocation.uri).toBe(".ai/tools/apis/weather.yaml");
    // The staged check's documents too: a URI relative to the folder it ran in names no file under %SRCROOT%.
    const stagedJson = JSON.parse((await run([KIWI_BIN, "check", "--staged", "--json"], here, env)).stdout) as { findings: { file: string }[]; staged: { project: string }[] };
    expect([stagedJson.findings.map((f) => f.file), stagedJson.staged.map((p) => p.project)]).toEqual([[".ai/tools/apis/weather.yaml"], ["."]]);
    const stagedSarif = JSON.parse((await run([KIWI_BIN, "check", "--staged", "--format", "sarif"], here, env)).stdout) as typeof sarif;
    expect(stagedSarif.runs[0]!.results[0]!.locations[0]!.physicalLocation.artifactLocation.uri).toBe(".ai/tools/apis/weather.yaml");
  });

  test("a built-in's id checks that built-in: one tool checked, not none", async () => {
    const r = await runKiwi(["check", "python_runtime", "--json"], { cwd: fixtureCopy() });
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, tools_checked: 1, findings: [] });
    const human = await runKiwi(["check", "python_runtime"], { cwd: fixtureCopy() });
    expect([human.exitCode, human.stdout]).toEqual([0, ""]);
    expect(human.stderr).toMatch(/^✔ 1 tool checked, no problems \(\d+ ms\)\n$/);
  });

  test("a tool with only warnings exits 0, and --strict makes the security warnings errors", async () => {
    const dir = makeProject({
      ".ai/tools/risky.yaml": "tool_id: risky\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://x.test' }\nrequires: [shell.execute, { net.outbound: [x.test] }, { fs.read: [./d] }]\n",
    });
    const loose = await runKiwi(["check"], { cwd: dir });
    expect(loose.exitCode).toBe(0);
    expect(loose.stdout).toContain("warning  security/risky-combination");
    expect(loose.stderr).toContain("1 warning");
    const strict = await runKiwi(["check", "--strict"], { cwd: dir });
    expect(strict.exitCode).toBe(1);
    expect(strict.stdout).toContain("error  security/risky-combination");
  });

  test("a token written into a manifest is an error at its line, shown by four characters; kiwi lock refuses to hash it", async () => {
    // Built here, not written out: a scanner of this repository must not find a key in its tests.
    const token = "ghp_" + "Kw9".repeat(12);
    const dir = makeProject({
      ".ai/tools/gh/tool.yaml": `tool_id: gh\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n  env:\n    GH_TOKEN: ${token}\n`,
      ".ai/tools/gh/main.sh": "echo ok\n",
    });
    const checked = await runKiwi(["check"], { cwd: dir });
    expect(checked.exitCode).toBe(1);
    expect(checked.stdout).toContain(".ai/tools/gh/tool.yaml:8:5  error  security/secret-literal  config.env.GH_TOKEN holds what looks like a GitHub token (ghp_…)");
    const locked = await runKiwi(["lock"], { cwd: dir });
    expect(locked.exitCode).not.toBe(0);
    expect(locked.stderr).toContain("security/secret-literal");
    expect(existsSync(join(dir, "tool.lock.json"))).toBe(false);
    for (const r of [checked, locked]) expect(r.stdout + r.stderr).not.toContain(token.slice(0, 8));
  });

  test("a token written into a tool's script or helper is an error at its file and line, in SARIF too, and the same again warm", async () => {
    // Built here, not written out: a scanner of this repository must not find a key in its tests.
    const token = "ghp_" + "Kw9".repeat(12);
    const dir = makeProject({
      ".ai/tools/gh/tool.yaml": "tool_id: gh\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n",
      ".ai/tools/gh/main.py": "from lib.auth import TOKEN\nprint(len(TOKEN))\n",
      ".ai/tools/gh/lib/auth.py": `# the bot's token\nTOKEN = "${token}"\n`,
      ".ai/tools/gh/logo.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, ...Buffer.from(token)]),
    });
    for (const f of ["gh", "gh/tool.yaml", "gh/main.py", "gh/lib", "gh/lib/auth.py", "gh/logo.png"]) utimesSync(join(dir, ".ai/tools", f), new Date(2020, 0, 1), new Date(2020, 0, 1));
    const env = hermeticEnv();
    const checked = await runKiwi(["check"], { cwd: dir, env });
    expect(checked.exitCode).toBe(1);
    expect(checked.stdout).toContain(".ai/tools/gh/lib/auth.py:2:10  error  security/secret-literal  line 2 holds what looks like a GitHub token (ghp_…); the file is committed with the tool");
    expect(checked.stdout.match(/error  security\/secret-literal/g)).toHaveLength(1);
    const sarif = await runKiwi(["check", "--format", "sarif"], { cwd: dir, env });
    const results = (JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[] }).runs[0]!.results;
    expect(results.map((r) => [r.ruleId, r.locations[0]!.physicalLocation.artifactLocation.uri, r.locations[0]!.physicalLocation.region.startLine])).toEqual([["security/secret-literal", ".ai/tools/gh/lib/auth.py", 2]]);
    for (const r of [checked, sarif]) expect(r.stdout + r.stderr).not.toContain(token.slice(0, 8));
    // kiwi lock judges manifests and chains, as it leaves the interpreters' syntax checks to kiwi check.
    expect((await runKiwi(["lock"], { cwd: dir, env })).exitCode).toBe(0);
    // Warm, what the file holds comes from the cache (its identity is unchanged), and is the same.
    const again = await runKiwi(["check"], { cwd: dir, env });
    expect([again.exitCode, again.stdout]).toEqual([checked.exitCode, checked.stdout]);
  });

  test("a token passed as an argument is a warning at its line, an error with --strict; the same token in config.env is none; a literal key is a warning", async () => {
    const dir = makeProject({
      ".ai/tools/gh/tool.yaml": "tool_id: gh\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n  args: ['--token', '${GH_TOKEN}']\n",
      ".ai/tools/gh/main.sh": "echo ok\n",
      ".ai/tools/gh2/tool.yaml": "tool_id: gh2\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n  env: { GH_TOKEN: '${GH_TOKEN}' }\n",
      ".ai/tools/gh2/main.sh": "echo ok\n",
      ".ai/tools/gh3/tool.yaml": "tool_id: gh3\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n  env: { API_KEY: 3f9a7c2e5b8d1f4a6c0e9b7d2a5f8c1e }\n",
      ".ai/tools/gh3/main.sh": "echo ok\n",
    });
    const loose = await runKiwi(["check", "--json"], { cwd: dir });
    expect(loose.exitCode).toBe(0);
    const literal = (JSON.parse(loose.stdout) as { findings: { rule: string; file: string; line: number; severity: string }[] }).findings.filter((f) => f.rule === "security/secret-value");
    expect(literal.map((f) => [f.file, f.line, f.severity])).toEqual([[".ai/tools/gh3/tool.yaml", 7, "warning"]]);
    const findings = (JSON.parse(loose.stdout) as { findings: { rule: string; file: string; line: number; severity: string; message: string }[] }).findings.filter((f) => f.rule === "security/secret-in-args");
    expect(findings.map((f) => [f.file, f.line, f.severity])).toEqual([[".ai/tools/gh/tool.yaml", 7, "warning"]]);
    expect(findings[0]!.message).toContain("config.args[1] passes ${GH_TOKEN}");
    const strict = await runKiwi(["check", "--strict"], { cwd: dir });
    expect(strict.exitCode).toBe(1);
    expect(strict.stdout).toContain("error  security/secret-in-args");
  });
});

describe("kiwi-ignore comments, from the binary", () => {
  // Built here, not written out: a scanner of this repository must not find a key in its tests.
  const token = "ghp_" + "Kw9".repeat(12);
  const manifest = (comment: string) => `tool_id: gh\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n  env:\n    GH_TOKEN: ${token}${comment}\n`;
  const ignoring = "  # kiwi-ignore: security/secret-literal -- revoked, the docs' example";

  test("a finding the comment names is let through, said in the summary, listed in --json and suppressed in SARIF", async () => {
    const dir = makeProject({ ".ai/tools/gh/tool.yaml": manifest(ignoring), ".ai/tools/gh/main.sh": "echo ok\n" });
    const human = await runKiwi(["check"], { cwd: dir });
    expect([human.exitCode, human.stdout]).toEqual([0, ""]);
    expect(human.stderr).toMatch(/^✔ 1 tool checked, no problems, 1 ignored by kiwi-ignore comments \(\d+ ms\)\n$/);
    const json = await runKiwi(["check", "--json"], { cwd: dir });
    const doc = JSON.parse(json.stdout) as { ok: boolean; findings: unknown[]; ignored: { rule: string; line: number; ignored_by: unknown }[] };
    expect([json.exitCode, doc.ok, doc.findings]).toEqual([0, true, []]);
    expect(doc.ignored.map((f) => [f.rule, f.line, f.ignored_by])).toEqual([["security/secret-literal", 8, { line: 8, reason: "revoked, the docs' example" }]]);
    const sarif = await runKiwi(["check", "--format", "sarif"], { cwd: dir });
    const results = (JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; level: string; suppressions?: unknown }[] }[] }).runs[0]!.results;
    expect(results.map((r) => [r.ruleId, r.level, r.suppressions])).toEqual([["security/secret-literal", "error", [{ kind: "inSource", justification: "revoked, the docs' example" }]]]);
    for (const r of [human, json, sarif]) expect(r.stdout + r.stderr).not.toContain(token.slice(0, 8));
  });

  test("kiwi lock hashes the tool while the comment is there, and refuses again once it is gone", async () => {
    const dir = makeProject({ ".ai/tools/gh/tool.yaml": manifest(ignoring), ".ai/tools/gh/main.sh": "echo ok\n" });
    // Old enough for the lock to remember the tree it checked, so the next lock checks only what changed.
    const backdate = (year: number) => {
      for (const f of ["", "/gh", "/gh/tool.yaml", "/gh/main.sh"]) utimesSync(join(dir, ".ai/tools", f), new Date(year, 0, 1), new Date(year, 0, 1));
    };
    backdate(2020);
    const env = hermeticEnv(); // one cache for both locks
    const locked = await runKiwi(["lock"], { cwd: dir, env });
    expect(locked.exitCode).toBe(0);
    const lockfile = readFileSync(join(dir, "tool.lock.json"), "utf8");
    // The manifest's canonical form, and so the tool's integrity, does not change with a comment:
    // the pre-lock check must still judge the tool again.
    writeFileSync(join(dir, ".ai/tools/gh/tool.yaml"), manifest(""));
    backdate(2021);
    const refused = await runKiwi(["lock"], { cwd: dir, env });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain("security/secret-literal");
    expect(readFileSync(join(dir, "tool.lock.json"), "utf8")).toBe(lockfile);
  });

  test("a misspelt rule is a warning at the comment, and the finding it meant stays an error", async () => {
    const dir = makeProject({ ".ai/tools/gh/tool.yaml": manifest("  # kiwi-ignore: security/secret-litteral"), ".ai/tools/gh/main.sh": "echo ok\n" });
    const r = await runKiwi(["check"], { cwd: dir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain(".ai/tools/gh/tool.yaml:8:5  error  security/secret-literal");
    expect(r.stdout).toContain(".ai/tools/gh/tool.yaml:8:57  warning  ignore/invalid  the kiwi-ignore comment names security/secret-litteral, which is not one of kiwi's rules\n    hint: did you mean security/secret-literal?");
  });
});

describe("kiwi check usage errors", () => {
  test.each([
    [["check", "no_such_tool"], "E_TOOL_NOT_FOUND"],
    [["check", "--format", "xml"], "E_USAGE"],
    [["check", "--json", "--format", "sarif"], "E_USAGE"],
  ])("kiwi %p exits 2 with %s", async (args, code) => {
    const r = await runKiwi(args, { cwd: FIXTURE });
    expect(r.exitCode).toBe(2);
    // Under --json the error itself is the one document on stdout.
    if (args.includes("--json")) expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code } });
    else expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`error[${code}]`);
    expect(r.stderr).toContain("hint:");
  });

  test("outside a project it exits 2 with E_NO_PROJECT, and --json still prints one document", async () => {
    const r = await runKiwi(["check", "--json"], { cwd: makeTemp() });
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "E_NO_PROJECT" } });
  });
});

describe("kiwi check: a script in another language than its runtime", () => {
  test.each([
    ["x.sh", "#!/bin/bash\n# ---\n# tool_id: x\n# tool_type: script\n# version: 1.0.0\n# executor: python_runtime\n# ---\necho hi\n", "python_runtime", ".sh", "bash_runtime"],
    ["y.py", '"""\ntool_id: y\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\n"""\nprint(1)\n', "bash_runtime", ".py", "python_runtime"],
  ])("%s on the wrong runtime fails --strict and names the right one", async (file, text, runtime, ext, right) => {
    const root = makeProject({ [`.ai/tools/${file}`]: text });
    const r = await runKiwi(["check", "--strict", "--json"], { cwd: root });
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).findings).toContainEqual(expect.objectContaining({ rule: "script/runtime-language", message: `the entry point "${file}" is a ${ext} file, but ${runtime} does not run ${ext} files`, hint: `use executor: ${right}, or an entry point ${runtime} runs` }));
  });
});

describe("kiwi check: one notion of JSON equality", () => {
  test("an object default equal to an enum member in another key order passes, as exec and ajv accept it", async () => {
    const root = makeProject({ ".ai/tools/t.yaml": "tool_id: t\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://x.test' }\nrequires:\n  - net.outbound: [x.test]\nparameters:\n  - { name: opts, type: object, enum: [{ a: 1, b: 2 }], default: { b: 2, a: 1 } }\n" });
    const r = await runKiwi(["check", "--json"], { cwd: root });
    expect([r.exitCode, JSON.parse(r.stdout).findings]).toEqual([0, []]);
  });
});

describe("kiwi check: untrusted patterns", () => {
  // Each pattern took 30 s or more on 5,001 characters with the backtracking RegExp engine; on the
  // linear-time one the verdict arrives long before the generous bound below (no speed is asserted).
  test("a polynomial pattern is judged on 20,001 characters, in a parameter default and in a child schema; lookaround is refused with file and pointer", async () => {
    const long = "a".repeat(20_000);
    const root = makeProject({
      ".ai/tools/rt.yaml": [
        "tool_id: rt",
        "tool_type: runtime",
        "version: 1.0.0",
        "executor: subprocess",
        "config: { command: bash }",
        "validation:",
        "  child_schemas:",
        "    - match: { tool_type: script }",
        "      schema: { type: object, properties: { config: { type: object, properties: { label: { type: string, pattern: '^[a-z]+[a-z0-9]+[a-z]+$' } } } } }",
        "",
      ].join("\n"),
      ".ai/tools/slug/tool.yaml": [
        "tool_id: slug",
        "tool_type: script",
        "version: 1.0.0",
        "executor: rt",
        "config:",
        "  entrypoint: main.sh",
        `  label: "${long}!"`,
        "parameters:",
        `  - { name: s, type: string, pattern: '^a*a*a*$', default: "${long}b" }`,
        "  - { name: t, type: string, pattern: '^(?=a)a$' }",
        "",
      ].join("\n"),
      ".ai/tools/slug/main.sh": "echo ok\n",
    });
    const r = await runKiwi(["check", "--json"], { cwd: root, timeoutMs: 110_000 });
    expect(r.exitCode).toBe(1);
    const findings = JSON.parse(r.stdout).findings as { rule: string; file: string; pointer: string; message: string }[];
    expect(findings.map((f) => [f.rule, f.file, f.pointer])).toEqual([
      ["child-schema/mismatch", ".ai/tools/slug/tool.yaml", "/config/label"],
      ["parameters/default", ".ai/tools/slug/tool.yaml", "/parameters/0/default"],
      ["parameters/pattern", ".ai/tools/slug/tool.yaml", "/parameters/1/pattern"],
    ]);
    expect(findings[0]!.message).toContain('must match pattern "^[a-z]+[a-z0-9]+[a-z]+$"');
    expect(findings[1]!.message).toContain('must match pattern "^a*a*a*$"');
    expect(findings[2]!.message).toContain("linear-time engine, which has no lookaround or backreferences");
  }, 120_000);
});

describe("kiwi check: remembered child_schemas verdicts", () => {
  test("a second run, served from the cache, prints exactly what the first did; a damaged memo is judged afresh", async () => {
    const root = makeProject({
      ".ai/tools/rt.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: ruby }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object, properties: { config: { type: object, additionalProperties: false, properties: { entrypoint: { type: string }, label: { type: string, pattern: '^[a-z]+$' } } } } }\n    - match: { tool_type: api }\n      schema: { type: 12 }\n",
      ".ai/tools/rb/tool.yaml": "tool_id: rb\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: main.rb\n  label: Not A Slug\n  extra: 1\n",
      ".ai/tools/rb/main.rb": "puts 1\n",
      ".ai/tools/py/tool.yaml": "tool_id: py\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.sh\n",
      ".ai/tools/py/main.sh": "echo 1\n",
    });
    const env = hermeticEnv();
    const memo = join(env.KIWI_CACHE_DIR!, "check", "child-schemas-v1.json");
    const first = await runKiwi(["check", "--json"], { cwd: root, env });
    expect(first.exitCode).toBe(1);
    expect(first.stderr).toBe("");
    expect(JSON.parse(first.stdout).findings.map((f: { rule: string; file: string; pointer: string }) => [f.rule, f.file, f.pointer])).toEqual([
      ["child-schema/mismatch", ".ai/tools/py/tool.yaml", "/config/entrypoint"],
      ["child-schema/mismatch", ".ai/tools/rb/tool.yaml", "/config"],
      ["child-schema/mismatch", ".ai/tools/rb/tool.yaml", "/config/label"],
      ["child-schema/invalid", ".ai/tools/rt.yaml", "/validation/child_schemas/1/schema/type"],
    ]);
    expect(existsSync(memo)).toBe(true);
    expect(await runKiwi(["check", "--json"], { cwd: root, env })).toEqual(first);
    const human = await runKiwi(["check"], { cwd: root, env: hermeticEnv() });
    const warmHuman = await runKiwi(["check"], { cwd: root, env });
    expect([warmHuman.exitCode, warmHuman.stdout]).toEqual([human.exitCode, human.stdout]);
    writeFileSync(memo, readFileSync(memo, "utf8").replace('"message":"', '"message":"x'));
    expect(await runKiwi(["check", "--json"], { cwd: root, env })).toEqual(first);
  });
});
