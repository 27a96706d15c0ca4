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
//   - the syntax checkers: python3's and bash's path and stat identity, and the environment they get;
//   - the project's ignore file (.ai/kiwi-ignore.yaml): its stat identity, or that there is none.
// It is never trusted past a changed stat, and nothing is remembered when a file changed within the
// racy margin (its stat could hide a second write), when the tree holds a symbolic link, or when a
// verdict was not a real interpreter verdict (a timeout). A damaged memo reads as absent.
//
// A verdict taken through the lock index (most tools only stubs: staged-project-io.ts) read far
// less than every stat below .ai/tools: it is remembered under the entries it can depend on
// (dependenciesOf: every folder outside the tools the check did not read, every manifest, every
// entry no single tool owns, and every entry of the tools it read from disk), with the lock
// index's own stat identity, and those entries' names (and the working copies git was asked
// about) are kept in the memo, so the next check stats only them (~1,240 of the ~13,000 entries
// of a 1,000-tool tree with ten data files each) and loads no lock index. The entries left out
// are files and subfolders of tools the check never read (data, scripts, parameters files): a
// change there reaches no verdict of this commit. git's index was considered as the proof
// instead and is not one: the verdict reads the working tree (dependents, executors, untracked
// tools and files), not what is staged.
import { lstatSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { RACY_MARGIN_MS } from "../cache/stat-cache-io.ts";
import { projectKey } from "../cache/cache-layout.ts";
import { memoKey } from "../exec/memo-io.ts";
import { binaryIdentity, readMemoFile, statIdentity, writeMemoFile } from "../cache/memo-file-io.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { type RawTree, rawTreeFingerprint } from "../manifest/raw-tree-io.ts";
import { type IndexScan, type LockIndex, loadLockIndex, lockIndexPath, lstatRow, namesAt, pathAt, scanLockIndexFast } from "../lockfile/lock-index-io.ts";
import { ROW_WIDTH } from "../cache/stat-row.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import { DIRECTORY_MANIFESTS, IGNORE_FILE, utcDay } from "../manifest/model.ts";
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
  /** The digest covers only these entries (dependenciesOf): git's view is keyed on them too. */
  dependencies?: Uint8Array;
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
  const identity = lockIndexIdentity(cacheDir, root);
  const index = loadLockIndex(cacheDir, root, undefined);
  if (index && identity !== undefined) indexIdentities.set(index, identity);
  return index;
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

/** The entries a verdict depends on (dependenciesOf), with their stats as the check observed them. */
export interface Dependencies {
  /** Their paths relative to .ai/tools, each ended by a NUL. */
  names: Uint8Array;
  /** Their stat rows (ROW_WIDTH numbers each): the index's, or the scan's where it changed. */
  rows: Float64Array;
  /** The stat of .ai/tools itself. */
  top: ArrayLike<number>;
}

/**
 * The entries below .ai/tools a verdict taken through the lock index can depend on, with their
 * stats as the check observed them (read before anything else was); undefined when they cannot be
 * told apart from the rest (the memo then keys on the whole tree). `read` holds the tools the
 * check read from disk (staged-project-io.ts); every other tool was a stub, seen only as the
 * index's id, executor, form, root and manifest path. Those come from its manifest and the names
 * of the folders above it, so these entries are:
 *   - every folder but those of a folder tool the check did not read (its stat moves with every
 *     name added, removed or renamed in it: the tool set, each tool's form, root and manifest).
 *     Discovery never looks for tools below a folder tool's root, so a folder there holds only
 *     that tool's files; its root is kept unless its manifest is tool.yaml, the first name
 *     discovery looks for: then no name added beside it changes which manifest is read (a
 *     tool.yaml added beside a tool.json or a SKILL.md would);
 *   - every tool's manifest (its id and executor: the chains, dependents and duplicate ids);
 *   - every entry no single tool owns (a stray file a walk would report, an Agent Plugin's files);
 *   - every entry of a tool the check read, and every entry below a read folder tool's root.
 * A tree holding a symbolic link gives undefined. One pass over the index, no map of its paths.
 * `positions`: dependencyPositions(index, read), when the caller has it.
 */
export function dependenciesOf(index: LockIndex, scan: IndexScan, read: ReadonlySet<number>, positions?: number[]): Dependencies | undefined {
  if (scan.structural) return undefined;
  const kept = positions ?? dependencyPositions(index, read);
  if (!kept) return undefined;
  // The entries the scan statted, as it read them (the index's row, or the changed one: the same numbers).
  if (kept === scan.only && scan.onlyNames && scan.onlyRows) return { names: scan.onlyNames, rows: scan.onlyRows, top: scan.fresh.get(-1) ?? index.top };
  const stats = index.stats;
  const fresh = scan.fresh;
  const rows = new Float64Array(kept.length * ROW_WIDTH);
  // Copied number by number: a view per entry cost ~1 ms over the ~1,200 entries of a first check.
  for (let k = 0, o = 0; k < kept.length; k++, o += ROW_WIDTH) {
    const i = kept[k]!;
    const row = fresh.size === 0 ? undefined : fresh.get(i);
    if (row) rows.set(row, o);
    else for (let c = 0, from = i * ROW_WIDTH; c < ROW_WIDTH; c++) rows[o + c] = stats[from + c]!;
  }
  return { names: namesAt(index, kept), rows, top: scan.fresh.get(-1) ?? index.top };
}

/**
 * The positions in the index of the entries dependenciesOf keeps for `read` (in index order), read
 * from the index alone; undefined when they cannot be told apart from the rest. The staged check
 * stats only these for the tools it reads at once (ops/staged-io.ts), before it reads anything.
 */
export function dependencyPositions(index: LockIndex, read: ReadonlySet<number>): number[] | undefined {
  const table = manifestTable(index);
  if (!table) return undefined;
  const { manifests, settled, lengths } = table;
  const tools = index.tools;
  const found = new Uint8Array(tools.length);
  // The read tools as a mask: a Set lookup per entry was most of this pass (~13,000 entries).
  const reading = new Uint8Array(tools.length);
  for (const t of read) if (t >= 0 && t < tools.length) reading[t] = 1;
  const { stats, owners, parents, starts } = index;
  const n = owners.length;
  const paths = lengths ? undefined : index.paths;
  // The names as a Buffer, to compare a range of them with a manifest's bytes in place.
  const nameBytes = table.bytes ? Buffer.from(index.names!.buffer, index.names!.byteOffset, index.names!.length) : undefined;
  const below = new Uint8Array(n);
  const kept: number[] = [];
  for (let i = 0; i < n; i++) {
    const mode = stats[i * ROW_WIDTH + 4]!;
    const type = mode & 0o170000;
    if (type === 0o120000) return undefined; // a symbolic link: its stat says nothing of its target
    const owner = owners[i]!;
    const parent = parents[i]!;
    if (owner < 0) {
      if (parent >= 0 && below[parent] === 1) below[i] = 1;
      kept.push(i);
      continue;
    }
    if (type === 0o040000) {
      const rootOf = parent === -1 || owners[parent] !== owner;
      if ((parent >= 0 && below[parent] === 1) || (rootOf && reading[owner] === 1)) below[i] = 1;
      if (below[i] === 1 || reading[owner] === 1 || (rootOf && !settled[owner])) kept.push(i);
      continue;
    }
    if (parent >= 0 && below[parent] === 1) below[i] = 1;
    // A tool's manifest is one path: once found, its other files need no comparison.
    if (found[owner] === 0 && (lengths ? starts![i + 1]! - starts![i]! - 1 === lengths[owner] && isManifest(index, nameBytes, i, table, owner) : paths![i] === manifests[owner])) {
      found[owner] = 1;
      kept.push(i);
    } else if (below[i] === 1 || reading[owner] === 1) kept.push(i);
  }
  for (let t = 0; t < tools.length; t++) if (manifests[t] !== "" && !found[t]) return undefined;
  return kept;
}

/** What dependencyPositions reads of each tool, whatever was read (manifestTable). */
interface ManifestTable {
  /** Each tool's manifest path below .ai/tools; "" for a built-in or an Agent Plugin's server (whose files no single tool owns). */
  manifests: string[];
  /** A folder tool whose manifest has the first name discovery looks for: no name added beside it can change which manifest is read (walkToolsDir), so its root holds only that tool's files. */
  settled: Uint8Array;
  /** Each manifest path's length in UTF-8 when the index has its names as bytes: an entry of another length is not it, and is never decoded (decoding every path of a 1,000-tool tree costs ~0.8 ms). */
  lengths?: Int32Array;
  /**
   * With `lengths`, when every manifest path is well-formed text without U+FFFD: their UTF-8 one
   * after another, tool t's from offsets[t]. A name is then its manifest path exactly when its
   * bytes are these (that UTF-8 is the only byte string that decodes to such text), compared in
   * place: decoding ~1,000 names to compare them cost ~0.45 ms in the interpreter.
   */
  bytes?: Buffer;
  offsets?: Int32Array;
}

/** Whether entry `i`'s name is tool `t`'s manifest path (pathAt(index, i) === manifests[t]), its length already found equal. */
function isManifest(index: LockIndex, names: Buffer | undefined, i: number, table: ManifestTable, t: number): boolean {
  const starts = index.starts!;
  if (!names || !table.bytes) return pathAt(index, i) === table.manifests[t];
  const at = table.offsets![t]!;
  return names.compare(table.bytes, at, at + table.lengths![t]!, starts[i]!, starts[i + 1]! - 1) === 0;
}

const manifestTables = new WeakMap<LockIndex, ManifestTable | null>();

/**
 * The index's manifest table, built once per loaded index (it is read-only): the staged check
 * builds it while git lists what is staged (staged-io.ts). Undefined for a damaged tools section.
 */
export function manifestTable(index: LockIndex): ManifestTable | undefined {
  const known = manifestTables.get(index);
  if (known !== undefined) return known ?? undefined;
  const tools = index.tools;
  const prefix = `${TOOLS_DIR.split("\\").join("/")}/`;
  const settledName = `/${DIRECTORY_MANIFESTS[0]}`;
  const manifests: string[] = new Array(tools.length);
  const settled = new Uint8Array(tools.length);
  const lengths = index.names && index.starts ? new Int32Array(tools.length) : undefined;
  let table: ManifestTable | null = { manifests, settled, ...(lengths ? { lengths } : {}) };
  for (let t = 0; t < tools.length; t++) {
    const { form, source } = tools[t]!;
    if (form === "builtin" || source.includes("#")) manifests[t] = "";
    else if (source.startsWith(prefix)) manifests[t] = source.slice(prefix.length);
    else {
      table = null; // a damaged tools section
      break;
    }
    if (form !== "builtin" && source === "") {
      table = null; // a damaged tools section's placeholder
      break;
    }
    if (form === "directory" && manifests[t] !== "" && source.endsWith(settledName)) settled[t] = 1;
    if (lengths) lengths[t] = Buffer.byteLength(manifests[t]!);
  }
  if (table && lengths) {
    // Encoded at once, joined by NULs (one native call, not one per tool).
    const joined = manifests.join("\0");
    const offsets = new Int32Array(tools.length);
    let size = 0;
    for (let t = 0; t < tools.length; t++) {
      offsets[t] = size;
      size += lengths[t]! + 1;
    }
    const bytes = joined.isWellFormed() && !joined.includes("\ufffd") ? Buffer.from(joined) : undefined;
    if (bytes && bytes.length === Math.max(0, size - 1)) Object.assign(table, { bytes, offsets });
  }
  manifestTables.set(index, table);
  return table ?? undefined;
}

/** The identity of a verdict's dependencies as the check observed them (dependenciesOf), under the lock index it read them through. */
export function observedDependencies(root: string, index: LockIndex, dependencies: Dependencies, now: number): TreeIdentity | undefined {
  const indexId = indexIdentities.get(index);
  if (indexId === undefined) return undefined;
  const { names, rows, top } = dependencies;
  return { root, digest: dependencyDigest(root, indexId, names, rows, top, now), dependencies: names };
}

/**
 * The identity of the entries `names` (as a memo recorded them) as they are now: one statx each
 * (statx-io.ts), no readdir. Undefined when one is gone.
 */
export async function currentDependencies(root: string, cacheDir: string, names: Uint8Array, now: number): Promise<TreeIdentity | undefined> {
  // The index is not loaded: the stat of its file says whether it is the one the verdict was taken through.
  const indexId = lockIndexIdentity(cacheDir, root);
  if (indexId === undefined) return undefined;
  const base = join(root, TOOLS_DIR);
  const top = lstatRow(base);
  if (!top) return undefined;
  const count = countNames(names);
  const rows = new Float64Array(count * ROW_WIDTH);
  const end = names.indexOf(0);
  const { openStatx } = await import("../cache/statx-io.ts");
  const native = end > 0 ? openStatx(base, names, Buffer.from(names.buffer, names.byteOffset, end).toString("utf8"), 0) : undefined;
  try {
    let at = 0;
    for (let o = 0; o < rows.length; o += ROW_WIDTH) {
      const next = names.indexOf(0, at);
      if (native) {
        // Written in place: a view per entry costs more than a copy (~1 ms in 2,000), and a copy more than none.
        if (!native.statAt(at, rows, o)) return undefined;
      } else {
        const st = lstatRow(`${base}/${Buffer.from(names.buffer, names.byteOffset + at, next - at).toString("utf8")}`);
        if (!st) return undefined;
        rows.set(st, o);
      }
      at = next + 1;
    }
  } finally {
    native?.close();
  }
  return { root, digest: dependencyDigest(root, indexId, names, rows, top, now), dependencies: names };
}

function dependencyDigest(root: string, indexId: string, names: Uint8Array, rows: Float64Array, top: ArrayLike<number>, now: number): { value: string; racy: boolean } {
  const limit = now - RACY_MARGIN_MS;
  let racy = !(top[1]! < limit && top[2]! < limit);
  for (let o = 0; o < rows.length && !racy; o += ROW_WIDTH) if (!(rows[o + 1]! < limit && rows[o + 2]! < limit)) racy = true;
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`kiwi check --staged\0dependencies\0${root}\0${indexId}\0`);
  hasher.update(names);
  hasher.update(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength));
  hasher.update(new Uint8Array(Float64Array.from(top).buffer));
  return { value: hasher.digest("hex"), racy };
}

