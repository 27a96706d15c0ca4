// `# kiwi-ignore: <rule>[, <rule>…] [-- <reason>]` comments in a manifest's YAML (a tool.yaml, a
// script's metadata block, front matter) or in a kiwi_mcp Python module: what lets one finding
// through, as gitleaks:allow, noqa and eslint-disable-next-line do. They are read here, while the
// text is parsed, so discovery's parse cache keeps them and the rule table (which exec never loads)
// is not needed; validate/ignores.ts decides what they ignore. Pure.

/** One ignore comment, as written. */
export interface IgnoreDirective {
  /** The comment's position in the manifest file (1-based). */
  line: number;
  column: number;
  /**
   * The line whose findings it ignores: its own when it follows a value on that line, the next one
   * when it is alone on its line.
   */
  target: number;
  /** The rule ids it names. */
  rules: string[];
  /** What it names that is not a rule id (a typo, a missing colon): reported, never matched. */
  invalid: string[];
  /** The text after `--`: why the finding is let through (SARIF's justification). */
  reason?: string;
}

const MARK = "kiwi-ignore";

/** The comment: a `#` at the start of the line or after a space (YAML's and Python's comment rule). */
const DIRECTIVE = /(^|\s)#\s*kiwi-ignore\b(:?)(.*)/;

/** A rule id's shape (findings/rules.ts): a layer, a slash, a name. */
const RULE_ID = /^[a-z][a-z0-9_]*\/[a-z0-9][a-z0-9-]*$/;

/**
 * The ignore comments of a manifest text whose first line is line `lineOffset + 1` of its file and
 * whose columns start `columnOffset` in (a shell block's `# ` prefix). Most manifests hold none:
 * one substring test, no split.
 */
export function ignoreDirectives(text: string, lineOffset = 0, columnOffset = 0): IgnoreDirective[] {
  if (!text.includes(MARK)) return [];
  const out: IgnoreDirective[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const row = lines[i]!;
    if (!row.includes(MARK)) continue;
    const m = DIRECTIVE.exec(row);
    if (!m) continue;
    const hashAt = m.index + m[1]!.length;
    const alone = row.slice(0, hashAt).trim() === "";
    let body = m[3]!;
    let reason: string | undefined;
    const dashes = body.indexOf("--");
    if (dashes !== -1) {
      reason = body.slice(dashes + 2).trim() || undefined;
      body = body.slice(0, dashes);
    }
    const words = body.split(/[\s,]+/).filter((w) => w !== "");
    const line = i + 1 + lineOffset;
    const directive: IgnoreDirective = {
      line,
      column: hashAt + 1 + columnOffset,
      target: alone ? line + 1 : line,
      rules: m[2] === ":" ? words.filter((w) => RULE_ID.test(w)) : [],
      invalid: m[2] === ":" ? words.filter((w) => !RULE_ID.test(w)) : [`${MARK}${m[3]!.trimEnd()}`],
    };
    if (reason !== undefined) directive.reason = reason;
    out.push(directive);
  }
  return out;
}
