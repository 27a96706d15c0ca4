// Detects a hand-edited lockfile entry: its integrity must be the digest of its own id, version,
// file list and the manifest its manifest_digest names. Pure; the caller supplies a manifest
// candidate (from the tree, or from the cache's tool index) since the lockfile does not hold it.
import { hashCanonical, parseDigest } from "../integrity/digest.ts";
import { hashToolIntegrity } from "../integrity/tool.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import type { LockedTool } from "../schema/lockfile.ts";

/**
 * `consistent`: the entry's digests agree with the manifest and its own files.
 * `inconsistent`: one digest agrees with the manifest and the other does not, so the entry was
 * edited by hand (or merged badly). `unknown`: the manifest is not the one the entry locked, so
 * this manifest cannot judge the entry (the tree changed; the caller reports that instead).
 */
export type Consistency = "consistent" | "inconsistent" | "unknown";

/** Judges one entry against a manifest candidate. Digests must already have passed parseLockfile. */
export function checkEntryConsistency(id: string, entry: LockedTool, manifest: CanonicalValue): Consistency {
  const manifestOk = hashCanonical(manifest).hex === parseDigest(entry.manifest_digest, `tool "${id}" manifest_digest`);
  const computed = hashToolIntegrity({ tool_id: id, version: entry.version, manifest, files: entry.files }).hex;
  const integrityOk = computed === parseDigest(entry.integrity, `tool "${id}" integrity`);
  if (manifestOk && integrityOk) return "consistent";
  if (manifestOk || integrityOk) return "inconsistent";
  return "unknown";
}
