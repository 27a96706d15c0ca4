// Where everything lives inside the cache directory. Pure: digests in, relative paths out.
// README "Cache layout" documents this table; change both together.
import { sha256Hex } from "../integrity/digest.ts";

/** Top-level folders and files of the cache, and what each holds. */
export const CACHE_ENTRIES = {
  blobs: "file contents keyed by sha256: blobs/<2 hex>/<62 hex>, read-only",
  index: "tool index entries keyed by integrity: index/<2 hex>/<62 hex>.json, the canonical integrity text (and installed npm package trees, keyed by tree digest)",
  stat: "per-project stat caches: stat/<project key>.json, (size, mtime, ctime, inode) -> sha256; stat/<project key>.index, the lock index",
  manifests: "per-project parsed-manifest caches: manifests/<project key>.json (discovery)",
  check: "remembered interpreter syntax verdicts by script digest (kiwi check), staged verdicts per project and the last staged lockfiles as git blobs by blob id (kiwi check --staged)",
  runs: "read-only run directories materialized from verified blobs: runs/<integrity>[-<tree>...]/ (kiwi exec)",
  exec: "kiwi exec's memos: parsed manifests, child-schema passes and parameter schemas by content digest; chains per project and tool; launches per call (tool, folder, sandbox mode, environment)",
  projects: "projects/<project key>.json: the project roots whose lockfiles `kiwi cache prune` keeps",
  quarantine: "evicted entries that failed verification, kept for inspection until prune or clean",
  "CACHEDIR.TAG": "marks the folder as a cache for backup tools (https://bford.info/cachedir/)",
} as const;

/** Body of CACHEDIR.TAG; the first line is the standard's signature. */
export const CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is kiwi's content-addressed cache. See `kiwi cache --help`.\n";

const HEX = /^[0-9a-f]{64}$/;

/** True for a lowercase 64-digit hex digest. */
export function isHexDigest(text: string): boolean {
  return HEX.test(text);
}

/** `blobs/ab/cdef…` for a file digest. */
export function blobRelPath(hex: string): string {
  return `blobs/${hex.slice(0, 2)}/${hex.slice(2)}`;
}

/** `index/ab/cdef….json` for a tool integrity digest. */
export function indexRelPath(hex: string): string {
  return `index/${hex.slice(0, 2)}/${hex.slice(2)}.json`;
}

/**
 * The run directory's name (`runs/<name>/`) for a tool version: its integrity, then for a tool with
 * packages the first 16 hex digits of each installed tree (npm's, then Python's), so another
 * install of the packages gets another directory.
 */
export function runDirName(integrityHex: string, treeHexes: readonly string[] = []): string {
  return [integrityHex, ...treeHexes.map((t) => t.slice(0, 16))].join("-");
}

/** A stable, path-free key for a project root (the root itself never appears in a file name). */
export function projectKey(root: string): string {
  return sha256Hex(root).slice(0, 32);
}

/** `stat/<key>.json` for a project root: the base name of its tree memo and lock index. */
export function statRelPath(root: string): string {
  return `stat/${projectKey(root)}.json`;
}

/** `stat/<key>.stat`: a project's stat cache (binary, stat-cache-format.ts; the JSON one it replaced kept the .json name). */
export function statCacheRelPath(root: string): string {
  return `stat/${projectKey(root)}.stat`;
}

/** `projects/<key>.json` for a project root. */
export function projectRelPath(root: string): string {
  return `projects/${projectKey(root)}.json`;
}

/** The digest a fan-out name spells (`ab` + `cdef…`), or undefined for anything else. */
export function digestOfFanout(prefix: string, name: string, suffix = ""): string | undefined {
  if (!name.endsWith(suffix)) return undefined;
  const hex = prefix + name.slice(0, name.length - suffix.length);
  return isHexDigest(hex) ? hex : undefined;
}

const TEMP = /^\.(.+)\.tmp-(\d+)-[0-9a-z]+$/;

/** Temp file name for an atomic write of `base`; the pid lets a later run spot a dead writer's leftovers. */
export function tempName(base: string, pid: number, random: string): string {
  return `.${base}.tmp-${pid}-${random}`;
}

/** The pid that owns a temp file name (and the name it was for), or undefined for other names. */
export function tempOwner(name: string): number | undefined {
  const m = TEMP.exec(name);
  return m ? Number(m[2]) : undefined;
}

/** The final name a temp file was written for. */
export function tempTarget(name: string): string | undefined {
  return TEMP.exec(name)?.[1];
}
