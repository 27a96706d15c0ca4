// The tree against its lockfile: which tools and files differ, and which entries were edited by
// hand (their digests disagree with their own file lists). Pure.
import type { CanonicalValue } from "../integrity/value.ts";
import type { LockedTool, Lockfile } from "../schema/lockfile.ts";
import { type HashedTool, buildLockfile } from "./build.ts";
import { checkEntryConsistency } from "./consistency.ts";
import { type LockDiff, diffLockfiles } from "./lock-diff.ts";

export interface HandEdit {
  id: string;
  message: string;
  /** What to do when it is not what a tool entry's hand edit needs (restore the file, or kiwi lock). */
  hint?: string;
}

export interface TreeComparison {
  /** From the lockfile (before) to the tree (after). */
  diff: LockDiff;
  handEdited: HandEdit[];
  /** The lockfile the tree would produce now (pins carried over). */
  fresh: Lockfile;
}

/**
 * Compares a lockfile with the hashed tree. `manifestOf` may supply the manifest an entry locked
 * when the tree's differs (the cache's tool index), so even a changed tool's entry is judged.
 */
export function compareTreeToLock(
  lock: Lockfile,
  tree: readonly HashedTool[],
  manifestOf: (id: string, integrityHex: string) => CanonicalValue | undefined = () => undefined,
): TreeComparison {
  const fresh = buildLockfile(tree, lock.mcp_servers);
  const byId = new Map(tree.map((h) => [h.tool.id, h]));
  const handEdited: HandEdit[] = [];
  for (const [id, entry] of Object.entries(lock.tools)) {
    // An entry equal to the one the tree produces now is consistent by construction.
    const now = fresh.tools[id];
    if (now && sameEntry(entry, now)) continue;
    const candidates: (CanonicalValue | undefined)[] = [byId.get(id)?.tool.manifest];
    let verdict = candidates[0] === undefined ? "unknown" : checkEntryConsistency(id, entry, candidates[0]);
    if (verdict === "unknown") {
      const cached = manifestOf(id, entry.integrity.slice("sha256:".length));
      if (cached !== undefined) verdict = checkEntryConsistency(id, entry, cached);
    }
    if (verdict === "inconsistent") {
      handEdited.push({ id, message: `the entry for "${id}" disagrees with itself: its integrity is not the digest of its manifest and file list (edited by hand or merged badly)` });
    }
  }
  return { diff: diffLockfiles(lock, fresh), handEdited, fresh };
}

function sameEntry(a: LockedTool, b: LockedTool): boolean {
  if (a.integrity !== b.integrity || a.manifest_digest !== b.manifest_digest || a.version !== b.version || a.files.length !== b.files.length) return false;
  return a.files.every((f, i) => f.path === b.files[i]!.path && f.sha256 === b.files[i]!.sha256 && f.is_executable === b.files[i]!.is_executable);
}
