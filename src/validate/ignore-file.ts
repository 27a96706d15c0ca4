// The project's ignore file, `.ai/kiwi-ignore.yaml` (manifest/model.ts IGNORE_FILE): the findings a
// project lets through where no `# kiwi-ignore:` comment can say so, as .gitleaksignore and
// .trivyignore.yaml do. JSON has no comments (a tool.json, an Agent Plugin's mcp.json), a remote
// tool is its publisher's to edit, and some warnings a project sets aside everywhere:
//
//   ignore:
//     - rule: security/risky-combination
//       tool: deploy
//       reason: runs the release script over ssh by design
//
// Each entry names one rule and narrows it by tool, file, JSON pointer and line (a finding must
// match every one given); ignores.ts lets through what an entry matches. An entry with anything
// wrong in it ignores nothing and is an ignore/invalid warning at its line, as a comment with a typo
// is. An entry may end on a date (`expires: 2027-03-31`, as .trivyignore.yaml's expired_at and
// .snyk's expires): from that day (UTC) on it ignores nothing and is ignore/expired, so what it let
// through is back in front of someone. Pure: the text (and the day it was read) comes from
// manifest/ignore-file-io.ts.
import { fileFinding, fileOnDisk } from "../findings/finding.ts";
import { RULES, isIgnorable } from "../findings/rules.ts";
import type { Finding } from "../findings/verdict.ts";
import { escapePointer } from "../integrity/canonical.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";
import { isRecord } from "../integrity/value.ts";
import { IGNORE_FILE, type IgnoreFileText } from "../manifest/model.ts";
import { parseYaml } from "../manifest/yaml.ts";
import { suggest } from "../resolve/suggest.ts";

/** One entry of the ignore file, checked: it names an ignorable rule and well-formed narrowings. */
export interface IgnoreEntry {
  /** Where the entry starts in the ignore file (1-based): its own findings point there. */
  line: number;
  column: number;
  rule: string;
  /** The tool id a finding must be about. */
  tool?: string;
  /** The project-relative file a finding must be in (an Agent Plugin server's: its mcp.json). */
  file?: string;
  /** The JSON pointer a finding must name, as `kiwi check --json` prints it. */
  pointer?: string;
  /** The line of `file` a finding must be at. */
  atLine?: number;
  reason?: string;
  /** The day (YYYY-MM-DD, UTC) from which it ignores nothing. */
  expires?: string;
}

/** The keys an entry may have (`line` is read into atLine). */
const ENTRY_KEYS = ["rule", "tool", "file", "pointer", "line", "reason", "expires"] as const;

const SHAPE = 'the file is a mapping whose one key, "ignore", lists entries of rule, tool, file, pointer, line, reason and expires';

/**
 * The file's entries, those whose day has come (`expired`: they ignore nothing), and what is wrong
 * with it (ignore/invalid and ignore/expired warnings, each at its place).
 */
