// Asks git (the real binary) where things are and what is staged. Every git call in kiwi goes
// through runGit so a missing git or a non-repository gives one clear error.
import { isAbsolute, resolve } from "node:path";
import { KiwiError } from "../errors.ts";

/** The environment git runs with (GIT_DIR, GIT_INDEX_FILE from a hook pass through it). */
export type GitEnv = Readonly<Record<string, string | undefined>>;

/** Runs `git args…` in `cwd` and returns stdout; throws E_GIT when git is missing or fails. */
export function runGit(cwd: string, args: string[], env?: GitEnv): string {
  let proc: { exitCode: number | null; stdout: Buffer; stderr: Buffer };
  try {
    proc = Bun.spawnSync(["git", ...args], { cwd, env: { ...(env ?? process.env), LC_ALL: "C" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (error) {
    throw new KiwiError("E_GIT", `could not run git in ${cwd}`, { hint: "install git and make sure it is on PATH", cause: error });
  }
  if (proc.exitCode !== 0) {
    const stderr = proc.stderr.toString().trim();
    const notRepo = /not a git repository/i.test(stderr);
    throw new KiwiError("E_GIT", notRepo ? `${cwd} is not inside a git repository` : `git ${args.join(" ")} failed: ${stderr || `exit ${proc.exitCode}`}`, {
      hint: notRepo ? 'run "git init" first, or pass --cwd <repository>' : "run the git command by hand to see what is wrong",
    });
  }
  return proc.stdout.toString();
}

/** The folder git runs hooks from (honours core.hooksPath and worktrees), absolute. */
export function resolveHooksDir(cwd: string, env?: GitEnv): string {
  const out = runGit(cwd, ["rev-parse", "--git-path", "hooks"], env).trim();
  return isAbsolute(out) ? out : resolve(cwd, out);
}

/** The repository's top-level folder, absolute. */
export function resolveWorkTree(cwd: string, env?: GitEnv): string {
  return runGit(cwd, ["rev-parse", "--show-toplevel"], env).trim();
}

/** Paths (relative to the work tree, `/`-separated) added, copied, modified, renamed or deleted in the index. */
export function listStagedPaths(cwd: string, env?: GitEnv): string[] {
  // -z: paths with spaces or non-ASCII bytes come through unquoted.
  return splitZ(runGit(cwd, ["diff", "--cached", "--no-relative", "--name-only", "-z", "--no-renames", "--diff-filter=ACMRTD"], env));
}

/** Paths (relative to the work tree) deleted in the index: what pre-commit never passes to hooks. */
export function listStagedDeletions(cwd: string, env?: GitEnv): string[] {
  return splitZ(runGit(cwd, ["diff", "--cached", "--no-relative", "--name-only", "-z", "--no-renames", "--diff-filter=D"], env));
}

/** Paths (relative to the work tree) whose working copy differs from the index. */
export function listUnstagedPaths(cwd: string, env?: GitEnv): string[] {
  return splitZ(runGit(cwd, ["diff", "--no-relative", "--name-only", "-z", "--no-renames"], env));
}

function splitZ(text: string): string[] {
  return text.split("\0").filter((p) => p !== "");
}
