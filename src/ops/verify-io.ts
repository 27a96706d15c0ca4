// `kiwi verify` as a core operation: the lockfile (well-formed, self-consistent), the tree
// (every byte re-read, no stat cache) and the cache (every locked blob and tool entry re-hashed)
// against each other. Returns a report; verifyOutcomeError turns it into the one exit code.
import { type Eviction, checkBlob, checkIndexEntry, openStore, readTreeEntry } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { shortDigest } from "../integrity/digest.ts";
import { readProject } from "../manifest/discover-io.ts";
import { REMOTE_TOOLS_DIR, isRemoteTool } from "../manifest/model.ts";
import { type HandEdit, compareTreeToLock } from "../lockfile/compare.ts";
import { type DiffSummary, type LockDiff, allChanges, isEmptyDiff, summarizeDiff } from "../lockfile/lock-diff.ts";
import { convertedLineEndingsHint, markConvertedLineEndings } from "./line-endings-io.ts";
import { lockfilePath, readLockfileOrFail } from "../lockfile/fs.ts";
import { cachedManifest } from "./install-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { remoteToolsNotInstalled } from "./remote-installed-io.ts";
import { leftoverLockfileExplained } from "./project-root-io.ts";
import { cachedTreeMismatch, treeMismatchError } from "../deps/installed-tree-io.ts";

export interface CacheProblem {
  tool: string;
  /** The file's path in the tool (or in its installed packages), absent for an index entry. */
  path?: string;
  /** `tree`: the index entry of the tool's installed packages (`ecosystem` says which). */
  kind: "blob" | "index" | "tree";
  ecosystem?: "npm" | "pypi";
  /** Absent for a tree the lock does not record: kiwi lock resolved the packages, kiwi install has not run. */
  sha256?: string;
  /** Set when the entry was corrupt (and has been evicted). */
  evicted?: Eviction;
}

/** In precedence order: the first that applies sets the exit code. */
export const VERIFY_OUTCOMES = ["lock-invalid", "cache-corrupt", "tree-differs", "not-installed", "cache-missing", "ok"] as const;
export type VerifyOutcome = (typeof VERIFY_OUTCOMES)[number];

export interface VerifyReport {
  outcome: VerifyOutcome;
  root: string;
  lockfile: string;
  tools: number;
  files: number;
  handEdited: HandEdit[];
  tree: LockDiff;
  /** `tree` as shown: each changed file whose only change is git's CRLF conversion marked `lineEndings: "crlf"`. */
  treeSummary: DiffSummary;
  /** How many files `treeSummary` marks so. */
  converted: number;
  /**
   * Remote tools the lockfile records whose folder this checkout does not have (a fresh clone
   * before kiwi install): not in `tree`'s removed, since only kiwi remove takes one out.
   */
  notInstalled: string[];
  /** The changed tools that are remote (read-only: kiwi install restores them, kiwi lock refuses). */
  remoteChanged: string[];
  /** The added tools that are folders of .ai/tools/.remote/ the lockfile records no remote tool of (kiwi install removes them). */
  remoteLeftover: string[];
  cache: { checked: number; missing: CacheProblem[]; corrupt: CacheProblem[] };
}

