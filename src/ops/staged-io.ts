// `kiwi check --staged`: for each project a commit touches, validate the changed tools and every
// tool whose chain runs through them, and judge their lockfile entries against the tree
// (staged-check-io.ts). Git is asked once what differs; a project whose inputs are unchanged since
// a check judged them gets that verdict back from the staged memo (staged-memo-io.ts), so the
// validator, the tree's manifests and the hashing are loaded only when something changed.
import { existsSync, realpathSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { KiwiError } from "../errors.ts";
import { TOOLS_DIR, findProjectRoot } from "../manifest/project-io.ts";
import { type GitEnv, findWorkTree, readGitStatus, resolveWorkTreeAsync } from "../hook/git-io.ts";
import { groupByProject } from "../hook/staged.ts";
import { type TreeIdentity, identifyTree, readStagedMemo, stagedMemoKey, writeStagedMemo } from "./staged-memo-io.ts";
import type { LockStatus, Repo, StagedVerdict } from "./staged-check-io.ts";

export interface StagedOptions {
  cwd: string;
  env: GitEnv;
  cacheDir: string;
  now: () => number;
  strict?: boolean;
  /** Changed files as pre-commit passes them (relative to cwd); none means git's staged list. */
  files?: readonly string[];
}

export type { LockStatus };

export interface StagedProject extends StagedVerdict {
  /** Absolute project root. */
  root: string;
  /** The verdict was replayed from the staged memo (inputs unchanged since a check computed it). */
  remembered: boolean;
}

/** Runs the staged check for every project the changed paths touch. */
export async function checkStaged(input: StagedOptions): Promise<StagedProject[]> {
  // git reports real paths; resolve symlinks in cwd (/tmp -> /private/tmp) so both agree.
  const options = { ...input, cwd: realpathSync(input.cwd) };
  const now = options.now();
  const asked = askGit(options.cwd, options.env);
  // While git runs: the identity of the tree kiwi was started in, the project a hook usually commits to.
  const early = await treeAround(options.cwd, now, options);
  const repo = await asked;
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
    if (!existsSync(join(root, TOOLS_DIR))) continue;
    results.push(await checkProjectRemembered(root, group.paths, repo, { ...options, started: now, early }));
  }
  return results;
}

/**
 * Where the work tree is and what differs in it. git's status starts at once; the top is found as
 * git finds it (findWorkTree) or, where that is not certain, asked of git side by side. Undefined
 * outside a repository (or without git); a repository whose status fails is an error.
 */
async function askGit(cwd: string, env: GitEnv): Promise<Repo | undefined> {
  const status = readGitStatus(cwd, env);
  status.catch(() => undefined); // judged below, once the top is known
  const found = findWorkTree(cwd, env);
  let top: string;
  try {
    top = found ?? (await resolveWorkTreeAsync(cwd, env));
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_GIT") return undefined;
    throw error;
  }
  try {
    return { top, status: await status };
  } catch (error) {
    // A .git folder git itself does not accept (another owner, damaged): as before, no repository.
    if (found !== undefined && error instanceof KiwiError && error.code === "E_GIT" && (await resolveWorkTreeAsync(cwd, env).catch(() => undefined)) === undefined) return undefined;
    throw error;
  }
}

/** The tree identity of the project around `cwd`, if there is one. */
async function treeAround(cwd: string, now: number, options: StagedOptions): Promise<TreeIdentity | undefined> {
  let root: string;
  try {
    root = findProjectRoot(cwd);
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_NO_PROJECT") return undefined;
    throw error;
  }
  return identifyTree(root, now, { cacheDir: options.cacheDir });
}

/** A project's verdict from the staged memo when its inputs are unchanged, else checked and remembered. */
async function checkProjectRemembered(root: string, paths: string[], repo: Repo | undefined, options: StagedOptions & { started: number; early?: TreeIdentity }): Promise<StagedProject> {
  const tree = options.early?.root === root ? options.early : await identifyTree(root, options.started, { cacheDir: options.cacheDir });
  const key = stagedMemoKey({ cacheDir: options.cacheDir, root, paths, strict: options.strict === true, repo, env: options.env, now: options.started }, tree);
  const known = key ? readStagedMemo(key) : undefined;
  if (known) return { root, ...known, remembered: true };
  const { checkProjectChanges } = await import("./staged-check-io.ts");
  // The project is read from the tree the key was taken from (the index's scan, or the walk), not the disk a second time.
  const read = { indexed: tree.indexed, raw: tree.raw ? { root, tree: tree.raw } : undefined };
  const { verdict, memorable } = await checkProjectChanges(root, paths, repo, { ...options, ...read });
  if (key && memorable) writeStagedMemo(key, verdict);
  return { root, ...verdict, remembered: false };
}

