// `kiwi hook install|uninstall` from the compiled binary, and the plain git hook it writes doing
// its job on real commits.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KIWI_BIN, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { git, repoEnv, run } from "./git-helpers.ts";
import { canUnshareMounts } from "./lock-helpers.ts";
import { needs } from "../helpers/needs.ts";

afterAll(cleanupTemps);

const SLOW = 60_000;
const env = repoEnv({ KIWI_MCP_MODE: "off" });

async function initRepo(): Promise<string> {
  const root = makeTemp("kiwi-hook-");
  await git(root, env, "init", "-q", "-b", "main", ".");
  expect((await runKiwi(["init"], { cwd: root, env })).exitCode).toBe(0);
  await git(root, env, "add", "-A");
  await git(root, env, "commit", "-q", "-m", "init");
  return root;
}

const kiwi = (root: string, args: string[], extra: Record<string, string> = {}) => runKiwi(args, { cwd: root, env: { ...env, ...extra } });

describe("kiwi hook", () => {
  test("installs once, then reports it unchanged", async () => {
    const root = await initRepo();
    const first = await kiwi(root, ["hook", "install"]);
    expect([first.exitCode, first.stdout, first.stderr]).toEqual([0, "installed .git/hooks/pre-commit\n", ""]);
    const second = await kiwi(root, ["hook", "install", "--json"]);
    expect(second.exitCode).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ ok: true, status: "unchanged", hook: join(root, ".git/hooks/pre-commit") });
  }, SLOW);

  test("from a subfolder, names the hook as a path from there; one outside the work tree by its absolute path", async () => {
    const root = await initRepo();
    const sub = join(root, "apps", "web");
    mkdirSync(sub, { recursive: true });
    const installed = await kiwi(sub, ["hook", "install", "--cwd", sub]);
    expect([installed.exitCode, installed.stdout, installed.stderr]).toEqual([0, "installed ../../.git/hooks/pre-commit\n", ""]);
    expect(readFileSync(join(sub, "../../.git/hooks/pre-commit"), "utf8")).toContain("check --staged");
    writeFileSync(join(root, ".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const refused = await kiwi(sub, ["hook", "install"]);
    expect(refused.stderr).toContain("error[E_HOOK_EXISTS]: ../../.git/hooks/pre-commit exists and was not written by kiwi\n");
    const forced = await kiwi(sub, ["hook", "install", "--force"]);
    expect([forced.exitCode, forced.stdout, forced.stderr]).toEqual([0, "installed ../../.git/hooks/pre-commit\n", 'kept the previous hook as ../../.git/hooks/pre-commit.pre-kiwi; "kiwi hook uninstall" puts it back\n']);
    expect((await kiwi(join(root, "apps"), ["hook", "uninstall"])).stdout).toBe("removed ../.git/hooks/pre-commit\n");
    const elsewhere = makeTemp("kiwi-hooks-");
    await git(root, env, "config", "core.hooksPath", elsewhere);
    expect((await kiwi(sub, ["hook", "install"])).stdout).toBe(`installed ${join(elsewhere, "pre-commit")}\n`);
  }, SLOW);

  test("refuses a foreign hook with E_HOOK_EXISTS and exit 2, then replaces it with --force", async () => {
    const root = await initRepo();
    const hook = join(root, ".git/hooks/pre-commit");
    writeFileSync(hook, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const refused = await kiwi(root, ["hook", "install"]);
    expect([refused.exitCode, refused.stdout]).toEqual([2, ""]);
    expect(refused.stderr).toContain("error[E_HOOK_EXISTS]: .git/hooks/pre-commit exists and was not written by kiwi\n");
    const forced = await kiwi(root, ["hook", "install", "--force"]);
    expect([forced.exitCode, forced.stdout]).toEqual([0, "installed .git/hooks/pre-commit\n"]);
    expect(forced.stderr).toBe('kept the previous hook as .git/hooks/pre-commit.pre-kiwi; "kiwi hook uninstall" puts it back\n');
    const removed = await kiwi(root, ["hook", "uninstall"]);
    expect([removed.exitCode, removed.stdout]).toEqual([0, "removed .git/hooks/pre-commit\n"]);
    expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\nexit 0\n");
  }, SLOW);

  test.skipIf(!needs(canUnshareMounts(), "mount namespaces (unshare -m) are not available"))("--force on a full disk: the foreign hook stays in place, with no backup left", async () => {
    const root = makeTemp("kiwi-hook-full-");
    await git(root, env, "init", "-q", "-b", "main", ".");
    const hooks = makeTemp("kiwi-hooks-");
    await git(root, env, "config", "core.hooksPath", hooks);
    // A 16 KiB tmpfs as the hooks folder, holding the foreign hook and filled up.
    const script = `set -e; mount -t tmpfs -o size=16k tmpfs "$1"; printf '#!/bin/sh\\necho mine\\n' > "$1/pre-commit"; chmod +x "$1/pre-commit"; head -c 100000 /dev/zero > "$1/fill" 2>/dev/null || true; set +e; "$0" hook install --force; echo "exit $?"; ls "$1"; cat "$1/pre-commit"`;
    const r = await run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, KIWI_BIN, hooks], root, env);
    expect(r.stdout).toBe("exit 2\nfill\npre-commit\n#!/bin/sh\necho mine\n");
    expect(r.stderr).toContain("ENOSPC");
  }, SLOW);

  test("says E_GIT outside a repository", async () => {
    const r = await kiwi(makeTemp("kiwi-nogit-"), ["hook", "install"]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toMatch(/^error\[E_GIT\]: .* is not inside a git repository\n  hint: run "git init" first/);
  });

  test("blocks a commit with a bad manifest or a stale lockfile, and lets a locked change through", async () => {
    const root = await initRepo();
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    const commit = async (message: string) => {
      const r = await run(["git", "commit", "-q", "-m", message], root, env);
      return { exitCode: r.exitCode, output: r.stdout + r.stderr };
    };

    writeFileSync(join(root, ".ai/tools/bad.yaml"), "tool_id: bad\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: FETCH, url: https://x.test/ }\n");
    await git(root, env, "add", ".ai/tools/bad.yaml");
    const bad = await commit("bad");
    expect(bad.exitCode).toBe(1);
    expect(bad.output).toContain(".ai/tools/bad.yaml:5:11  error  api/method");
    await git(root, env, "rm", "-q", "-f", ".ai/tools/bad.yaml");

    appendFileSync(join(root, ".ai/tools/greet.sh"), "# changed\n");
    await git(root, env, "add", ".ai/tools/greet.sh");
    const stale = await commit("stale");
    expect(stale.exitCode).toBe(1);
    expect(stale.output).toContain("error[E_LOCK_STALE]: tool.lock.json is out of date for this commit: greet changed");

    // Relocked but not staged: the commit would still carry the old lockfile.
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    const unstaged = await commit("relocked, not added");
    expect(unstaged.output).toContain("error[E_LOCK_STALE]: tool.lock.json (as staged) is out of date for this commit");

    await git(root, env, "add", "tool.lock.json");
    const good = await commit("good");
    expect(good.exitCode).toBe(0);
    expect(await git(root, env, "log", "--format=%s", "-1")).toBe("good\n");
  }, SLOW);

  test("runs the kiwi that installed it when kiwi is not on PATH", async () => {
    const root = await initRepo();
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    expect(readFileSync(join(root, ".git/hooks/pre-commit"), "utf8")).toContain(`'${KIWI_BIN}' check --staged`);
    appendFileSync(join(root, ".ai/tools/greet.sh"), "# changed\n");
    await git(root, env, "add", ".ai/tools/greet.sh");
    const noKiwiPath = { ...env, PATH: "/usr/bin:/bin" };
    const r = await run(["git", "commit", "-q", "-m", "x"], root, noKiwiPath);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("E_LOCK_STALE");
  }, SLOW);

  test("runs $KIWI as one path, spaces and all", async () => {
    const root = await initRepo();
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    const dir = join(makeTemp("kiwi-bin-"), "my tools ü");
    mkdirSync(dir);
    symlinkSync(KIWI_BIN, join(dir, "kiwi"));
    appendFileSync(join(root, ".ai/tools/greet.sh"), "# changed\n");
    await git(root, env, "add", ".ai/tools/greet.sh");
    const r = await run(["git", "commit", "-q", "-m", "x"], root, { ...env, PATH: "/usr/bin:/bin", KIWI: join(dir, "kiwi") });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("error[E_LOCK_STALE]: tool.lock.json is out of date for this commit: greet changed");
  }, SLOW);

  test("a key a kiwi-ignore comment names commits; without the comment the same manifest is blocked", async () => {
    const root = await initRepo();
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    // Built here, not written out: a scanner of this repository must not find a key in its tests.
    const token = "ghp_" + "Kw9".repeat(12);
    const manifest = (comment: string) => `tool_id: docs_example\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\ndescription: calls the example API\nconfig:\n  url: https://api.example.test/v1\n  headers:\n    X-Example: ${token}${comment}\n`;
    const file = join(root, ".ai/tools/docs_example.yaml");
    const commit = (message: string) => run(["git", "commit", "-q", "-m", message], root, env);

    writeFileSync(file, manifest("  # kiwi-ignore: security/secret-literal -- the vendor's published sample key"));
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "-A");
    const staged = await kiwi(root, ["check", "--staged"]);
    expect([staged.exitCode, staged.stdout]).toEqual([0, ""]);
    expect(staged.stderr).toContain("1 ignored by kiwi-ignore comments");
    const allowed = await commit("an example key, ignored");
    expect(allowed.exitCode).toBe(0);

    writeFileSync(file, manifest(""));
    await git(root, env, "add", "-A");
    for (const attempt of ["first", "again, the staged memo answering"]) {
      const blocked = await commit(attempt);
      expect(blocked.exitCode).toBe(1);
      expect(blocked.stderr).toContain(".ai/tools/docs_example.yaml:9:5  error  security/secret-literal");
    }
  }, SLOW);

  test("a remote tool's files forced into a commit are blocked, however clean; taking them out of git again commits", async () => {
    const root = await initRepo();
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    // As kiwi add places a remote tool: its folder, and kiwi's .gitignore of everything there.
    // Built here, not written out: a scanner of this repository must not find a key in its tests.
    const token = "ghp_" + "Kw9".repeat(12);
    mkdirSync(join(root, ".ai/tools/.remote/mirror"), { recursive: true });
    writeFileSync(join(root, ".ai/tools/.remote/.gitignore"), "*\n");
    writeFileSync(join(root, ".ai/tools/.remote/mirror/tool.yaml"), "tool_id: mirror\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n");
    writeFileSync(join(root, ".ai/tools/.remote/mirror/main.sh"), `curl -H "Authorization: token ${token}" https://api.github.com/user\n`);
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "tool.lock.json");
    await git(root, env, "add", "-f", ".ai/tools/.remote/mirror");
    const commit = (message: string) => run(["git", "commit", "-q", "-m", message], root, env);
    const blocked = await commit("vendor the remote tool");
    expect(blocked.exitCode).toBe(1);
    expect(blocked.stderr).toContain(".ai/tools/.remote/mirror  error  security/remote-committed  this commit stages 2 files of the remote tool in .ai/tools/.remote/mirror");
    expect(blocked.stderr).toContain("hint: unstage it (git rm -r --cached .ai/tools/.remote/mirror) and commit tool.lock.json");
    await git(root, env, "rm", "-r", "-q", "--cached", ".ai/tools/.remote/mirror");
    expect((await commit("the lockfile alone")).exitCode).toBe(0);
  }, SLOW);

  test("a key written into a tool's script blocks the commit; a comment in the script's own language lets it through", async () => {
    const root = await initRepo();
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    // Built here, not written out: a scanner of this repository must not find a key in its tests.
    const token = "ghp_" + "Kw9".repeat(12);
    const script = (comment: string) => `#!/usr/bin/env bash\n# ---\n# tool_id: notify\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\n${comment}curl -H "Authorization: token ${token}" https://api.github.com/user\n`;
    const file = join(root, ".ai/tools/notify.sh");
    const commit = (message: string) => run(["git", "commit", "-q", "-m", message], root, env);

    writeFileSync(file, script(""));
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "-A");
    const blocked = await commit("a key in a script");
    expect(blocked.exitCode).toBe(1);
    expect(blocked.stderr).toContain(".ai/tools/notify.sh:8:31  error  security/secret-literal  line 8 holds what looks like a GitHub token (ghp_…)");

    writeFileSync(file, script("# kiwi-ignore: security/secret-literal -- a revoked token the docs show\n"));
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "-A");
    const allowed = await commit("the same key, ignored");
    expect(allowed.exitCode).toBe(0);
  }, SLOW);

  test("deleting the last tool blocks the commit while tool.lock.json still pins it; kiwi lock says what to do, and following it commits", async () => {
    const root = await initRepo();
    expect((await kiwi(root, ["hook", "install"])).exitCode).toBe(0);
    // git removes the emptied .ai/tools/ folder with its last file.
    await git(root, env, "rm", "-q", "-r", ".ai/tools");
    const blocked = await run(["git", "commit", "-q", "-m", "no tools"], root, env);
    expect(blocked.exitCode).toBe(1);
    expect(blocked.stderr).toContain("error[E_LOCK_STALE]: tool.lock.json is out of date for this commit: ");
    expect(blocked.stderr).toContain("greet removed");
    expect(blocked.stderr).toContain('hint: if the project keeps no tools, delete the lockfile too ("git rm tool.lock.json")');
    const json = await kiwi(root, ["check", "--staged", "--json"]);
    expect(json.exitCode).toBe(3);
    expect(JSON.parse(json.stdout).staged[0]).toMatchObject({ project: ".", gone: expect.arrayContaining(["greet", "word_count"]), lockfile: { status: "stale" } });
    const lock = await kiwi(root, ["lock"]);
    expect(lock.exitCode).toBe(2);
    expect(lock.stderr).toContain(`error[E_NO_PROJECT]: ${join(root, "tool.lock.json")} is left, but ${root} has no .ai/tools/ folder any more`);
    expect(lock.stderr).toContain('"git rm tool.lock.json"');
    // Taken out of git but kept in the working tree, the lockfile pins nothing the commit carries.
    await git(root, env, "rm", "-q", "--cached", "tool.lock.json");
    expect((await kiwi(root, ["check", "--staged"])).exitCode).toBe(0);
    await git(root, env, "reset", "-q", "--", "tool.lock.json");
    await git(root, env, "rm", "-q", "tool.lock.json");
    expect((await run(["git", "commit", "-q", "-m", "no tools"], root, env)).exitCode).toBe(0);
  }, SLOW);

  test("a commit that takes tool.lock.json out of git (git rm --cached) while tools remain is E_LOCK_MISSING, as git rm is", async () => {
    const root = await initRepo();
    await git(root, env, "rm", "-q", "--cached", "tool.lock.json");
    const kept = await kiwi(root, ["check", "--staged"]);
    expect(kept.exitCode).toBe(3);
    expect(kept.stderr).toContain("error[E_LOCK_MISSING]: tool.lock.json is deleted from git's index, so this commit drops it (the copy in the working tree is not committed)\n");
    expect(kept.stderr).toContain('hint: run "kiwi lock", then "git add tool.lock.json"');
    await git(root, env, "reset", "-q", "--", "tool.lock.json");
    await git(root, env, "rm", "-q", "tool.lock.json");
    const removed = await kiwi(root, ["check", "--staged"]);
    expect([removed.exitCode, removed.stderr]).toEqual([3, expect.stringContaining("error[E_LOCK_MISSING]: tool.lock.json is deleted from git's index, so this commit drops it\n")]);
  }, SLOW);

  test("uninstall reports an absent hook and exits 0", async () => {
    const root = await initRepo();
    const r = await kiwi(root, ["hook", "uninstall"]);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, "absent .git/hooks/pre-commit\n", ""]);
  }, SLOW);
});

