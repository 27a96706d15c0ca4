// `kiwi check --staged`: for each project a commit touches, validate the changed tools and every
// tool whose chain runs through them, and judge their lockfile entries against the tree. The
// lockfile is read as it will be committed (git's index) when its working copy differs.
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { loadStatCache } from "../cache/stat-cache-io.ts";
import { KiwiError } from "../errors.ts";
import { type Project, readProject } from "../manifest/discover-io.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import type { Tool } from "../manifest/model.ts";
import { type HashedTool, lockedToolOf, resolveExecutor } from "../lockfile/build.ts";
import { type LockDiff, diffLockfiles } from "../lockfile/lock-diff.ts";
import { parseLockfileMemo, readLockfileMemo } from "../exec/chain-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { hashProjectTools } from "../lockfile/hash-tree-io.ts";
import type { LockedTool, Lockfile } from "../schema/lockfile.ts";
import { type CheckResult, checkProject, planSyntaxChecks, syntaxFindings, withFindings } from "../validate/check-project.ts";
import { runSyntaxChecks } from "../validate/syntax-io.ts";
import { type GitEnv, listStagedDeletions, listStagedPaths, listUnstagedPaths, resolveWorkTree, runGit } from "../hook/git-io.ts";
import { type AffectedTools, groupByProject, selectAffected } from "../hook/staged.ts";

export interface StagedOptions {
  cwd: string;
  env: GitEnv;
  cacheDir: string;
  now: () => number;
  strict?: boolean;
  /** Changed files as pre-commit passes them (relative to cwd); none means git's staged list. */
  files?: readonly string[];
}

export type LockStatus = "fresh" | "stale" | "missing" | "invalid" | "unchecked";

export interface StagedProject {
  /** Absolute project root. */
  root: string;
  affected: AffectedTools;
  check: CheckResult;
  lock: { status: LockStatus; diff?: LockDiff; message?: string; fromIndex: boolean };
  /** Project-relative files of changed tools whose working copy differs from what is staged. */
  unstaged: string[];
}

/** Runs the staged check for every project the changed paths touch. */
export async function checkStaged(input: StagedOptions): Promise<StagedProject[]> {
  // git reports real paths; resolve symlinks in cwd (/tmp -> /private/tmp) so both agree.
  const options = { ...input, cwd: realpathSync(input.cwd) };
  const top = tryWorkTree(options.cwd, options.env);
  const repo = top === undefined ? undefined : { top, unstaged: lazyUnstaged(top, options.env) };
  if (!options.files?.length && top === undefined) {
    throw new KiwiError("E_GIT", `${options.cwd} is not inside a git repository, so nothing is staged`, {
      hint: "run it inside a repository, or pass the changed files: kiwi check --staged <files…>",
    });
  }
  // Paths relative to the file system root, so groups from anywhere share one base. Given files
  // (pre-commit's) never include deletions, so git's staged deletions are added to them.
  const absolute = options.files?.length
    ? [...options.files.map((f) => resolve(options.cwd, f)), ...(top === undefined ? [] : listStagedDeletions(options.cwd, options.env).map((p) => join(top, p)))]
    : listStagedPaths(options.cwd, options.env).map((p) => join(top!, p));
  const results: StagedProject[] = [];
  for (const group of groupByProject(absolute.map((abs) => relative("/", abs).split(sep).join("/")))) {
    const root = `/${group.root}`;
    if (!existsSync(join(root, TOOLS_DIR))) continue;
    results.push(await checkProjectChanges(root, group.paths, repo, options));
  }
  return results;
}

/** The repository around the projects: its top folder and (asked once) its unstaged paths. */
interface Repo {
  top: string;
  unstaged: () => ReadonlySet<string>;
}

function lazyUnstaged(top: string, env: GitEnv): () => ReadonlySet<string> {
  let paths: ReadonlySet<string> | undefined;
  return () => (paths ??= new Set(listUnstagedPaths(top, env)));
}

