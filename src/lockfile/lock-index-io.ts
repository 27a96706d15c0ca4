// The lock index: git's index for `kiwi lock`. One file per project in kiwi's cache that records,
// after a lock that passed its check and wrote or confirmed tool.lock.json, every entry below
// .ai/tools (path, folder, stat identity) with the tool that owns it, and per tool a key of the
// model discovery derived (what the validator and the lock entry are computed from), with the few
// fields `kiwi check --staged` reads of tools it does not judge (ops/staged-project-io.ts). The next run
// lstats each recorded entry (no readdir, no manifest read) and learns exactly which tools changed;
// lock-io.ts then re-reads and re-hashes only those. A hint, never a source of truth: a missing,
// damaged or foreign index is ignored (the full lock runs), a changed stat is never trusted, and
// an entry changed within the racy margin is recorded as unknown (it always reads as changed).
import { lstatSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { writeFileAtomic } from "../cache/atomic-io.ts";
import type { Faults } from "../cache/faults-io.ts";
import { statRelPath } from "../cache/cache-layout.ts";
import { RACY_MARGIN_MS } from "../cache/stat-cache-io.ts";
import { renderLosslessJson } from "../integrity/canonical.ts";
import { lastStartAtOrBefore } from "../integrity/json-lossless.ts";
import { hashCanonical, sha256Hex } from "../integrity/digest.ts";
import type { Finding } from "../findings/verdict.ts";
import { type ExecutorRef, IGNORE_FILE, type IgnoreFileText, MANIFEST_FORMS, type ManifestForm, type Tool, ignoreFileDated } from "../manifest/model.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import { ROW_WIDTH, isFolder } from "../cache/stat-row.ts";
import type { RawTree } from "../manifest/raw-tree-io.ts";
import type { StatAt } from "../cache/statx-io.ts";

const MAGIC = "KIWIIX01";
// 3: the lockfile record names the servers it pins. 4: the ignore file's stat.
const FORMAT = 4;

/** Owner of an entry that belongs to no tool (a plain folder, a file no tool claims). */
export const NO_TOOL = -1;
/** Owner of an entry whose change the index cannot pin on one tool (shared, or an Agent Plugin's). */
export const MANY_TOOLS = -2;

/** One tool as the index knows it. */
export interface IndexTool {
  id: string;
  /** Project-relative manifest file (the lock entry's `source`); empty only in a damaged tools section's placeholder rows. */
  source: string;
  /** modelKey() of the tool as discovered. */
  model: string;
  /** A change to it can be locked alone: no discovery finding is about it, no remote record or packages pin it. */
  alone: boolean;
  /** No discovery finding is about it (its manifest or a file of its folder). */
  clean: boolean;
  /**
   * What the staged check reads of a tool it does not judge (ops/staged-project-io.ts): its
   * executor reference, form and project-relative root, as discovery gave them.
   */
  executor: ExecutorRef | null;
  form: ManifestForm;
  root: string;
}

/** The index of one project (see the file comment). */
export interface LockIndex {
  root: string;
  kiwi: string;
  strict: boolean;
  /**
   * sha256 of the lockfile the recorded run wrote or confirmed, its stat when not racy, and the ids
   * its mcp_servers section pins (absent when the run did not know them): which servers the MCP
   * step would try to pin, known without reading the project while the lockfile is these bytes.
   */
  lockfile: { sha256: string; stat: number[] | null; mcpPinned?: string[] };
  /** Ids of the project's mcp_server tools. */
  mcpServers: string[];
  /** Number of tool files (the lock's stats). */
  files: number;
  /** Tools (built-ins included) in project order. */
  tools: IndexTool[];
  toolCount: number;
  /** Entries below .ai/tools (see RawTree); a racy entry has NaN for its mtime. */
  paths: string[];
  /** The same paths as UTF-8, each ended by a NUL byte (what statx takes). Set with `starts` (a loaded index). */
  names?: Uint8Array;
  /** Where each path starts in `names` (and, last, where one more would): read with it, so one path is found or decoded without decoding them all. */
  starts?: Int32Array;
  /** The tools section as read (written back as is when the tools did not change). */
  toolsBytes?: Uint8Array;
  parents: Int32Array;
  stats: Float64Array;
  owners: Int32Array;
  /** The stat of .ai/tools itself (NaN mtime when racy). */
  top: number[];
  /**
   * The ignore file (IGNORE_FILE) the recorded verdict read: its size, mtimeMs, ctimeMs and ino, []
   * when there was none, null when it vouches for nothing (racy, or not a readable regular file).
   */
  ignores: number[] | null;
  /**
   * The day (UTC) the recorded verdict judged the ignore file's `expires` dates on, when its text may
   * have some (manifest/model.ts ignoreFileDated): the verdict holds for that day only.
   */
  ignoresDay?: string;
}

/** Where a project's lock index lives in the cache (the staged memo keys on that file's stat identity). */
export function lockIndexPath(cacheDir: string, root: string): string {
  return join(cacheDir, statRelPath(root).replace(/\.json$/, ".index"));
}

/**
 * A key of everything the validator and the lock entry read from a tool, apart from file bytes
 * (the validator never sees them; integrity covers them) and stat identities: two tools with the
 * same key get the same verdict in the same tree. The manifest as written enters through its
 * canonical digest (exact: 1.0, 1 and big integers differ); `doc`, `config`, `configLossless` and
 * `pointers` are left out because normalizeManifest (pure) derives them from that manifest, the
 * fallback id and the tree path, which the key holds (form, root, manifest file); every other
 * field, those discovery adds (parameters read from a file, file requirements, entry point), in
 * plain JSON. Files enter by path, absolute path and mode bit only: no rule of validate/ reads a
 * file's size or stat (it is pure and sees no bytes); one that did would have to be added here, or
 * a change would keep a stale verdict. A cache key, never published.
 */
export function modelKey(tool: Tool, manifestDigest: string): string {
  const { locate: _locate, files, manifest: _manifest, doc: _doc, config: _config, configLossless: _lossless, pointers: _pointers, manifestStat: _stat, ...rest } = tool;
  const parts = [rest, files.map((f) => [f.path, f.abs, f.isExecutable])];
  let plain: string;
  try {
    plain = JSON.stringify(parts);
  } catch {
    // A big integer in a field read from elsewhere (a parameters file): the lossless rendering keeps it.
    plain = renderLosslessJson(parts);
  }
  return sha256Hex(`${manifestDigest}\0${plain}`);
}

/** What the index records of the tree itself, before the lockfile it vouches for is known. */
export interface TreeIndexInput {
  root: string;
  strict: boolean;
  /** The tree as walked before discovery read anything. */
  raw: RawTree;
  tools: readonly Tool[];
  /** Each tool's manifest digest (hex) when the run computed it; else it is computed here. */
  manifestDigests?: ReadonlyMap<Tool, string>;
  findings: readonly Finding[];
  /** The ignore file as discovery read it (its stat taken before the read); absent when there is none. */
  ignoreFile?: IgnoreFileText;
  startedAt: number;
}

/** The lockfile an index vouches for. */
export interface LockfileOfIndex {
  /** The lockfile holds remote records or packages (data beyond the tree): no tool is locked alone. */
  pinned: boolean;
  lockfileText: string;
  /** sha256 (hex) of lockfileText, when the caller has it already (a lock digests its text once for every memo). */
  lockfileSha256?: string;
  /** The lockfile is being replaced by those bytes (flushed and renamed after this): its stat on disk is not theirs. */
  lockfileReplaced?: boolean;
  /** The ids its mcp_servers section pins, when known. */
  mcpPinned?: readonly string[];
}

/** The part of an index that needs no lockfile (completeLockIndex adds it). */
export type TreeIndex = Omit<LockIndex, "lockfile"> & { startedAt: number };

/** Builds the index of a locked tree. */
export function buildLockIndex(input: TreeIndexInput & LockfileOfIndex): LockIndex {
  return completeLockIndex(indexTree(input), input);
}

/**
 * Everything the index records that needs no lockfile: the entries, their owners and each tool's
 * model key. A cold lock builds it while the file hashes are still being computed.
 */
export function indexTree(input: TreeIndexInput): TreeIndex {
  const { raw, tools, startedAt } = input;
  const limit = startedAt - RACY_MARGIN_MS;
  const n = raw.paths.length;
  const stats = Float64Array.from(raw.stats);
  for (let i = 0; i < n; i++) if (stats[i * ROW_WIDTH + 1]! >= limit || stats[i * ROW_WIDTH + 2]! >= limit) stats[i * ROW_WIDTH + 1] = Number.NaN;
  const owners = new Int32Array(n).fill(NO_TOOL);
  const rootOwner = new Int32Array(n).fill(NO_TOOL);
  // Tool roots and manifest files by path under .ai/tools (a few per tool); every other entry of a
  // directory tool belongs to the tool of the nearest root above it.
  const prefix = `${TOOLS_DIR.split("\\").join("/")}/`;
  const under = (projectPath: string) => (projectPath.startsWith(prefix) ? projectPath.slice(prefix.length) : undefined);
  const roots = new Map<string, number>();
  const manifests = new Map<string, number>();
  const claim = (map: Map<string, number>, path: string | undefined, t: number) => {
    if (path === undefined) return;
    const had = map.get(path);
    map.set(path, had === undefined || had === t ? t : MANY_TOOLS);
  };
  const indexTools: IndexTool[] = tools.map((tool, t) => {
    const summary = { executor: tool.executor, form: tool.form, root: tool.root };
    if (tool.form === "builtin") return { id: tool.id, source: tool.manifestFile, model: "", alone: false, clean: true, ...summary };
    // An Agent Plugin's servers share the plugin's files: a change there is never pinned on one tool.
    const owner = tool.manifestFile.includes("#") ? MANY_TOOLS : t;
    if (tool.form === "directory") claim(roots, under(tool.root), owner);
    claim(manifests, under(tool.manifestFile.split("#")[0]!), owner);
    const about = (file: string) => file === tool.manifestFile || (tool.form === "directory" && file.startsWith(`${tool.root}/`));
    const clean = !input.findings.some((f) => about(f.file));
    // `alone` is settled with the lockfile (completeLockIndex): a pinned lockfile locks no tool alone.
    return { id: tool.id, source: tool.manifestFile, model: modelKey(tool, input.manifestDigests?.get(tool) ?? hashCanonical(tool.manifest).hex), alone: clean, clean, ...summary };
  });
  for (let i = 0; i < n; i++) {
    const parent = raw.parents[i]!;
    const inherited = parent === -1 ? NO_TOOL : rootOwner[parent]!;
    if (isFolder(raw.stats[i * ROW_WIDTH + 4]!)) {
      rootOwner[i] = roots.get(raw.paths[i]!) ?? inherited;
      owners[i] = rootOwner[i]!;
    } else {
      const own = manifests.get(raw.paths[i]!);
      owners[i] = own === undefined ? inherited : inherited === NO_TOOL || inherited === own ? own : MANY_TOOLS;
    }
  }
  const top = [...raw.top];
  if (top[1]! >= limit || top[2]! >= limit) top[1] = Number.NaN;
  return {
    root: input.root,
    kiwi: pkg.version,
    strict: input.strict,
    mcpServers: tools.filter((t) => t.type === "mcp_server").map((t) => t.id),
    files: tools.reduce((k, t) => k + t.files.length, 0),
    tools: indexTools,
    toolCount: indexTools.length,
    paths: raw.paths,
    parents: Int32Array.from(raw.parents),
    stats,
    owners,
    top,
    ignores: input.ignoreFile === undefined ? [] : input.ignoreFile.text === undefined || input.ignoreFile.stat[1] >= limit || input.ignoreFile.stat[2] >= limit ? null : [...input.ignoreFile.stat],
    ...(input.ignoreFile && ignoreFileDated(input.ignoreFile) ? { ignoresDay: input.ignoreFile.day } : {}),
    startedAt,
  };
}

/**
 * Whether the ignore file is still the one the index's verdict read (by lstat; no stat is trusted
 * when racy), and, when its entries may expire, `day` is the day that verdict was for.
 */
export function sameIgnoreFile(index: LockIndex, day: string): boolean {
  const recorded = index.ignores;
  if (recorded === null || (index.ignoresDay !== undefined && index.ignoresDay !== day)) return false;
  let st;
  try {
    st = lstatSync(join(index.root, IGNORE_FILE));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return (code === "ENOENT" || code === "ENOTDIR") && recorded.length === 0;
  }
  return recorded.length === 4 && st.isFile() && st.size === recorded[0] && st.mtimeMs === recorded[1] && st.ctimeMs === recorded[2] && st.ino === recorded[3];
}

/** The index of a tree with the lockfile it vouches for: the lockfile's digest and stat, and which tools a change can be locked alone. */
export function completeLockIndex(tree: TreeIndex, lockfile: LockfileOfIndex): LockIndex {
  const { startedAt, ...index } = tree;
  const limit = startedAt - RACY_MARGIN_MS;
  const lockStat = lockfile.lockfileReplaced ? undefined : lstatRow(join(tree.root, "tool.lock.json"));
  return {
    ...index,
    tools: lockfile.pinned ? tree.tools.map((t) => (t.alone ? { ...t, alone: false } : t)) : tree.tools,
    lockfile: {
      sha256: lockfile.lockfileSha256 ?? sha256Hex(lockfile.lockfileText),
      stat: !lockfile.lockfileReplaced && lockStat && lockStat[1]! < limit && lockStat[2]! < limit ? lockStat : null,
      ...(lockfile.mcpPinned ? { mcpPinned: [...lockfile.mcpPinned] } : {}),
    },
  };
}

/** The project's mcp_server tools its lockfile does not pin, in project order; undefined when the index does not know the pins. */
export function unpinnedServers(index: LockIndex): string[] | undefined {
  return withoutPins(index.mcpServers, index.lockfile.mcpPinned);
}

/** `servers` without those `pinned` names (undefined: pins unknown). */
export function withoutPins(servers: readonly string[], pinned: readonly string[] | undefined): string[] | undefined {
  if (!pinned) return undefined;
  const set = new Set(pinned);
  return servers.filter((id) => !set.has(id));
}

/** A path's stat row (stat-row.ts), not following a symbolic link; undefined when it cannot be read. */
export function lstatRow(abs: string): number[] | undefined {
  try {
    const st = lstatSync(abs);
    return [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode];
  } catch {
    return undefined;
  }
}

/** Writes the index atomically; a cache that cannot be written only costs speed. */
export function saveLockIndex(cacheDir: string, index: LockIndex, faults?: Faults): void {
  const header = Buffer.from(JSON.stringify({ format: FORMAT, root: index.root, kiwi: index.kiwi, strict: index.strict, lockfile: index.lockfile, mcpServers: index.mcpServers, files: index.files, toolCount: index.toolCount, top: index.top.map(nanToNull), ignores: index.ignores, ignoresDay: index.ignoresDay }));
  // Sections read from disk go back as they were read (decoding and encoding them again is most of a save).
  const tools = index.toolsBytes ?? Buffer.from(JSON.stringify(index.tools.map((t) => [t.id, t.source, t.model, t.alone ? 1 : 0, t.clean ? 1 : 0, t.executor, t.form, t.root])));
  const paths = index.names ? index.names.subarray(0, index.names.length - 1) : Buffer.from(index.paths.join("\0"));
  const n = index.parents.length;
  const head = 8 + 16;
  const textEnd = head + header.length + tools.length + paths.length;
  const numbersAt = Math.ceil(textEnd / 8) * 8;
  const out = new Uint8Array(numbersAt + n * ROW_WIDTH * 8 + n * 8);
  out.set(Buffer.from(MAGIC), 0);
  const view = new DataView(out.buffer);
  view.setUint32(8, header.length, true);
  view.setUint32(12, tools.length, true);
  view.setUint32(16, paths.length, true);
  view.setUint32(20, n, true);
  out.set(header, head);
  out.set(tools, head + header.length);
  out.set(paths, head + header.length + tools.length);
  out.set(new Uint8Array(index.stats.buffer, index.stats.byteOffset, n * ROW_WIDTH * 8), numbersAt);
  out.set(new Uint8Array(index.parents.buffer, index.parents.byteOffset, n * 4), numbersAt + n * ROW_WIDTH * 8);
  out.set(new Uint8Array(index.owners.buffer, index.owners.byteOffset, n * 4), numbersAt + n * ROW_WIDTH * 8 + n * 4);
  try {
    writeFileAtomic(lockIndexPath(cacheDir, index.root), out, { faults, writePoint: "stat-write" });
  } catch {
    // Same as the stat cache: an unwritable cache only costs speed (the stat cache warns once).
  }
}

function nanToNull(x: number): number | null {
  return Number.isNaN(x) ? null : x;
}

/**
 * The project's index, or undefined when it is missing, damaged, from another kiwi, or for other
 * options. `strict` undefined takes an index written with or without --strict: what it records
 * of the tree (entries, stats, owners, each tool's summary) does not depend on it, only the lock's
 * own verdicts do.
 */
export function loadLockIndex(cacheDir: string, root: string, strict: boolean | undefined): LockIndex | undefined {
  try {
    const bytes = readFileSync(lockIndexPath(cacheDir, root));
    if (bytes.length < 24 || bytes.toString("latin1", 0, 8) !== MAGIC) return undefined;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const [hl, tl, pl, n] = [view.getUint32(8, true), view.getUint32(12, true), view.getUint32(16, true), view.getUint32(20, true)];
    const head = 24;
    const numbersAt = Math.ceil((head + hl + tl + pl) / 8) * 8;
    if (bytes.length !== numbersAt + n * ROW_WIDTH * 8 + n * 8) return undefined;
    const header = JSON.parse(bytes.toString("utf8", head, head + hl));
    if (header.format !== FORMAT || header.root !== root || header.kiwi !== pkg.version || (strict !== undefined && header.strict !== strict)) return undefined;
    const lockfile = header.lockfile;
    if (typeof lockfile?.sha256 !== "string" || !(lockfile.stat === null || (Array.isArray(lockfile.stat) && lockfile.stat.length === ROW_WIDTH))) return undefined;
    if (lockfile.mcpPinned !== undefined && !(Array.isArray(lockfile.mcpPinned) && lockfile.mcpPinned.every((id: unknown) => typeof id === "string"))) return undefined;
    if (!Array.isArray(header.mcpServers) || typeof header.files !== "number" || !Array.isArray(header.top) || header.top.length !== ROW_WIDTH) return undefined;
    if (typeof header.toolCount !== "number") return undefined;
    const ignores = header.ignores;
    if (!(ignores === null || (Array.isArray(ignores) && (ignores.length === 0 || ignores.length === 4) && ignores.every((x: unknown) => typeof x === "number")))) return undefined;
    const ignoresDay = header.ignoresDay;
    if (!(ignoresDay === undefined || typeof ignoresDay === "string")) return undefined;
    // Tools and paths as strings are decoded on first use: an unchanged tree needs neither.
    let tools: IndexTool[] | undefined;
    const readTools = (): IndexTool[] => {
      if (tools) return tools;
      let rows: unknown;
      try {
        rows = JSON.parse(bytes.toString("utf8", head + hl, head + hl + tl));
      } catch {
        rows = []; // not JSON: damaged, read as below (decoded lazily, so outside the loader's own catch)
      }
      const out: IndexTool[] = [];
      for (const row of Array.isArray(rows) ? rows : []) {
        if (!Array.isArray(row) || row.length !== 8 || typeof row[0] !== "string" || typeof row[1] !== "string" || typeof row[2] !== "string") break;
        const [id, source, model, alone, clean, executor, form, root] = row as [string, string, string, unknown, unknown, unknown, unknown, unknown];
        if (!isExecutorRef(executor) || typeof form !== "string" || !(MANIFEST_FORMS as readonly string[]).includes(form) || typeof root !== "string") break;
        out.push({ id, source, model, alone: alone === 1, clean: clean === 1, executor, form: form as ManifestForm, root });
      }
      // A damaged tools section reads as no tool alone or clean: every change takes the full lock, every staged check full discovery.
      tools = out.length === header.toolCount ? out : Array.from({ length: header.toolCount }, () => ({ id: "", source: "", model: "", alone: false, clean: false, executor: null, form: "file" as const, root: "" }));
      return tools;
    };
    let paths: string[] | undefined;
    const readPaths = (): string[] => (paths ??= n === 0 ? [] : bytes.toString("utf8", head + hl + tl, head + hl + tl + pl).split("\0"));
    // The paths NUL-terminated: the padding before the numbers gives the last NUL when there is
    // any (almost always), else they are copied with one added.
    const pathsEnd = head + hl + tl + pl;
    let names: Uint8Array;
    if (pathsEnd < numbersAt) names = bytes.subarray(head + hl + tl, pathsEnd + 1);
    else {
      names = new Uint8Array(pl + 1);
      names.set(bytes.subarray(head + hl + tl, pathsEnd));
    }
    // n paths joined by NUL plus the NUL added above: n NULs (one for an empty tree). Each path
    // starts after the NUL before it.
    const starts = new Int32Array(n + 1);
    let ends = 0;
    for (let at = names.indexOf(0); at !== -1; at = names.indexOf(0, at + 1)) {
      ends++;
      if (ends <= n) starts[ends] = at + 1;
    }
    if (ends !== Math.max(n, 1)) return undefined;
    // Read in place when the file's bytes sit at an 8-byte boundary in memory (readFileSync's own
    // buffer for a file this size does), else copied out to one that does.
    const inPlace = (bytes.byteOffset + numbersAt) % 8 === 0;
    const numbers = inPlace ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset + numbersAt, bytes.byteOffset + bytes.length);
    const at = inPlace ? bytes.byteOffset + numbersAt : 0;
    const stats = new Float64Array(numbers, at, n * ROW_WIDTH);
    const parents = new Int32Array(numbers, at + n * ROW_WIDTH * 8, n);
    const owners = new Int32Array(numbers, at + n * ROW_WIDTH * 8 + n * 4, n);
    const toolCount = header.toolCount;
    for (let i = 0; i < n; i++) {
      const parent = parents[i]!;
      const owner = owners[i]!;
      if (parent < -1 || parent >= i || owner < MANY_TOOLS || owner >= toolCount) return undefined;
    }
    const top = (header.top as (number | null)[]).map((x) => (x === null ? Number.NaN : x));
    const toolsBytes = bytes.subarray(head + hl, head + hl + tl);
    const index = { root, kiwi: header.kiwi, strict: header.strict === true, lockfile, mcpServers: header.mcpServers, files: header.files, toolCount: header.toolCount, names, starts, toolsBytes, parents, stats, owners, top, ignores, ...(ignoresDay === undefined ? {} : { ignoresDay }) };
    return Object.defineProperties(index, {
      tools: { get: readTools, enumerable: true },
      paths: { get: readPaths, enumerable: true },
    }) as unknown as LockIndex;
  } catch {
    return undefined;
  }
}

