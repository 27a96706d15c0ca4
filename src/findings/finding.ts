// Builds findings about a tool at a JSON pointer of its manifest, with the source position of the
// key and the severity from the rule table. Pure.
import type { Finding, Severity } from "./verdict.ts";
import type { RuleId } from "./rules.ts";

/** The rule table, loaded on the first finding: discovery sits on kiwi exec's path, findings do not. */
const ruleInfo = (id: string) => (require("./rules.ts") as typeof import("./rules.ts")).ruleInfo(id);

/**
 * The part of a tool (manifest/model.ts `Tool`) a finding needs, written out so findings/ depends on
 * nothing; tests and other checks can pass a stand-in.
 */
export interface FindingSubject {
  id: string;
  manifestFile: string;
  /** The 1-based position of a JSON pointer in the manifest, when known. */
  locate: (pointer: string) => { line: number; column: number } | undefined;
}

/**
 * The file on disk a finding (or a tool's manifestFile) names: an Agent Plugin's MCP server is
 * `<plugin>/mcp.json#<server>`, one file holding several tools; every other name is the path.
 */
export function fileOnDisk(file: string): string {
  const hash = file.indexOf("#");
  return hash === -1 ? file : file.slice(0, hash);
}

/** A finding's severity: the rule table's, unless this finding is deliberately milder (`override`). */
export function severityOf(rule: RuleId, override?: Severity): Severity {
  return override ?? ruleInfo(rule).severity;
}

/**
 * A finding about a file (discovery, parsing: there is no tool yet), with the severity from the rule
 * table unless this finding is deliberately milder (`override`), at a line and column when the
 * problem has one.
 */
export function fileFinding(rule: RuleId, file: string, message: string, hint?: string, position?: { line: number; column: number }, override?: Severity): Finding {
  const finding: Finding = { rule, severity: severityOf(rule, override), file, message };
  if (position) {
    finding.line = position.line;
    finding.column = position.column;
  }
  if (hint !== undefined) finding.hint = hint;
  return finding;
}

/** A finding at `pointer` in the tool's manifest; severity defaults to the rule's. */
export function toolFinding(
  tool: FindingSubject,
  rule: RuleId,
  pointer: string,
  message: string,
  hint?: string,
  severity?: Severity,
): Finding {
  const position = tool.locate(pointer);
  const finding: Finding = {
    rule,
    severity: severity ?? ruleInfo(rule).severity,
    file: tool.manifestFile,
    pointer,
    tool: tool.id,
    message,
  };
  if (position) {
    finding.line = position.line;
    finding.column = position.column;
  }
  if (hint) finding.hint = hint;
  return finding;
}
