// Findings: the data every check returns (validation, lockfile, MCP scan). Checks return verdicts;
// only the caller decides what is fatal. Rule ids themselves are listed once, in ./rules.ts.

export type Severity = "error" | "warning" | "info";

/** One verdict about one place: a rule id, where, what, and how to fix it. */
export interface Finding {
  /** Stable rule id, e.g. `universal/version-semver`; listed in ./rules.ts. */
  rule: string;
  severity: Severity;
  /** Project-relative path with `/` separators (or a virtual path such as `<builtin>/subprocess`). */
  file: string;
  line?: number;
  column?: number;
  /** JSON pointer into the manifest document, in the terms of the file the user wrote. */
  pointer?: string;
  /** Tool id the finding is about, when known. */
  tool?: string;
  message: string;
  hint?: string;
}

/** A finding a `# kiwi-ignore:` comment or the ignore file let through (validate/ignores.ts): which, and why. */
export interface IgnoredFinding extends Finding {
  /** The comment that let it through (its line in the finding's file), or the ignore file's entry (`file` and the entry's line). */
  ignoredBy: { file?: string; line: number; reason?: string; expires?: string };
}

/** The verdict shape of every check and verify function. */
export interface Verdict {
  ok: boolean;
  findings: Finding[];
}

/** A verdict is ok when no finding is an error. */
export function verdictOf(findings: Finding[]): Verdict {
  return { ok: !findings.some((f) => f.severity === "error"), findings };
}