export function parseIgnoreFile(file: IgnoreFileText): { entries: IgnoreEntry[]; expired: IgnoreEntry[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const expired: IgnoreEntry[] = [];
  const nothing = (message: string, hint: string, position?: { line: number; column: number }) => {
    findings.push(fileFinding("ignore/invalid", IGNORE_FILE, `${message}, so it ignores nothing`, hint, position));
    return { entries: [], expired, findings };
  };
  if (file.text === undefined) return nothing(`the ignore file ${file.unreadable ?? "cannot be read"}`, "make it a regular UTF-8 file, or remove it");
  let parsed: ReturnType<typeof parseYaml>;
  try {
    parsed = parseYaml(file.text);
  } catch (error) {
    if (!(error instanceof ParseProblem)) throw error;
    return nothing(`the ignore file is not valid YAML (${error.message.replace(/^invalid YAML: /, "")})`, error.hint ?? `fix the YAML there; ${SHAPE}`, error.position);
  }
  const { value, locate } = parsed;
  // An empty file, or one of comments only, ignores nothing and says nothing wrong.
  if (value === null) return { entries: [], expired, findings };
  if (!isRecord(value)) return nothing("the ignore file is not a mapping", SHAPE, locate(""));
  for (const key of Object.keys(value)) {
    if (key === "ignore") continue;
    const near = suggest(key, ["ignore"]);
    findings.push(fileFinding("ignore/invalid", IGNORE_FILE, `the ignore file has a key "${key}", which kiwi does not read`, near ? `did you mean "${near}"?` : 'its one key is "ignore", a list of entries', locate(`/${escapePointer(key)}`)));
  }
  const list = value.ignore;
  if (list === undefined || list === null) return { entries: [], expired, findings };
  if (!Array.isArray(list)) return nothing('"ignore" is not a list', `list one entry per finding under it, each "- rule: …" with the keys that narrow it`, locate("/ignore"));
  const entries: IgnoreEntry[] = [];
  // Where each entry starts, from the lines when the list has the usual block shape: the yaml
  // library's positions (what locate asks) cost ~50 ms for a baseline of a thousand entries.
  const starts = blockItemStarts(file.text, list.length);
  for (let i = 0; i < list.length; i++) {
    const at = `/ignore/${i}`;
    const where = starts?.[i] ?? locate(at) ?? locate("/ignore");
    const problems = entryProblems(list[i], (key) => locate(`${at}/${key}`) ?? where);
    if (problems.length > 0) {
      for (const p of problems) findings.push(fileFinding("ignore/invalid", IGNORE_FILE, `entry ${i + 1} ${p.message}, so it ignores nothing`, p.hint, p.position ?? where));
      continue;
    }
    const entry = toEntry(list[i] as Record<string, unknown>, where ?? { line: 1, column: 1 });
    if (entry.expires !== undefined && entry.expires <= file.day) {
      findings.push(fileFinding("ignore/expired", IGNORE_FILE, `entry ${i + 1} (${entry.rule}${entry.tool === undefined ? "" : `, tool ${entry.tool}`}) expired on ${entry.expires}, so it ignores nothing`, "fix what it let through (kiwi check shows it again), or, if its reason still holds, give it a later date", { line: entry.line, column: entry.column }));
      expired.push(entry);
      continue;
    }
    entries.push(entry);
  }
  return { entries, expired, findings };
}

/** Whether an entry lets `f` through: its rule, and each narrowing it gives. */
export function entryMatches(e: IgnoreEntry, f: Finding): boolean {
  if (e.rule !== f.rule) return false;
  if (e.tool !== undefined && f.tool !== e.tool) return false;
  if (e.file !== undefined && f.file !== e.file && fileOnDisk(f.file) !== e.file) return false;
  if (e.pointer !== undefined && f.pointer !== e.pointer) return false;
  return e.atLine === undefined || f.line === e.atLine;
}

/**
 * Where each item of the top-level `ignore:` list starts (its mapping, after the `- `), read from the
 * lines: the list in block style right under `ignore:` at column 1, each item a line `<indent>- `.
 * No continuation can start that way (a multi-line value is indented deeper than its key, which is
 * deeper than the dash). Undefined unless exactly `count` items are found: the caller asks the parser.
 */
function blockItemStarts(text: string, count: number): { line: number; column: number }[] | undefined {
  const lines = text.split("\n");
  const key = lines.findIndex((l) => /^ignore:[ \t]*(?:#.*)?$/.test(l));
  if (key === -1) return undefined;
  const out: { line: number; column: number }[] = [];
  let indent: string | undefined;
  for (let i = key + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(?:#.*)?$/.test(line)) continue;
    indent ??= /^( *)- /.exec(line)?.[1];
    if (indent === undefined) return undefined;
    if (line.startsWith(`${indent}- `)) out.push({ line: i + 1, column: indent.length + 3 });
    else if (line.length - line.trimStart().length <= indent.length) break; // the next top-level key
  }
  return out.length === count ? out : undefined;
}

interface Problem {
  message: string;
  hint: string;
  position?: { line: number; column: number };
}

/** Everything wrong with one entry (each at its key when it has one). */
function entryProblems(raw: unknown, at: (key: string) => { line: number; column: number } | undefined): Problem[] {
  if (!isRecord(raw)) return [{ message: "is not a mapping", hint: "write each entry as rule: plus the keys that narrow it (tool, file, pointer, line) and a reason" }];
  const problems: Problem[] = [];
  for (const key of Object.keys(raw)) {
    if ((ENTRY_KEYS as readonly string[]).includes(key)) continue;
    const near = suggest(key, ENTRY_KEYS);
    problems.push({ message: `has a key "${key}", which kiwi does not read`, hint: near ? `did you mean "${near}"?` : `an entry's keys are ${ENTRY_KEYS.join(", ")}`, position: at(escapePointer(key)) });
  }
  const rule = raw.rule;
  if (rule === undefined) problems.push({ message: "names no rule", hint: "name the rule it lets through, as kiwi check prints it: rule: security/risky-combination" });
  else if (typeof rule !== "string") problems.push({ message: "has a rule that is not a string", hint: "write the rule id as kiwi check prints it: rule: security/risky-combination", position: at("rule") });
  else {
    const wrong = ruleProblem(rule);
    if (wrong) problems.push({ ...wrong, position: at("rule") });
  }
  for (const key of ["tool", "file", "reason"] as const) {
    const v = raw[key];
    if (v !== undefined && (typeof v !== "string" || v.trim() === "")) problems.push({ message: `has a ${key} that is not a non-empty string`, hint: key === "tool" ? "name the tool by its id, as kiwi check prints it" : key === "file" ? "name the file by its path from the project root, as kiwi check prints it" : "say why in words", position: at(key) });
  }
  if (typeof raw.file === "string" && raw.file.trim() !== "" && !isProjectPath(normalizePath(raw.file))) {
    problems.push({ message: `names the file "${raw.file}", which is not a path inside the project`, hint: "name the file by its path from the project root, as kiwi check prints it (.ai/tools/…)", position: at("file") });
  }
  const pointer = raw.pointer;
  if (pointer !== undefined && (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/")))) {
    problems.push({ message: "has a pointer that is not a JSON pointer", hint: 'write it as kiwi check --json prints it: "/requires" or "/config/env/TOKEN" ("" is the whole manifest)', position: at("pointer") });
  }
  const line = raw.line;
  if (line !== undefined) {
    if (typeof line !== "number" || !Number.isInteger(line) || line < 1) problems.push({ message: "has a line that is not a positive whole number", hint: "write the line kiwi check prints after the file (path:line:column)", position: at("line") });
    else if (raw.file === undefined) problems.push({ message: "names a line but no file", hint: "name the file the line is in (file: .ai/tools/…), as kiwi check prints it", position: at("line") });
  }
  const expires = raw.expires;
  if (expires !== undefined && (typeof expires !== "string" || !isDay(expires))) {
    problems.push({ message: "has an expires that is not a date", hint: "write the day (UTC) from which it should ignore nothing, as YYYY-MM-DD: expires: 2027-03-31", position: at("expires") });
  }
  if (problems.length === 0 && raw.tool === undefined && raw.file === undefined && pointer !== undefined) {
    problems.push({ message: "names a pointer but no tool or file", hint: "name the tool (or the file) whose manifest the pointer is in", position: at("pointer") });
  }
  return problems;
}

/**
 * Why an ignore entry or comment cannot name `rule` (the message goes on from "the entry" or "the
 * comment"), or undefined when it can.
 */
export function ruleProblem(rule: string): { message: string; hint: string } | undefined {
  if (!(rule in RULES)) {
    const near = suggest(rule, Object.keys(RULES));
    return { message: `names ${rule}, which is not one of kiwi's rules`, hint: near ? `did you mean ${near}?` : "the README's rule table lists every rule id" };
  }
  if (rule.startsWith("ignore/")) return { message: `names ${rule}, which reports on kiwi-ignore comments and entries themselves: it cannot be ignored`, hint: "fix or remove the comment or entry it reports" };
  if (!isIgnorable(rule)) return { message: `names ${rule}, an error kiwi cannot lock or run past: it cannot be ignored`, hint: "fix what it reports; only warnings, infos and errors about how a value looks (an example key) can be ignored" };
  return undefined;
}

function toEntry(raw: Record<string, unknown>, at: { line: number; column: number }): IgnoreEntry {
  const entry: IgnoreEntry = { line: at.line, column: at.column, rule: raw.rule as string };
  if (typeof raw.tool === "string") entry.tool = raw.tool.trim();
  if (typeof raw.file === "string") entry.file = normalizePath(raw.file);
  if (typeof raw.pointer === "string") entry.pointer = raw.pointer;
  if (typeof raw.line === "number") entry.atLine = raw.line;
  if (typeof raw.reason === "string") entry.reason = raw.reason.trim();
  if (typeof raw.expires === "string") entry.expires = raw.expires;
  return entry;
}

/**
 * Why `day` cannot be an entry's `expires` written on `today` (both YYYY-MM-DD, UTC): not a date, or
 * a day that has come, so the entry would ignore nothing. Undefined when it can.
 */
export function expiryProblem(day: string, today: string): string | undefined {
  if (!isDay(day)) return `"${day}" is not a date (YYYY-MM-DD)`;
  return day <= today ? `${day} is not after today (${today}, UTC): an entry that expires then ignores nothing` : undefined;
}

/** A calendar day written YYYY-MM-DD (2027-02-30 is none). */
function isDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith(text);
}

/** A path as findings name files: `/`-separated, without a leading `./`. */
function normalizePath(path: string): string {
  return path.trim().replace(/\\/g, "/").replace(/^(\.\/)+/, "");
}

function isProjectPath(path: string): boolean {
  return path !== "" && !path.startsWith("/") && !/^[A-Za-z]:/.test(path) && !path.split("/").includes("..");
}

/** An entry as `kiwi check --add-ignores` writes it, keys in the order a person reads them. */
export interface NewEntry {
  rule: string;
  tool?: string;
  file?: string;
  pointer?: string;
  line?: number;
  reason: string;
  expires?: string;
}

/**
 * One entry per finding kiwi may let through (isIgnorable), without repeats: by tool and pointer
 * when the finding has both (a pointer stays put when lines move), else by its file (an Agent
 * Plugin server's: its mcp.json) and line, with its tool when it has one. `expires`: the day each
 * stops ignoring (expiryProblem says whether it is one).
 */
export function entriesFor(findings: readonly Finding[], reason: string, expires?: string): NewEntry[] {
  const out: NewEntry[] = [];
  const seen = new Set<string>();
  for (const f of findings) {
    if (!isIgnorable(f.rule, f.severity)) continue;
    const entry: NewEntry =
      f.tool !== undefined && f.pointer !== undefined
        ? { rule: f.rule, tool: f.tool, pointer: f.pointer, reason }
        : { rule: f.rule, ...(f.tool === undefined ? {} : { tool: f.tool }), file: fileOnDisk(f.file), ...(f.line === undefined ? {} : { line: f.line }), reason };
    if (expires !== undefined) entry.expires = expires;
    const key = JSON.stringify(entry);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
  }
  return out;
}

/** A finding kiwi check --add-ignores adds no entry for: an entry that expired names it. */
export interface HeldFinding {
  finding: Finding;
  /** The first expired entry that names it. */
  entry: IgnoreEntry;
}

/**
 * The findings an expired entry names, set apart from the rest: a new entry for one would quietly
 * undo the end date someone gave it, so the person renews that entry (or fixes the finding) instead.
 */
export function holdExpired(findings: readonly Finding[], expired: readonly IgnoreEntry[]): { open: Finding[]; held: HeldFinding[] } {
  const open: Finding[] = [];
  const held: HeldFinding[] = [];
  for (const finding of findings) {
    const entry = isIgnorable(finding.rule, finding.severity) ? expired.find((e) => entryMatches(e, finding)) : undefined;
    if (entry === undefined) open.push(finding);
    else held.push({ finding, entry });
  }
  return { open, held };
}

/**
 * The ignore file's text with `entries` added at the end of its list, everything it held (its
 * comments too) kept; `text` undefined is a new file. A problem instead when the text is not a
 * file kiwi can add to as it stands (not YAML, not a mapping, an "ignore" that is not a list).
 */
export function withEntries(text: string | undefined, entries: readonly NewEntry[]): { text: string } | { problem: string } {
  const { parseDocument, isScalar, isSeq } = require("yaml") as typeof import("yaml");
  const doc: import("yaml").Document = parseDocument(text ?? "# Findings this project lets through on purpose (kiwi check reads this file): say why in each reason.\n", { uniqueKeys: true });
  // The library's first line, without the colon that introduces its excerpt of the text.
  if (doc.errors.length > 0) return { problem: `it is not valid YAML (${doc.errors[0]!.message.split("\n")[0]!.replace(/:$/, "")})` };
  if (doc.contents === null) doc.contents = doc.createNode({ ignore: [] });
  // toJS() throws where parsing did not (an alias to no anchor, aliases past the library's cap).
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (error) {
    return { problem: `it is not valid YAML (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!isRecord(value)) return { problem: "it is not a mapping" };
  const empty = doc.get("ignore", true);
  if (empty === undefined || (isScalar(empty) && empty.value === null)) {
    // `ignore:` with nothing under it but a comment: the comment goes with the list that replaces it.
    const list = doc.createNode([]);
    if (isScalar(empty)) {
      list.commentBefore = empty.commentBefore ?? empty.comment;
    }
    doc.set("ignore", list);
  }
  const list = doc.get("ignore");
  if (!isSeq(list)) return { problem: '"ignore" is not a list' };
  list.flow = false;
  for (const e of entries) list.items.push(doc.createNode(e));
  // The library writes LF and no byte-order mark: a file saved with CRLF (or a BOM) keeps them, so
  // the entries added are the only lines of its diff.
  const out = doc.toString({ lineWidth: 0 });
  const crlf = text !== undefined && text.includes("\r\n") ? out.replace(/\r?\n/g, "\r\n") : out;
  return { text: text?.startsWith("\ufeff") ? `\ufeff${crlf}` : crlf };
}
