// The fresh half of `kiwi check --staged` for one project, loaded only when the staged memo has no
// verdict: read the tree (through the lock index where it vouches: staged-project-io.ts), validate
// the changed tools and every tool whose chain runs through them (with the interpreter syntax
// checks), and judge their lockfile entries against the tree. The lockfile is read as it will be
// committed (git's index) when its working copy differs.
import { existsSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { tempName } from "../cache/cache-layout.ts";
import { loadStatCache } from "../cache/stat-cache-io.ts";
import { KiwiError } from "../errors.ts";
import type { Project } from "../manifest/discover-io.ts";
import { type StagedProjectOptions, readStagedProject } from "./staged-project-io.ts";
import { IGNORE_FILE, REMOTE_TOOLS_DIR, type Tool } from "../manifest/model.ts";
import type { Finding } from "../findings/verdict.ts";
import { fileFinding } from "../findings/finding.ts";
import { type HashedTool, lockedToolOf, resolveExecutor } from "../lockfile/build.ts";
import { type LockDiff, type ToolChange, diffToolEntries } from "../lockfile/lock-diff.ts";
import { BUILTIN_ROOT } from "../manifest/builtins.ts";
import { checkEntryConsistency } from "../lockfile/consistency.ts";
import { peekLockfileMemo } from "../exec/chain-io.ts";
import { LOCKFILE_NAME, lockfileFromCheckedText } from "../lockfile/parse.ts";
import { readLockfileText } from "../lockfile/fs.ts";
import { type LockedTools, lockedToolsOf, lockedToolsOfRendered } from "../lockfile/locked-tools.ts";
import { hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { type RenderedTools, renderedTools } from "../lockfile/rendered-tools.ts";
import { type HeadText, editedToolIds } from "../lockfile/edited-tools.ts";
import type { LockedTool } from "../schema/lockfile.ts";
import { type CheckResult, checkProject, planSyntaxChecks, syntaxFindings, withFindings } from "../validate/check-project.ts";
import { runSyntaxChecks } from "../validate/syntax-io.ts";
import { withFileSecrets } from "../validate/file-secrets-io.ts";
import { openChildSchemaMemo } from "../validate/child-schema-memo-io.ts";
import { type GitEnv, gitText, readScopedStatus, runGit, runGitLargeAsync } from "../hook/git-io.ts";
import { isNullBlobId } from "../integrity/git-blob.ts";
import { hasGitBlob, readGitBlob, readGitBlobBeside, readGitBlobText, storeGitBlob } from "../cache/git-blobs-io.ts";
import type { GitStatus } from "../hook/git-status.ts";
import { type AffectedTools, committedRemoteTools, selectAffected } from "../hook/staged.ts";
import { jitAtFullSpeed } from "../self.ts";

export type LockStatus = "fresh" | "stale" | "missing" | "invalid" | "unchecked";
/** Why a lockfile could not be read at all: git's conflict markers, or any other damage. */
export type Unreadable = "conflict" | "damaged";

/**
 * The staged check's verdict on one project, as plain data (tool ids, findings, the lock diff), so
 * a warm check can replay it from its memo (staged-memo-io.ts) exactly as a fresh one renders it.
 */
export interface StagedVerdict {
  /** The changed tools, those whose chain includes them and the locked tools that went away, by id. */
  affected: { changed: string[]; dependents: string[]; gone: string[]; lockfileChanged: boolean; ignoresChanged?: boolean };
  check: CheckResult;
  /** `unreadable`: an invalid lockfile kiwi lock cannot rewrite (a merge conflict, damage), as opposed to a hand-edited entry. */
  lock: { status: LockStatus; diff?: LockDiff; message?: string; unreadable?: Unreadable; fromIndex: boolean };
  /** Project-relative files of changed tools whose working copy differs from what is staged. */
  unstaged: string[];
}

/** What the fresh check needs of the staged check's options. */
export interface FreshOptions {
  env: GitEnv;
  cacheDir: string;
  now: () => number;
  strict?: boolean;
  /** The tree the memo key was taken from, read through the lock index or walked, so the project is read from it, not the disk again. */
  indexed?: StagedProjectOptions["indexed"];
  raw?: StagedProjectOptions["raw"];
}

/** The repository around the project: its top folder and what git says differs in it. */
export interface Repo {
  top: string;
  status: GitStatus;
}

/**
 * Checks one project's changes from scratch. `memorable` is false when the verdict rests on
 * something that may differ next time with the same inputs (an interpreter that timed out).
 * `read`: when the lock index served the project, the index positions of the tools read from disk
 * (staged-project-io.ts readStagedProject); every other tool was seen only through the index.
 */
export async function checkProjectChanges(root: string, paths: string[], repo: Repo | undefined, options: FreshOptions): Promise<{ verdict: StagedVerdict; memorable: boolean; read?: ReadonlySet<number> }> {
  // HEAD's copy of a staged lockfile is asked of git now, so that it comes back while the tree is read (or read from the cache once the committed text is known).
  const headLock = paths.includes(LOCKFILE_NAME) && repo !== undefined ? readHeadLockfile(root, repo, options.env, options.cacheDir) : undefined;
  const { project, read } = readStagedProject(root, paths, { cacheDir: options.cacheDir, indexed: options.indexed, raw: options.raw, now: options.now() });
  const { locked, text, rendered, status, message, unreadable, fromIndex } = readCommittedLockfile(root, repo, options.env, options.cacheDir);
  const selected = selectAffected(project.tools, paths, locked);
  // The lockfile this commit stages is HEAD's at the next one: kept, that check needs no git.
  if (selected.lockfileChanged && repo !== undefined && text !== undefined) keepStagedLockfile(root, repo, text, options.cacheDir);
  const judged = [...selected.changed, ...selected.dependents];
  if (judged.length > JIT_FROM_TOOLS) jitAtFullSpeed();
  const validated = await validate(project, judged, selected, paths, options);
  const memorable = validated.memorable;
  const remote = committedRemoteTools(paths, repo === undefined ? new Set() : new Set(repo.status.deleted.map((p) => toProject(root, repo.top, p))));
  const check = remote.size === 0 ? validated.check : { ...withFindings(validated.check, remoteCommitted(remote), { strict: options.strict }), unmatched: [] };
  const unstaged = repo === undefined ? [] : unstagedFiles(root, repo, selected.changed, selected.ignoresChanged, paths);
  const affected = { changed: selected.changed.map((t) => t.id), dependents: selected.dependents.map((t) => t.id), gone: selected.gone, lockfileChanged: selected.lockfileChanged, ...(selected.ignoresChanged ? { ignoresChanged: true } : {}) };
  if (!locked) {
    const touched = judged.length > 0 || selected.gone.length > 0 || selected.lockfileChanged;
    return { verdict: { affected, check, lock: { status: touched ? status : "unchecked", ...(message === undefined ? {} : { message }), ...(touched && unreadable ? { unreadable } : {}), fromIndex }, unstaged }, memorable, read };
  }
  // A staged lockfile is judged where it changed since HEAD (or everywhere without history).
  const edited = selected.lockfileChanged ? editedToolIds(text!, await headLock?.(text!), rendered) : [];
  const scope = edited === "all" ? project.tools : [...new Set([...judged, ...project.tools.filter((t) => edited.includes(t.id))])];
  const extra = edited === "all" ? locked.ids() : [...selected.gone, ...edited];
  if (scope.length > JIT_FROM_TOOLS) jitAtFullSpeed();
  const diff = compareEntries(project, scope, locked, extra, options);
  // An entry the staged lockfile changed that disagrees with itself was edited by hand or merged
  // badly: kiwi verify's E_LOCK_INVALID, not a "stale" lockfile whose diff has nothing to show.
  const edit = selected.lockfileChanged ? handEditedEntry(diff, project.tools, edited) : undefined;
  if (edit) return { verdict: { affected, check, lock: { status: "invalid", message: `${LOCKFILE_NAME}${fromIndex ? " (as staged)" : ""}: ${edit}`, fromIndex }, unstaged }, memorable, read };
  const stale = diff.added.length + diff.removed.length + diff.changed.length > 0;
  // An entry the staged lockfile changed was compared with its tool's working copy; where that
  // copy is not what is staged (kiwi lock, then only the lockfile added), say so, as for a changed tool.
  // git's status may cover only the changed tools' working copies, so it is asked about these.
  const relocked = edited === "all" || repo === undefined ? [] : project.tools.filter((t) => edited.includes(t.id) && !selected.changed.includes(t) && t.form !== "builtin");
  const warned = relocked.length === 0 ? unstaged : [...new Set([...unstaged, ...(await unstagedOf(root, repo!, relocked, options.env))])];
  return { verdict: { affected, check, lock: { status: stale ? "stale" : "fresh", diff, fromIndex }, unstaged: warned }, memorable, read };
}

/**
 * The first changed entry of the staged lockfile (where it was edited since HEAD) whose integrity
 * is not the digest of its own manifest and files, as lockfile/compare.ts judges it for kiwi verify.
 */
function handEditedEntry(diff: LockDiff, tools: readonly Tool[], edited: readonly string[] | "all"): string | undefined {
  for (const change of diff.changed) {
    if (!change.before || (edited !== "all" && !edited.includes(change.id))) continue;
    const tool = tools.find((t) => t.id === change.id);
    if (tool && checkEntryConsistency(change.id, change.before, tool.manifest) === "inconsistent") {
      return `the entry for "${change.id}" disagrees with itself: its integrity is not the digest of its manifest and file list (edited by hand or merged badly)`;
    }
  }
  return undefined;
}

/** A path git names (relative to the work tree's top) as the project names it. */
function toProject(root: string, top: string, path: string): string {
  return relative(root, join(top, path)).split(sep).join("/");
}

/** One error per remote tool a commit stages files of (hook/staged.ts committedRemoteTools). */
function remoteCommitted(remote: ReadonlyMap<string, number>): Finding[] {
  return [...remote].map(([name, files]) =>
    fileFinding(
      "security/remote-committed",
      `${REMOTE_TOOLS_DIR}/${name}`,
      `this commit stages ${files === 1 ? "a file" : `${files} files`} of the remote tool in ${REMOTE_TOOLS_DIR}/${name}: remote tools come from their registry (pinned by ${LOCKFILE_NAME}, put back by kiwi install) and are never committed; a credential in one would pass as its publisher's`,
      `unstage it (git rm -r --cached ${REMOTE_TOOLS_DIR}/${name}) and commit ${LOCKFILE_NAME}; to keep a copy of your own in git, move it out of ${REMOTE_TOOLS_DIR}/, where it is checked as your tool`,
    ),
  );
}

/**
 * Validates the judged tools (chain rules see the whole tree) with the interpreter syntax checks and
 * the changed tools' files read for credentials,
 * plus whatever discovery found wrong with the changed paths themselves (a manifest that no longer
 * parses is no tool at all, only a finding on its file).
 */
async function validate(project: Project, judged: Tool[], selected: AffectedTools, paths: readonly string[], options: FreshOptions): Promise<{ check: CheckResult; memorable: boolean }> {
  const changed = selected.changed;
  // A commit of the ignore file changes what is let through anywhere: the whole project is judged,
  // every layer over every tool, as kiwi check judges it.
  const everything = selected.ignoresChanged;
  if (everything && project.tools.length > JIT_FROM_TOOLS) jitAtFullSpeed();
  const selectors = [...judged.map((t) => (t.form === "builtin" ? t.id : t.manifestFile)), ...paths.filter((p) => p !== LOCKFILE_NAME)];
  // An empty `only` would mean "everything"; a commit that touches no tool checks none.
  const only = everything ? undefined : selectors.length > 0 ? [...new Set(selectors)] : ["\0none"];
  const requests = planSyntaxChecks(everything ? project.tools : judged);
  // The interpreters start first and parse while the pure layers run (as kiwi check does).
  const pending = requests.length > 0 ? runSyntaxChecks(requests, { env: options.env, cacheDir: options.cacheDir }) : undefined;
  const childSchemaMemo = openChildSchemaMemo(options.cacheDir);
  const checked = checkProject(project, { strict: options.strict, only, childSchemaMemo, complete: everything ? "all" : changed });
  childSchemaMemo?.save();
  // The changed tools' files, as they are in the working tree (as the interpreters read them): what
  // the commit brings. A dependent's files are not its to judge (and not in the memo's key).
  const base = withFileSecrets(checked, everything ? project.tools : changed, options);
  if (pending === undefined) return { check: { ...base, unmatched: [] }, memorable: true };
  const verdicts = await pending;
  // A verdict that is not the parser's (a timeout, a crashed interpreter) may differ next time.
  const memorable = [...verdicts.verdicts.values()].every((v) => v.ok || v.line !== undefined);
  return { check: { ...withFindings(base, syntaxFindings(requests, verdicts), { strict: options.strict }), unmatched: [] }, memorable };
}

/**
 * Judging more tools than this runs long enough for compiled code to pay, as in the full check:
 * the staged check starts at the start-up JIT policy (cli.ts), right for a commit's few tools.
 */
const JIT_FROM_TOOLS = 64;

/** At most this many files (and bytes) of judged tools are hashed without the stat cache. */
const DIRECT_HASH_FILES = 64;
const DIRECT_HASH_BYTES = 1 << 20;

/**
 * The entries the tree would give the scope's tools, against the lockfile's entries for them (and
 * for `extra` ids, such as tools whose source was deleted). Only those tools are hashed, through
 * the stat cache when they are many, which is read but never saved here (a partial run must not
 * shrink it).
 */
function compareEntries(project: Project, scope: readonly Tool[], locked: LockedTools, extra: readonly string[], options: FreshOptions): LockDiff {
  // The scope's tools and their direct executors (the first tool with an executor's id, as
  // resolution picks it), in tree order. One pass, without a map of every id: this runs over the
  // whole tree in the interpreter for a commit of one tool.
  const wanted = new Set<Tool>(scope);
  const executorIds = new Set<string>();
  for (const tool of scope) if (tool.executor) executorIds.add(tool.executor.id);
  const tools: Tool[] = [];
  const all = project.tools;
  for (let i = 0; i < all.length; i++) {
    const tool = all[i]!;
    if (executorIds.size > 0 && executorIds.has(tool.id)) {
      executorIds.delete(tool.id); // only the first tool with an id is an executor
      wanted.add(tool);
    }
    if (wanted.has(tool)) tools.push(tool);
  }
  // The stat cache pays off over many files; a commit's few tools are cheaper to hash than the
  // cache is to load (~330 KB of JSON for 1,000 tools), and hashing is always right.
  const files = tools.reduce((n, t) => n + t.files.length, 0);
  const bytes = tools.reduce((n, t) => t.files.reduce((m, f) => m + f.size, n), 0);
  const statCache = files <= DIRECT_HASH_FILES && bytes <= DIRECT_HASH_BYTES ? undefined : loadStatCache(options.cacheDir, project.root, options.now());
  const hashed = hashProjectTools({ ...project, tools }, { statCache });
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
    const entry = locked.get(id);
    if (entry) before[id] = entry;
  }
  return diffToolEntries(before, after);
}

/**
 * HEAD's copy of the project's lockfile, given the committed text; undefined when HEAD has none
 * (or there is no HEAD yet). git named its blob (status or staged diff): kept in the cache (a
 * commit's check keeps the lockfile it stages), it is read there once the committed text is known
 * and verified against that id, told as it differs from that text (cache/git-blobs-io.ts
 * readGitBlobBeside: ~2 MB never held whole); else git is asked at once, and its answer kept.
 */
function readHeadLockfile(root: string, repo: Repo, env: GitEnv, cacheDir: string): (committed: string) => Promise<HeadText | undefined> {
  const rel = lockfileRel(root, repo.top);
  const head = repo.status.entries.get(rel)?.head;
  if (head !== undefined && isNullBlobId(head)) return () => Promise.resolve(undefined); // added by this commit, or no HEAD yet
  if (head !== undefined && hasGitBlob(cacheDir, head)) {
    // Text that is not the blob (a damaged copy, bytes that are not UTF-8, a committed text that is
    // not ASCII) is read whole as text, then as bytes (which removes a damaged copy), then asked of git.
    return async (committed) => readGitBlobBeside(cacheDir, head, committed) ?? readGitBlobText(cacheDir, head) ?? keptBytesText(cacheDir, head) ?? (await showHeadLockfile(root, rel, head, env, cacheDir));
  }
  const shown = showHeadLockfile(root, rel, head, env, cacheDir);
  return () => shown;
}

/**
 * HEAD's copy of the lockfile at `rel` as git shows it, kept under its blob id when git named one.
 * git writes into a file in the cache: the staged check reads the tree synchronously for tens of
 * ms, and through a pipe git would wait on it after the first 64 KB (~3.5 ms to drain at the await).
 */
function showHeadLockfile(root: string, rel: string, head: string | undefined, env: GitEnv, cacheDir: string): Promise<string | undefined> {
  const scratch = join(cacheDir, "check", "staged", tempName("head-lock", process.pid, Math.random().toString(36).slice(2, 10)));
  const text = runGitLargeAsync(root, ["show", `HEAD:${rel}`], env, scratch).then(
    (bytes) => {
      if (head !== undefined) storeGitBlob(cacheDir, head, bytes);
      return gitText(bytes);
    },
    (error) => {
      if (error instanceof KiwiError && error.code === "E_GIT") return undefined;
      throw error;
    },
  );
  text.catch(() => undefined); // awaited only when the lockfile could be read; judged there
  return text;
}

/** gitText of the kept blob `id`'s bytes, when the cache holds that blob. */
function keptBytesText(cacheDir: string, id: string): string | undefined {
  const bytes = readGitBlob(cacheDir, id);
  return bytes === undefined ? undefined : gitText(bytes);
}

/** Keeps the staged lockfile's text under its index blob id, if the text is that blob (a working copy read after a later edit is not). */
function keepStagedLockfile(root: string, repo: Repo, text: string, cacheDir: string): void {
  const index = repo.status.entries.get(lockfileRel(root, repo.top))?.index;
  if (index !== undefined && !isNullBlobId(index)) storeGitBlob(cacheDir, index, text);
}

/** The lockfile's path from the top of the repository, as git names it. */
function lockfileRel(root: string, top: string): string {
  return relative(top, join(root, LOCKFILE_NAME)).split(sep).join("/");
}

interface CommittedLock {
  /** Its tool entries. */
  locked?: LockedTools;
  /** The lockfile's text as committed. */
  text?: string;
  /** Its tools section, when the text is kiwi's own rendering. */
  rendered?: RenderedTools;
  status: LockStatus;
  message?: string;
  unreadable?: Unreadable;
  fromIndex: boolean;
}

/** The lockfile the commit will carry: the staged copy when the working copy differs, else the file. */
function readCommittedLockfile(root: string, repo: Repo | undefined, env: GitEnv, cacheDir: string): CommittedLock {
  let fromIndex = false;
  try {
    if (repo !== undefined) {
      const rel = lockfileRel(root, repo.top);
      // git rm --cached: the commit takes the lockfile out of git, whatever the working copy holds.
      if (repo.status.deleted.includes(rel)) {
        const kept = existsSync(join(root, LOCKFILE_NAME)) ? " (the copy in the working tree is not committed)" : "";
        return { status: "missing", message: `${LOCKFILE_NAME} is deleted from git's index, so this commit drops it${kept}`, fromIndex: true };
      }
      if (!rel.startsWith("..") && !isAbsolute(rel) && repo.status.unstaged.has(rel)) {
        fromIndex = true;
        // Mid-merge, a conflicted lockfile has no staged copy, only git's three stages of it.
        if (repo.status.entries.get(rel)?.x === "U") return { status: "invalid", message: `${LOCKFILE_NAME}: unresolved merge conflict (unmerged in git's index)`, unreadable: "conflict", fromIndex: true };
        const text = tryGit(root, ["show", `:${rel}`], env);
        if (text === undefined) return { status: "missing", message: `${LOCKFILE_NAME} exists but is not staged`, fromIndex: true };
        return { ...lockedOf(text, cacheDir), text, status: "fresh", fromIndex: true };
      }
    }
    const text = readLockfileText(root);
    return text !== undefined ? { ...lockedOf(text, cacheDir), text, status: "fresh", fromIndex: false } : { status: "missing", message: `${LOCKFILE_NAME} does not exist`, fromIndex: false };
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_LOCK_INVALID") {
      const message = fromIndex ? error.message.replace(`${LOCKFILE_NAME}:`, `${LOCKFILE_NAME} (as staged):`) : error.message;
      // An entry naming an executor the file does not lock kiwi lock rewrites, as it does a hand edit.
      if (error.details?.rewritable === true) return { status: "invalid", message, fromIndex };
      return { status: "invalid", message, unreadable: error.details?.conflict === true ? "conflict" : "damaged", fromIndex };
    }
    throw error;
  }
}

