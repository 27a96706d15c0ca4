// Text of a manifest file -> lossless document with positions, for every form: YAML, JSON, a
// Python docstring, a shell `# ---` block, Markdown front matter. Pure: text in, value out.
import { type CanonicalValue } from "../integrity/value.ts";
import { computeLineStarts, lineColumn, parseJsonLossless } from "../integrity/json-lossless.ts";
import { ParseProblem, type Position } from "../integrity/parse-problem.ts";
import { type IgnoreDirective, pythonIgnoreDirectives, yamlIgnoreDirectives } from "./ignore-comments.ts";
import { checkSignature, parsePythonModuleMetadata } from "./python-module.ts";
import { type ColumnOffset, TOO_DEEP_HINT, parseYaml } from "./yaml.ts";

/** Largest manifest kiwi parses; anything bigger is a finding, not a parse. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

export type ManifestSyntax = "yaml" | "json" | "python" | "shell" | "markdown";

export interface ParsedManifest {
  value: CanonicalValue;
  locate: (pointer: string) => Position | undefined;
  /** Non-fatal problems (duplicate JSON keys). */
  warnings: ParseProblem[];
  /** Its `# kiwi-ignore:` comments, when it has any (JSON has no comments). */
  ignores?: IgnoreDirective[];
  /**
   * The lines of the file an embedded manifest spans, its delimiters included (1-based): a script's
   * docstring or `# ---` block, a document's front matter. Absent when the manifest is the whole
   * file (YAML, JSON, a kiwi_mcp module). What lies outside is the file's code or body (kiwi check
   * reads its comments apart). Not kept by the parse cache: only a re-parse asks.
   */
  block?: { first: number; last: number };
}


/** Which syntax a file name implies, or undefined when the file is not a manifest candidate. */
export function syntaxOf(fileName: string): ManifestSyntax | undefined {
  const lower = fileName.toLowerCase();
  if (lower.endsWith(".yaml") || lower.endsWith(".yml")) return "yaml";
  if (lower.endsWith(".json")) return "json";
  if (lower.endsWith(".py")) return "python";
  if (lower.endsWith(".sh") || lower.endsWith(".bash")) return "shell";
  if (lower.endsWith(".md")) return "markdown";
  return undefined;
}

/**
 * Decodes manifest bytes, refusing what is not a text manifest: empty, oversized, binary, or not
 * UTF-8. Returns the text or throws ParseProblem.
 */
export function decodeManifest(bytes: Uint8Array): string {
  if (bytes.length === 0) throw new ParseProblem("parse/empty", "the file is empty", undefined, "write a manifest or delete the file");
  if (bytes.length > MAX_MANIFEST_BYTES) {
    throw new ParseProblem(
      "parse/too-large",
      `the file is ${bytes.length} bytes; manifests are capped at ${MAX_MANIFEST_BYTES} bytes`,
      undefined,
      "move large data into the tool's files and reference it from the manifest",
    );
  }
  if (bytes.indexOf(0) !== -1) throw new ParseProblem("parse/binary", "the file contains NUL bytes (binary data)", undefined, "a manifest must be UTF-8 text");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const bad = firstInvalidUtf8(bytes);
    throw new ParseProblem("parse/encoding", `the file is not valid UTF-8 (first bad byte at offset ${bad})`, undefined, "save the file as UTF-8");
  }
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, i + 1));
    } catch {
      // A truncated multi-byte sequence at the end of a prefix is fine; only report a true error.
      if (i + 4 >= bytes.length || (bytes[i]! & 0xc0) !== 0x80) return i;
    }
  }
  return 0;
}

/**
 * Parses a candidate manifest file's bytes. An empty script or Markdown file (an `__init__.py`)
 * holds no metadata and is no tool; an empty YAML or JSON manifest is a parse/empty error.
 */
export function parseManifestBytes(bytes: Uint8Array, syntax: ManifestSyntax): ParsedManifest | "none" {
  if (bytes.length === 0 && syntax !== "yaml" && syntax !== "json") return "none";
  return parseManifestText(decodeManifest(bytes), syntax);
}

/** Parses manifest text of the given syntax. Throws ParseProblem; `none` for scripts without metadata. */
export function parseManifestText(text: string, syntax: ManifestSyntax): ParsedManifest | "none" {
  switch (syntax) {
    case "json":
      return parseJsonManifest(text);
    case "yaml":
      return parseYamlManifest(text, 0, 0);
    case "python":
      return parsePythonMetadata(text);
    case "shell":
      return parseShellMetadata(text);
    case "markdown":
      return parseFrontMatter(text);
  }
}

