// YAML to lossless values with source positions. The yaml library parses; this file converts its
// AST itself because toJS() cannot tell `1.0` from `1` and mis-resolves `!!float 3`, and because
// alias expansion must be capped by the number of nodes produced (billion laughs), not of aliases.
import type { Alias, Document, Node } from "yaml";
import { escapePointer, unescapePointer } from "../integrity/canonical.ts";
import { type CanonicalValue, numberFromLexeme, setOwn } from "../integrity/value.ts";
import { MAX_DEPTH } from "../integrity/json-lossless.ts";
import { parseYamlFast } from "./yaml-fast.ts";
import { ParseProblem, type Position } from "../integrity/parse-problem.ts";

// The library is loaded on first use: evaluating it costs milliseconds that a warm `kiwi exec`,
// which reads parsed manifests from its memo, should not pay.
type YamlLib = typeof import("yaml");
let lib: YamlLib | undefined;
const yaml = (): YamlLib => (lib ??= require("yaml") as YamlLib);

/** What to do about a manifest nested past MAX_DEPTH. */
export const TOO_DEEP_HINT = `a manifest nests at most ${MAX_DEPTH} levels: flatten the data, or move it into a file of the tool`;

/** Most nodes one document may expand to, aliases included. */
export const MAX_YAML_NODES = 100_000;

export interface YamlParseResult {
  value: CanonicalValue;
  locate: (pointer: string) => Position | undefined;
}


const FLOAT_TAG = "tag:yaml.org,2002:float";

/**
 * The yaml library reports a mis-indented key on the line before it ("Nested mappings are not
 * allowed in compact mappings" at `key: value`, when the next line is indented deeper) or with a
 * message that never says "indentation". Finds the line that is actually off and says so.
 */
function badIndentation(text: string, message: string, line: number, lineOffset: number): { line: number; column: number; message: string; hint: string } | undefined {
  const lines = text.split("\n");
  // Messages name lines of the file (an embedded manifest starts below the script's first line).
  const n = (l: number) => l + lineOffset;
  const indentOf = (s: string) => s.length - s.trimStart().length;
  const content = (s: string | undefined) => s !== undefined && s.trim() !== "" && !s.trimStart().startsWith("#");
  if (/^Nested mappings are not allowed in compact mappings/.test(message)) {
    const before = lines[line - 1];
    if (!content(before)) return undefined;
    for (let i = line; i < lines.length; i++) {
      if (!content(lines[i])) continue;
      if (indentOf(lines[i]!) <= indentOf(before!)) return undefined;
      return {
        line: i + 1,
        column: indentOf(lines[i]!) + 1,
        message: `bad indentation: line ${n(i + 1)} is indented ${spaces(indentOf(lines[i]!))}, deeper than line ${n(line)} (${spaces(indentOf(before!))}), whose value is already on that line`,
        hint: `${indentOf(before!) === 0 ? `remove the indentation of line ${n(i + 1)}` : `indent line ${n(i + 1)} by ${spaces(indentOf(before!))}`} to make it a sibling of line ${n(line)}`,
      };
    }
    return undefined;
  }
  if (/^All mapping items must start at the same column/.test(message) && content(lines[line - 1])) {
    const here = indentOf(lines[line - 1]!);
    // The keys above it, up to their parent: the nearest content line indented no deeper than it.
    let siblingIndent: number | undefined;
    for (let i = line - 2; i >= 0; i--) {
      if (!content(lines[i])) continue;
      if (indentOf(lines[i]!) <= here) break;
      siblingIndent = indentOf(lines[i]!);
    }
    return {
      line,
      column: here + 1,
      message: `bad indentation: line ${n(line)} is indented ${spaces(here)}${siblingIndent === undefined ? "" : `, but the keys above it in the same mapping are indented ${spaces(siblingIndent)}`}`,
      hint: siblingIndent === undefined ? "indent each key of a mapping by the same number of spaces" : `indent line ${n(line)} by ${spaces(siblingIndent)}, or the keys above it by ${spaces(here)}`,
    };
  }
  return undefined;
}

function spaces(n: number): string {
  return n === 1 ? "1 space" : `${n} spaces`;
}