describe("after a merge", () => {
  /** Two branches that each changed greet.sh and locked, merged: both files conflict; greet.sh is then resolved and everything added. */
  async function conflictedMerge(addLockfile = true): Promise<string> {
    const root = await initRepo();
    const base = readFileSync(join(root, ".ai/tools/greet.sh"), "utf8");
    for (const [branch, line] of [["a", "# from a\n"], ["b", "# from b\n"]] as const) {
      await git(root, env, "checkout", "-q", "-b", branch, "main");
      writeFileSync(join(root, ".ai/tools/greet.sh"), base + line);
      expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
      await git(root, env, "commit", "-q", "-a", "-m", branch);
    }
    await git(root, env, "checkout", "-q", "main");
    await git(root, env, "merge", "-q", "a");
    expect((await run(["git", "merge", "-q", "b"], root, env)).exitCode).toBe(1);
    expect(readFileSync(join(root, "tool.lock.json"), "utf8")).toContain("<<<<<<< HEAD");
    writeFileSync(join(root, ".ai/tools/greet.sh"), base + "# from a\n# from b\n");
    await git(root, env, ...(addLockfile ? ["add", "-A"] : ["add", ".ai/tools/greet.sh"]));
    return root;
  }

  test("conflict markers staged in tool.lock.json: exit 5 naming the conflict, and following the hint word for word commits the merge", async () => {
    const root = await conflictedMerge();
    const r = await kiwi(root, ["check", "--staged"]);
    expect([r.exitCode, r.stdout]).toEqual([5, ""]);
    const hint = 'take one side of the merge whole ("git checkout HEAD -- tool.lock.json", or MERGE_HEAD for the other; kiwi lock rewrites every tool entry from the tree), then run "kiwi lock", then "git add tool.lock.json"';
    expect(r.stderr).toMatch(/error\[E_LOCK_INVALID\]: tool\.lock\.json: unresolved merge conflict \(line \d+: "<<<<<<< HEAD"\)\n/);
    expect(r.stderr).toContain(`  hint: ${hint}\n`);
    // kiwi lock on its own refuses the file (it may hold MCP pins), with the same way out.
    const lock = await kiwi(root, ["lock"]);
    expect(lock.exitCode).toBe(5);
    expect(lock.stderr).toContain("unresolved merge conflict");
    expect(lock.stderr).toContain('then run "kiwi lock"');

    await git(root, env, "checkout", "HEAD", "--", "tool.lock.json");
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "tool.lock.json");
    expect((await kiwi(root, ["check", "--staged"])).exitCode).toBe(0);
    await git(root, env, "commit", "-q", "--no-edit");
    expect((await kiwi(root, ["verify"])).stdout).toContain("tree      ok");
  }, SLOW);

  test("a clean merge of a runtime upgrade and a new tool on the old runtime: verify refuses the lockfile, kiwi lock rewrites the entry and warns", async () => {
    const root = makeTemp("kiwi-merge-");
    const script = (id: string) => `#!/bin/bash\n# ---\n# tool_id: ${id}\n# tool_type: script\n# version: 1.0.0\n# executor: rt\n# ---\necho ${id}\n`;
    const runtime = (version: string) => `tool_id: rt\ntool_type: runtime\nversion: ${version}\nexecutor: subprocess\nconfig: { command: bash }\n`;
    writeTree(root, { ".ai/tools/rt.yaml": runtime("1.0.0"), ".ai/tools/one.sh": script("one") });
    await git(root, env, "init", "-q", "-b", "main", ".");
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "-A");
    await git(root, env, "commit", "-q", "-m", "init");
    await git(root, env, "checkout", "-q", "-b", "upgrade");
    writeFileSync(join(root, ".ai/tools/rt.yaml"), runtime("2.0.0"));
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "commit", "-q", "-a", "-m", "rt 2");
    await git(root, env, "checkout", "-q", "-b", "zzz", "main");
    writeTree(root, { ".ai/tools/zzz.sh": script("zzz") });
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "-A");
    await git(root, env, "commit", "-q", "-m", "zzz");
    await git(root, env, "checkout", "-q", "main");
    await git(root, env, "merge", "-q", "upgrade");
    await git(root, env, "merge", "-q", "zzz");

    const message = 'tool.lock.json: tool "zzz" names the executor rt@1.0.0, which the lockfile does not lock';
    const verify = await kiwi(root, ["verify"]);
    expect(verify.exitCode).toBe(5);
    expect(verify.stderr).toContain(`error[E_LOCK_INVALID]: ${message}\n  hint: tool.lock.json was merged or edited badly: run "kiwi lock", which rewrites every tool entry from the tree\n`);
    const lock = await kiwi(root, ["lock"]);
    expect([lock.exitCode, lock.stdout]).toEqual([0, "~ zzz 1.0.0 (executor)\nwrote tool.lock.json: 0 added, 0 removed, 1 changed (10 tools)\n"]);
    expect(lock.stderr).toContain(`warning: ${message} (merged or edited badly); rewritten from the tool tree\n`);
    expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).tools.zzz.executor).toBe("rt@2.0.0");
    expect((await kiwi(root, ["verify"])).stdout).toContain("tree      ok");
  }, SLOW);

  test("a lockfile still unmerged in git's index is named as a conflict, not as a lockfile that is not staged", async () => {
    const root = await conflictedMerge(false);
    expect(await git(root, env, "status", "--porcelain", "tool.lock.json")).toBe("UU tool.lock.json\n");
    const r = await kiwi(root, ["check", "--staged"]);
    expect([r.exitCode, r.stdout]).toEqual([5, ""]);
    expect(r.stderr).toContain("error[E_LOCK_INVALID]: tool.lock.json: unresolved merge conflict (unmerged in git's index)\n");
    expect(r.stderr).toContain('  hint: take one side of the merge whole ("git checkout HEAD -- tool.lock.json", or MERGE_HEAD for the other; kiwi lock rewrites every tool entry from the tree), then run "kiwi lock", then "git add tool.lock.json"\n');
    await git(root, env, "checkout", "MERGE_HEAD", "--", "tool.lock.json");
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "tool.lock.json");
    expect((await kiwi(root, ["check", "--staged"])).exitCode).toBe(0);
  }, SLOW);

  test("a staged lockfile that is not JSON: the hint restores it before locking, since kiwi lock refuses it", async () => {
    const root = await initRepo();
    appendFileSync(join(root, ".ai/tools/greet.sh"), "# changed\n");
    writeFileSync(join(root, "tool.lock.json"), readFileSync(join(root, "tool.lock.json"), "utf8").slice(0, 300));
    await git(root, env, "add", "-A");
    const r = await kiwi(root, ["check", "--staged"]);
    expect([r.exitCode, r.stdout]).toEqual([5, ""]);
    expect(r.stderr).toContain('hint: restore tool.lock.json from version control ("git checkout HEAD -- tool.lock.json"), then run "kiwi lock", then "git add tool.lock.json"\n');
    await git(root, env, "checkout", "HEAD", "--", "tool.lock.json");
    expect((await kiwi(root, ["lock"])).exitCode).toBe(0);
    await git(root, env, "add", "tool.lock.json");
    expect((await kiwi(root, ["check", "--staged"])).exitCode).toBe(0);
  }, SLOW);
});