function parseJsonManifest(text: string): ParsedManifest {
  let starts: number[] | undefined;
  const lineStarts = () => (starts ??= computeLineStarts(text));
  try {
    // Positions are only needed for findings: the same parse, keeping them, runs when one asks
    // (recording an offset per member was a third of parsing a cold tree's tool.json files).
    const result = parseJsonLossless(text, { positions: false });
    let offsets: Map<string, number> | undefined;
    const locate = (pointer: string): Position | undefined => {
      offsets ??= parseJsonLossless(text).offsets;
      // Walk up to the nearest pointer that has an offset (a missing field points at its parent).
      for (let p = pointer; ; p = p.slice(0, Math.max(0, p.lastIndexOf("/")))) {
        const offset = offsets.get(p);
        if (offset !== undefined) return lineColumn(lineStarts(), offset);
        if (p === "") return undefined;
      }
    };
    const warnings = result.warnings.map(
      (w) => new ParseProblem("parse/duplicate-key", w.message, lineColumn(lineStarts(), w.offset), "remove one of the two keys; the last one wins"),
    );
    return { value: result.value, locate, warnings };
  } catch (error) {
    if (error instanceof ParseProblem && error.offset !== undefined) {
      const hint = error.rule === "parse/syntax" ? "fix the JSON there: it allows no trailing comma, comment or unquoted key (or write the manifest as YAML)" : error.rule === "parse/too-deep" ? TOO_DEEP_HINT : error.hint;
      throw new ParseProblem(error.rule, `invalid JSON: ${error.message}`, lineColumn(lineStarts(), error.offset), hint);
    }
    throw error;
  }
}

function parseYamlManifest(text: string, lineOffset: number, columnOffset: ColumnOffset): ParsedManifest {
  try {
    const result = parseYaml(text, lineOffset, columnOffset);
    return withIgnores({ value: result.value, locate: result.locate, warnings: [] }, yamlIgnoreDirectives(text, lineOffset, columnOffset));
  } catch (error) {
    if (error instanceof RangeError) throw new ParseProblem("parse/too-deep", "invalid YAML: the document is nested too deeply", undefined, TOO_DEEP_HINT);
    throw error;
  }
}

/**
 * A Python script's metadata: YAML in the leading docstring (after a shebang, encoding line,
 * comments and blank lines). When the docstring has `---` lines, the YAML is between the first two.
 * Without it, kiwi_mcp's module variables (`__version__ = ...`, python-module.ts).
 */
