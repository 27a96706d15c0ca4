// Inputs of `kiwi hash`: JSON text parsed losslessly (1.0 stays a float, big integers stay
// exact) and the integrity input shape of the vectors, checked field by field. Pure.
import { KiwiError } from "../errors.ts";
import type { ReferenceIntegrityInput } from "../integrity/tool.ts";
import { type CanonicalValue, isMapping } from "../integrity/value.ts";
import { computeLineStarts, lineColumn, parseJsonLossless } from "../integrity/json-lossless.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";

/** Parses JSON text for hashing; duplicate keys are refused since they make the value ambiguous. */
export function parseHashInput(text: string, subject: string): CanonicalValue {
  try {
    const parsed = parseJsonLossless(text);
    const dup = parsed.warnings[0];
    if (dup) {
      const at = lineColumn(computeLineStarts(text), dup.offset);
      throw new KiwiError("E_INPUT_INVALID", `${subject}:${at.line}:${at.column}: ${dup.message}`, { hint: "remove one of the two keys; hashing an ambiguous document would hide which one counted" });
    }
    return parsed.value;
  } catch (error) {
    if (!(error instanceof ParseProblem) || error.offset === undefined) throw error;
    const at = lineColumn(computeLineStarts(text), error.offset);
    throw new KiwiError("E_INPUT_INVALID", `${subject}:${at.line}:${at.column}: invalid JSON: ${error.message}`, { hint: "pass a JSON document (a file path, or - for stdin)" });
  }
}

const INPUT_KEYS = ["tool_id", "version", "manifest", "files"];

/**
 * Checks the `{tool_id, version, manifest, files}` shape of shared/vectors/integrity.json inputs as
 * kiwi_mcp's compute_tool_integrity reads it: a file entry needs `path` (a string: entries are
 * sorted by it) and `sha256`; its other keys are dropped and its values pass through unchanged
 * (`is_executable: 1` stays 1), so the digest is the reference function's for the same input.
 * Refusing such values is right for a tree on disk (hash-tree-io.ts), not for this input.
 */
export function checkIntegrityInput(value: CanonicalValue, subject: string): ReferenceIntegrityInput {
  const bad = (pointer: string, what: string) =>
    new KiwiError("E_INPUT_INVALID", `${subject}: ${pointer} ${what}`, { hint: 'the input is {"tool_id", "version", "manifest", "files": [{"path", "sha256", "is_executable"}] or null}' });
  if (!isMapping(value)) throw bad("/", "must be an object");
  for (const key of Object.keys(value)) if (!INPUT_KEYS.includes(key)) throw bad(`/${key}`, "is not a field of the integrity input");
  for (const key of ["tool_id", "version", "manifest"]) if (value[key] === undefined) throw bad(`/${key}`, "is missing");
  const files = value.files;
  if (files !== null && files !== undefined && !Array.isArray(files)) throw bad("/files", "must be an array or null");
  const entries = (files ?? []).map((f, i) => {
    if (!isMapping(f)) throw bad(`/files/${i}`, "must be an object");
    if (typeof f.path !== "string") throw bad(`/files/${i}/path`, "must be a string (entries are sorted by it)");
    if (f.sha256 === undefined) throw bad(`/files/${i}/sha256`, "is missing");
    return { path: f.path, sha256: f.sha256, ...(f.is_executable !== undefined ? { is_executable: f.is_executable } : {}) };
  });
  return { tool_id: value.tool_id!, version: value.version!, manifest: value.manifest!, files: entries };
}
