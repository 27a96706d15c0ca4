// Tool integrity: one digest over a tool version's id, version, manifest and file entries.
// Spec: shared/specs/integrity.md. Pure: file entries come in already hashed.
import { compareCodePoints, inCodePointOrder, renderCanonicalJson, renderString } from "./canonical.ts";
import { hashCanonical, sha256Hex } from "./digest.ts";
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
  return inCodePointOrder(files, (f) => f.path);
}

/** A file entry as kiwi_mcp's compute_tool_integrity takes it: values pass through unchanged. */
export interface ReferenceFileEntry {
  path: string;
  sha256: CanonicalValue;
  is_executable?: CanonicalValue;
}

/** The reference function's arguments, any JSON values (what `kiwi hash integrity` accepts). */
export interface ReferenceIntegrityInput {
  tool_id: CanonicalValue;
  version: CanonicalValue;
  manifest: CanonicalValue;
  files: readonly ReferenceFileEntry[] | null;
}

/** The integrity digest (hex) and the canonical text it was computed over. */
export function hashToolIntegrity(input: IntegrityInput): { canonical: string; hex: string } {
  return hashReferenceIntegrity(input);
}

/**
 * kiwi_mcp's compute_tool_integrity as written: file entries sorted by path, each reduced to path,
 * sha256 and is_executable (false when absent, as `f.get("is_executable", False)`), every value
 * passed through unchanged. A tree on disk only ever gives booleans and hex digests.
 */
export function hashReferenceIntegrity(input: ReferenceIntegrityInput): { canonical: string; hex: string } {
  const files = [...(input.files ?? [])]
    .sort((a, b) => compareCodePoints(a.path, b.path))
    .map((f) => ({ path: f.path, sha256: f.sha256, is_executable: f.is_executable === undefined ? false : f.is_executable }));
  return hashCanonical({ tool_id: input.tool_id, version: input.version, manifest: input.manifest, files } as CanonicalValue);
}

/**
 * hashToolIntegrity with the manifest's canonical text given (the text of its manifest digest): the
 * same bytes, since canonical JSON renders a member's value on its own and "manifest" sorts between
 * "files" and "tool_id". A cold `kiwi lock` renders every manifest while the file bytes are still
 * being hashed on the other core, and only joins the texts once they are in.
 */
export function hashToolIntegrityAround(manifestCanonical: string, input: Omit<IntegrityInput, "manifest">): { canonical: string; hex: string } {
  const files = sortFileEntries(input.files ?? []).map(renderFileEntry).join(",");
  const canonical = `{"files":[${files}],"manifest":${manifestCanonical},"tool_id":${renderCanonicalJson(input.tool_id)},"version":${renderCanonicalJson(input.version)}}`;
  return { canonical, hex: sha256Hex(canonical) };
}

/**
 * One file entry's canonical text, its three keys in their sorted order: a tree on disk gives a
 * boolean and a hex digest, written directly (the generic renderer's walk was most of a cold lock's
 * integrity texts); anything else goes through it.
 */
function renderFileEntry(f: FileEntry): string {
  const exec = f.is_executable === undefined ? false : f.is_executable;
  if (typeof exec === "boolean" && typeof f.sha256 === "string" && typeof f.path === "string") return `{"is_executable":${exec},"path":${renderString(f.path)},"sha256":${renderString(f.sha256)}}`;
  return renderCanonicalJson({ path: f.path, sha256: f.sha256, is_executable: exec } as CanonicalValue);
}