function parsePythonMetadata(text: string): ParsedManifest | "none" {
  const lines = textLines(text);
  let i = 0;
  while (i < lines.length && (lines[i]!.trim() === "" || lines[i]!.trimStart().startsWith("#"))) i++;
  const open = lines[i]?.trimStart();
  // A raw or unicode docstring (r"""…""", common where the text holds backslashes) is a docstring too.
  const opening = open?.match(/^[rRuU]?("""|''')/);
  const quote = opening?.[1];
  if (!quote || !opening || open === undefined) return pythonModule(text);
  const startLine = i;
  const firstRest = open.slice(opening[0].length);
  const body: string[] = [];
  let closed = false;
  if (firstRest.includes(quote)) {
    body.push(firstRest.slice(0, firstRest.indexOf(quote)));
    closed = true;
  } else {
    if (firstRest.trim() !== "") body.push(firstRest);
    for (i = startLine + 1; i < lines.length; i++) {
      const line = lines[i]!;
      const end = line.indexOf(quote);
      if (end !== -1) {
        if (line.slice(0, end).trim() !== "") body.push(line.slice(0, end));
        closed = true;
        break;
      }
      body.push(line);
    }
  }
  // A docstring is a manifest only when it declares tool_type; anything else is prose (a helper's
  // "Usage: python helper.py --url URL", "helper2.py: shared utilities") and the file is no tool.
  if (!body.some((line) => DECLARES_TOOL_TYPE.test(line))) return pythonModule(text);
  if (!closed) throw new ParseProblem("parse/syntax", "the leading docstring is never closed", { line: startLine + 1, column: 1 }, `close it with ${quote} on the line after the manifest`);
  // Line numbers: body[0] is on startLine+2 unless text followed the opening quotes.
  const firstBodyLine = firstRest.trim() !== "" ? startLine : startLine + 1;
  // i is the closing quotes' line (the opening one when the docstring is one line).
  const parsed = spanning(fencedYaml(body, firstBodyLine, 0), startLine + 1, (firstRest.includes(quote) ? startLine : i) + 1);
  // kiwi_mcp signs a docstring tool as it signs a module-variables one: the same line, checked the same way.
  const signature = parsed === "none" ? undefined : checkSignature(text);
  if (signature && parsed !== "none") parsed.warnings = [...parsed.warnings, signature];
  return parsed;
}

/** kiwi_mcp's module variables; the whole module is the manifest, so any of its comments may ignore a finding. */
function pythonModule(text: string): ParsedManifest | "none" {
  const parsed = parsePythonModuleMetadata(text);
  return parsed === "none" ? parsed : withIgnores(parsed, pythonIgnoreDirectives(text));
}

/** An embedded manifest's parse with the lines it spans (ParsedManifest.block). */
function spanning(parsed: ParsedManifest | "none", first: number, last: number): ParsedManifest | "none" {
  if (parsed !== "none") parsed.block = { first, last };
  return parsed;
}

/** The parse with its ignore comments, when it has any (the field stays absent on almost every manifest). */
function withIgnores(parsed: ParsedManifest, ignores: IgnoreDirective[]): ParsedManifest {
  if (ignores.length > 0) parsed.ignores = ignores;
  return parsed;
}

/**
 * A file's lines without their line breaks, CRLF included: the embedded YAML is cut out line by line
 * and joined with LF, so a CR left at a line's end would end the last value of the block (a
 * Windows-saved SKILL.md's `name: pdf-tools` read as "pdf-tools\r") or break a flow collection.
 */
function textLines(text: string): string[] {
  return text.split(/\r?\n/);
}

/** A `tool_type:` key at the start of a line (any indentation): what makes a docstring a manifest. */
const DECLARES_TOOL_TYPE = /^\s*tool_type\s*:/;

/** A shell script's metadata: a comment block opened and closed by `# ---` lines. */
function parseShellMetadata(text: string): ParsedManifest | "none" {
  const lines = textLines(text);
  let i = 0;
  if (lines[0]?.startsWith("#!")) i++;
  while (i < lines.length && lines[i]!.trim() === "") i++;
  if (lines[i]?.trim() !== "# ---") return "none";
  const start = i + 1;
  const body: string[] = [];
  // Each line's prefix: `# ` or `#` alone (`#key: value`), so a finding's column is the file's.
  const prefixes: number[] = [];
  for (i = start; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "# ---") return spanning(parseYamlManifest(body.join("\n"), start, prefixes), start, i + 1);
    if (line === "" && i === lines.length - 1) break;
    if (!line.startsWith("#")) {
      throw new ParseProblem("parse/syntax", "the `# ---` metadata block is interrupted by a non-comment line", { line: i + 1, column: 1 }, "close the block with a `# ---` line");
    }
    const prefix = line.startsWith("# ") ? 2 : 1;
    body.push(line.slice(prefix));
    prefixes.push(prefix);
  }
  throw new ParseProblem("parse/syntax", "the `# ---` metadata block is never closed", { line: start, column: 1 }, "close the block with a `# ---` line");
}

/** Markdown front matter: the YAML between a leading `---` line and the next `---` line. */
function parseFrontMatter(text: string): ParsedManifest | "none" {
  const lines = textLines(text);
  if (lines[0]?.trim() !== "---") return "none";
  const end = lines.findIndex((l, idx) => idx > 0 && l.trim() === "---");
  if (end === -1) throw new ParseProblem("parse/syntax", "the front matter is never closed", { line: 1, column: 1 }, "close it with a `---` line");
  return spanning(parseYamlManifest(lines.slice(1, end).join("\n"), 1, 0), 1, end + 1);
}

function fencedYaml(body: string[], firstLineIndex: number, columnOffset: number): ParsedManifest | "none" {
  const fence = body.findIndex((l) => l.trim() === "---");
  if (fence !== -1) {
    const close = body.findIndex((l, idx) => idx > fence && l.trim() === "---");
    const slice = dedent(body.slice(fence + 1, close === -1 ? undefined : close));
    return parseYamlManifest(slice.lines.join("\n"), firstLineIndex + fence + 1, columnOffset + slice.indent);
  }
  const dedented = dedent(body);
  const text = dedented.lines.join("\n");
  if (text.trim() === "") return "none";
  return parseYamlManifest(text, firstLineIndex, columnOffset + dedented.indent);
}

/** The lines without their common indentation, and how many columns that was (findings point into the file). */
function dedent(lines: string[]): { lines: string[]; indent: number } {
  const indents = lines.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length);
  const min = indents.length ? Math.min(...indents) : 0;
  return { lines: lines.map((l) => l.slice(Math.min(min, l.length - l.trimStart().length))), indent: min };
}
