// Lets through the findings that `# kiwi-ignore:` comments (manifest/ignore-comments.ts) and the
// project's ignore file (ignore-file.ts) name: one of an ignorable rule (findings/rules.ts
// isIgnorable), for a comment on the line it covers in the same manifest, for an entry wherever
// its tool, file, pointer and line match. What a comment or an entry names but cannot ignore, and
// one that lets nothing through, become findings of their own (ignore/invalid, ignore/unused), so
// neither a typo nor one left behind hides anything quietly. Pure.
import type { Finding, IgnoredFinding } from "../findings/verdict.ts";
import { fileFinding } from "../findings/finding.ts";
import { isIgnorable, ruleInfo } from "../findings/rules.ts";
import { IGNORE_FILE } from "../manifest/model.ts";
import type { IgnoreDirective } from "../manifest/ignore-comments.ts";
import { type IgnoreEntry, entryMatches, ruleProblem } from "./ignore-file.ts";

/** The ignore comments of one manifest in scope, and the tool it belongs to. */
export interface IgnoreComments {
  file: string;
  tool: string;
  directives: IgnoreDirective[];
}

/**
 * An entry of the ignore file as a check applies it: `report` when the check sees everything the
 * entry could match, so an entry that let nothing through is worth a warning (a check of one tool
 * says nothing of an entry about another).
 */
export interface ScopedIgnoreEntry extends IgnoreEntry {
  report: boolean;
}

/** The findings that stand, those let through, and the comments' and entries' own findings among the first. */
export function applyIgnores(findings: readonly Finding[], comments: readonly IgnoreComments[], entries: readonly ScopedIgnoreEntry[] = []): { kept: Finding[]; ignored: IgnoredFinding[] } {
  if (comments.length === 0 && entries.length === 0) return { kept: [...findings], ignored: [] };
  // A script manifest's file has two lists: its manifest's comments and those of its code.
  const byFile = new Map<string, IgnoreDirective[]>();
  for (const c of comments) byFile.set(c.file, [...(byFile.get(c.file) ?? []), ...c.directives]);
  const used = new Set<string>();
  // Comments naming a rule that warnsToo on a line where its finding is an error, which stands.
  const refused = new Set<string>();
  const usedEntries = new Set<ScopedIgnoreEntry>();
  // By rule: a baseline (kiwi check --add-ignores) may hold an entry for each of a thousand findings.
  const byRule = new Map<string, ScopedIgnoreEntry[]>();
  for (const e of entries) {
    const same = byRule.get(e.rule);
    if (same) same.push(e);
    else byRule.set(e.rule, [e]);
  }
  const kept: Finding[] = [];
  const ignored: IgnoredFinding[] = [];
  for (const f of findings) {
    const directive = f.line === undefined ? undefined : byFile.get(f.file)?.find((d) => d.target === f.line && d.rules.includes(f.rule));
    if (directive !== undefined && !isIgnorable(f.rule, f.severity)) refused.add(usage(f.file, directive, f.rule));
    else if (directive !== undefined) {
      used.add(usage(f.file, directive, f.rule));
      ignored.push({ ...f, ignoredBy: directive.reason === undefined ? { line: directive.line } : { line: directive.line, reason: directive.reason } });
      continue;
    }
    let entry: ScopedIgnoreEntry | undefined;
    // An entry's rule may be ignored (ignore-file.ts drops the others), but not every finding of
    // a rule that warnsToo: its errors stand.
    for (const e of isIgnorable(f.rule, f.severity) ? (byRule.get(f.rule) ?? []) : []) {
      if (!entryMatches(e, f)) continue;
      usedEntries.add(e); // every entry that matches is in use: a narrower one beside a broader one hides nothing more
      entry ??= e;
    }
    if (entry === undefined) {
      kept.push(f);
      continue;
    }
    ignored.push({ ...f, ignoredBy: { file: IGNORE_FILE, line: entry.line, ...(entry.reason === undefined ? {} : { reason: entry.reason }), ...(entry.expires === undefined ? {} : { expires: entry.expires }) } });
  }
  for (const c of comments) for (const d of c.directives) kept.push(...commentFindings(c, d, used, refused));
  for (const e of entries) if (e.report && !usedEntries.has(e)) kept.push(unusedEntry(e));
  return { kept, ignored };
}

function usage(file: string, d: IgnoreDirective, rule: string): string {
  return `${file}\0${d.line}\0${rule}`;
}

function unusedEntry(e: IgnoreEntry): Finding {
  const narrowed = [e.tool === undefined ? "" : `tool ${e.tool}`, e.file === undefined ? "" : e.file, e.pointer === undefined ? "" : `at ${e.pointer || '""'}`, e.atLine === undefined ? "" : `line ${e.atLine}`].filter(Boolean);
  const where = narrowed.length === 0 ? "anywhere in the project" : `for ${narrowed.join(", ")}`;
  return fileFinding("ignore/unused", IGNORE_FILE, `the entry for ${e.rule} lets nothing through: kiwi reports no such finding ${where}`, "remove the entry (the finding went away), or correct what it names so it matches the finding kiwi check --json prints", { line: e.line, column: e.column });
}

/** What is wrong with one comment: each name that ignores nothing, and why. */
function commentFindings(c: IgnoreComments, d: IgnoreDirective, used: ReadonlySet<string>, refused: ReadonlySet<string>): Finding[] {
  const at = (rule: "ignore/invalid" | "ignore/unused", message: string, hint: string): Finding => ({
    rule,
    severity: ruleInfo(rule).severity,
    file: c.file,
    line: d.line,
    column: d.column,
    tool: c.tool,
    message,
    hint,
  });
  const out: Finding[] = [];
  const covers = d.target === d.line ? `line ${d.line}` : `line ${d.target} (the line below it)`;
  if (d.noColon) out.push(at("ignore/invalid", "the kiwi-ignore comment has no colon, so it names no rule", "write it as # kiwi-ignore: <rule>[, <rule>] -- <reason>"));
  else if (d.rules.length === 0 && d.invalid.length === 0) out.push(at("ignore/invalid", "the kiwi-ignore comment names no rule", "name the rule it lets through: # kiwi-ignore: security/secret-literal -- why"));
  for (const word of d.invalid) out.push(at("ignore/invalid", `the kiwi-ignore comment names "${word}", which is not a rule id`, "name rules as kiwi check prints them (layer/name), separated by commas; a reason goes after --"));
  for (const rule of d.rules) {
    const wrong = ruleProblem(rule);
    if (wrong) out.push(at("ignore/invalid", `the kiwi-ignore comment ${wrong.message}`, wrong.hint));
    else if (refused.has(usage(c.file, d, rule)) && !used.has(usage(c.file, d, rule))) {
      out.push(at("ignore/invalid", `the kiwi-ignore comment names ${rule}, whose finding on ${covers} is an error, which cannot be ignored (its warnings can)`, "fix what it reports"));
    } else if (!used.has(usage(c.file, d, rule))) {
      out.push(at("ignore/unused", `the kiwi-ignore comment names ${rule}, which reports nothing on ${covers}`, "remove the comment, or move it onto the line of the finding (or alone on the line above it)"));
    }
  }
  return out;
}
