// kiwi_mcp's own Python tool form: metadata as module-level variables, read without running the
// file (python-literals.ts).
//
//   #!/usr/bin/env python3                              optional
//   # kiwi-mcp:validated:2026-01-26T04:13:30Z:<hex>      optional signature, checked below
//   __version__ = "1.0.0"
//   __tool_type__ = "python"                            "python" is a Python script: tool_type script
//   __executor_id__ = "python_runtime"                  None for primitives; "@subprocess" as rye writes it
//   __category__ = "threads"
//   """First paragraph: the description."""
//   CONFIG_SCHEMA = {...}   ENV_CONFIG = {...}   CONFIG = {...}
//
// The tool id is the file stem (discovery's fallback id). The result is a kiwi-dialect document
// (tool_type, version, executor, description, category, config_schema, env_config, config, and
// parameters from CONFIG_SCHEMA's properties), so every later layer judges it as any other
// manifest. Pure.
import { sha256Hex } from "../integrity/digest.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { computeLineStarts, lineColumn } from "../integrity/json-lossless.ts";
import { parametersFromJsonSchema } from "./parameters-file.ts";
import { ParseProblem, type Position } from "../integrity/parse-problem.ts";
import { type LiteralOffsets, moduleStatements, readLiteral } from "./python-literals.ts";

/** Module variables kiwi reads, and the manifest field each fills. */
const VARIABLES: Record<string, string> = {
  __tool_id__: "tool_id",
  __tool_type__: "tool_type",
  __version__: "version",
  __executor_id__: "executor",
  __category__: "category",
  __description__: "description",
  __tool_description__: "description",
  CONFIG_SCHEMA: "config_schema",
  ENV_CONFIG: "env_config",
  CONFIG: "config",
};

/**
 * `__executor_id__` (its chain link, None for a primitive) makes a .py file a kiwi_mcp tool: rye's
 * helper modules carry `__version__` and `__tool_type__` too but name no executor, and are libraries.
 */
const MARKERS = new Set(["__executor_id__"]);

const SIGNATURE = /^# kiwi-mcp:validated:(.*):([^:\s]*)[ \t]*$/;

/** What a manifest parser gives (forms.ts ParsedManifest, which calls this). */
interface ModuleManifest {
  value: CanonicalValue;
  locate: (pointer: string) => Position | undefined;
  warnings: ParseProblem[];
}

