// An installed package tree as kiwi records it: the canonical text of its file list, whose sha256
// is the `tree` digest in the lock and the key of the tree's cache entry. Pure.
import { compareCodePoints, renderCanonicalJson } from "../integrity/canonical.ts";
import type { FileEntry } from "../integrity/tool.ts";
import type { CanonicalValue } from "../integrity/value.ts";

/** Which installer made the tree: node_modules/ from npm, site-packages/ from pip. */
export type TreeKind = "npm-tree" | "pypi-tree";

/** The canonical text of an installed tree's file list, in path order whatever order it was walked in. */
export function renderInstalledTree(kind: TreeKind, files: readonly FileEntry[]): string {
  const sorted = [...files].sort((a, b) => compareCodePoints(a.path, b.path)).map((f) => ({ path: f.path, sha256: f.sha256, is_executable: f.is_executable }));
  return renderCanonicalJson({ kind, files: sorted } as unknown as CanonicalValue);
}

/** An npm package's folder in an installed tree: node_modules/<name>, nested only under others. */
const NPM_PACKAGE_JSON = /^((?:node_modules\/(?:@[^/]+\/)?[^/]+\/)*node_modules\/(?:@[^/]+\/)?[^/]+)\/package\.json$/;

/** A distribution's metadata in an installed site-packages/: <name>-<version>.dist-info/METADATA. */
const DIST_METADATA = /^site-packages\/([^/]+)-[^/-]+\.dist-info\/METADATA$/;

/**
 * How an installed tree's packages differ from the packages its lock entry lists (a bad merge that
 * kept one side's `tree` and the other's packages): each package the lock lists at another version
 * or not at all, and each the lock does not list; empty when they agree. npm's optional packages
 * for other platforms may be absent. `readText` reads a file of the tree (a package.json, a
 * METADATA) from the cache.
 */
export function treePackageMismatch(
  kind: TreeKind,
  files: readonly FileEntry[],
  locked: { packages: Record<string, { version: string; optional?: unknown }> },
  readText: (file: FileEntry) => string,
): string[] {
  const found = new Map<string, FileEntry>();
  for (const f of files) {
    const m = kind === "npm-tree" ? NPM_PACKAGE_JSON.exec(f.path) : DIST_METADATA.exec(f.path);
    if (m) found.set(kind === "npm-tree" ? m[1]! : m[1]!.toLowerCase().replace(/[-_.]+/g, "-"), f);
  }
  const version = (f: FileEntry): string | undefined => {
    const text = readText(f);
    if (kind === "pypi-tree") return /^Version:[ \t]*(\S+)[ \t]*$/m.exec(text)?.[1];
    try {
      const v = (JSON.parse(text) as { version?: unknown }).version;
      return typeof v === "string" ? v : undefined;
    } catch {
      return undefined;
    }
  };
  const name = (key: string) => (kind === "npm-tree" ? key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length) : key);
  const out: string[] = [];
  for (const [key, entry] of Object.entries(locked.packages)) {
    const file = found.get(key);
    if (!file) {
      if (entry.optional !== true) out.push(`${name(key)} ${entry.version} is not in it`);
      continue;
    }
    const v = version(file);
    if (v !== entry.version) out.push(`it holds ${name(key)} ${v ?? "(no version)"}, not ${entry.version}`);
  }
  // Top-level ones only: a tarball may carry a node_modules/ of its own that npm never installed.
  for (const key of found.keys()) if (!Object.hasOwn(locked.packages, key) && !key.includes("/node_modules/")) out.push(`it holds ${name(key)}, which the lock does not list`);
  return out;
}
