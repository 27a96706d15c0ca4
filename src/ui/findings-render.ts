// Renders findings three ways: human text grouped by file, kiwi's stable JSON document, and SARIF
// 2.1.0 with stable rule ids and repository-relative URIs. Pure string builders; callers print.
import { plural } from "./plural.ts";
import type { Context } from "../context.ts";
import type { Finding, IgnoredFinding, Severity } from "../findings/verdict.ts";
import { RULES, type RuleInfo } from "../findings/rules.ts";
import { fileOnDisk } from "../findings/finding.ts";
import { colors } from "./output.ts";
import { renderVisible } from "../mcp/visible.ts";

/** Output formats of `kiwi check`. */
export const FINDING_FORMATS = ["human", "json", "sarif"] as const;
export type FindingFormat = (typeof FINDING_FORMATS)[number];

export interface FindingsSummary {
  toolsChecked: number;
  counts: Record<Severity, number>;
  elapsedMs: number;
  /** The findings `# kiwi-ignore:` comments and the ignore file let through. */
  ignored?: readonly Pick<IgnoredFinding, "ignoredBy">[];
}

/**
 * Human form, grouped by file: `path:line:col  severity  rule-id  message`, then `hint:` indented.
 * Returns "" when there is nothing to say.
 */
export function renderFindingsHuman(findings: readonly Finding[], ctx: Pick<Context, "color">): string {
  const c = colors(ctx);
  const paint: Record<Severity, (s: string) => string> = { error: (s) => c.red(c.bold(s)), warning: c.yellow, info: c.blue };
  // By the file on disk, which an editor or terminal opens at path:line:col: an Agent Plugin
  // server's findings (`<plugin>/mcp.json#<server>`) are its mcp.json's, each naming its server.
  const groups = new Map<string, Finding[]>();
  for (const f of findings) {
    const file = fileOnDisk(f.file);
    const list = groups.get(file) ?? [];
    list.push(f);
    groups.set(file, list);
  }
  const blocks: string[] = [];
  for (const [file, list] of groups) {
    const lines: string[] = [];
    for (const f of list) {
      const where = f.line === undefined ? file : f.column === undefined ? `${file}:${f.line}` : `${file}:${f.line}:${f.column}`;
      const server = f.file === file ? "" : `server ${f.file.slice(file.length + 1)}: `;
      // A message quotes what the manifest holds (a type, a version, a file name): a control
      // character in it is shown, never sent to the terminal, as kiwi list shows a description.
      lines.push(`${c.bold(visible(where))}  ${paint[f.severity](f.severity)}  ${c.dim(f.rule)}  ${visible(server + f.message)}`);
      if (f.hint) lines.push(`    ${c.dim("hint:")} ${visible(f.hint)}`);
    }
    blocks.push(lines.join("\n"));
  }
  return blocks.length ? `${blocks.join("\n\n")}\n` : "";
}

function visible(text: string): string {
  return renderVisible(clipQuoted(text), { keepNewlines: true });
}

/** Longest quoted value a human finding shows whole; --json and SARIF keep the message as it is. */
const QUOTE_LIMIT = 160;

/**
 * A message quotes the value it is about (`method "FETCH" is not one of …`): one of 200,000
 * characters would bury the line and what it says. The quote keeps its start and says how long
 * it is; the finding's line and pointer say where the whole value is.
 */
function clipQuoted(text: string): string {
  return text.replace(/"((?:[^"\\\n]|\\.)*)"/g, (whole, inner: string) => (inner.length <= QUOTE_LIMIT ? whole : `"${inner.slice(0, 80).replace(/\\(?:u[0-9a-fA-F]{0,3})?$/, "")}…" (${inner.length} characters)`));
}

/**
 * The closing line: counts and elapsed time (stderr). `blocked`: something other than the findings
 * (a stale lockfile at pre-commit) fails the run, so a clean check gets no green mark.
 */
export function renderFindingsSummary(summary: FindingsSummary, ctx: Pick<Context, "color">, blocked = false): string {
  const c = colors(ctx);
  const { error, warning, info } = summary.counts;
  const tools = `${summary.toolsChecked} tool${summary.toolsChecked === 1 ? "" : "s"}`;
  const time = `${Math.round(summary.elapsedMs)} ms`;
  // Said every time, so a finding let through is never out of sight.
  const ignored = ignoredNote(summary.ignored ?? []);
  if (error + warning + info === 0) return blocked ? `· ${tools} checked, no problems in the manifests${ignored} (${time})\n` : `${c.green("✔")} ${tools} checked, no problems${ignored} (${time})\n`;
  const parts = [plural(error, "error"), plural(warning, "warning"), plural(info, "info", "infos")];
  const mark = error > 0 ? c.red("✖") : c.yellow("!");
  return `${mark} ${parts.join(", ")} in ${tools} checked${ignored} (${time})\n`;
}