/** The path of entry `i`, decoding only that one (index.paths decodes them all). */
export function pathAt(index: LockIndex, i: number): string {
  const { names, starts } = index;
  if (!names || !starts) return index.paths[i]!;
  return Buffer.from(names.buffer, names.byteOffset + starts[i]!, starts[i + 1]! - starts[i]! - 1).toString("utf8");
}

/**
 * The position of the entry at `path` (relative to .ai/tools), or -1: index.paths.indexOf(path),
 * found in the index's bytes without decoding every path (~0.8 ms for the 13,000 of a 1,000-tool
 * tree with ten data files each).
 */
export function positionOf(index: LockIndex, path: string): number {
  const { names, starts } = index;
  if (!names || !starts || path === "" || path.includes("\0")) return index.paths.indexOf(path);
  const bytes = Buffer.from(names.buffer, names.byteOffset, names.length);
  const needle = Buffer.from(`${path}\0`);
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) {
    if (at !== 0 && bytes[at - 1] !== 0) continue; // the end of a longer name
    // The entry that starts there: the last start at or before it (`starts` ends with one past the last entry).
    const i = lastStartAtOrBefore(starts, at, starts.length - 1);
    return starts[i] === at ? i : -1;
  }
  return -1;
}

/** The names of entries `positions` (in that order), each ended by a NUL byte, as statx takes them. */
export function namesAt(index: LockIndex, positions: readonly number[]): Uint8Array {
  const { names, starts } = index;
  if (!names || !starts) return new TextEncoder().encode(positions.length === 0 ? "\0" : `${positions.map((i) => index.paths[i]).join("\0")}\0`);
  if (positions.length === 0) return new Uint8Array(1);
  let size = 0;
  for (const i of positions) size += starts[i + 1]! - starts[i]!;
  const out = Buffer.alloc(size);
  // Buffer's copy takes offsets: no view per entry (this runs for ~1,200 entries per check).
  const from = Buffer.from(names.buffer, names.byteOffset, names.length);
  let o = 0;
  for (const i of positions) o += from.copy(out, o, starts[i]!, starts[i + 1]!);
  return out;
}