async function checkProjectChanges(root: string, paths: string[], repo: Repo | undefined, options: StagedOptions): Promise<StagedProject> {
  const top = repo?.top;
  const project = readProject(root, { cacheDir: options.cacheDir });
  const { lock, text, status, message, fromIndex } = readCommittedLockfile(root, repo, options.env, options.cacheDir);
  const affected = selectAffected(project.tools, paths, lock);
  const judged = [...affected.changed, ...affected.dependents];
  const check = await validate(project, judged, paths, options);
  const unstaged = repo === undefined ? [] : unstagedFiles(root, repo, affected.changed);
  if (!lock) {
    const touched = judged.length > 0 || affected.gone.length > 0 || affected.lockfileChanged;
    return { root, affected, check, lock: { status: touched ? status : "unchecked", message, fromIndex }, unstaged };
  }
  // A staged lockfile is judged where it changed since HEAD (or everywhere without history).
  const edited = affected.lockfileChanged ? editedEntries(root, top, text!, options.env) : [];
  const scope = edited === "all" ? project.tools : [...new Set([...judged, ...project.tools.filter((t) => edited.includes(t.id))])];
  const extra = edited === "all" ? Object.keys(lock.tools) : [...affected.gone, ...edited];
  const diff = compareEntries(project, scope, lock, extra, options);
  const stale = diff.added.length + diff.removed.length + diff.changed.length > 0;
  return { root, affected, check, lock: { status: stale ? "stale" : "fresh", diff, fromIndex }, unstaged };
}

/**
 * Validates the judged tools (chain rules see the whole tree) with the interpreter syntax checks,
 * plus whatever discovery found wrong with the changed paths themselves (a manifest that no longer
 * parses is no tool at all, only a finding on its file).
 */
async function validate(project: Project, judged: Tool[], paths: readonly string[], options: StagedOptions): Promise<CheckResult> {
  const selectors = [...judged.map((t) => (t.form === "builtin" ? t.id : t.manifestFile)), ...paths.filter((p) => p !== LOCKFILE_NAME)];
  // An empty `only` would mean "everything"; a commit that touches no tool checks none.
  const only = selectors.length > 0 ? [...new Set(selectors)] : ["\0none"];
  const base = checkProject(project, { strict: options.strict, only });
  const requests = planSyntaxChecks(judged);
  if (requests.length === 0) return { ...base, unmatched: [] };
  const verdicts = await runSyntaxChecks(requests, { env: options.env, cacheDir: options.cacheDir });
  return { ...withFindings(base, syntaxFindings(requests, verdicts), { strict: options.strict }), unmatched: [] };
}

/**
 * The entries the tree would give the scope's tools, against the lockfile's entries for them (and
 * for `extra` ids, such as tools whose source was deleted). Only those tools are hashed, through
 * the stat cache, which is read but never saved here (a partial run must not shrink it).
 */
function compareEntries(project: Project, scope: readonly Tool[], lock: Lockfile, extra: readonly string[], options: StagedOptions): LockDiff {
  const executors = new Map<string, Tool>();
  for (const tool of project.tools) if (!executors.has(tool.id)) executors.set(tool.id, tool);
  const wanted = new Set<Tool>(scope);
  for (const tool of scope) {
    const executor = tool.executor ? executors.get(tool.executor.id) : undefined;
    if (executor) wanted.add(executor);
  }
  const statCache = loadStatCache(options.cacheDir, project.root, options.now());
  const hashed = hashProjectTools({ ...project, tools: project.tools.filter((t) => wanted.has(t)) }, { statCache });
  const byId = new Map<string, HashedTool>();
  for (const h of hashed) if (!byId.has(h.tool.id)) byId.set(h.tool.id, h);
  const after: Record<string, LockedTool> = {};
  for (const tool of scope) {
    const h = byId.get(tool.id);
    if (!h || h.tool !== tool) continue; // a duplicate id: the validator reports it
    try {
      after[tool.id] = lockedToolOf(h, resolveExecutor(h.tool, byId));
    } catch (error) {
      if (!(error instanceof KiwiError)) throw error; // a missing executor: the validator reports it
    }
  }
  const before: Record<string, LockedTool> = {};
  for (const id of [...Object.keys(after), ...extra, ...scope.map((t) => t.id)]) {
    const entry = lock.tools[id];
    if (entry) before[id] = entry;
  }
  return diffLockfiles({ ...lock, tools: before }, { ...lock, tools: after });
}