/**
 * The entries of lockfile text, through exec's lockfile memo. Bytes kiwi lock wrote, or a check
 * already took, are kiwi's own rendering: they are read in place (rendered-tools.ts), and only
 * the entries the check asks for are found and parsed, where JSON.parse of the whole ~500 KB costs
 * ~1 ms in a fresh process. Other text is parsed and checked whole.
 */
function lockedOf(text: string, cacheDir: string): { locked: LockedTools; rendered?: RenderedTools } {
  const peek = peekLockfileMemo(text, cacheDir);
  const rendered = peek === "checked" || peek.rendered ? renderedTools(text) : undefined;
  if (peek !== "checked") return { locked: lockedToolsOf(peek.lock.tools), ...(rendered ? { rendered } : {}) };
  return rendered ? { locked: lockedToolsOfRendered(rendered), rendered } : { locked: lockedToolsOf(lockfileFromCheckedText(text).tools) };
}

/**
 * Files of the changed tools, and staged files, whose working copy differs from the index (they were
 * checked as on disk). A staged file deleted from the working copy belongs to no tool any more (its
 * tool was judged removed), so the staged paths are asked too; the lockfile is read as staged.
 */
function unstagedFiles(root: string, repo: Repo, changed: readonly Tool[], ignoreFile: boolean, paths: readonly string[]): string[] {
  const files = changed.flatMap(filesOf);
  if (ignoreFile) files.push(IGNORE_FILE);
  for (const path of paths) if (path !== LOCKFILE_NAME) files.push(path);
  const toTop = (p: string) => relative(repo.top, join(root, p)).split(sep).join("/");
  const unstaged = repo.status.unstaged;
  return [...new Set(files)].filter((f) => unstaged.has(toTop(f)));
}

