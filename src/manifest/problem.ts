// Why a manifest could not be parsed: one error type for every syntax (YAML, JSON, embedded
// metadata), with the rule id (findings/rules.ts, which also says how severe it is), the position
// and a hint. Pure.
import type { Severity } from "../findings/verdict.ts";
import type { Position } from "./model.ts";

export class ManifestProblem extends Error {
  constructor(
    readonly rule: string,
    message: string,
    readonly position?: Position,
    readonly hint?: string,
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
