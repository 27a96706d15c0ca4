// Installs and removes kiwi's git pre-commit hook. Only a hook carrying kiwi's marker is ever
// replaced or removed; a foreign hook is replaced only with --force, and then kept as a backup.
import { chmodSync, linkSync, lstatSync, statSync, mkdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { KiwiError } from "../errors.ts";
import { type GitEnv, resolveHooksDir, resolveWorkTree } from "../hook/git-io.ts";
import { BACKUP_SUFFIX, isKiwiHook, parseReplacedHook, renderHookScript } from "../hook/script.ts";

export type InstallStatus = "installed" | "updated" | "unchanged";
export type UninstallStatus = "removed" | "absent" | "foreign";

export interface HookOutcome<S> {
  status: S;
  /** Absolute path of the pre-commit hook. */
  hook: string;
  /** Where a replaced foreign hook was kept (install --force) or restored from (uninstall). */
  backup?: string;
}

/** What `kiwi hook install|uninstall` reports: the outcome, and its paths as the user would type them. */
export interface HookReport<S> {
  outcome: HookOutcome<S>;
  shown: { hook: string; backup?: string };
}

/** `kiwi hook install` (with `command`) or `kiwi hook uninstall`, with the paths to show. */
export function applyHook(options: { cwd: string; env?: GitEnv; force?: boolean; command: readonly string[] }): HookReport<InstallStatus>;
export function applyHook(options: { cwd: string; env?: GitEnv }): HookReport<UninstallStatus>;
export function applyHook(options: { cwd: string; env?: GitEnv; force?: boolean; command?: readonly string[] }): HookReport<InstallStatus | UninstallStatus> {
  const outcome: HookOutcome<InstallStatus | UninstallStatus> = options.command ? installHook({ ...options, command: options.command }) : uninstallHook(options);
  const show = (abs: string) => displayPath(options.cwd, abs, options.env);
  return { outcome, shown: { hook: show(outcome.hook), ...(outcome.backup ? { backup: show(outcome.backup) } : {}) } };
}

/** Writes kiwi's pre-commit hook into the folder git runs hooks from. */
export function installHook(options: { cwd: string; env?: GitEnv; force?: boolean; command: readonly string[] }): HookOutcome<InstallStatus> {
  const dir = resolveHooksDir(options.cwd, options.env);
  // core.hooksPath=/dev/null (or any file) is how hooks are switched off: there is no folder to write into.
  if (present(dir) && !statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new KiwiError("E_IO", `git's hooks folder is ${dir} (core.hooksPath), which is not a folder: git runs no hooks in this repository`, {
      hint: 'point core.hooksPath at a folder ("git config --unset core.hooksPath" for .git/hooks), then run "kiwi hook install" again',
    });
  }
  const hook = join(dir, "pre-commit");
  const existing = readIfExists(hook);
  if (existing !== undefined && !isKiwiHook(existing)) {
    if (!options.force) {
      const link = danglingLink(hook);
      const what = link === undefined ? "exists and was not written by kiwi" : `is a symbolic link to ${link}, which does not exist; kiwi did not make it`;
      throw new KiwiError("E_HOOK_EXISTS", `${displayPath(options.cwd, hook, options.env)} ${what}`, {
        hint: 'add "kiwi check --staged" to that hook yourself, or run "kiwi hook install --force" to replace it (the old hook is kept as pre-commit.pre-kiwi)',
        details: { hook },
      });
    }
    // The backup is a second name for the foreign hook, and kiwi's is renamed over the first: at
    // no moment is there no pre-commit hook, and a failed write (a full disk) leaves things as they were.
    // (A file system without hard links gets the rename, put back if the write fails.)
    const backup = freeBackupPath(hook);
    const linked = linkOrRename(hook, backup);
    try {
      writeHook(hook, renderHookScript(options.command, basename(backup)));
    } catch (error) {
      if (linked) rmSync(backup, { force: true });
      else renameSync(backup, hook);
      throw error;
    }
    return { status: "installed", hook, backup };
  }
  // Re-installing keeps the note of which foreign hook to restore on uninstall.
  const replaced = existing === undefined ? undefined : parseReplacedHook(existing);
  const text = renderHookScript(options.command, replaced);
  if (existing === text) return { status: "unchanged", hook };
  mkdirSync(dir, { recursive: true });
  writeHook(hook, text);
  return { status: existing === undefined ? "installed" : "updated", hook };
}

/** Removes kiwi's pre-commit hook (never a foreign one) and restores a hook it had replaced. */
export function uninstallHook(options: { cwd: string; env?: GitEnv }): HookOutcome<UninstallStatus> {
  const hook = join(resolveHooksDir(options.cwd, options.env), "pre-commit");
  const existing = readIfExists(hook);
  if (existing === undefined) return { status: "absent", hook };
  if (!isKiwiHook(existing)) return { status: "foreign", hook };
  const replaced = parseReplacedHook(existing);
  const backup = replaced ? join(dirname(hook), replaced) : undefined;
  if (backup && present(backup)) {
    renameSync(backup, hook);
    return { status: "removed", hook, backup };
  }
  rmSync(hook);
  return { status: "removed", hook };
}

/**
 * The hook path as the user would type it where kiwi runs: relative to that folder when the hook is
 * inside the work tree (`.git/hooks/pre-commit` at the top, `../.git/hooks/pre-commit` one folder
 * down), absolute when it is outside (a core.hooksPath elsewhere, a linked worktree's git folder).
 */
export function displayPath(cwd: string, abs: string, env?: GitEnv): string {
  let top: string;
  try {
    top = resolveWorkTree(cwd, env);
  } catch {
    return abs;
  }
  if (relative(top, abs).startsWith("..")) return abs;
  // git names the top by its real path: so must the folder be, for the path between them.
  return relative(realpathSync(cwd), abs) || abs;
}

/**
 * The hook's text; undefined when there is none. A symbolic link whose target is missing (a hooks
 * folder not checked out yet) is someone's hook all the same: its text is empty, never kiwi's.
 */
function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    // ENOTDIR: the hooks "folder" is a file (core.hooksPath=/dev/null), so it holds no hook.
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return danglingLink(path) === undefined ? undefined : "";
  }
}

/** Something is at `path`: a file, or a symbolic link even to nothing (existsSync follows it). */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Where `path` leads when it is a symbolic link to nothing; else undefined. */
function danglingLink(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** Gives `from` the second name `to` (true), or, where the file system has no hard links, moves it there (false). */
function linkOrRename(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if (!["EPERM", "ENOTSUP", "EOPNOTSUPP", "EMLINK"].includes((error as NodeJS.ErrnoException).code ?? "")) throw error;
    renameSync(from, to);
    return false;
  }
}

function freeBackupPath(hook: string): string {
  for (let n = 0; ; n++) {
    const candidate = `${hook}${BACKUP_SUFFIX}${n === 0 ? "" : `.${n}`}`;
    if (!present(candidate)) return candidate;
  }
}

/** Atomic: an executable temp file renamed over the hook, so git never runs half a script. */
function writeHook(hook: string, text: string): void {
  const temp = `${hook}.kiwi-${process.pid}.tmp`;
  try {
    writeFileSync(temp, text, { mode: 0o755 });
    chmodSync(temp, 0o755);
    renameSync(temp, hook);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
