// The pre-commit framework (Debian's `pre-commit`) driving this repository's .pre-commit-hooks.yaml
// in a temporary git repository: a bad manifest and a stale lockfile block the commit, a good
// change passes. No network: the hook repository is a local clone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { git, repoEnv, run } from "./git-helpers.ts";
import { needs } from "../helpers/needs.ts";

afterAll(cleanupTemps);

// CI installs pre-commit (.ci/run): there a missing framework is a failure, not a skip.
const hasPreCommit = Bun.which("pre-commit") !== null || process.env.CI === "true";
// The scaffold's MCP server would be started (through npx) to pin it on "kiwi lock"; not here.
const env = repoEnv({ KIWI_MCP_MODE: "off" });
const SLOW = 60_000;
let project = "";

/** A one-commit repository holding this checkout's .pre-commit-hooks.yaml, as a user would reference. */
async function hooksRepo(): Promise<{ path: string; rev: string }> {
  const path = makeTemp("kiwi-hooks-repo-");
  await git(path, env, "init", "-q", "-b", "main", ".");
  copyFileSync(join(REPO_ROOT, ".pre-commit-hooks.yaml"), join(path, ".pre-commit-hooks.yaml"));
  await git(path, env, "add", ".pre-commit-hooks.yaml");
  await git(path, env, "commit", "-q", "-m", "hooks");
  return { path, rev: (await git(path, env, "rev-parse", "HEAD")).trim() };
}

/** `git commit`; git hands hook output to stderr, so `output` is where pre-commit's report is. */
async function commit(message: string): Promise<{ exitCode: number; output: string }> {
  const r = await run(["git", "commit", "-m", message], project, env);
  return { exitCode: r.exitCode, output: r.stderr + r.stdout };
}

describe.skipIf(!needs(hasPreCommit, "pre-commit is not installed"))("the pre-commit framework with kiwi's hook", () => {
  beforeAll(async () => {
    const hooks = await hooksRepo();
    project = makeTemp("kiwi-precommit-");
    await git(project, env, "init", "-q", "-b", "main", ".");
    const init = await runKiwi(["init"], { cwd: project, env });
    expect(init.exitCode).toBe(0);
    writeFileSync(join(project, ".pre-commit-config.yaml"), `repos:\n  - repo: ${hooks.path}\n    rev: ${hooks.rev}\n    hooks:\n      - id: kiwi-check\n`);
    await git(project, env, "add", "-A");
    await git(project, env, "commit", "-q", "-m", "kiwi init");
    const install = await run(["pre-commit", "install"], project, env);
    expect(install.exitCode).toBe(0);
  }, SLOW);

  test("a good change, locked and staged, passes", async () => {
    const script = join(project, ".ai/tools/greet.sh");
    writeFileSync(script, readFileSync(script, "utf8").replace("Hello", "Hi"));
    expect((await runKiwi(["lock"], { cwd: project, env })).exitCode).toBe(0);
    await git(project, env, "add", ".ai/tools/greet.sh", "tool.lock.json");
    const r = await commit("friendlier greeting");
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/kiwi check\.+Passed/);
    expect(await git(project, env, "log", "--format=%s", "-1")).toBe("friendlier greeting\n");
  }, SLOW);

  test("a bad manifest blocks the commit", async () => {
    writeFileSync(join(project, ".ai/tools/broken.yaml"), "tool_id: broken\ntool_type: scirpt\nversion: 1.0\nexecutor: python_runtime\n");
    await git(project, env, "add", ".ai/tools/broken.yaml");
    const r = await commit("add a broken tool");
    expect(r.exitCode).toBe(1);
    expect(r.output).toMatch(/kiwi check\.+Failed/);
    expect(r.output).toContain(".ai/tools/broken.yaml:2:1  error  universal/type-unknown");
    expect(r.output).toContain("universal/version-semver");
    expect(await git(project, env, "log", "--format=%s", "-1")).toBe("friendlier greeting\n");
    await git(project, env, "rm", "-q", "-f", ".ai/tools/broken.yaml");
  }, SLOW);

  test("a stale lockfile blocks the commit, naming the tool, the file and the fix", async () => {
    appendFileSync(join(project, ".ai/tools/word_count.py"), "# a change nobody locked\n");
    await git(project, env, "add", ".ai/tools/word_count.py");
    const r = await commit("unlocked change");
    expect(r.exitCode).toBe(1);
    expect(r.output).toMatch(/kiwi check\.+Failed/);
    expect(r.output).toContain("- exit code: 3");
    expect(r.output).toContain("error[E_LOCK_STALE]: tool.lock.json is out of date for this commit: word_count changed");
    expect(r.output).toContain("~ word_count.py");
    expect(r.output).toContain('hint: run "kiwi lock", then "git add tool.lock.json"');
    // No green mark before a blocked commit: the manifests pass, the commit does not.
    expect(r.output).not.toContain("✔");
    expect(r.output).toMatch(/· \d+ tools? checked, no problems in the manifests/);
    expect(await git(project, env, "log", "--format=%s", "-1")).toBe("friendlier greeting\n");
  }, SLOW);

  test("a commit that only deletes a tool still in the lockfile is blocked (pre-commit passes no deleted files)", async () => {
    await git(project, env, "reset", "-q", "--hard");
    await git(project, env, "rm", "-q", ".ai/tools/weather_forecast.yaml");
    const r = await commit("delete a tool");
    expect(r.exitCode).toBe(1);
    expect(r.output).toContain("error[E_LOCK_STALE]: tool.lock.json is out of date for this commit: weather_forecast removed");
    await git(project, env, "reset", "-q", "--hard");
  }, SLOW);

  test("a commit that touches no tool passes quickly", async () => {
    await git(project, env, "reset", "-q", "--hard");
    writeFileSync(join(project, "NOTES.md"), "notes\n");
    await git(project, env, "add", "NOTES.md");
    const r = await commit("notes");
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/kiwi check\.+Passed/);
  }, SLOW);
});

