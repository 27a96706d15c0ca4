// `# kiwi-ignore: <rule>[, <rule>…] [-- <reason>]` comments in a manifest's YAML (a tool.yaml, a
// script's metadata block, front matter), in a kiwi_mcp Python module, or in any other text file
// of a tool (after the comment opener of its language): what lets one finding
// through, as gitleaks:allow, noqa and eslint-disable-next-line do. They are read here, while the
// text is parsed, so discovery's parse cache keeps them and the rule table (which exec never loads)
// is not needed; validate/ignores.ts decides what they ignore. Pure.
import { computeLineStarts, lastStartAtOrBefore } from "../integrity/json-lossless.ts";
import { moduleStatements } from "./python-literals.ts";
import { type ColumnOffset, columnShift } from "./yaml.ts";

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
  /** What it names that is not a rule id (a typo): reported, never matched. */
  invalid: string[];
  /** Written without its colon (`# kiwi-ignore security/path`): it names nothing, and says so. */
  noColon?: true;
  /** The text after `--`: why the finding is let through (SARIF's justification). */
  reason?: string;
}

const MARK = "kiwi-ignore";

/** A comment that is an ignore comment: `#`, then the mark as a word (kiwi-ignored is not one). */
const DIRECTIVE = /^#\s*kiwi-ignore\b(:?)(.*)/;

/** A rule id's shape (findings/rules.ts): a layer, a slash, a name. */
const RULE_ID = /^[a-z][a-z0-9_]*\/[a-z0-9][a-z0-9-]*$/;

/** A comment found in a text: where its `#` is (0-based offset), and its text from the `#` on. */
interface Comment {
  offset: number;
  text: string;
}

/**
 * The ignore comments of a YAML text whose first line is line `lineOffset + 1` of its file and
 * whose columns start `columnOffset` in (a shell block's `# ` prefix). The yaml library's parser
 * finds the comments, so a `#` inside a quoted string or a block scalar (a description that shows
 * the syntax) is none. Most manifests hold no mark: one substring test, and the parser not loaded.
 */
export function yamlIgnoreDirectives(text: string, lineOffset = 0, columnOffset: ColumnOffset = 0): IgnoreDirective[] {
  if (!text.includes(MARK)) return [];
  const { Parser } = require("yaml") as typeof import("yaml");
  const comments: Comment[] = [];
  const walk = (token: unknown): void => {
    if (Array.isArray(token)) {
      for (const t of token) walk(t);
      return;
    }
    if (token === null || typeof token !== "object") return;
    const t = token as { type?: unknown; offset?: unknown; source?: unknown };
    if (t.type === "comment" && typeof t.offset === "number" && typeof t.source === "string") comments.push({ offset: t.offset, text: t.source });
    else for (const key of Object.keys(token)) walk((token as Record<string, unknown>)[key]);
  };
  for (const token of new Parser().parse(text)) walk(token);
  return directives(text, comments, lineOffset, columnOffset);
}

/**
 * The ignore comments of a Python module (kiwi_mcp's module variables: the whole file is the
 * manifest), its comments as the module reader finds them: a `#` inside a string is none.
 */
export function pythonIgnoreDirectives(text: string): IgnoreDirective[] {
  if (!text.includes(MARK)) return [];
  const comments: Comment[] = [];
  moduleStatements(text, (start, end) => comments.push({ offset: start, text: text.slice(start, end) }));
  return directives(text, comments, 0, 0);
}

/** A comment opener of the common languages right before the mark: #, //, /*, --, ;, %, <!--. */
const ANY_OPENER_MARK = /(#|\/\/|\/\*|<!--|--|;|%)[ \t]*kiwi-ignore\b/g;

/**
 * The ignore comments of any other text file of a tool (a helper script, a config), whatever its
 * language: the mark after a comment opener, read to the end of its line (a block comment's closer or
 * `-->` dropped). Nothing parses the file, so a mark inside a string counts too, as gitleaks:allow
 * does; only the findings on the lines of such files (a credential's) are there to ignore.
 */
export function textIgnoreDirectives(text: string): IgnoreDirective[] {
  if (!text.includes(MARK)) return [];
  const comments: Comment[] = [];
  for (const m of text.matchAll(ANY_OPENER_MARK)) {
    const opener = m[1]!;
    const eol = text.indexOf("\n", m.index);
    const rest = text.slice(m.index + opener.length, eol === -1 ? text.length : eol).replace(/\s*(?:\*\/|-->)?\s*$/, "");
    comments.push({ offset: m.index, text: `#${rest}` });
  }
  return directives(text, comments, 0, 0);
}

/** The ignore comments among `comments`, placed in the file and read. */
function directives(text: string, comments: readonly Comment[], lineOffset: number, columnOffset: ColumnOffset): IgnoreDirective[] {
  const out: IgnoreDirective[] = [];
  let starts: number[] | undefined;
  for (const c of comments) {
    const m = DIRECTIVE.exec(c.text);
    if (!m) continue;
    starts ??= computeLineStarts(text);
    const index = lastStartAtOrBefore(starts, c.offset);
    const alone = text.slice(starts[index]!, c.offset).trim() === "";
    let body = m[2]!;
    let reason: string | undefined;
    const dashes = body.indexOf("--");
    if (dashes !== -1) {
      reason = body.slice(dashes + 2).trim() || undefined;
      body = body.slice(0, dashes);
    }
    const words = body.split(/[\s,]+/).filter((w) => w !== "");
    const line = index + 1 + lineOffset;
    const named = m[1] === ":";
    const directive: IgnoreDirective = {
      line,
      column: c.offset - starts[index]! + 1 + columnShift(columnOffset, index + 1),
      target: alone ? line + 1 : line,
      rules: named ? words.filter((w) => RULE_ID.test(w)) : [],
      invalid: named ? words.filter((w) => !RULE_ID.test(w)) : [],
    };
    if (!named) directive.noColon = true;
    if (reason !== undefined) directive.reason = reason;
    out.push(directive);
  }
  return out;
}
