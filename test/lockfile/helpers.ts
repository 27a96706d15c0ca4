// Small builders for lockfile tests: consistent entries computed the way kiwi computes them.
import { formatDigest, hashCanonical, sha256Hex } from "../../src/integrity/digest.ts";
import { hashToolIntegrity } from "../../src/integrity/tool.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import type { LockedFile, LockedTool, Lockfile } from "../../src/schema/lockfile.ts";

/** A file entry for `content`. */
export const file = (path: string, content: string, is_executable = false): LockedFile => ({ path, sha256: sha256Hex(content), is_executable });

/** A self-consistent lockfile entry for a manifest and files. */
export function entry(id: string, manifest: CanonicalValue, files: LockedFile[] = [], extra: Partial<LockedTool> = {}): LockedTool {
  const version = extra.version ?? "1.0.0";
  return {
    version,
    type: "script",
    source: `.ai/tools/${id}/tool.yaml`,
    executor: null,
    integrity: formatDigest(hashToolIntegrity({ tool_id: id, version, manifest, files }).hex),
    manifest_digest: formatDigest(hashCanonical(manifest).hex),
    files,
    ...extra,
  };
}

/** A lockfile of entries. */
export const lockOf = (tools: Record<string, LockedTool>, mcp_servers: Lockfile["mcp_servers"] = {}): Lockfile => ({ lockfileVersion: 1, tools, mcp_servers });