// The README's second snippet: a `repo: local` hook, no reference to this repository at all.
const LOCAL_CONFIG = `repos:
  - repo: local
    hooks:
      - id: kiwi-check
        name: kiwi check
        entry: kiwi check --staged
        language: system
        files: (^|/)(\\.ai/tools/|\\.ai/kiwi-ignore\\.yaml$|tool\\.lock\\.json$)
        pass_filenames: true
        always_run: true
        require_serial: true
`;

describe.skipIf(!needs(hasPreCommit, "pre-commit is not installed"))("the pre-commit framework with a repo: local hook", () => {
  test("blocks a stale lockfile in a nested project and passes once it is relocked", async () => {
    const repo = makeTemp("kiwi-precommit-local-");
    await git(repo, env, "init", "-q", "-b", "main", ".");
    const svc = join(repo, "services", "agent");
    expect((await runKiwi(["init", "--cwd", svc], { cwd: repo, env })).exitCode).toBe(0);
    writeFileSync(join(repo, ".pre-commit-config.yaml"), LOCAL_CONFIG);
    await git(repo, env, "add", "-A");
    await git(repo, env, "commit", "-q", "-m", "init");
    expect((await run(["pre-commit", "install"], repo, env)).exitCode).toBe(0);

    appendFileSync(join(svc, ".ai/tools/greet.sh"), "# changed\n");
    await git(repo, env, "add", "-A");
    const stale = await run(["git", "commit", "-m", "stale"], repo, env);
    expect(stale.exitCode).toBe(1);
    expect(stale.stderr + stale.stdout).toContain("error[E_LOCK_STALE]: services/agent/tool.lock.json is out of date for this commit: greet changed");

    expect((await runKiwi(["lock"], { cwd: svc, env })).exitCode).toBe(0);
    await git(repo, env, "add", "-A");
    const good = await run(["git", "commit", "-m", "good"], repo, env);
    expect(good.exitCode).toBe(0);
    expect(good.stderr + good.stdout).toMatch(/kiwi check\.+Passed/);
  }, SLOW);
});
