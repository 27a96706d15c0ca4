// Asks git (the real binary) where things are and what is staged. Every git call in kiwi goes
// through runGit so a missing git or a non-repository gives one clear error.
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, statSync, unlinkSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { KiwiError } from "../errors.ts";
import { type GitStatus, parseGitStatus, parseStagedDiff } from "./git-status.ts";

/** The environment git runs with (GIT_DIR, GIT_INDEX_FILE from a hook pass through it). */
export type GitEnv = Readonly<Record<string, string | undefined>>;

/** Runs `git args…` in `cwd` and returns stdout; throws E_GIT when git is missing or fails. */
export function runGit(cwd: string, args: string[], env?: GitEnv): string {
  let proc: { exitCode: number | null; stdout: Buffer; stderr: Buffer };
  try {
    proc = Bun.spawnSync(["git", ...args], { cwd, env: { ...(env ?? process.env), LC_ALL: "C" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (error) {
    throw cannotRunGit(cwd, error);
  }
  if (proc.exitCode !== 0) throw gitFailure(cwd, args, proc.stderr.toString(), proc.exitCode);
  return proc.stdout.toString();
}

/** The folder git runs hooks from (honours core.hooksPath and worktrees), absolute. */
export function resolveHooksDir(cwd: string, env?: GitEnv): string {
  const out = runGit(cwd, ["rev-parse", "--git-path", "hooks"], env).trim();
  return isAbsolute(out) ? out : resolve(cwd, out);
}

/** The repository's top-level folder, absolute. */
export function resolveWorkTree(cwd: string, env?: GitEnv): string {
  return runGit(cwd, WORK_TREE_ARGS, env).trim();
}

/** resolveWorkTree without blocking. */
export async function resolveWorkTreeAsync(cwd: string, env?: GitEnv): Promise<string> {
  return (await runGitAsync(cwd, WORK_TREE_ARGS, env)).trim();
}

const WORK_TREE_ARGS = ["rev-parse", "--show-toplevel"];

/** Environment that changes where git looks for the repository or its work tree. */
const DISCOVERY_ENV = ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_CONFIG_COUNT"];

/**
 * The work tree around `cwd` found as git finds it, without starting git (the staged check asks
 * git one question instead of two), but only where the answer is certain: a plain `.git` folder on
 * the same file system, no environment that moves the repository, no `core.worktree`, `core.bare`
 * or config include. Undefined means "ask git" (resolveWorkTree), never "not a repository".
 */
export function findWorkTree(cwd: string, env: GitEnv = process.env): string | undefined {
  if (DISCOVERY_ENV.some((name) => env[name] !== undefined) || /worktree|bare|include/i.test(env.GIT_CONFIG_PARAMETERS ?? "")) return undefined;
  if (/(^|\/)\.git(\/|$)/.test(cwd)) return undefined;
  let device: number;
  try {
    device = statSync(cwd).dev;
  } catch {
    return undefined;
  }
  for (let dir = cwd; ; dir = dirname(dir)) {
    const dotGit = join(dir, ".git");
    let st;
    try {
      st = lstatSync(dotGit);
    } catch {
      // git stops at a file system boundary; so does this search (and then git is asked).
      if (dirname(dir) === dir || statSync(dirname(dir)).dev !== device) return undefined;
      continue;
    }
    if (!st.isDirectory()) return undefined; // a gitfile: a linked work tree or a submodule
    try {
      if (!statSync(join(dotGit, "HEAD")).isFile()) return undefined;
      return movesWorkTree(readFileSync(join(dotGit, "config"), "utf8")) ? undefined : dir;
    } catch {
      return undefined;
    }
  }
}

/**
 * True when a repository config could put the work tree elsewhere or make the repository bare:
 * `core.worktree`, a true `core.bare`, or an include (whose file is not read here). Anything this
 * line reader does not follow (a key after a section header on one line) counts as true.
 */
export function movesWorkTree(config: string): boolean {
  let section = "";
  for (const raw of config.split("\n")) {
    const line = raw.replace(/[#;].*$/, "").trim();
    if (line.startsWith("[")) {
      const close = line.indexOf("]");
      if (close === -1 || line.slice(close + 1).trim() !== "") return true;
      section = line.slice(1, close).trim().toLowerCase();
      if (section.startsWith("include")) return true;
      continue;
    }
    if (section !== "core") continue;
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    // A key without "=" is true in git config.
    if (key === "worktree" || (key === "bare" && !/^(false|no|off|0)$/i.test((m[2] ?? "true").trim()))) return true;
  }
  return false;
}

/**
 * What differs, staged and not, in one process (see git-status.ts). Optional locks are off: status
 * would otherwise refresh and rewrite the index, and inside a pre-commit hook the index is git's.
 */
export async function readGitStatus(cwd: string, env?: GitEnv): Promise<GitStatus> {
  return parseGitStatus(await runGitAsync(cwd, STATUS_ARGS, env));
}

const STATUS_ARGS = ["--no-optional-locks", "status", "--porcelain=v2", "-z", "--untracked-files=no", "--no-renames"];

/** What the next commit records (the index against HEAD), without reading any working file (git-status.ts parseStagedDiff). */
export async function readStagedDiff(cwd: string, env?: GitEnv): Promise<GitStatus> {
  return parseStagedDiff(await runGitAsync(cwd, ["--no-optional-locks", "diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev"], env));
}

/**
 * git's status of `paths` alone (absolute; taken literally, never as patterns): only their working
 * copies are read. Without the index preload: for a few paths its threads (up to 20) cost more
 * than the lstats they share out (measured on a 13,000-file index: 4.5 against 3.3 ms, CPU 4.4
 * against 3.1); the answer is the same.
 */
export async function readScopedStatus(cwd: string, paths: readonly string[], env?: GitEnv): Promise<GitStatus> {
  return parseGitStatus(await runGitAsync(cwd, ["-c", "core.preloadIndex=false", "--literal-pathspecs", ...STATUS_ARGS, "--", ...paths], env));
}

/** runGit without blocking: several git questions (or git and kiwi's own work) run at once. */
export async function runGitAsync(cwd: string, args: string[], env?: GitEnv): Promise<string> {
  const proc = spawnGit(cwd, args, env, "pipe");
  const [stdout] = await Promise.all([new Response(proc.stdout).text(), gitExited(proc, cwd, args)]);
  return stdout;
}

/** Starts git (C locale, no stdin) with its output to a pipe or an open file; a git that cannot start is E_GIT. */
function spawnGit<Out extends "pipe" | number>(cwd: string, args: string[], env: GitEnv | undefined, stdout: Out): Bun.Subprocess<"ignore", Out, "pipe"> {
  try {
    return Bun.spawn(["git", ...args], { cwd, env: { ...(env ?? process.env), LC_ALL: "C" }, stdin: "ignore", stdout, stderr: "pipe" });
  } catch (error) {
    throw cannotRunGit(cwd, error);
  }
}

/** Waits for git to exit; a failure is E_GIT with what it said. */
async function gitExited(proc: Bun.Subprocess<"ignore", "pipe" | number, "pipe">, cwd: string, args: string[]): Promise<void> {
  const [stderr, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (exitCode !== 0) throw gitFailure(cwd, args, stderr, exitCode);
}

/**
 * runGitAsync for a large output (HEAD's ~500 KB lockfile), as the bytes git wrote: git writes it
 * into a file instead of a pipe, which holds 64 KB and would stall git until kiwi, busy with its
 * own work, drained it. The file is created at `scratch`, a fresh temp path (exclusive,
 * owner-only, its folder made), and unlinked before git starts, so nothing is left behind even if
 * kiwi is killed; its bytes are read only after git exits 0. Where `scratch` cannot be created,
 * git writes into a pipe as for runGitAsync. Bytes, not text: a blob is checked against its id.
 */
export async function runGitLargeAsync(cwd: string, args: string[], env: GitEnv | undefined, scratch: string): Promise<Uint8Array> {
  let fd: number;
  try {
    mkdirSync(dirname(scratch), { recursive: true });
    fd = openSync(scratch, "wx+", 0o600);
    try {
      unlinkSync(scratch);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  } catch {
    const proc = spawnGit(cwd, args, env, "pipe");
    const [stdout] = await Promise.all([new Response(proc.stdout).bytes(), gitExited(proc, cwd, args)]);
    return stdout;
  }
  try {
    await gitExited(spawnGit(cwd, args, env, fd), cwd, args);
    const bytes = new Uint8Array(fstatSync(fd).size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return bytes.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Text of git's output bytes, as Response.text() decodes runGitAsync's pipe: UTF-8, a leading BOM dropped, bad bytes as U+FFFD. */
export function gitText(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

function cannotRunGit(cwd: string, cause: unknown): KiwiError {
  return new KiwiError("E_GIT", `could not run git in ${cwd}`, { hint: "install git and make sure it is on PATH", cause });
}

function gitFailure(cwd: string, args: string[], stderrText: string, exitCode: number | null): KiwiError {
  const stderr = stderrText.trim();
  const notRepo = /not a git repository/i.test(stderr);
  return new KiwiError("E_GIT", notRepo ? `${cwd} is not inside a git repository` : `git ${args.join(" ")} failed: ${stderr || `exit ${exitCode}`}`, {
    hint: notRepo ? 'run "git init" first, or pass --cwd <repository>' : "run the git command by hand to see what is wrong",
  });
}
