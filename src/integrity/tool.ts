// Tool integrity: one digest over a tool version's id, version, manifest and file entries.
// Spec: shared/specs/integrity.md. Pure: file entries come in already hashed.
import { compareCodePoints } from "./canonical.ts";
import { hashCanonical } from "./digest.ts";
import type { CanonicalValue } from "./value.ts";

/** One file of a tool, as the integrity and the lockfile record it. */
export interface FileEntry {
  /** Relative to the tool root, `/`-separated, no `.` or `..` segments. */
  path: string;
  /** Lowercase hex SHA-256 of the raw bytes. */
  sha256: string;
  is_executable: boolean;
}

export interface IntegrityInput {
  tool_id: string;
  version: string;
  manifest: CanonicalValue;
  files: readonly FileEntry[] | null;
}

/** Sorts file entries by path in code-point order, stably. */
export function sortFileEntries(files: readonly FileEntry[]): FileEntry[] {
  return [...files].sort((a, b) => compareCodePoints(a.path, b.path));
}

/** The integrity digest (hex) and the canonical text it was computed over. */
export function hashToolIntegrity(input: IntegrityInput): { canonical: string; hex: string } {
  const files = sortFileEntries(input.files ?? []).map((f) => ({
    path: f.path,
    sha256: f.sha256,
    // A missing flag means "not executable" (vector is-executable-missing).
    is_executable: f.is_executable === true,
  }));
  return hashCanonical({
    tool_id: input.tool_id,
    version: input.version,
    manifest: input.manifest,
    files,
  } as CanonicalValue);
}