/** The module-variable metadata of a Python file, or `none` when it declares none. */
export function parsePythonModuleMetadata(text: string): ModuleManifest | "none" {
  const statements = moduleStatements(text);
  if (!statements.some((s) => s.target !== undefined && MARKERS.has(s.target))) return "none";
  const starts = computeLineStarts(text);
  const positionOf = (offset: number): Position => lineColumn(starts, offset);
  const doc: { [key: string]: CanonicalValue } = {};
  const at = new Map<string, Position>();
  /** Where the values inside each field's literal sit (a dict's keys, a list's elements). */
  const inside = new Map<string, LiteralOffsets>();
  const warnings: ParseProblem[] = [];
  let docstring: { text: string; at: Position } | undefined;
  // A string written over lines (a triple-quoted one): its last line too, as a YAML block scalar's
  // (Position.lastLine): no comment can sit inside it.
  const spanning = (offset: number, read: { end: number; text: boolean }): Position => {
    const first = positionOf(offset);
    const last = read.text ? positionOf(read.end - 1).line : first.line;
    return last > first.line ? { ...first, lastLine: last } : first;
  };
  for (const s of statements) {
    if (s.target === undefined) {
      if (docstring === undefined && /^[rRuU]?('''|"""|'|")/.test(text.slice(s.offset, s.offset + 4))) {
        const read = readLiteral(text, s.offset);
        if (read.ok && typeof read.value === "string") docstring = { text: read.value, at: positionOf(s.offset) };
      }
      continue;
    }
    const field = VARIABLES[s.target];
    if (field === undefined || (field === "description" && doc.description !== undefined)) continue;
    const read = readLiteral(text, s.exprOffset);
    if (!read.ok) {
      warnings.push(new ParseProblem("kiwi_mcp/non-literal", `${s.target} is not a literal value: ${read.reason}`, positionOf(s.offset), `write ${s.target} as a literal (a string, number, list or dict); kiwi never runs the file to read it`));
      continue;
    }
    doc[field] = fieldValue(field, read.value);
    at.set(field, spanning(s.offset, { end: read.end, text: typeof read.value === "string" }));
    inside.set(field, read.offsets);
  }
  if (doc.description === undefined && docstring !== undefined) {
    const paragraph = firstParagraph(docstring.text);
    if (paragraph) {
      doc.description = paragraph.text;
      // At the opening quotes (a comment above them covers it), spanning the paragraph's lines: the
      // docstring's text starts on the quotes' line, line for line.
      const last = docstring.at.line + paragraph.last;
      at.set("description", last > docstring.at.line ? { ...docstring.at, lastLine: last } : docstring.at);
    }
  }
  const parameters = parametersFromJsonSchema(doc.config_schema);
  if (parameters) {
    doc.parameters = parameters;
    at.set("parameters", at.get("config_schema")!);
  }
  // kiwi_mcp's "python" type is a Python script; its runtime is python_runtime unless named.
  if (doc.tool_type === "python") {
    doc.tool_type = "script";
    if (doc.executor === undefined) doc.executor = "python_runtime";
  }
  const signature = checkSignature(text);
  if (signature) warnings.push(signature);
  // A field's position; a pointer into its value, the value's own within the literal (a dict's
  // key, a list's element, a string written over lines spanning them) when the literal holds it,
  // else the field's (the parameters kiwi derives from config_schema have no place of their own).
  const locate = (pointer: string): Position | undefined => {
    const [, field = "", ...deeper] = pointer.split("/");
    const position = at.get(field);
    if (!position) return pointer === "" ? { line: 1, column: 1 } : undefined;
    if (deeper.length === 0) return position;
    const found = field === "parameters" ? undefined : inside.get(field)?.get(`/${deeper.join("/")}`);
    return found ? spanning(found.start, found) : { line: position.line, column: position.column };
  };
  return { value: doc, locate, warnings };
}

/** kiwi_mcp's executor spellings as a kiwi executor: `@subprocess` and `tool:x` name x. */
function fieldValue(field: string, value: CanonicalValue): CanonicalValue {
  if (field === "executor" && typeof value === "string") return value.replace(/^@/, "").replace(/^tool:/, "");
  return value;
}

/** The first paragraph of a docstring, its lines joined. */
function firstParagraph(docstring: string): { text: string; last: number } | undefined {
  const lines = docstring.split("\n").map((l) => l.trim());
  const start = lines.findIndex((l) => l !== "");
  if (start === -1) return undefined;
  const end = lines.findIndex((l, i) => i > start && l === "");
  const last = end === -1 ? lines.length - 1 : end - 1;
  return { text: lines.slice(start, last + 1).join(" "), last };
}

/**
 * The `# kiwi-mcp:validated:<timestamp>:<hash>` line (first line, or second after a shebang):
 * kiwi_mcp's hash is the SHA-256 of the file without its shebang and signature lines, written in
 * full (64 hex) or as its first 12 hex digits. A mismatch means the file changed after it was
 * signed: a warning, since kiwi's own integrity (the lock) is what gates execution.
 */
export function checkSignature(text: string): ParseProblem | undefined {
  // kiwi_mcp reads the file as Python text, whose universal newlines turn CRLF into LF: a file
  // saved with CRLF hashes as with LF, and its signature line does not end in a CR.
  const lines = text.split(/\r?\n/);
  const shebang = lines[0]?.startsWith("#!/") ?? false;
  const index = shebang ? 1 : 0;
  const line = lines[index];
  if (line === undefined || !line.startsWith("# kiwi-mcp:validated:")) return undefined;
  const position = { line: index + 1, column: 1 };
  const m = SIGNATURE.exec(line);
  const stored = m?.[2] ?? "";
  if (!m || !/^([0-9a-f]{12}|[0-9a-f]{64})$/.test(stored)) {
    return new ParseProblem("kiwi_mcp/signature-invalid", `the kiwi-mcp:validated line has no valid hash (${JSON.stringify(stored)}): expected 12 or 64 lowercase hex digits`, position, "re-sign the file with kiwi_mcp, or delete the line (kiwi's lock pins the file either way)");
  }
  const current = sha256Hex(lines.slice(index + 1).join("\n"));
  if (current.startsWith(stored)) return undefined;
  return new ParseProblem(
    "kiwi_mcp/signature-stale",
    `the file changed after it was signed on ${m[1]}: its kiwi-mcp:validated hash is ${stored}, the file now hashes to ${current.slice(0, stored.length)}`,
    position,
    "review the change, then re-sign it with kiwi_mcp or delete the line (kiwi's lock pins the file either way)",
  );
}
