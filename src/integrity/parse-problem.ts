// Why a text could not be parsed: the one error type for every syntax kiwi reads (JSON here in
// integrity/, YAML, embedded metadata and Python literals in manifest/), with the rule id
// (findings/rules.ts, which also says how severe it is), where it is and a hint. Pure.
import type { Severity } from "../findings/verdict.ts";

/** A 1-based source position. */
export interface Position {
  line: number;
  column: number;
  /**
   * Where a pointer names a text value written over several lines (a YAML block scalar, a folded
   * or quoted string, a Python triple-quoted string), its last line; no comment can sit inside one.
   */
  lastLine?: number;
}

export class ParseProblem extends Error {
  constructor(
    readonly rule: string,
    message: string,
    readonly position?: Position,
    readonly hint?: string,
    /** The 0-based offset into the text, when the parser knows it (JSON); `position` is derived from it. */
    readonly offset?: number,
  ) {
    super(message);
  }

  /**
   * How the finding is reported: the rule table says, as for every finding. Loaded when asked: a
   * warm kiwi exec parses no manifest and should not pay for the table.
   */
  get severity(): Severity {
    return (require("../findings/rules.ts") as typeof import("../findings/rules.ts")).ruleInfo(this.rule).severity;
  }
}