/** What to do about the yaml library's syntax errors, by its error code. */
const SYNTAX_HINTS: Readonly<Record<string, string>> = {
  TAB_AS_INDENT: "indent with spaces: YAML does not allow tabs in indentation",
  MISSING_CHAR: "add the closing character the message names, on the value's own line or after its last one",
  BAD_INDENT: "close the [ or { on the line it opens, or indent its continuation lines deeper than the key",
  BLOCK_AS_IMPLICIT_KEY: 'quote the value ("a: b"): a colon followed by a space starts a mapping',
  BAD_SCALAR_START: "quote the value: a plain value cannot start with @ or `",
  BAD_DQ_ESCAPE: "write the backslash twice, or single-quote the value, where no escape applies",
  MULTILINE_IMPLICIT_KEY: "write each key on one line, followed by a colon",
};

/**
 * How far right of the YAML's own columns its text sits in the file: one width for every line (a
 * docstring's indentation), or one per line of the text (a shell block, whose lines drop `# ` or
 * just `#`).
 */
export type ColumnOffset = number | readonly number[];

/** The column offset of the text's line `line` (1-based). */
export function columnShift(offset: ColumnOffset, line: number): number {
  return typeof offset === "number" ? offset : (offset[line - 1] ?? offset[offset.length - 1] ?? 0);
}

/** Parses one YAML document; `lineOffset` and `columnOffset` shift positions when the YAML is embedded in a script. */
export function parseYaml(text: string, lineOffset = 0, columnOffset: ColumnOffset = 0): YamlParseResult {
  const fast = parseYamlFast(text);
  if (fast !== undefined) {
    // Positions are only needed for findings: the reference parse runs when one asks.
    let reference: YamlParseResult | undefined;
    return { value: fast, locate: (pointer) => (reference ??= parseYamlReference(text, lineOffset, columnOffset)).locate(pointer) };
  }
  return parseYamlReference(text, lineOffset, columnOffset);
}

