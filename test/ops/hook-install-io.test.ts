import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KiwiError } from "../../src/errors.ts";
import { installHook, uninstallHook } from "../../src/ops/hook-install-io.ts";
import { isKiwiHook } from "../../src/hook/script.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { git, gitEnv, makeRepo } from "../hook/git.ts";

afterAll(cleanupTemps);

const command = ["/usr/local/bin/kiwi"];
// git must not read the developer's global config (a global core.hooksPath would move the hook).
const env = gitEnv(makeTemp("kiwi-home-"));
const FOREIGN = "#!/bin/sh\necho 'my own checks'\n";

function caught(fn: () => unknown): KiwiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof KiwiError) return error;
    throw error;
  }
  throw new Error("expected a KiwiError");
}

describe("kiwi hook install", () => {
  test("writes an executable pre-commit hook into .git/hooks", () => {
    const repo = makeRepo();
    const outcome = installHook({ cwd: repo, env, command });
    const hook = join(repo, ".git", "hooks", "pre-commit");
    expect(outcome).toEqual({ status: "installed", hook });
    expect(isKiwiHook(readFileSync(hook, "utf8"))).toBe(true);
    expect(statSync(hook).mode & 0o111).toBe(0o111);
  });

  test("is idempotent: a second install changes nothing", () => {
    const repo = makeRepo();
    installHook({ cwd: repo, env, command });
    const hook = join(repo, ".git", "hooks", "pre-commit");
    const before = readFileSync(hook, "utf8");
    expect(installHook({ cwd: repo, env, command }).status).toBe("unchanged");
    expect(readFileSync(hook, "utf8")).toBe(before);
  });

  test("updates its own hook when the kiwi binary moved", () => {
    const repo = makeRepo();
    installHook({ cwd: repo, env, command });
    expect(installHook({ cwd: repo, env, command: ["/elsewhere/kiwi"] }).status).toBe("updated");
    expect(readFileSync(join(repo, ".git", "hooks", "pre-commit"), "utf8")).toContain("'/elsewhere/kiwi'");
  });

  test("refuses to replace a hook it did not write, and leaves it untouched", () => {
    const repo = makeRepo();
    const hook = join(repo, ".git", "hooks", "pre-commit");
    writeFileSync(hook, FOREIGN, { mode: 0o755 });
    const error = caught(() => installHook({ cwd: repo, env, command }));
    expect(error.code).toBe("E_HOOK_EXISTS");
    expect(error.message).toBe(".git/hooks/pre-commit exists and was not written by kiwi");
    expect(error.hint).toContain("--force");
    expect(readFileSync(hook, "utf8")).toBe(FOREIGN);
  });

  test("a symbolic link to a hook that is not there yet is someone's hook too: refused, kept by --force, put back by uninstall", () => {
    const repo = makeRepo();
    const hook = join(repo, ".git", "hooks", "pre-commit");
    symlinkSync("../../tools/hooks/pre-commit", hook);
    const error = caught(() => installHook({ cwd: repo, env, command }));
    expect([error.code, error.message]).toEqual(["E_HOOK_EXISTS", ".git/hooks/pre-commit is a symbolic link to ../../tools/hooks/pre-commit, which does not exist; kiwi did not make it"]);
    expect(readlinkSync(hook)).toBe("../../tools/hooks/pre-commit");
    expect(uninstallHook({ cwd: repo, env }).status).toBe("foreign");
    expect(installHook({ cwd: repo, env, command, force: true })).toEqual({ status: "installed", hook, backup: `${hook}.pre-kiwi` });
    expect(readlinkSync(`${hook}.pre-kiwi`)).toBe("../../tools/hooks/pre-commit");
    expect(uninstallHook({ cwd: repo, env }).status).toBe("removed");
    expect(readlinkSync(hook)).toBe("../../tools/hooks/pre-commit");
  });

  test("replaces a foreign hook with --force and keeps it as pre-commit.pre-kiwi", () => {
    const repo = makeRepo();
    const hook = join(repo, ".git", "hooks", "pre-commit");
    writeFileSync(hook, FOREIGN, { mode: 0o755 });
    const outcome = installHook({ cwd: repo, env, command, force: true });
    expect(outcome).toEqual({ status: "installed", hook, backup: `${hook}.pre-kiwi` });
    expect(readFileSync(`${hook}.pre-kiwi`, "utf8")).toBe(FOREIGN);
    expect(isKiwiHook(readFileSync(hook, "utf8"))).toBe(true);
  });

  test("never overwrites an earlier backup when forcing", () => {
    const repo = makeRepo();
    const hook = join(repo, ".git", "hooks", "pre-commit");
    writeFileSync(`${hook}.pre-kiwi`, "#!/bin/sh\necho older\n");
    writeFileSync(hook, FOREIGN, { mode: 0o755 });
    const outcome = installHook({ cwd: repo, env, command, force: true });
    expect(outcome.backup).toBe(`${hook}.pre-kiwi.1`);
    expect(readFileSync(`${hook}.pre-kiwi`, "utf8")).toBe("#!/bin/sh\necho older\n");
    // Uninstall restores the hook this install replaced, not the older file.
    expect(uninstallHook({ cwd: repo, env })).toEqual({ status: "removed", hook, backup: `${hook}.pre-kiwi.1` });
    expect(readFileSync(hook, "utf8")).toBe(FOREIGN);
  });

  test.each([
    ["a relative core.hooksPath, from a subdirectory", (_repo: string) => ".githooks", (repo: string) => join(repo, ".githooks")],
    ["an absolute core.hooksPath", (repo: string) => join(repo, "abs-hooks"), (repo: string) => join(repo, "abs-hooks")],
  ])("honours %s", (_name, setting, expectedDir) => {
    const repo = makeRepo();
    git(repo, ["config", "core.hooksPath", setting(repo)]);
    const sub = join(repo, "sub", "dir");
    mkdirSync(sub, { recursive: true });
    const outcome = installHook({ cwd: sub, env, command });
    expect(outcome.hook).toBe(join(expectedDir(repo), "pre-commit"));
    expect(existsSync(outcome.hook)).toBe(true);
    expect(existsSync(join(repo, ".git", "hooks", "pre-commit"))).toBe(false);
  });

  test("core.hooksPath=/dev/null (hooks switched off): install says so and how to turn them on; uninstall finds no hook", () => {
    const repo = makeRepo();
    git(repo, ["config", "core.hooksPath", "/dev/null"]);
    const error = caught(() => installHook({ cwd: repo, env, command }));
    expect([error.code, error.message]).toEqual(["E_IO", "git's hooks folder is /dev/null (core.hooksPath), which is not a folder: git runs no hooks in this repository"]);
    expect(error.hint).toContain("git config --unset core.hooksPath");
    expect(uninstallHook({ cwd: repo, env }).status).toBe("absent");
  });

  test("writes into the shared hooks folder from a linked worktree", () => {
    const repo = makeRepo();
    git(repo, ["commit", "-q", "--allow-empty", "-m", "root"]);
    const worktree = join(makeTemp("kiwi-wt-"), "wt");
    git(repo, ["worktree", "add", "-q", worktree]);
    expect(installHook({ cwd: worktree, env, command }).hook).toBe(join(repo, ".git", "hooks", "pre-commit"));
  });

  test("fails with E_GIT outside a repository", () => {
    const dir = makeTemp("kiwi-nogit-");
    const error = caught(() => installHook({ cwd: dir, env, command }));
    expect([error.code, error.message]).toEqual(["E_GIT", `${dir} is not inside a git repository`]);
    expect(error.hint).toContain("git init");
  });
});