/** Checks tree and cache against the lockfile. Throws only when the lockfile is missing or unreadable. */
export function verifyProject(ctx: Context, onProgress?: (done: number, total: number) => void): VerifyReport {
  // No parse cache and no stat cache: verify reads every manifest and every byte itself.
  const project = leftoverLockfileExplained(ctx.cwd, () => readProject(ctx.cwd));
  const { lock } = readLockfileOrFail(project.root);
  const store = openStore(ctx.cacheDir, ctx.env);
  const tree = hashProjectTools(project, { onProgress });
  const cmp = compareTreeToLock(lock, tree, (_id, hex) => cachedManifest(store, hex));
  const notInstalled = remoteToolsNotInstalled(project.root, Object.keys(lock.remote ?? {}), new Set(tree.map((h) => h.tool.id)));
  const diff = notInstalled.length === 0 ? cmp.diff : { ...cmp.diff, removed: cmp.diff.removed.filter((ch) => !notInstalled.includes(ch.id)) };
  const cache: VerifyReport["cache"] = { checked: 0, missing: [], corrupt: [] };
  const handEdited = [...cmp.handEdited];
  let files = 0;
  for (const [id, entry] of Object.entries(lock.tools)) {
    const integrity = entry.integrity.slice("sha256:".length);
    const add = (verdict: ReturnType<typeof checkBlob>, problem: Omit<CacheProblem, "evicted">) => {
      cache.checked++;
      if (verdict === "missing") cache.missing.push(problem);
      else if (verdict !== "ok") cache.corrupt.push({ ...problem, evicted: verdict });
    };
    add(checkIndexEntry(store, integrity), { tool: id, kind: "index", sha256: integrity });
    for (const f of entry.files) {
      files++;
      add(checkBlob(store, f.sha256), { tool: id, path: f.path, kind: "blob", sha256: f.sha256 });
    }
    // The tool's installed packages: each tree entry, then every file of it. Packages the lock
    // resolved but records no installed tree for are as missing as an evicted tree: exec refuses them.
    for (const ecosystem of ["npm", "pypi"] as const) {
      const locked = lock.dependencies?.[id]?.[ecosystem];
      if (!locked) continue;
      const tree = locked.tree?.slice("sha256:".length);
      const verdict = tree === undefined ? "missing" : checkIndexEntry(store, tree);
      add(verdict, { tool: id, kind: "tree", ecosystem, ...(tree === undefined ? {} : { sha256: tree }) });
      for (const f of verdict === "ok" ? (readTreeEntry(store, tree!) ?? []) : []) {
        files++;
        add(checkBlob(store, f.sha256), { tool: id, path: f.path, kind: "blob", sha256: f.sha256 });
      }
      // A tree that is not the packages the entry lists (a bad merge) is an edit of the lockfile.
      if (verdict === "ok" && !cache.corrupt.some((p) => p.tool === id) && !cache.missing.some((p) => p.tool === id)) {
        const problems = cachedTreeMismatch(store, ecosystem, tree!, locked);
        if (problems.length > 0) {
          const error = treeMismatchError(id, ecosystem, locked.tree!, problems);
          handEdited.push({ id, message: error.message.replace(/^tool\.lock\.json: /, ""), hint: error.hint });
        }
      }
    }
  }
  const outcome: VerifyOutcome =
    handEdited.length > 0 ? "lock-invalid"
    : cache.corrupt.length > 0 ? "cache-corrupt"
    : !isEmptyDiff(diff) ? "tree-differs"
    : notInstalled.length > 0 ? "not-installed"
    : cache.missing.length > 0 ? "cache-missing"
    : "ok";
  const remoteChanged = diff.changed.map((ch) => ch.id).filter((id) => lock.remote?.[id] !== undefined);
  const remoteFolders = new Set(tree.filter((h) => isRemoteTool(h.tool)).map((h) => h.tool.id));
  const remoteLeftover = diff.added.map((ch) => ch.id).filter((id) => remoteFolders.has(id) && lock.remote?.[id] === undefined);
  const treeSummary = summarizeDiff(diff);
  const converted = markConvertedLineEndings(treeSummary, new Map(tree.map((h) => [h.tool.id, h.tool])));
  return { outcome, root: project.root, lockfile: lockfilePath(project.root), tools: Object.keys(lock.tools).length, files, handEdited, tree: diff, treeSummary, converted, notInstalled, remoteChanged, remoteLeftover, cache };
}

/**
 * kiwi lock takes a change to the project's own tools; a remote tool's files go back, and a folder
 * another checkout's kiwi remove left in .ai/tools/.remote/ goes, with kiwi install.
 */