/** The yaml library's parse: the reference every fast-path result must equal. */
export function parseYamlReference(text: string, lineOffset = 0, columnOffset: ColumnOffset = 0): YamlParseResult {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  // merge: `<<: *defaults` merges as PyYAML (kiwi_mcp's reader), js-yaml and Bun.YAML merge it.
  const doc = parseDocument(text, { intAsBigInt: true, lineCounter, merge: true, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined): Position | undefined => {
    if (offset === undefined) return undefined;
    const p = lineCounter.linePos(offset);
    return { line: p.line + lineOffset, column: p.col + columnShift(columnOffset, p.line) };
  };
  const first = doc.errors[0];
  if (first) {
    // The yaml library reports its own stack overflow on absurd nesting as a parse error.
    const rule = first.code === "DUPLICATE_KEY" ? "parse/duplicate-key" : /Maximum call stack/i.test(first.message) ? "parse/too-deep" : "parse/syntax";
    const message = first.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    const where = at(first.pos[0]);
    const indent = rule === "parse/syntax" && where ? badIndentation(text, message, where.line - lineOffset, lineOffset) : undefined;
    if (indent) throw new ParseProblem(rule, `invalid YAML: ${indent.message}`, { line: indent.line + lineOffset, column: indent.column + columnShift(columnOffset, indent.line) }, indent.hint);
    if (first.code === "MULTIPLE_DOCS") {
      // The library's words name its own API ("please use YAML.parseAllDocuments()").
      throw new ParseProblem(rule, `invalid YAML: a manifest is one YAML document, and another one starts at line ${where?.line ?? "?"}`, where, 'remove that "---" line and what follows it, or move the second document into a manifest of its own');
    }
    throw new ParseProblem(rule, `invalid YAML: ${message}`, where, rule === "parse/duplicate-key" ? "remove one of the two keys" : (SYNTAX_HINTS[first.code] ?? "fix the YAML at that line and column"));
  }
  const budget = { nodes: 0 };
  const value = convert(doc, doc.contents as Node | null, "", 0, budget, at);
  return { value, locate: (pointer) => locateYaml(doc, pointer, at) };
}

function convert(
  doc: Document,
  node: Node | null | undefined,
  pointer: string,
  depth: number,
  budget: { nodes: number },
  at: (offset: number | undefined) => Position | undefined,
): CanonicalValue {
  if (++budget.nodes > MAX_YAML_NODES) {
    throw new ParseProblem("parse/alias-bomb", `invalid YAML: the document expands to more than ${MAX_YAML_NODES} nodes (alias bomb?)`, at(node?.range?.[0]), "YAML aliases may not expand the document past the cap; write the data out");
  }
  if (depth > MAX_DEPTH) throw new ParseProblem("parse/too-deep", `invalid YAML: nesting deeper than ${MAX_DEPTH} levels`, at(node?.range?.[0]), TOO_DEEP_HINT);
  if (node === null || node === undefined) return null;
  if (yaml().isAlias(node)) return convert(doc, aliasTarget(doc, node as Alias, at), pointer, depth + 1, budget, at);
  if (yaml().isScalar(node)) {
    const v = node.value;
    if (typeof v === "bigint") return numberFromLexeme(false, v);
    if (typeof v === "number") {
      if (!Number.isFinite(v)) {
        throw new ParseProblem("parse/non-finite", `invalid YAML: ${pointer || "the document"} is ${v}, which is not a JSON number`, at(node.range?.[0]), "write a finite number, or quote the value to keep it as text: '.inf'");
      }
      return numberFromLexeme(true, v);
    }
    if (node.tag === FLOAT_TAG && typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) {
      return numberFromLexeme(true, Number(v));
    }
    if (v === null || typeof v === "boolean" || typeof v === "string") return v;
    if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
    // Anything else a tag made of it (a !!timestamp's Date, whose String() follows the machine's
    // time zone and so would change the tool's hash from one machine to the next): as written.
    return typeof node.source === "string" ? node.source : String(v);
  }
  if (yaml().isSeq(node)) {
    // An !!omap's or !!pairs' items are pairs: each as the one-key mapping it is written as.
    return node.items.map((item, i) => convert(doc, yaml().isPair(item) ? mappingOf(doc, item) : (item as Node), `${pointer}/${i}`, depth + 1, budget, at));
  }
  if (yaml().isMap(node)) {
    const out: { [key: string]: CanonicalValue } = {};
    for (const pair of node.items) {
      if (!yaml().isPair(pair) || isMergeKey(pair.key)) continue;
      const keyNode = pair.key as Node | null;
      const keyTarget = keyNode && yaml().isAlias(keyNode) ? aliasTarget(doc, keyNode as Alias, at) : keyNode;
      // A manifest is JSON: its keys are text. A list or mapping as a key (`? [a, b]`) read as
      // "[object Object]", two such keys as one.
      if (keyTarget && (yaml().isMap(keyTarget) || yaml().isSeq(keyTarget))) {
        throw new ParseProblem("parse/syntax", `invalid YAML: a key must be text, not a ${yaml().isMap(keyTarget) ? "mapping" : "list"}`, at(keyNode?.range?.[0]), "write the key as text (quote it if it holds [ ] { } or a colon)");
      }
      const key = keyText(doc, keyTarget);
      // The yaml library compares keys by value, so `1:` and `"1":` (or `~:` and `null:`) pass its
      // uniqueness check, but both are the key "1" here: the second would replace the first.
      if (Object.hasOwn(out, key)) throw new ParseProblem("parse/duplicate-key", `invalid YAML: the key ${JSON.stringify(key)} appears twice in one mapping, written two ways`, at(keyNode?.range?.[0]), "remove one of the two keys");
      setOwn(out, key, convert(doc, pair.value as Node | null, `${pointer}/${escapePointer(key)}`, depth + 1, budget, at));
    }
    // Merged keys never replace the mapping's own, and an earlier source's win over a later one's.
    for (const source of mergeSources(doc, node, at)) {
      const merged = convert(doc, source, pointer, depth + 1, budget, at) as { [key: string]: CanonicalValue };
      for (const key of Object.keys(merged)) if (!Object.hasOwn(out, key)) setOwn(out, key, merged[key]!);
    }
    return out;
  }
  return null;
}

/**
 * The node an alias stands for. The yaml library leaves an alias to no anchor (`*nope`, or one whose
 * anchor comes after it) unresolved until toJS(), which kiwi does not call: it would read as null.
 */
function aliasTarget(doc: Document, node: Alias, at: (offset: number | undefined) => Position | undefined): Node {
  const target = node.resolve(doc) as Node | undefined;
  if (target !== undefined) return target;
  throw new ParseProblem("parse/syntax", `invalid YAML: the alias *${node.source} names no anchor before it`, at(node.range?.[0]), `define the anchor (&${node.source}) on a value above the alias, or write the value out`);
}

/** One pair as a mapping of its own (an !!omap or !!pairs item). */
function mappingOf(doc: Document, pair: import("yaml").Pair): Node {
  const map = new (yaml().YAMLMap)(doc.schema);
  map.items.push(pair);
  return map;
}

/** A plain `<<` key, which the library (with merge on) resolves to a symbol; a quoted "<<" is a string. */
function isMergeKey(key: unknown): boolean {
  return yaml().isScalar(key) && typeof key.value === "symbol";
}

/**
 * The mappings a mapping's `<<` keys merge in, in order (a `<<: [*a, *b]` list in its order). YAML's
 * merge type takes a mapping, an alias to one, or a list of those; anything else is parse/syntax.
 */
function mergeSources(doc: Document, map: import("yaml").YAMLMap, at: (offset: number | undefined) => Position | undefined): Node[] {
  const out: Node[] = [];
  for (const pair of map.items) {
    if (!yaml().isPair(pair) || !isMergeKey(pair.key)) continue;
    const deref = (n: Node | null | undefined) => (n && yaml().isAlias(n) ? aliasTarget(doc, n as Alias, at) : n);
    const value = deref(pair.value as Node | null);
    for (const item of yaml().isSeq(value) ? value.items.map((i) => deref(i as Node | null)) : [value]) {
      if (!item || !yaml().isMap(item)) {
        throw new ParseProblem("parse/syntax", "invalid YAML: a merge key (<<) takes a mapping, an alias to one, or a list of them", at(((item ?? pair.key) as Node).range?.[0]), "write <<: *anchor, where &anchor names a mapping");
      }
      out.push(item);
    }
  }
  return out;
}

function keyText(doc: Document, node: Node | null): string {
  if (node === null || node === undefined) return "";
  const target = yaml().isAlias(node) ? ((node as Alias).resolve(doc) as Node | undefined) : node;
  if (target && yaml().isScalar(target)) {
    const v = target.value;
    return v === null ? "null" : String(v);
  }
  return String(target?.toString() ?? "");
}

function locateYaml(doc: Document, pointer: string, at: (offset: number | undefined) => Position | undefined): Position | undefined {
  if (pointer === "") return at((doc.contents as Node | null)?.range?.[0] ?? 0);
  const segments = pointer
    .slice(1)
    .split("/")
    .map(unescapePointer);
  let node = doc.contents as Node | null | undefined;
  let found: number | undefined;
  let reached = 0;
  for (const seg of segments) {
    if (node && yaml().isAlias(node)) node = (node as Alias).resolve(doc) as Node | undefined;
    if (node && yaml().isMap(node)) {
      const pair = pairOf(doc, node, seg, at);
      if (!pair) break;
      found = (pair.key as Node | null)?.range?.[0] ?? found;
      node = pair.value as Node | null;
    } else if (node && yaml().isSeq(node)) {
      const entry = node.items[Number(seg)];
      if (!entry) break;
      // An !!omap item is a pair: it starts at its key.
      const item = yaml().isPair(entry) ? mappingOf(doc, entry) : (entry as Node);
      found = (yaml().isPair(entry) ? (entry.key as Node | null)?.range?.[0] : item.range?.[0]) ?? found;
      node = item;
    } else break;
    reached++;
  }
  const position = at(found ?? (doc.contents as Node | null)?.range?.[0]);
  // A string written over lines (written here, not through an alias): where it ends. The range's
  // end is past the value (a block scalar's ends after its last line break), so its last character.
  const range = reached === segments.length && node && yaml().isScalar(node) ? node.range : undefined;
  const last = range && range[1] > range[0] ? at(range[1] - 1) : undefined;
  if (position && last && last.line > position.line) position.lastLine = last.line;
  return position;
}

/** The pair that gives a mapping its key: its own, else the first merge source's that has it (where the value is written). */
function pairOf(doc: Document, map: import("yaml").YAMLMap, key: string, at: (offset: number | undefined) => Position | undefined): import("yaml").Pair | undefined {
  const own = map.items.find((p) => yaml().isPair(p) && !isMergeKey(p.key) && keyText(doc, p.key as Node) === key);
  if (own) return own as import("yaml").Pair;
  for (const source of mergeSources(doc, map, at)) {
    const found = pairOf(doc, source as import("yaml").YAMLMap, key, at);
    if (found) return found;
  }
  return undefined;
}
