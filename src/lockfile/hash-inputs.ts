// Inputs of `kiwi hash`: JSON text parsed losslessly (1.0 stays a float, big integers stay
// exact) and the integrity input shape of the vectors, checked field by field. Pure.
import { KiwiError } from "../errors.ts";
import type { IntegrityInput } from "../integrity/tool.ts";
import { type CanonicalValue, isMapping } from "../integrity/value.ts";
import { JsonSyntaxError, computeLineStarts, lineColumn, parseJsonLossless } from "../manifest/json.ts";

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
    if (!(error instanceof JsonSyntaxError)) throw error;
    const at = lineColumn(computeLineStarts(text), error.problem.offset);
    throw new KiwiError("E_INPUT_INVALID", `${subject}:${at.line}:${at.column}: invalid JSON: ${error.message}`, { hint: "pass a JSON document (a file path, or - for stdin)" });
  }
}

const INPUT_KEYS = ["tool_id", "version", "manifest", "files"];
const FILE_KEYS = ["path", "sha256", "is_executable"];

/** Checks the `{tool_id, version, manifest, files}` shape of shared/vectors/integrity.json inputs. */
export function checkIntegrityInput(value: CanonicalValue, subject: string): IntegrityInput {
  const bad = (pointer: string, what: string) =>
    new KiwiError("E_INPUT_INVALID", `${subject}: ${pointer} ${what}`, { hint: 'the input is {"tool_id": string, "version": string, "manifest": {...}, "files": [{"path", "sha256", "is_executable"}] or null}' });
  if (!isMapping(value)) throw bad("/", "must be an object");
  for (const key of Object.keys(value)) if (!INPUT_KEYS.includes(key)) throw bad(`/${key}`, "is not a field of the integrity input");
  if (typeof value.tool_id !== "string") throw bad("/tool_id", "must be a string");
  if (typeof value.version !== "string") throw bad("/version", "must be a string (as written in the manifest)");
  if (value.manifest === undefined) throw bad("/manifest", "is missing");
  const files = value.files;
  if (files !== null && files !== undefined && !Array.isArray(files)) throw bad("/files", "must be an array or null");
  const entries = (files ?? []).map((f, i) => {
    if (!isMapping(f)) throw bad(`/files/${i}`, "must be an object");
    for (const key of Object.keys(f)) if (!FILE_KEYS.includes(key)) throw bad(`/files/${i}/${key}`, "is not a field of a file entry");
    if (typeof f.path !== "string") throw bad(`/files/${i}/path`, "must be a string");
    if (typeof f.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(f.sha256)) throw bad(`/files/${i}/sha256`, "must be 64 lowercase hex digits");
    if (f.is_executable !== undefined && typeof f.is_executable !== "boolean") throw bad(`/files/${i}/is_executable`, "must be a boolean");
    return { path: f.path, sha256: f.sha256, is_executable: f.is_executable === true };
  });
  return { tool_id: value.tool_id, version: value.version, manifest: value.manifest, files: entries };
}
