// Run directories: the verified copy of a tool's files that actually executes, materialised from
// the content-addressed store and reused while a stat check proves it untouched. Editing the
// working tree after verification cannot change it. Layout, inside the cache:
//   runs/<integrity hex>/files/…      the tool's files (read-only); the run's cwd
//   runs/<integrity hex>/marker.json  (path, inode, size, mtime, ctime) of each file at creation,
//                                     and the node_modules/.bin links (path, target) made beside them
// A version is published by renaming a complete temp folder into place, so a reader sees all or
// nothing; one found tampered is renamed aside (never deleted under a running tool).
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Eviction, Store } from "../cache/store-io.ts";
import type { BinLink } from "../deps/npm-lock.ts";
import type { FileEntry } from "../integrity/tool.ts";

// Loaded only to build or replace a run directory: a warm call reuses an intact one and should not
// pay for evaluating the store, its JSON reader and the copy code at start-up.
const load = {
  store: () => require("../cache/store-io.ts") as typeof import("../cache/store-io.ts"),
  materialize: () => require("../cache/materialize-io.ts") as typeof import("../cache/materialize-io.ts"),
  remove: () => require("../cache/remove-io.ts") as typeof import("../cache/remove-io.ts"),
  projects: () => require("../cache/projects-io.ts") as typeof import("../cache/projects-io.ts"),
};
const removeTree = (path: string) => load.remove().removeTree(path);

/** Folder of run directories inside the cache. */
export const RUNS_DIR = "runs";
const MARKER_FORMAT = 1;
/** Set-aside folders older than this are removed by the next rebuild. */
const STALE_AFTER_MS = 10 * 60 * 1000;

type Row = [path: string, ino: number, size: number, mtimeMs: number, ctimeMs: number];

interface Marker {
  format: number;
  integrity: string;
  files: Row[];
  links?: [path: string, target: string][];
}

export interface RunDirRequest {
  /** kiwi's cache folder (the store's): run directories live in its runs/. */
  cacheDir: string;
  /** The content-addressed store, opened only when a run directory must be built. */
  store: () => Store;
  /** Hex integrity of the tool version (the run directory's name). */
  integrityHex: string;
  /** The locked file entries (paths, digests, modes). */
  files: readonly FileEntry[];
  /** Symbolic links to make beside them (node_modules/.bin), each pointing at one of the files. */
  links?: readonly BinLink[];
  /** Absolute tree path of each file, to fill the store when a blob is missing. */
  sourceOf: (path: string) => string | undefined;
  /** Names the tool in messages. */
  subject: string;
}

export interface RunDir {
  /** The folder holding the tool's files: the run's cwd. */
  dir: string;
  reused: boolean;
  /** Cached blobs that failed their check while it was built, moved to quarantine/ and stored again from the tree. */
  evicted?: Eviction[];
  /** Removes a one-off copy (made when another kiwi published the same version at the same time). */
  cleanup?: () => void;
}

/**
 * The files folder of an intact run directory, or undefined when it is missing or was touched:
 * what ensureRunDir reuses, without building anything.
 */
export function intactRunDir(cacheDir: string, dirName: string, files: readonly FileEntry[]): string | undefined {
  const container = join(cacheDir, RUNS_DIR, dirName);
  return containerIntact(container, { integrityHex: dirName, files }) ? join(container, "files") : undefined;
}