/** What changed below .ai/tools since the index was written. */
export interface IndexScan {
  /** Something the index cannot pin on single tools changed: an entry added, removed or retyped, or a file no tool owns. */
  structural: boolean;
  /** Tools (index positions) with a changed file, and those files' entry positions. */
  tools: Map<number, number[]>;
  /** The new stat of every changed entry, by entry position. */
  fresh: Map<number, number[]>;
  /**
   * Only these entries (positions, with .ai/tools itself) were statted: the scan says nothing of
   * the others (ops/staged-io.ts: the entries a staged verdict can depend on). Absent: every entry.
   */
  only?: readonly number[];
  /**
   * With `only`, when statx read them: those entries' names (each ended by a NUL) and their stat
   * rows as read (ROW_WIDTH numbers each, in `only`'s order), which the staged memo keys on
   * (ops/staged-memo-io.ts dependenciesOf) without copying them out of the index again.
   */
  onlyNames?: Uint8Array;
  onlyRows?: Float64Array;
}

/**
 * Lstats every recorded entry (one syscall each; no readdir unless a folder's own stat changed,
 * and then only that folder, to see whether it still holds the same names).
 */
export function scanLockIndex(index: LockIndex, statAt?: StatAt, only?: readonly number[], onlyNames?: Uint8Array): IndexScan {
  const base = join(index.root, TOOLS_DIR);
  const { stats, owners } = index;
  const scan: IndexScan = { structural: false, tools: new Map(), fresh: new Map(), ...(only ? { only } : {}) };
  const n = only ? only.length : stats.length / ROW_WIDTH;
  const folderChanged = (i: number, abs: string): boolean => !sameNames(index, i, abs);
  const top = lstatRow(base);
  if (!sameRow(top, index.top, 0)) {
    if (!top || folderChanged(-1, base)) return { ...scan, structural: true };
    scan.fresh.set(-1, top);
  }
  // statAt's names: the index's, or (only some entries statted) those entries' alone, in order.
  const names = only ? onlyNames : index.names;
  // Only some entries: each one's row is kept where statx writes it (IndexScan onlyRows); else one row is reused.
  const keep = only !== undefined && statAt !== undefined && names !== undefined;
  const rows = new Float64Array(keep ? n * ROW_WIDTH : ROW_WIDTH);
  if (keep) {
    scan.onlyNames = names;
    scan.onlyRows = rows;
  }
  const step = keep ? ROW_WIDTH : 0;
  let at = 0;
  for (let k = 0, r = 0; k < n; k++, r += step) {
    const i = only ? only[k]! : k;
    const o = i * ROW_WIDTH;
    let st: { size: number; mtimeMs: number; ctimeMs: number; ino: number; mode: number };
    if (statAt && names) {
      if (!statAt(at, rows, r)) return { ...scan, structural: true };
      at = names.indexOf(0, at) + 1;
      if (rows[r] === stats[o] && rows[r + 1] === stats[o + 1] && rows[r + 2] === stats[o + 2] && rows[r + 3] === stats[o + 3] && rows[r + 4] === stats[o + 4]) continue;
      st = { size: rows[r]!, mtimeMs: rows[r + 1]!, ctimeMs: rows[r + 2]!, ino: rows[r + 3]!, mode: rows[r + 4]! };
    } else {
      try {
        st = lstatSync(`${base}/${index.paths[i]}`);
      } catch {
        return { ...scan, structural: true };
      }
      if (st.size === stats[o] && st.mtimeMs === stats[o + 1] && st.ctimeMs === stats[o + 2] && st.ino === stats[o + 3] && st.mode === stats[o + 4]) continue;
    }
    const mode = stats[o + 4]!;
    // Retyped (a file became a folder or a link), or a folder that now holds other names.
    if ((st.mode & 0o170000) !== (mode & 0o170000)) return { ...scan, structural: true };
    scan.fresh.set(i, [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode]);
    if (isFolder(mode)) {
      if (folderChanged(i, `${base}/${pathAt(index, i)}`)) return { ...scan, structural: true };
      continue;
    }
    const owner = owners[i]!;
    if (owner < 0) return { ...scan, structural: true };
    const list = scan.tools.get(owner) ?? [];
    list.push(i);
    scan.tools.set(owner, list);
  }
  return scan;
}

