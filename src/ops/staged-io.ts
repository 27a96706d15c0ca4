// `kiwi check --staged`: for each project a commit touches, validate the changed tools and every
// tool whose chain runs through them, and judge their lockfile entries against the tree
// (staged-check-io.ts). In a small repository git's status of the whole tree answers at once what
// the commit records and which working copies differ, while kiwi takes the tree's identity. In a
// large one that status stats every file git tracks (~40 ms for the 13,000 files of a 1,000-tool
// tree), so git is asked what the commit records (the index against HEAD, which reads no working
// file), then, per project, the state of the only working copies the verdict depends on: the
// lockfile's and the changed tools'. A project whose inputs are unchanged since a check judged
// them gets that verdict back from the staged memo (staged-memo-io.ts), so the validator, the
// tree's manifests and the hashing are loaded only when something changed.
import { existsSync, realpathSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { KiwiError } from "../errors.ts";
import { TOOLS_DIR, findProjectRoot } from "../manifest/project-io.ts";
import { type GitEnv, findWorkTree, readGitStatus, readScopedStatus, readStagedDiff, resolveWorkTreeAsync } from "../hook/git-io.ts";
import { type GitStatus, scopedStatus } from "../hook/git-status.ts";
import { groupByProject } from "../hook/staged.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { IGNORE_FILE } from "../manifest/model.ts";
import { type IndexScan, type LockIndex, NO_TOOL, positionOf, scanLockIndexFast } from "../lockfile/lock-index-io.ts";
import { type StagedMemo, type StagedMemoKey, type TreeIdentity, currentDependencies, dependenciesOf, dependencyPositions, identifyTree, keyedOnCurrentIndex, loadedIndexIdentity, manifestTable, observedDependencies, peekStagedMemo, readProjectIndex, stagedMemoFile, stagedMemoKey, writeStagedMemo } from "./staged-memo-io.ts";
import type { LockStatus, Repo, StagedVerdict } from "./staged-check-io.ts";

export interface StagedOptions {
  cwd: string;
  env: GitEnv;
  cacheDir: string;
  now: () => number;
  strict?: boolean;
  /** Changed files as pre-commit passes them (relative to cwd); none means git's staged list. */
  files?: readonly string[];
  /** The size of git's index (bytes) from which git is asked about the changed tools' working copies only (default SCOPED_FROM_BYTES). */
  scopedFrom?: number;
}

/**
 * git's index holds ~100 bytes per tracked file: from ~2,500 files, two small questions (the
 * staged diff, then a status of a few paths, one after the other) cost less than one status of the
 * whole tree (measured: 1.7 + 3.0 against 3.7 ms at 1,750 files, 5 + 9 against 42 ms at 13,000).
 */
export const SCOPED_FROM_BYTES = 256 * 1024;

export type { LockStatus };

export interface StagedProject extends StagedVerdict {
  /** Absolute project root. */
  root: string;
  /** The repository's top folder (undefined: files given outside a repository). */
  top: string | undefined;
  /** The verdict was replayed from the staged memo (inputs unchanged since a check computed it). */
  remembered: boolean;
}

/** Runs the staged check for every project the changed paths touch. */
export async function checkStaged(input: StagedOptions): Promise<StagedProject[]> {
  // git reports real paths; resolve symlinks in cwd (/tmp -> /private/tmp) so both agree.
  const options = { ...input, cwd: realpathSync(input.cwd) };
  const now = options.now();
  const asked = askGit(options.cwd, options.env, options.scopedFrom ?? SCOPED_FROM_BYTES);
  // While git runs: the lock index of the project kiwi was started in, the one a hook usually
  // commits to, and, when git's status covers the whole tree, that tree's identity. (A scoped
  // status waits for the staged diff and starts before the tree's scan, so the two overlap.)
  // When its memo is keyed on its dependencies, those are statted instead (the index and the
  // whole tree are read only if that memo does not answer).
  const around = projectAround(options.cwd);
  const aroundMemo = around === undefined ? undefined : peekStagedMemo(stagedMemoFile(options.cacheDir, around, options.strict === true));
  // git's status of the working copies that memo names starts now, beside the staged diff: it is
  // the one the check asks when the staged paths are the memo's (its key holds them), and is
  // dropped otherwise.
  // A memo whose key names a lock index since rewritten cannot answer: neither is done for it.
  const keyed = aroundMemo !== undefined && keyedOnCurrentIndex(aroundMemo, options.cacheDir, around!);
  const worktree = keyed && aroundMemo.scope && !asked.complete && asked.found !== undefined ? readScopedStatus(asked.found, aroundMemo.scope, options.env) : undefined;
  worktree?.catch(() => undefined); // awaited only if the memo's key is the one to compare
  const aroundDeps = keyed ? await currentDependencies(around!, options.cacheDir, aroundMemo.dependencies, now) : undefined;
  const aroundIndex = around === undefined || aroundDeps ? undefined : (readProjectIndex(options.cacheDir, around) ?? null);
  const early = asked.complete && around !== undefined && !aroundDeps ? await identifyTree(around, now, { cacheDir: options.cacheDir, index: aroundIndex }) : undefined;
  // Else, while git lists what is staged: the index's tools, and what the first check's narrowing
  // reads of them whatever is staged (~2.5 ms for 1,000 tools, most of it inside git's ~4 ms).
  if (aroundIndex && !early) manifestTable(aroundIndex);
  const repo = await asked.repo;
  if (!options.files?.length && repo === undefined) {
    throw new KiwiError("E_GIT", `${options.cwd} is not inside a git repository, so nothing is staged`, {
      hint: "run it inside a repository, or pass the changed files: kiwi check --staged <files…>",
    });
  }
  // Paths relative to the file system root, so groups from anywhere share one base. Given files
  // (pre-commit's) never include deletions, so git's staged deletions are added to them.
  const absolute = options.files?.length
    ? [...options.files.map((f) => resolve(options.cwd, f)), ...(repo === undefined ? [] : repo.status.deleted.map((p) => join(repo.top, p)))]
    : repo!.status.staged.map((p) => join(repo!.top, p));
  const results: StagedProject[] = [];
  for (const group of groupByProject(absolute.map((abs) => relative("/", abs).split(sep).join("/")))) {
    const root = `/${group.root}`;
    // A project whose last tool this commit deletes (git removes the emptied .ai/tools/) is still
    // one while its tool.lock.json is there: that lockfile now pins tools that are gone.
    if (!existsSync(join(root, TOOLS_DIR)) && !existsSync(join(root, LOCKFILE_NAME))) continue;
    if (!existsSync(join(root, TOOLS_DIR))) {
      const { checkToolless } = await import("./staged-check-io.ts");
      results.push({ root, ...checkToolless(root, group.paths, repo === undefined ? undefined : { top: repo.top, status: repo.status }, options), remembered: false, top: repo?.top });
      continue;
    }
    const mine = root === around;
    results.push({ ...(await checkProjectRemembered(root, group.paths, repo, { ...options, started: now, index: mine ? aroundIndex : undefined, early: early?.root === root ? early : undefined, ...(mine ? { memo: aroundMemo ?? null, dependencies: aroundDeps, worktree } : {}) })), top: repo?.top });
  }
  return results;
}

/** The repository around the check: its top folder and what git said. */
interface StagedRepo {
  top: string;
  /** The whole tree's status, or (`complete` false) the index against HEAD only (git-status.ts parseStagedDiff). */
  status: GitStatus;
  complete: boolean;
}

/**
 * Where the work tree is and what the next commit records, from git's status of the whole tree
 * when its index is small (or its size is not known), else from the staged diff alone (`complete`
 * false). git starts at once; the top is found as git finds it (findWorkTree) or, where that is
 * not certain, asked of git side by side. Undefined outside a repository (or without git); a
 * repository whose answer fails is an error.
 */
function askGit(cwd: string, env: GitEnv, scopedFrom: number): { complete: boolean; found?: string; repo: Promise<StagedRepo | undefined> } {
  const found = findWorkTree(cwd, env);
  const complete = found === undefined || gitIndexBytes(found, env) < scopedFrom;
  const status = complete ? readGitStatus(cwd, env) : readStagedDiff(cwd, env);
  status.catch(() => undefined); // judged below, once the top is known
  return { complete, found, repo: settleGit(cwd, env, found, status, complete) };
}

/** The size of the index git will read (a hook's GIT_INDEX_FILE, else the repository's); 0 when unknown. */
function gitIndexBytes(top: string, env: GitEnv): number {
  try {
    return statSync(env.GIT_INDEX_FILE ? resolve(top, env.GIT_INDEX_FILE) : join(top, ".git", "index")).size;
  } catch {
    return 0;
  }
}

async function settleGit(cwd: string, env: GitEnv, found: string | undefined, status: Promise<GitStatus>, complete: boolean): Promise<StagedRepo | undefined> {
  let top: string;
  try {
    top = found ?? (await resolveWorkTreeAsync(cwd, env));
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_GIT") return undefined;
    throw error;
  }
  try {
    return { top, status: await status, complete };
  } catch (error) {
    // A .git folder git itself does not accept (another owner, damaged): as before, no repository.
    if (found !== undefined && error instanceof KiwiError && error.code === "E_GIT" && (await resolveWorkTreeAsync(cwd, env).catch(() => undefined)) === undefined) return undefined;
    throw error;
  }
}

/** The root of the project around `cwd`, if there is one. */
function projectAround(cwd: string): string | undefined {
  try {
    return findProjectRoot(cwd);
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_NO_PROJECT") return undefined;
    throw error;
  }
}

/**
 * A project's verdict from the staged memo when its inputs are unchanged, else checked and
 * remembered. `index` is the project's lock index when it was loaded already (null: none); `memo`
 * the project's memo when it was read already (null: none), `dependencies` the identity now of
 * the entries it is keyed on, and `worktree` git's status of the working copies it names. A memo keyed on its dependencies (staged-memo-io.ts
 * dependenciesOf) is tried first, without the lock index: only those entries are statted, and git
 * is asked about the working copies the memo names; the index and the whole tree's identity are
 * read only when that key does not answer.
 */
async function checkProjectRemembered(root: string, paths: string[], git: StagedRepo | undefined, options: StagedOptions & { started: number; index?: LockIndex | null; early?: TreeIdentity; memo?: StagedMemo | null; dependencies?: TreeIdentity; worktree?: Promise<GitStatus> }): Promise<Omit<StagedProject, "top">> {
  const strict = options.strict === true;
  const keyOf = (repo: Repo | undefined, tree: TreeIdentity) => stagedMemoKey({ cacheDir: options.cacheDir, root, paths, strict, repo, env: options.env, now: options.started }, tree);
  const memo = options.memo === undefined ? peekStagedMemo(stagedMemoFile(options.cacheDir, root, strict)) : (options.memo ?? undefined);
  if (memo && keyedOnCurrentIndex(memo, options.cacheDir, root) && (git === undefined || git.complete || memo.scope !== undefined)) {
    const deps = options.dependencies ?? (await currentDependencies(root, options.cacheDir, memo.dependencies, options.started));
    if (deps) {
      // The memo's working copies are those the index it was taken through chose for these paths; its key names that index.
      const worktree = git === undefined || git.complete ? undefined : await (options.worktree ?? readScopedStatus(git.top, memo.scope!, options.env));
      const repo = git === undefined ? undefined : { top: git.top, status: worktree ? scopedStatus(git.status, worktree) : git.status };
      const key = keyOf(repo, deps);
      if (key && key.digest === memo.digest) return { root, ...memo.verdict, remembered: true };
    }
  }
  const index = options.index === undefined ? (readProjectIndex(options.cacheDir, root) ?? null) : options.index;
  // git reads the working copies the verdict depends on (when its status did not) while the tree's identity is taken.
  const scope = git === undefined || git.complete ? undefined : workingCopiesOf(root, paths, index ?? undefined);
  const scoped = scope === undefined ? undefined : readScopedStatus(git!.top, scope.paths, options.env);
  scoped?.catch(() => undefined); // awaited below
  // With no memo keyed on the whole tree to look up, only the entries the verdict can depend on are statted.
  if (index && !options.early && !(memo && !memo.dependencies)) {
    const narrow = await checkNarrowly(root, paths, git, index, scope, scoped, options, keyOf);
    if (narrow) return narrow;
  }
  const tree = options.early ?? (await identifyTree(root, options.started, { cacheDir: options.cacheDir, index }));
  let repo: Repo | undefined;
  if (git !== undefined && scoped === undefined) repo = { top: git.top, status: git.status };
  else if (git !== undefined) {
    let worktree = await scoped!;
    // The index named the changed tools; when it no longer vouches for the tree, git is asked for all of it.
    if (scope!.fromIndex && !tree.indexed) worktree = await readScopedStatus(git.top, wholeProject(root), options.env);
    repo = { top: git.top, status: scopedStatus(git.status, worktree) };
  }
  const key = keyOf(repo, tree);
  if (key && memo && !memo.dependencies && memo.digest === key.digest) return { root, ...memo.verdict, remembered: true };
  const { checkProjectChanges } = await import("./staged-check-io.ts");
  // The project is read from the tree the key was taken from (the index's scan, or the walk), not the disk a second time.
  const read = { indexed: tree.indexed, raw: tree.raw ? { root, tree: tree.raw } : undefined };
  const fresh = await checkProjectChanges(root, paths, repo, { ...options, ...read });
  if (key && fresh.memorable) rememberVerdict(key, fresh.verdict, tree, fresh.read, scope?.paths, (t) => keyOf(repo, t), options.started);
  return { root, ...fresh.verdict, remembered: false };
}

/**
 * A first check of a staged state that stats only the entries its verdict can depend on
 * (staged-memo-io.ts dependenciesOf: every folder but those inside folder tools, every manifest,
 * every entry no single tool owns, every entry of the tools read at once) instead of the ~13,000
 * entries of a 1,000-tool tree with ten data files each: the files of a tool the verdict never
 * reads reach no verdict, which is why the memo already keys on these alone. A tool the verdict
 * reads later (a dependent, an executor: a stub read on first use) had its entries left out, so
 * they are statted once the verdict is taken, and must still be as the index recorded them: a
 * changed one (whose findings a stub cannot report, and whose stat before the read is not known),
 * a structural change, a project the index cannot serve or any error gives undefined, and the
 * caller checks the project as before, every entry statted. The verdict is then remembered under
 * those entries, at the stats the check observed.
 */
async function checkNarrowly(
  root: string,
  paths: string[],
  git: StagedRepo | undefined,
  index: LockIndex,
  scope: { paths: string[]; fromIndex: boolean } | undefined,
  scoped: Promise<GitStatus> | undefined,
  options: StagedOptions & { started: number },
  keyOf: (repo: Repo | undefined, tree: TreeIdentity) => StagedMemoKey | undefined,
): Promise<Omit<StagedProject, "top"> | undefined> {
  const { toolsReadAtOnce } = await import("./staged-project-io.ts");
  const atOnce = toolsReadAtOnce(index, paths);
  const first = atOnce && dependencyPositions(index, atOnce);
  if (!first) return undefined;
  const scan = await scanLockIndexFast(index, first);
  if (scan.structural) return undefined;
  // The fresh check's modules load while git's status of the working copies may still be running.
  const { checkProjectChanges } = await import("./staged-check-io.ts");
  const repo = git === undefined ? undefined : { top: git.top, status: scoped === undefined ? git.status : scopedStatus(git.status, await scoped) };
  let fresh: Awaited<ReturnType<typeof checkProjectChanges>>;
  try {
    fresh = await checkProjectChanges(root, paths, repo, { ...options, indexed: { index, scan } });
  } catch {
    return undefined; // judged again the long way, which throws it again if it was no stub's
  }
  if (!fresh.read) return undefined;
  // A built-in owns no entry: read since (an executor, usually), it adds none to depend on.
  const tools = index.tools;
  const grown = [...fresh.read].some((t) => !atOnce.has(t) && tools[t]?.form !== "builtin");
  const kept = grown ? dependencyPositions(index, fresh.read) : first;
  if (!kept) return undefined;
  const statted = new Set(first);
  const later = kept.filter((i) => !statted.has(i));
  if (later.length > 0) {
    const check = await scanLockIndexFast(index, later);
    // .ai/tools itself was statted with the rest (a change there is in `scan`).
    if (check.structural || [...check.fresh.keys()].some((i) => i !== -1)) return undefined;
  }
  if (fresh.memorable) rememberUnderDependencies(fresh.verdict, { root, index, scan, read: fresh.read, positions: kept }, scope?.paths, (t) => keyOf(repo, t), options.started);
  return { root, ...fresh.verdict, remembered: false };
}

/**
 * Remembers a fresh verdict: under the entries it depends on when the lock index served the
 * project (the tools it read are known), else under the whole tree's identity (`key`).
 */
function rememberVerdict(key: StagedMemoKey, verdict: StagedVerdict, tree: TreeIdentity, read: ReadonlySet<number> | undefined, scope: readonly string[] | undefined, keyOf: (tree: TreeIdentity) => StagedMemoKey | undefined, now: number): void {
  const indexed = tree.indexed && read ? { root: tree.root, ...tree.indexed, read } : undefined;
  if (!indexed || !rememberUnderDependencies(verdict, indexed, scope, keyOf, now)) writeStagedMemo(key, verdict);
}

/**
 * Remembers a verdict taken through the lock index under the entries it depends on
 * (staged-memo-io.ts dependenciesOf; `positions` when the caller has them), with the working
 * copies git was asked about; false when those entries cannot be told apart or keyed.
 */
function rememberUnderDependencies(
  verdict: StagedVerdict,
  through: { root: string; index: LockIndex; scan: IndexScan; read: ReadonlySet<number>; positions?: number[] },
  scope: readonly string[] | undefined,
  keyOf: (tree: TreeIdentity) => StagedMemoKey | undefined,
  now: number,
): boolean {
  const dependencies = dependenciesOf(through.index, through.scan, through.read, through.positions);
  const observed = dependencies && observedDependencies(through.root, through.index, dependencies, now);
  const key = observed && keyOf(observed);
  if (!key || !dependencies) return false;
  writeStagedMemo(key, verdict, { names: dependencies.names, ...(scope ? { scope } : {}), index: loadedIndexIdentity(through.index) });
  return true;
}

/**
 * The working copies a project's verdict depends on, as absolute paths for git: the lockfile
 * (read from the index when its working copy differs) and each changed tool's manifest and, for a
 * folder tool, its folder (staged-check-io.ts warns of those that differ from what is staged). The
 * tools are found through the lock index; a staged path it does not pin on one tool, or no index,
 * asks for the whole tools folder. `fromIndex`: the index chose them (valid while it vouches).
 */
function workingCopiesOf(root: string, paths: readonly string[], index: LockIndex | undefined): { paths: string[]; fromIndex: boolean } {
  const changed = paths.filter((p) => p !== LOCKFILE_NAME);
  if (changed.length === 0) return { paths: [join(root, LOCKFILE_NAME)], fromIndex: false };
  if (!index) return { paths: wholeProject(root), fromIndex: false };
  const prefix = `${TOOLS_DIR.split("\\").join("/")}/`;
  const out = new Set([join(root, LOCKFILE_NAME)]);
  for (const path of changed) {
    const at = path.startsWith(prefix) ? positionOf(index, path.slice(prefix.length)) : -1;
    const owner = at === -1 ? undefined : index.owners[at]!;
    // A path of no tool is in no warning; a new or shared one, or one of no entry, is not pinned on one tool.
    if (owner === NO_TOOL) continue;
    if (owner === undefined || owner < 0) return { paths: wholeProject(root), fromIndex: false };
    const tool = index.tools[owner]!;
    out.add(join(root, tool.form === "directory" ? tool.root : tool.source));
  }
  return { paths: [...out], fromIndex: true };
}

/** Every working copy of a project that the verdict can depend on. */
function wholeProject(root: string): string[] {
  return [join(root, LOCKFILE_NAME), join(root, TOOLS_DIR), join(root, IGNORE_FILE)];
}