describe("kiwi check --staged in a monorepo, from its top", () => {
  test("a stale project lockfile's hint names the project, and following it word for word passes", async () => {
    const root = makeTemp("kiwi-mono-");
    const api = (id: string, version: string) => `tool_id: ${id}\ntool_type: api\nversion: ${version}\nexecutor: http_client\nconfig: { url: 'https://a.example.com' }\nrequires: [{ net.outbound: [a.example.com] }]\n`;
    writeTree(root, { "apps/one/.ai/tools/t.yaml": api("one", "1.0.0"), "two/.ai/tools/t.yaml": api("two", "1.0.0") });
    for (const project of ["apps/one", "two"]) expect((await kiwi(join(root, project), ["lock"])).exitCode).toBe(0);
    await git(root, env, "init", "-q", "-b", "main", ".");
    await git(root, env, "add", "-A");
    await git(root, env, "commit", "-q", "-m", "init");
    writeFileSync(join(root, "apps/one/.ai/tools/t.yaml"), api("one", "1.0.1"));
    await git(root, env, "add", "-A");
    const stale = await kiwi(root, ["check", "--staged"]);
    expect(stale.exitCode).toBe(3);
    // There is no project at the top: a bare "kiwi lock" there is E_NO_PROJECT.
    expect(stale.stderr).toContain('error[E_LOCK_STALE]: apps/one/tool.lock.json is out of date for this commit: one changed\n  hint: run "kiwi lock --cwd apps/one", then "git add apps/one/tool.lock.json"\n');
    // With --json the same error is the document's, its paths from the repository's top wherever the check runs.
    for (const cwd of [root, join(root, "apps/one")]) {
      const json = await kiwi(cwd, ["check", "--staged", "--json"]);
      expect(json.exitCode).toBe(3);
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: false,
        error: { code: "E_LOCK_STALE", message: "apps/one/tool.lock.json is out of date for this commit: one changed", hint: 'run "kiwi lock --cwd apps/one", then "git add apps/one/tool.lock.json"', exitCode: 3 },
        staged: [{ project: "apps/one", lockfile: { status: "stale" } }],
      });
    }
    expect((await kiwi(root, ["lock", "--cwd", "apps/one"])).exitCode).toBe(0);
    await git(root, env, "add", "apps/one/tool.lock.json");
    expect((await kiwi(root, ["check", "--staged"])).exitCode).toBe(0);
    expect(JSON.parse((await kiwi(root, ["check", "--staged", "--json"])).stdout).error).toBeUndefined();
  }, SLOW);

  test("--json and SARIF name each project's files from the repository's top, wherever the check runs", async () => {
    const root = makeTemp("kiwi-mono-");
    const bad = (id: string) => `tool_id: ${id}\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://a.example.com', method: FETCH }\nrequires: [{ net.outbound: [a.example.com] }]\n`;
    writeTree(root, { "apps/one/.ai/tools/t.yaml": bad("one"), "two/.ai/tools/t.yaml": bad("two") });
    await git(root, env, "init", "-q", "-b", "main", ".");
    await git(root, env, "add", "-A");
    const expected = [["apps/one/.ai/tools/t.yaml", "two/.ai/tools/t.yaml"], ["apps/one", "two"]];
    for (const cwd of [root, join(root, "apps/one/.ai/tools")]) {
      const json = JSON.parse((await kiwi(cwd, ["check", "--staged", "--json"])).stdout) as { findings: { file: string }[]; staged: { project: string }[] };
      expect([json.findings.map((f) => f.file), json.staged.map((p) => p.project)]).toEqual(expected);
      const sarif = JSON.parse((await kiwi(cwd, ["check", "--staged", "--format", "sarif"])).stdout) as { runs: { results: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[] };
      expect(sarif.runs[0]!.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation.uri)).toEqual(expected[0]!);
    }
    // Human output stays relative to the folder it runs in.
    const human = await kiwi(join(root, "apps/one/.ai/tools"), ["check", "--staged"]);
    expect(human.stdout).toContain("t.yaml:");
    expect(human.stdout).toContain("../../../../two/.ai/tools/t.yaml:");
  }, SLOW);

  test("two stale projects are both named, with both fixes, so one round of relocking passes", async () => {
    const root = makeTemp("kiwi-mono-");
    const api = (id: string, version: string) => `tool_id: ${id}\ntool_type: api\nversion: ${version}\nexecutor: http_client\nconfig: { url: 'https://a.example.com' }\nrequires: [{ net.outbound: [a.example.com] }]\n`;
    writeTree(root, { "one/.ai/tools/t.yaml": api("one", "1.0.0"), "two/.ai/tools/t.yaml": api("two", "1.0.0") });
    for (const project of ["one", "two"]) expect((await kiwi(join(root, project), ["lock"])).exitCode).toBe(0);
    await git(root, env, "init", "-q", "-b", "main", ".");
    await git(root, env, "add", "-A");
    await git(root, env, "commit", "-q", "-m", "init");
    for (const project of ["one", "two"]) writeFileSync(join(root, project, ".ai/tools/t.yaml"), api(project, "1.0.1"));
    await git(root, env, "add", "-A");
    const stale = await kiwi(root, ["check", "--staged"]);
    expect(stale.exitCode).toBe(3);
    expect(stale.stderr).toContain(
      'error[E_LOCK_STALE]: one/tool.lock.json is out of date for this commit: one changed; two/tool.lock.json is out of date for this commit: two changed\n' +
        '  hint: run "kiwi lock --cwd one", then "git add one/tool.lock.json"; run "kiwi lock --cwd two", then "git add two/tool.lock.json"\n',
    );
    for (const project of ["one", "two"]) {
      expect((await kiwi(root, ["lock", "--cwd", project])).exitCode).toBe(0);
      await git(root, env, "add", `${project}/tool.lock.json`);
    }
    expect((await kiwi(root, ["check", "--staged"])).exitCode).toBe(0);
  }, SLOW);
});