/** A tool's project-relative files: its manifest and, for a folder tool, every file in it. */
function filesOf(t: Tool): string[] {
  return [t.manifestFile, ...(t.form === "directory" ? t.files.map((f) => `${t.root}/${f.path}`) : [])];
}

/** The files of `tools` whose working copy differs from the index, asked of git for them alone. */
async function unstagedOf(root: string, repo: Repo, tools: readonly Tool[], env: GitEnv): Promise<string[]> {
  const files = [...new Set(tools.flatMap(filesOf))];
  const status = await readScopedStatus(repo.top, files.map((f) => join(root, f)), env);
  const toTop = (p: string) => relative(repo.top, join(root, p)).split(sep).join("/");
  return files.filter((f) => status.unstaged.has(toTop(f)));
}

function tryGit(cwd: string, args: string[], env: GitEnv): string | undefined {
  try {
    return runGit(cwd, args, env);
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_GIT") return undefined;
    throw error;
  }
}

/**
 * A project whose last tool the commit deletes: git removes the emptied .ai/tools/, and its
 * tool.lock.json (as it will be committed) still pins those tools. Each locked project tool is
 * gone (built-ins stay), so a lockfile that pins any is stale; kiwi lock cannot rewrite it without
 * a project, so the message says what to do.
 */
