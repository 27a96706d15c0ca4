// Why a manifest could not be parsed: one error type for every syntax (YAML, JSON, embedded
// metadata), with the rule id (validate/rules.ts, which also says how severe it is), the position
// and a hint. Pure.
import type { Severity } from "../findings.ts";
import { ruleInfo } from "../validate/rules.ts";
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

  /** How the finding is reported: the rule table says, as for every finding. */
  get severity(): Severity {
    return ruleInfo(this.rule).severity;
  }
}