/** The stat identity of a loaded lock index's file, taken before it was read (readProjectIndex); the memo records the one its key names. */
export function loadedIndexIdentity(index: LockIndex): string | undefined {
  return indexIdentities.get(index);
}

/**
 * Whether a memo keyed on its dependencies can answer at all: its key names the lock index it was
 * taken through (dependencyDigest), so once a lock rewrote that index (each commit's relock) it
 * never does, and its entries need not be statted. A memo that did not record it may.
 */
export function keyedOnCurrentIndex(memo: StagedMemo, cacheDir: string, root: string): memo is StagedMemo & { dependencies: Uint8Array } {
  return memo.dependencies !== undefined && (memo.index === undefined || memo.index === lockIndexIdentity(cacheDir, root));
}

/** The stat identity of each loaded lock index's file, taken before it was read (readProjectIndex). */
const indexIdentities = new WeakMap<LockIndex, string>();

/** The stat identity of a project's lock index file: a lock that rewrites it (even for the same tree) gives another key. Undefined when there is none. */
function lockIndexIdentity(cacheDir: string, root: string): string | undefined {
  const identity = statIdentity(lockIndexPath(cacheDir, root));
  return identity === "unreadable" ? undefined : identity;
}

function countNames(names: Uint8Array): number {
  let count = 0;
  for (let at = names.indexOf(0); at !== -1; at = names.indexOf(0, at + 1)) count++;
  return count;
}

