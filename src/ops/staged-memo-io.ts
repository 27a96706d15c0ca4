// The staged check's memo, in the spirit of git's index: a project's whole verdict (findings, the
// tools judged, the lockfile's status and diff, the unstaged warnings) remembered under a digest of
// everything it was derived from, so a commit retried, a hook run twice or `pre-commit run` after
// `git commit` answers without reading a manifest, loading the validator or hashing a file. The key
// covers, per project:
//   - kiwi itself (version, memo format, the binary's stat identity: built-in tools and rules live there);
//   - the options that change a verdict (--strict) and the project's changed paths;
//   - every name and stat below .ai/tools (a superset of what discovery, the validator, hashing and
//     syntax checks read), read through the lock index when it still holds the tree's entries, else
//     by walking the tree (manifest/raw-tree-io.ts);
//   - the lockfile as committed: its index blob id when the working copy differs from the index,
//     else the working copy's stat identity; and HEAD's blob id when the lockfile is staged;
//   - git's view of the project: the repository's top and which of the working copies the verdict
//     reads (the lockfile, the changed tools' files: staged-io.ts workingCopiesOf) differ from the index;
//   - the syntax checkers: python3's and bash's path and stat identity, and the environment they get.
// It is never trusted past a changed stat, and nothing is remembered when a file changed within the
// racy margin (its stat could hide a second write), when the tree holds a symbolic link, or when a
// verdict was not a real interpreter verdict (a timeout). A damaged memo reads as absent.
import { statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { RACY_MARGIN_MS } from "../cache/stat-cache-io.ts";
import { projectKey } from "../cache/cache-layout.ts";
import { memoKey } from "../exec/memo-io.ts";
import { binaryIdentity, readMemoFile, statIdentity, writeMemoFile } from "../cache/memo-file-io.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { type RawTree, rawTreeFingerprint } from "../manifest/raw-tree-io.ts";
import { type IndexScan, type LockIndex, loadLockIndex, scanLockIndexFast } from "../lockfile/lock-index-io.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import type { GitEnv } from "../hook/git-io.ts";
import type { GitStatus } from "../hook/git-status.ts";
import type { StagedVerdict } from "./staged-check-io.ts";

/** Where staged verdicts live in the cache: one file per project and --strict. */
const STAGED_DIR = join("check", "staged");

/** Everything a project's staged verdict depends on, hashed; undefined when it cannot be vouched for. */
export interface StagedMemoKey {
  file: string;
  digest: string;
  /** Something changed within the racy margin: look up, but never remember. */
  racy: boolean;
}

export interface StagedMemoInputs {
  cacheDir: string;
  /** Absolute project root. */
  root: string;
  /** The project's changed paths (project-relative), as judged. */
  paths: readonly string[];
  strict: boolean;
  /** The repository around the project and what git said differs, when there is one. */
  repo?: { top: string; status: GitStatus };
  env: GitEnv;
  /** Start of the check (ms since epoch), for the racy rule. */
  now: number;
}

/** A project's tool tree as the memo sees it: every name and file stat below .ai/tools. */
export interface TreeIdentity {
  root: string;
  /** The digest of every name and stat, and whether one is within the racy margin; undefined when the tree cannot be vouched for. */
  digest?: { value: string; racy: boolean };
  /** Read through the lock index: its entries, and the stats that changed since it was written. */
  indexed?: { index: LockIndex; scan: IndexScan };
  /** Read by walking the tree (no usable index, or entries added or removed since). */
  raw?: RawTree;
}

/**
 * The tree identity of `root` at `now`. Through the lock index when there is one and the tree
 * still holds exactly its entries: one statx per recorded entry and no readdir (a
 * folder is listed only when its own stat changed), git's way; else one readdir per folder and one
 * lstat per entry. Taken on its own so it can be computed while git answers. `index` is the
 * project's lock index when the caller loaded it already (readProjectIndex; null: there is none).
 */
export async function identifyTree(root: string, now: number, options: { cacheDir: string; index?: LockIndex | null }): Promise<TreeIdentity> {
  const index = options.index === undefined ? readProjectIndex(options.cacheDir, root) : (options.index ?? undefined);
  if (index) {
    const scan = await scanLockIndexFast(index);
    if (!scan.structural) return { root, digest: indexedDigest(root, index, scan, now), indexed: { index, scan } };
  }
  const raw = rawTreeFingerprint(root, "kiwi check --staged", now);
  return raw ? { root, digest: { value: raw.digest, racy: raw.racy }, raw: raw.tree } : { root };
}

/** The project's lock index, written by a plain or a --strict lock alike (what it records of the tree is the same). */
export function readProjectIndex(cacheDir: string, root: string): LockIndex | undefined {
  return loadLockIndex(cacheDir, root, undefined);
}

/**
 * The digest of a tree read through the index: the index's names and stats, with each entry whose
 * stat changed since at its new stat. A folder whose stat is unchanged holds the names recorded
 * (its mtime moves with every name added, removed or renamed), and the scan listed every folder
 * whose stat moved, so these are every name and stat below .ai/tools, as a walk would read them.
 */
function indexedDigest(root: string, index: LockIndex, scan: IndexScan, now: number): { value: string; racy: boolean } {
  const limit = now - RACY_MARGIN_MS;
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`kiwi check --staged\0indexed\0${root}\0`);
  if (index.names) hasher.update(index.names);
  else hasher.update(index.paths.join("\0"));
  hasher.update(new Uint8Array(index.stats.buffer, index.stats.byteOffset, index.stats.byteLength));
  hasher.update(new Uint8Array(Float64Array.from(index.top).buffer));
  let racy = false;
  for (const [at, row] of [...scan.fresh].sort((a, b) => a[0] - b[0])) {
    if (row[1]! >= limit || row[2]! >= limit) racy = true;
    hasher.update(new Uint8Array(Float64Array.from([at, ...row]).buffer));
  }
  return { value: hasher.digest("hex"), racy };
}