/** How many findings were let through, and by what: comments, the ignore file (named as its entries name it), or both. */
function ignoredNote(ignored: readonly Pick<IgnoredFinding, "ignoredBy">[]): string {
  if (ignored.length === 0) return "";
  const files = [...new Set(ignored.flatMap((f) => (f.ignoredBy.file === undefined ? [] : [f.ignoredBy.file])))];
  const byFile = ignored.filter((f) => f.ignoredBy.file !== undefined).length;
  const byComments = ignored.length - byFile;
  const file = files.join(" and ");
  if (byFile === 0) return `, ${ignored.length} ignored by kiwi-ignore comments`;
  if (byComments === 0) return `, ${ignored.length} ignored by ${file}`;
  return `, ${ignored.length} ignored (${byComments} by kiwi-ignore comments, ${byFile} by ${file})`;
}

/**
 * kiwi's JSON form: one document, fixed key order, no absolute paths or times (stable across runs).
 * `ignored` lists what ignore comments and the ignore file let through, each with the comment's
 * line (or the ignore file and its entry's line) and the reason.
 */
export function findingsDocument(findings: readonly Finding[], summary: Omit<FindingsSummary, "elapsedMs" | "ignored">, ignored: readonly IgnoredFinding[] = []): Record<string, unknown> {
  return {
    ok: summary.counts.error === 0,
    tools_checked: summary.toolsChecked,
    counts: { error: summary.counts.error, warning: summary.counts.warning, info: summary.counts.info },
    findings: findings.map(findingJson),
    ignored: ignored.map((f) => ({ ...findingJson(f), ignored_by: { ...f.ignoredBy } })),
  };
}

/** Findings as kiwi's JSON documents list them (findingsDocument's `findings`). */
export function findingsJson(findings: readonly Finding[]): Record<string, unknown>[] {
  return findings.map(findingJson);
}

function findingJson(f: Finding): Record<string, unknown> {
  const out: Record<string, unknown> = { rule: f.rule, severity: f.severity, file: f.file };
  if (f.line !== undefined) out.line = f.line;
  if (f.column !== undefined) out.column = f.column;
  if (f.pointer !== undefined) out.pointer = f.pointer;
  if (f.tool !== undefined) out.tool = f.tool;
  out.message = f.message;
  if (f.hint !== undefined) out.hint = f.hint;
  return out;
}

const SARIF_LEVEL: Record<Severity, string> = { error: "error", warning: "warning", info: "note" };

/**
 * SARIF 2.1.0: every rule from the rule table (stable index), URIs relative to the project root.
 * What an ignore comment let through is a result with an in-source suppression (its reason as the
 * justification), as code scanning expects: shown as dismissed, not lost.
 */
export function sarifDocument(findings: readonly Finding[], version: string, ignored: readonly IgnoredFinding[] = []): Record<string, unknown> {
  const ids = Object.keys(RULES);
  const index = new Map(ids.map((id, i) => [id, i]));
  const rules = (Object.entries(RULES) as [string, RuleInfo][]).map(([id, info]) => ({
    id,
    name: id.replace(/[/-](.)/g, (_m, ch: string) => ch.toUpperCase()).replace(/^./, (ch) => ch.toUpperCase()),
    shortDescription: { text: info.description },
    help: { text: `${info.description}\nExample:\n${info.example}` },
    defaultConfiguration: { level: SARIF_LEVEL[info.severity] },
    ...(info.strict ? { properties: { escalatesWithStrict: true } } : {}),
  }));
  const toResult = (f: Finding) => {
    const result: Record<string, unknown> = {
      ruleId: f.rule,
      ...(index.has(f.rule) ? { ruleIndex: index.get(f.rule) } : {}),
      level: SARIF_LEVEL[f.severity],
      message: { text: f.hint ? `${f.message} (hint: ${f.hint})` : f.message },
    };
    if (!f.file.startsWith("<builtin>/")) {
      const region: Record<string, number> = {};
      if (f.line !== undefined) region.startLine = f.line;
      if (f.column !== undefined) region.startColumn = f.column;
      result.locations = [
        {
          physicalLocation: {
            // The file itself: a plugin server's finding names `mcp.json#<server>` (its tool is in properties).
            artifactLocation: { uri: fileOnDisk(f.file).split("/").map(encodeURIComponent).join("/"), uriBaseId: "%SRCROOT%" },
            ...(Object.keys(region).length ? { region } : {}),
          },
        },
      ];
    }
    const properties: Record<string, unknown> = {};
    if (f.pointer !== undefined) properties.pointer = f.pointer;
    if (f.tool !== undefined) properties.tool = f.tool;
    if (Object.keys(properties).length) result.properties = properties;
    return result;
  };
  const results = [
    ...findings.map(toResult),
    // A comment is in the source; an entry of the ignore file is beside it (SARIF's "external").
    ...ignored.map((f) => ({ ...toResult(f), suppressions: [{ kind: f.ignoredBy.file === undefined ? "inSource" : "external", ...(f.ignoredBy.reason === undefined ? {} : { justification: f.ignoredBy.reason }) }] })),
  ];
  return {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "kiwi", version, semanticVersion: version, rules } },
        columnKind: "utf16CodeUnits",
        results,
      },
    ],
  };
}