/** The run directory of a tool version: reused when its marker still matches, else rebuilt. */
export function ensureRunDir(req: RunDirRequest): RunDir {
  const runs = join(req.cacheDir, RUNS_DIR);
  const container = join(runs, req.integrityHex);
  if (containerIntact(container, req)) return { dir: join(container, "files"), reused: true };
  const store = req.store();
  const { ensureStore, putBlobFromFile } = load.store();
  ensureStore(store);
  const evicted: Eviction[] = [];
  for (const f of req.files) {
    const src = req.sourceOf(f.path);
    // putBlobFromFile re-verifies a present blob and refuses a source whose bytes are not the locked ones.
    const put = src === undefined ? undefined : putBlobFromFile(store, src, f.sha256, `${req.subject}: ${f.path}`);
    if (put?.evicted) evicted.push(put.evicted);
  }
  const built = (dir: string, reused: boolean, cleanup?: () => void): RunDir => ({ dir, reused, ...(evicted.length ? { evicted } : {}), ...(cleanup ? { cleanup } : {}) });
  sweep(runs);
  const tmp = join(runs, `.run-${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  mkdirSync(tmp, { recursive: true });
  // Copies, not links: a run directory shares no inode with the store, so its stats stay stable
  // and a tool that chmods its own files cannot reach the blobs.
  load.materialize().materializeTool(store, req.files, join(tmp, "files"), { link: false, subject: req.subject });
  const rows: Row[] = req.files.map((f) => {
    const st = lstatSync(join(tmp, "files", ...f.path.split("/")));
    return [f.path, st.ino, st.size, st.mtimeMs, st.ctimeMs];
  });
  makeLinks(join(tmp, "files"), req.links ?? []);
  const marker: Marker = { format: MARKER_FORMAT, integrity: req.integrityHex, files: rows, ...(req.links?.length ? { links: req.links.map((l) => [l.path, l.target] as [string, string]) } : {}) };
  writeFileSync(join(tmp, "marker.json"), JSON.stringify(marker), { mode: 0o444 });
  chmodSync(tmp, 0o555);
  for (let attempt = 0; attempt < 2; attempt++) {
    if (publish(tmp, container)) return built(join(container, "files"), false);
    // Someone else published this version meanwhile: use theirs if it is intact...
    if (containerIntact(container, req)) {
      removeTree(tmp);
      return built(join(container, "files"), true);
    }
    // ...otherwise it is damaged: move it aside (a tool may still run from it) and try once more.
    setAside(runs, container);
  }
  return built(join(tmp, "files"), false, () => removeTree(tmp));
}

/** Makes the links in the (read-only) materialised files folder, leaving every folder read-only again. */
function makeLinks(files: string, links: readonly BinLink[]): void {
  const opened = new Set<string>();
  for (const link of links) {
    const abs = join(files, ...link.path.split("/"));
    const bin = dirname(abs);
    const parent = dirname(bin);
    if (!opened.has(parent)) {
      chmodSync(parent, 0o755);
      opened.add(parent);
    }
    mkdirSync(bin, { recursive: true, mode: 0o755 });
    opened.add(bin);
    symlinkSync(link.target, abs);
  }
  for (const dir of [...opened].sort((a, b) => b.length - a.length)) chmodSync(dir, 0o555);
}

/** Renames the finished temp folder into place; false when a version is already there. */
function publish(tmp: string, container: string): boolean {
  try {
    renameSync(tmp, container);
    return true;
  } catch {
    return false;
  }
}

/**
 * True when the container holds exactly the marker's files with unchanged inode, size, mtime and
 * ctime (a process cannot set ctime back), no write permission anywhere, and nothing extra.
 */
function containerIntact(container: string, req: Pick<RunDirRequest, "integrityHex" | "files" | "links">): boolean {
  let marker: Marker;
  try {
    marker = JSON.parse(readFileSync(join(container, "marker.json"), "utf8")) as Marker;
  } catch {
    return false;
  }
  if (marker.format !== MARKER_FORMAT || marker.integrity !== req.integrityHex || !Array.isArray(marker.files)) return false;
  if (marker.files.length !== req.files.length) return false;
  const files = join(container, "files");
  try {
    if (!readOnly(container)) return false;
    for (let i = 0; i < req.files.length; i++) {
      const row = marker.files[i]!;
      const f = req.files[i]!;
      if (!Array.isArray(row) || row[0] !== f.path) return false;
      const st = lstatSync(join(files, ...f.path.split("/")));
      if (!st.isFile() || st.ino !== row[1] || st.size !== row[2] || st.mtimeMs !== row[3] || st.ctimeMs !== row[4]) return false;
      if ((st.mode & 0o222) !== 0 || ((st.mode & 0o100) !== 0) !== (f.is_executable === true)) return false;
    }
    const links = req.links ?? [];
    const marked = marker.links ?? [];
    if (marked.length !== links.length) return false;
    for (let i = 0; i < links.length; i++) {
      const l = links[i]!;
      if (!Array.isArray(marked[i]) || marked[i]![0] !== l.path || marked[i]![1] !== l.target) return false;
      if (readlinkSync(join(files, ...l.path.split("/"))) !== l.target) return false;
    }
    return countFiles(files) === req.files.length + links.length;
  } catch {
    return false;
  }
}

/** Regular files (and node_modules/.bin links) below `dir`, or -1 when a folder is writable or holds something else. */
function countFiles(dir: string): number {
  if (!readOnly(dir)) return -1;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      const sub = countFiles(join(dir, e.name));
      if (sub < 0) return -1;
      n += sub;
    } else if (e.isFile() || (e.isSymbolicLink() && e.parentPath.endsWith("/node_modules/.bin"))) n++;
    else return -1;
  }
  return n;
}

function readOnly(path: string): boolean {
  return (statSync(path).mode & 0o222) === 0;
}

/** Moves a damaged published version out of its name (a tool may still be running from it). */
function setAside(runs: string, container: string): void {
  try {
    renameSync(container, join(runs, `.stale-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`));
  } catch {
    // ENOENT: nothing published yet.
  }
}

/** Removes set-aside folders past their grace and temp folders of kiwi processes that died. */
function sweep(runs: string): void {
  let names: string[];
  try {
    names = readdirSync(runs);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    const stale = /^\.stale-(\d+)-/.exec(name);
    const temp = /^\.run-(\d+)-/.exec(name);
    if ((stale && now - Number(stale[1]) > STALE_AFTER_MS) || (temp && !load.projects().isAlive(Number(temp[1])))) removeTree(join(runs, name));
  }
}


