// Lets through the findings a `# kiwi-ignore:` comment names (manifest/ignore-comments.ts): one of
// an ignorable rule (findings/rules.ts isIgnorable) on the line the comment covers, in the same
// manifest. What a comment names but cannot ignore, and a rule it names that reports nothing there,
// become findings of their own (ignore/invalid, ignore/unused), so neither a typo nor a comment
// left behind hides anything quietly. Pure.
import type { Finding, IgnoredFinding } from "../findings/verdict.ts";
import { RULES, isIgnorable, ruleInfo } from "../findings/rules.ts";
import type { IgnoreDirective } from "../manifest/ignore-comments.ts";
import { suggest } from "../resolve/suggest.ts";

/** The ignore comments of one manifest in scope, and the tool it belongs to. */
export interface IgnoreComments {
  file: string;
  tool: string;
  directives: IgnoreDirective[];
}

/** The findings that stand, those let through, and the ignore comments' own findings among the first. */
export function applyIgnores(findings: readonly Finding[], comments: readonly IgnoreComments[]): { kept: Finding[]; ignored: IgnoredFinding[] } {
  if (comments.length === 0) return { kept: [...findings], ignored: [] };
  // A script manifest's file has two lists: its manifest's comments and those of its code.
  const byFile = new Map<string, IgnoreDirective[]>();
  for (const c of comments) byFile.set(c.file, [...(byFile.get(c.file) ?? []), ...c.directives]);
  const used = new Set<string>();
  const kept: Finding[] = [];
  const ignored: IgnoredFinding[] = [];
  for (const f of findings) {
    const directive = f.line === undefined ? undefined : byFile.get(f.file)?.find((d) => d.target === f.line && d.rules.includes(f.rule));
    if (directive === undefined || !isIgnorable(f.rule)) {
      kept.push(f);
      continue;
    }
    used.add(usage(f.file, directive, f.rule));
    ignored.push({ ...f, ignoredBy: directive.reason === undefined ? { line: directive.line } : { line: directive.line, reason: directive.reason } });
  }
  for (const c of comments) for (const d of c.directives) kept.push(...commentFindings(c, d, used));
  return { kept, ignored };
}

function usage(file: string, d: IgnoreDirective, rule: string): string {
  return `${file}\0${d.line}\0${rule}`;
}

/** What is wrong with one comment: each name that ignores nothing, and why. */
function commentFindings(c: IgnoreComments, d: IgnoreDirective, used: ReadonlySet<string>): Finding[] {
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
    if (!(rule in RULES)) {
      const near = suggest(rule, Object.keys(RULES));
      out.push(at("ignore/invalid", `the kiwi-ignore comment names ${rule}, which is not one of kiwi's rules`, near ? `did you mean ${near}?` : "the README's rule table lists every rule id"));
    } else if (rule.startsWith("ignore/")) {
      out.push(at("ignore/invalid", `the kiwi-ignore comment names ${rule}, which reports on kiwi-ignore comments themselves: it cannot be ignored`, "fix or remove the comment it reports"));
    } else if (!isIgnorable(rule)) {
      out.push(at("ignore/invalid", `the kiwi-ignore comment names ${rule}, an error kiwi cannot lock or run past: it cannot be ignored`, "fix what it reports; only warnings, infos and errors about how a value looks (an example key) can be ignored"));
    } else if (!used.has(usage(c.file, d, rule))) {
      out.push(at("ignore/unused", `the kiwi-ignore comment names ${rule}, which reports nothing on ${covers}`, "remove the comment, or move it onto the line of the finding (or alone on the line above it)"));
    }
  }
  return out;
}