/**
 * Ids whose lockfile entry differs between HEAD and the lockfile being committed: what a relock
 * (or a hand edit, or a merge) touched. "all" when there is no HEAD copy to compare with.
 */
function editedEntries(root: string, top: string | undefined, committed: string, env: GitEnv): string[] | "all" {
  if (top === undefined) return "all";
  const rel = relative(top, join(root, LOCKFILE_NAME)).split(sep).join("/");
  const head = tryGit(root, ["show", `HEAD:${rel}`], env);
  if (head === undefined) return "all";
  // Entry identity only, so plain JSON is enough here; the committed copy was fully parsed already.
  let before: Record<string, unknown>;
  try {
    before = (JSON.parse(head) as { tools?: Record<string, unknown> }).tools ?? {};
  } catch {
    return "all";
  }
  const after = (JSON.parse(committed) as { tools?: Record<string, unknown> }).tools ?? {};
  const ids = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...ids].filter((id) => JSON.stringify(before[id]) !== JSON.stringify(after[id])).sort();
}

interface CommittedLock {
  lock?: Lockfile;
  /** The lockfile's text as committed. */
  text?: string;
  status: LockStatus;
  message?: string;
  fromIndex: boolean;
}

/** The lockfile the commit will carry: the staged copy when the working copy differs, else the file. */
function readCommittedLockfile(root: string, repo: Repo | undefined, env: GitEnv, cacheDir: string): CommittedLock {
  try {
    if (repo !== undefined) {
      const rel = relative(repo.top, join(root, LOCKFILE_NAME)).split(sep).join("/");
      if (!rel.startsWith("..") && !isAbsolute(rel) && repo.unstaged().has(rel)) {
        const text = tryGit(root, ["show", `:${rel}`], env);
        if (text === undefined) return { status: "missing", message: `${LOCKFILE_NAME} exists but is not staged`, fromIndex: true };
        return { lock: parseLockfileMemo(text, cacheDir), text, status: "fresh", fromIndex: true };
      }
    }
    // Through exec's lockfile memo: bytes kiwi lock wrote, or one check already took, are JSON.parsed.
    const read = readLockfileMemo(root, cacheDir);
    return read ? { lock: read.lock, text: read.text, status: "fresh", fromIndex: false } : { status: "missing", message: `${LOCKFILE_NAME} does not exist`, fromIndex: false };
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_LOCK_INVALID") return { status: "invalid", message: error.message, fromIndex: false };
    throw error;
  }
}

/** Files of the changed tools whose working copy differs from the index (they were checked as on disk). */
function unstagedFiles(root: string, repo: Repo, changed: readonly Tool[]): string[] {
  const files = changed.flatMap((t) => [t.manifestFile, ...(t.form === "directory" ? t.files.map((f) => `${t.root}/${f.path}`) : [])]);
  const toTop = (p: string) => relative(repo.top, join(root, p)).split(sep).join("/");
  const unstaged = repo.unstaged();
  return [...new Set(files)].filter((f) => unstaged.has(toTop(f)));
}

function tryWorkTree(cwd: string, env: GitEnv): string | undefined {
  try {
    return resolveWorkTree(cwd, env);
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_GIT") return undefined;
    throw error;
  }
}

function tryGit(cwd: string, args: string[], env: GitEnv): string | undefined {
  try {
    return runGit(cwd, args, env);
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_GIT") return undefined;
    throw error;
  }
}
