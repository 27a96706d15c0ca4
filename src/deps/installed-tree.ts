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
