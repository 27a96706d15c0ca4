// Why a manifest could not be parsed: one error type for every syntax (YAML, JSON, embedded
// metadata), with the rule id (validate/rules.ts), the position and a hint. Pure.
import type { Position } from "./model.ts";

export class ManifestProblem extends Error {
  constructor(
    readonly rule: string,
    message: string,
    readonly position?: Position,
    readonly hint?: string,
    /** How the finding is reported; parse problems are errors unless they say otherwise. */
    readonly severity: "error" | "warning" = "error",
  ) {
    super(message);
  }
}
