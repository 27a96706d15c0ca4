// The document a parent's `validation.child_schemas` judges: one shape on which schemas written in
// either style work. kiwi_mcp's ChainValidator judged the whole chain link (tool_id, tool_type,
// version, executor_id, manifest, files); kiwi judged the bare manifest. The link document is the
// manifest's own fields at the top level, as written, with the link fields laid over them:
//
//   { ...the manifest as written,
//     tool_id, tool_type, version,          the model's values (magray's name and type too)
//     executor_id,                           the executor as written (`python_runtime@^1.4`), or null
//     manifest: { ...manifest section or whole manifest, entrypoint?, language? },
//     files: [{ path, is_executable }] }     the tool's files, sorted by path
//
// `manifest` is the file's own `manifest:` mapping when it has one (kiwi_mcp's script form), else
// the whole manifest; the tool's entry point and language are set on it wherever they were written
// (config.entrypoint, entry_point, a top-level entrypoint), so kiwi_mcp's `manifest.entrypoint`
// schemas judge every dialect. check (chain-layer.ts) and exec (exec/schema.ts) both judge this,
// so a chain that passes at lock time is not refused at run time. Pure.
import { isRecord } from "../integrity/value.ts";
import type { Tool } from "../manifest/model.ts";

/** What a link document is built from (a check-time tool or an exec-time one). */
export type LinkSource = Pick<Tool, "id" | "type" | "version" | "executor" | "doc" | "entrypoint" | "files"> & { language?: string };

/** The document child_schemas judge; see the file comment for its exact shape. */
export function linkDocument(tool: LinkSource): Record<string, unknown> {
  const doc = tool.doc;
  const section = isRecord(doc.manifest) ? doc.manifest : doc;
  const manifest: Record<string, unknown> = { ...section };
  if (tool.entrypoint !== undefined) manifest.entrypoint = tool.entrypoint;
  if (tool.language !== undefined) manifest.language = tool.language;
  return {
    ...doc,
    tool_id: tool.id,
    tool_type: tool.type,
    version: tool.version,
    executor_id: tool.executor?.raw ?? null,
    manifest,
    files: sortedByPath(tool.files).map((f) => ({ path: f.path, is_executable: f.isExecutable })),
  };
}

/** The files in path order; discovery lists them so already (checked in one pass, not sorted again per child). */
function sortedByPath(files: LinkSource["files"]): LinkSource["files"] {
  for (let i = 1; i < files.length; i++) {
    if (files[i - 1]!.path > files[i]!.path) return [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
  return files;
}

/** Where a pointer into the link document is written in the tool's own file ('' when nowhere). */
export function linkPointerInFile(tool: Pick<Tool, "doc" | "pointers">, pointer: string): string {
  const [, head = "", ...rest] = pointer.split("/");
  const tail = rest.length ? `/${rest.join("/")}` : "";
  const field: Record<string, string | undefined> = { tool_id: tool.pointers.id, tool_type: tool.pointers.type, version: tool.pointers.version, executor_id: tool.pointers.executor };
  if (head in field) return (field[head] ?? "") + tail;
  if (head === "files") return "";
  if (head === "manifest") {
    const key = rest[0];
    if (key === "entrypoint") return (tool.pointers.entrypoint ?? "") + (rest.length > 1 ? `/${rest.slice(1).join("/")}` : "");
    if (key === "language") return tool.pointers.language ?? "";
    return isRecord(tool.doc.manifest) ? pointer : tail;
  }
  return pointer;
}