function treeDiffersHint(report: VerifyReport): string {
  const { remoteChanged: changed, remoteLeftover: leftover } = report;
  // Files git converted on checkout are no change to lock: kiwi lock would put the converted bytes in the team's lockfile.
  if (report.converted > 0) return convertedLineEndingsHint(report.converted);
  if (changed.length + leftover.length === 0) return 'run "kiwi lock" if the change is intended';
  const fixes = [
    changed.length > 0 ? `to restore the remote tool${changed.length === 1 ? "" : "s"} ${changed.join(", ")} (read-only: the registry's files)` : "",
    leftover.length > 0 ? `to remove ${leftover.map((id) => `${REMOTE_TOOLS_DIR}/${id}`).join(", ")}, which ${LOCKFILE_NAME} records no remote tool of` : "",
  ].filter(Boolean);
  const install = `run "kiwi install" ${fixes.join(" and ")}`;
  return allChanges(report.tree).length === changed.length + leftover.length ? install : `${install}; run "kiwi lock" if the change to the others is intended`;
}

/** The error a failed verification exits with, or undefined when everything verified. */
export function verifyOutcomeError(report: VerifyReport, details: Record<string, unknown>): KiwiError | undefined {
  switch (report.outcome) {
    case "ok":
      return undefined;
    case "lock-invalid":
      return new KiwiError("E_LOCK_INVALID", `${LOCKFILE_NAME}: ${report.handEdited.map((h) => h.message).join("; ")}`, {
        hint: report.handEdited.find((h) => h.hint !== undefined)?.hint ?? `restore ${LOCKFILE_NAME} from version control, or run "kiwi lock" to rewrite it from the tool tree`,
        details,
      });
    case "cache-corrupt": {
      const first = report.cache.corrupt[0]!;
      return new KiwiError("E_CACHE_CORRUPT", `${report.cache.corrupt.length} cache entr${report.cache.corrupt.length === 1 ? "y" : "ies"} failed verification and ${report.cache.corrupt.length === 1 ? "was" : "were"} evicted (first: ${describe(first)})`, {
        hint: 'run "kiwi install" to restore them from the tool tree, and check what is writing to the cache',
        details,
      });
    }
    case "tree-differs":
      return new KiwiError("E_LOCK_STALE", `the tool tree differs from ${LOCKFILE_NAME} (${allChanges(report.tree).map((c) => `${c.id} ${c.kind}`).join(", ")})`, {
        hint: treeDiffersHint(report),
        details,
      });
    case "not-installed":
      return new KiwiError("E_LOCK_STALE", `${report.notInstalled.join(", ")} ${report.notInstalled.length === 1 ? "is a remote tool" : "are remote tools"} this checkout has not installed`, {
        hint: 'run "kiwi install" (in CI: kiwi install --frozen-lockfile): it places the remote tools tool.lock.json records',
        details,
      });
    case "cache-missing":
      return new KiwiError("E_CACHE_MISSING", `${report.cache.missing.length} locked entr${report.cache.missing.length === 1 ? "y is" : "ies are"} not in the cache (first: ${describe(report.cache.missing[0]!)})`, {
        // kiwi lock hashes the tree but fills no cache (a cold lock must stay as cheap as hashing);
        // kiwi install does both.
        hint: 'run "kiwi install": it locks and puts every locked file into the cache (kiwi lock only hashes)',
        details,
      });
  }
}

function describe(p: CacheProblem): string {
  const what = p.kind === "index" ? `tool index entry of "${p.tool}"` : p.kind === "tree" ? `installed ${p.ecosystem} packages of "${p.tool}"` : `"${p.tool}" file ${p.path}`;
  const digest = p.sha256 === undefined ? "not recorded in the lock" : `sha256:${shortDigest(p.sha256)}`;
  return `${what}, ${digest}${p.evicted ? ` held sha256:${shortDigest(p.evicted.actual)}` : ""}`;
}

/** `kiwi verify`: the report, its `--json` document, and the error to raise when the outcome is not ok. */
export function verifyTree(ctx: Context, onProgress?: (done: number, total: number) => void): { report: VerifyReport; document: Record<string, unknown>; error?: KiwiError } {
  const report = verifyProject(ctx, onProgress);
  const document = { outcome: report.outcome, lockfile: report.lockfile, tools: report.tools, files: report.files, handEdited: report.handEdited, tree: report.treeSummary, notInstalled: report.notInstalled, cache: report.cache };
  const error = verifyOutcomeError(report, document);
  return { report, document, ...(error ? { error } : {}) };
}