/** The memo key for a project's staged check, taken before anything is read, from the tree's identity. */
export function stagedMemoKey(inputs: StagedMemoInputs, identity: TreeIdentity): StagedMemoKey | undefined {
  const limit = inputs.now - RACY_MARGIN_MS;
  let racy = false;
  const parts: string[] = [inputs.root, inputs.strict ? "strict" : "", inputs.paths.join("\0"), binaryIdentity()];
  const tree = identity.root === inputs.root ? identity.digest : undefined;
  if (!tree) return undefined;
  racy ||= tree.racy;
  parts.push(tree.value);
  const lock = lockfileIdentity(inputs, limit);
  if (!lock) return undefined;
  racy ||= lock.racy;
  parts.push(lock.id);
  parts.push(...interpreterIdentities(inputs.env));
  return { file: join(inputs.cacheDir, STAGED_DIR, `${projectKey(inputs.root)}${inputs.strict ? "-strict" : ""}.json`), digest: memoKey("staged", ...parts), racy };
}

/** The lockfile as it will be committed, plus git's view of the project; undefined when git's answer is ambiguous. */
function lockfileIdentity(inputs: StagedMemoInputs, limit: number): { id: string; racy: boolean } | undefined {
  const { repo, root } = inputs;
  const parts: string[] = [];
  let racy = false;
  const rel = repo ? toTop(repo.top, join(root, LOCKFILE_NAME)) : undefined;
  const inRepo = rel !== undefined && !rel.startsWith("../") && rel !== "..";
  if (repo) {
    // The paths below the project whose working copy differs from the index, among those git was
    // asked about (every working copy the verdict reads): which files get the
    // unstaged warning, and whether the lockfile is read from the index.
    const below = toTop(repo.top, root);
    const prefix = below === "" ? "" : `${below}/`;
    const mine = (p: string) => p.startsWith(`${prefix}${TOOLS_DIR}/`) || p === `${prefix}${LOCKFILE_NAME}`;
    parts.push(`top ${repo.top}`, [...repo.status.unstaged].filter(mine).sort().join("\0"));
  } else parts.push("no repository");
  const entry = inRepo ? repo!.status.entries.get(rel!) : undefined;
  if (inRepo && repo!.status.unstaged.has(rel!)) {
    // Read from the index: its blob id is its content.
    if (!entry?.index) return undefined;
    parts.push(`index ${entry.index}`);
  } else {
    try {
      const st = statSync(join(root, LOCKFILE_NAME));
      if (Math.max(st.mtimeMs, st.ctimeMs) >= limit) racy = true;
      parts.push(`file ${st.size} ${st.mtimeMs} ${st.ctimeMs} ${st.ino} ${st.mode}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
      parts.push("no lockfile");
    }
  }
  if (inRepo && inputs.paths.includes(LOCKFILE_NAME)) {
    // A staged lockfile is judged where it differs from HEAD's copy: HEAD's blob id is that copy.
    if (!entry?.head) return undefined;
    parts.push(`head ${entry.head}`);
  }
  return { id: parts.join("\n"), racy };
}

/** The interpreters that syntax-check scripts, as the checks find them (syntax-io.ts). */
function interpreterIdentities(env: GitEnv): string[] {
  const path = env.PATH ?? "";
  const out = [`env ${path}\0${env.HOME ?? ""}\0${env.PYENV_ROOT ?? ""}\0${env.PYENV_VERSION ?? ""}`];
  for (const name of ["python3", "bash"]) {
    const found = Bun.which(name, { PATH: path });
    out.push(found ? `${name} ${found} ${statIdentity(found)}` : `${name} none`);
  }
  return out;
}

function toTop(top: string, abs: string): string {
  return relative(top, abs).split(sep).join("/");
}

/** The remembered verdict for exactly these inputs, or undefined. */
export function readStagedMemo(key: StagedMemoKey): StagedVerdict | undefined {
  const text = readMemoFile(key.file);
  if (text === undefined) return undefined;
  try {
    const memo = JSON.parse(text) as { digest?: unknown; verdict?: StagedVerdict };
    return memo.digest === key.digest && isVerdict(memo.verdict) ? memo.verdict : undefined;
  } catch {
    return undefined;
  }
}

/** Remembers a verdict under its inputs (never when they were racy); best effort. */
export function writeStagedMemo(key: StagedMemoKey, verdict: StagedVerdict): void {
  if (key.racy) return;
  writeMemoFile(key.file, JSON.stringify({ digest: key.digest, verdict }));
}

function isVerdict(v: unknown): v is StagedVerdict {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Partial<StagedVerdict>;
  return typeof r.affected === "object" && r.affected !== null && Array.isArray(r.affected.changed) && typeof r.check === "object" && r.check !== null && Array.isArray(r.check.findings) && typeof r.lock === "object" && r.lock !== null && Array.isArray(r.unstaged);
}