describe("kiwi hook uninstall", () => {
  test("removes its own hook", () => {
    const repo = makeRepo();
    const { hook } = installHook({ cwd: repo, env, command });
    expect(uninstallHook({ cwd: repo, env })).toEqual({ status: "removed", hook });
    expect(existsSync(hook)).toBe(false);
  });

  test("leaves a foreign hook alone", () => {
    const repo = makeRepo();
    const hook = join(repo, ".git", "hooks", "pre-commit");
    writeFileSync(hook, FOREIGN, { mode: 0o755 });
    expect(uninstallHook({ cwd: repo, env })).toEqual({ status: "foreign", hook });
    expect(readFileSync(hook, "utf8")).toBe(FOREIGN);
  });

  test("reports a missing hook as absent", () => {
    const repo = makeRepo();
    expect(uninstallHook({ cwd: repo, env }).status).toBe("absent");
  });

  test("puts back the hook that install --force replaced", () => {
    const repo = makeRepo();
    const hook = join(repo, ".git", "hooks", "pre-commit");
    writeFileSync(hook, FOREIGN, { mode: 0o755 });
    installHook({ cwd: repo, env, command, force: true });
    installHook({ cwd: repo, env, command }); // a re-install keeps the note of what to restore
    expect(uninstallHook({ cwd: repo, env }).backup).toBe(`${hook}.pre-kiwi`);
    expect(readFileSync(hook, "utf8")).toBe(FOREIGN);
    expect(existsSync(`${hook}.pre-kiwi`)).toBe(false);
  });
});