function splitNames(names: Uint8Array): string[] {
  const text = new TextDecoder().decode(names);
  return text.slice(0, -1).split("\0");
}

/** Where a project's staged verdict lives in the cache (one file per project and --strict). */
export function stagedMemoFile(cacheDir: string, root: string, strict: boolean): string {
  return join(cacheDir, STAGED_DIR, `${projectKey(root)}${strict ? "-strict" : ""}.json`);
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
  const lock = lockfileIdentity(inputs, limit, identity.dependencies);
  if (!lock) return undefined;
  racy ||= lock.racy;
  parts.push(lock.id);
  // The ignore file: what every verdict lets through (read from the working copy, as the tools are).
  const ignores = ignoreFileIdentity(inputs.root, limit, inputs.now);
  racy ||= ignores.racy;
  parts.push(ignores.id);
  parts.push(...interpreterIdentities(inputs.env));
  return { file: stagedMemoFile(inputs.cacheDir, inputs.root, inputs.strict), digest: memoKey("staged", ...parts), racy };
}

/** The lockfile as it will be committed, plus git's view of the project; undefined when git's answer is ambiguous. */
function lockfileIdentity(inputs: StagedMemoInputs, limit: number, dependencies?: Uint8Array): { id: string; racy: boolean } | undefined {
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
    const tools = `${prefix}${TOOLS_DIR}/`;
    const ignoreFile = `${prefix}${IGNORE_FILE}`;
    let mine = (p: string) => p.startsWith(tools) || p === `${prefix}${LOCKFILE_NAME}` || p === ignoreFile;
    if (dependencies) {
      // Keyed on its dependencies, a verdict reads no other working copy (the unstaged warnings
      // name changed tools' files, which it read): another file's unstaged edit is not an input.
      let names: Set<string> | undefined;
      const within = (p: string) => (names ??= new Set(splitNames(dependencies))).has(p.slice(tools.length));
      mine = (p) => p === `${prefix}${LOCKFILE_NAME}` || p === ignoreFile || (p.startsWith(tools) && within(p));
    }
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

/**
 * The ignore file's stat identity (a regular file is read; anything else is reported, by its lstat),
 * and the day: an entry of it may expire (a retried commit is the memo's case, not the next day's).
 */
function ignoreFileIdentity(root: string, limit: number, now: number): { id: string; racy: boolean } {
  try {
    const st = lstatSync(join(root, IGNORE_FILE));
    return { id: `ignores ${st.size} ${st.mtimeMs} ${st.ctimeMs} ${st.ino} ${st.mode} ${utcDay(now)}`, racy: Math.max(st.mtimeMs, st.ctimeMs) >= limit };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Any other failure is reported by the check; it is never remembered as "no file".
    return code === "ENOENT" || code === "ENOTDIR" ? { id: "no ignores", racy: false } : { id: "ignores unreadable", racy: true };
  }
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

/** A remembered verdict, its key's digest and, when it was keyed on its dependencies alone, their names (dependenciesOf). */
export interface StagedMemo {
  digest: string;
  verdict: StagedVerdict;
  dependencies?: Uint8Array;
  /** The working copies git was asked about (staged-io.ts workingCopiesOf), chosen through the lock index the key names: the same again while the key holds. */
  scope?: string[];
  /** The stat identity of the lock index its key names (memos written before it was recorded have none). */
  index?: string;
}

/** The project's remembered verdict, whatever its inputs; undefined when absent or damaged. Its digest says for which. */
export function peekStagedMemo(file: string): StagedMemo | undefined {
  const text = readMemoFile(file);
  if (text === undefined) return undefined;
  try {
    const memo = JSON.parse(text) as { digest?: unknown; verdict?: StagedVerdict; dependencies?: unknown; scope?: unknown; index?: unknown };
    if (typeof memo.digest !== "string" || !isVerdict(memo.verdict)) return undefined;
    if (memo.dependencies === undefined) return { digest: memo.digest, verdict: memo.verdict };
    if (typeof memo.dependencies !== "string" || !memo.dependencies.endsWith("\0")) return undefined;
    const scope = memo.scope === undefined ? {} : Array.isArray(memo.scope) && memo.scope.every((p) => typeof p === "string") ? { scope: memo.scope as string[] } : undefined;
    if (!scope || (memo.index !== undefined && typeof memo.index !== "string")) return undefined;
    return { digest: memo.digest, verdict: memo.verdict, dependencies: new TextEncoder().encode(memo.dependencies), ...scope, ...(memo.index === undefined ? {} : { index: memo.index as string }) };
  } catch {
    return undefined;
  }
}

/** The remembered verdict for exactly these inputs, or undefined. */
export function readStagedMemo(key: StagedMemoKey): StagedVerdict | undefined {
  const memo = peekStagedMemo(key.file);
  return memo?.digest === key.digest ? memo.verdict : undefined;
}

/** Remembers a verdict under its inputs (never when they were racy), with the dependencies the key covers when it covers only those; best effort. */
export function writeStagedMemo(key: StagedMemoKey, verdict: StagedVerdict, dependencies?: { names: Uint8Array; scope?: readonly string[]; index?: string }): void {
  if (key.racy) return;
  const deps = dependencies === undefined ? {} : { dependencies: new TextDecoder().decode(dependencies.names), ...(dependencies.scope ? { scope: dependencies.scope } : {}), ...(dependencies.index ? { index: dependencies.index } : {}) };
  writeMemoFile(key.file, JSON.stringify({ digest: key.digest, verdict, ...deps }));
}

function isVerdict(v: unknown): v is StagedVerdict {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Partial<StagedVerdict>;
  return typeof r.affected === "object" && r.affected !== null && Array.isArray(r.affected.changed) && typeof r.check === "object" && r.check !== null && Array.isArray(r.check.findings) && Array.isArray(r.check.ignored) && typeof r.lock === "object" && r.lock !== null && Array.isArray(r.unstaged);
}