function sameRow(now: number[] | undefined, row: ArrayLike<number>, o: number): boolean {
  if (!now) return false;
  for (let k = 0; k < ROW_WIDTH; k++) if (now[k] !== row[o + k]) return false;
  return true;
}

/** Whether folder `i` (-1: .ai/tools) holds exactly the names the index recorded in it. */
function sameNames(index: LockIndex, i: number, abs: string): boolean {
  let names: string[];
  try {
    names = readdirSync(abs);
  } catch {
    return false;
  }
  const prefix = i === -1 ? "" : `${index.paths[i]}/`;
  const recorded: string[] = [];
  for (let k = i + 1; k < index.paths.length; k++) if (index.parents[k] === i) recorded.push(index.paths[k]!.slice(prefix.length));
  if (recorded.length !== names.length) return false;
  const set = new Set(recorded);
  return names.every((name) => set.has(name));
}

/** True when the lockfile is, by stat or else by its bytes, the one the index was written with; `text` is read when needed. */
export function lockfileMatches(index: LockIndex, readText: () => string | undefined): { ok: boolean; text?: string } {
  const now = lstatRow(join(index.root, "tool.lock.json"));
  if (index.lockfile.stat && sameRow(now, index.lockfile.stat, 0)) return { ok: true };
  const text = readText();
  return { ok: text !== undefined && sha256Hex(text) === index.lockfile.sha256, text };
}

/** scanLockIndex with statx when the platform has it (statx-io.ts), else with lstatSync. */
export async function scanLockIndexFast(index: LockIndex, only?: readonly number[]): Promise<IndexScan> {
  // Only some entries: their names alone, NUL-terminated (finding theirs among every name costs more).
  const names = only ? (only.length === 0 ? undefined : namesAt(index, only)) : index.names;
  if (!names || names.length <= 1) return scanLockIndex(index, undefined, only);
  const { openStatx } = await import("../cache/statx-io.ts");
  const native = openStatx(join(index.root, TOOLS_DIR), names, Buffer.from(names.buffer, names.byteOffset, names.indexOf(0)).toString("utf8"), 0);
  try {
    return scanLockIndex(index, native?.statAt, only, names);
  } finally {
    native?.close();
  }
}

function isExecutorRef(value: unknown): value is ExecutorRef | null {
  if (value === null) return true;
  const ref = value as ExecutorRef;
  return typeof value === "object" && typeof ref.id === "string" && typeof ref.raw === "string" && (ref.range === null || typeof ref.range === "string");
}