export function checkToolless(root: string, paths: string[], repo: Repo | undefined, options: FreshOptions): StagedVerdict {
  const check: CheckResult = { ok: true, findings: [], toolsChecked: 0, unmatched: [], counts: { error: 0, warning: 0, info: 0 }, ignored: [], ignoreComments: [], ignoreEntries: [] };
  // The commit takes the lockfile out of git as well (a copy kept in the working tree is untracked): nothing is left to pin.
  if (repo !== undefined && repo.status.deleted.includes(lockfileRel(root, repo.top))) {
    return { affected: { changed: [], dependents: [], gone: [], lockfileChanged: true }, check, lock: { status: "unchecked", fromIndex: true }, unstaged: [] };
  }
  const { locked, status, message, unreadable, fromIndex } = readCommittedLockfile(root, repo, options.env, options.cacheDir);
  const gone = locked === undefined ? [] : locked.ids().filter((id) => !locked.get(id)!.source.startsWith(`${BUILTIN_ROOT}/`));
  const affected = { changed: [], dependents: [], gone, lockfileChanged: paths.includes(LOCKFILE_NAME) };
  if (!locked) return { affected, check, lock: { status, ...(message === undefined ? {} : { message }), ...(unreadable ? { unreadable } : {}), fromIndex }, unstaged: [] };
  if (gone.length === 0) return { affected, check, lock: { status: "fresh", fromIndex }, unstaged: [] };
  const removed = gone.map((id): ToolChange => {
    const before = locked.get(id)!;
    return { id, kind: "removed", before, fields: [], files: before.files.map((f) => ({ path: f.path, kind: "removed", before: f })) };
  });
  return {
    affected,
    check,
    lock: { status: "stale", diff: { added: [], removed, changed: [] }, message: `${LOCKFILE_NAME} pins ${gone.length} tool${gone.length === 1 ? "" : "s"} of .ai/tools/, which this commit deletes entirely`, fromIndex },
    unstaged: [],
  };
}
