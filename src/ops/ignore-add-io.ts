// `kiwi check --add-ignores`: an entry in the project's ignore file for every finding of the check
// that kiwi may let through, so a project adopting kiwi (or a new rule) starts from a baseline its
// people review, as ruff's --add-noqa and gitleaks' baseline do. What the entries say and how they
// join the file's text are validate/ignore-file.ts's; this reads and writes the file.
import { join } from "node:path";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { KiwiError } from "../errors.ts";
import { isIgnorable } from "../findings/rules.ts";
import type { Finding, Severity } from "../findings/verdict.ts";
import { readIgnoreFileText } from "../manifest/ignore-file-io.ts";
import { IGNORE_FILE, utcDay } from "../manifest/model.ts";
import { type HeldFinding, type NewEntry, entriesFor, expiryProblem, holdExpired, parseIgnoreFile, withEntries } from "../validate/ignore-file.ts";

/** `--expires` as given, checked before anything is checked or written: E_USAGE unless a day after the day of `now` (UTC). */
export function assertExpiry(day: string, now: number): void {
  const problem = expiryProblem(day, utcDay(now));
  if (problem) throw new KiwiError("E_USAGE", `--expires ${problem}`, { hint: "give the day (UTC) from which the entries should ignore nothing, as YYYY-MM-DD: --expires 2027-03-31" });
}

/**
 * Adds the entries for `findings` to the ignore file of the project at `root` (creating it), in one
 * atomic write; the day of `now` (UTC) dates their reason, `expires` (assertExpiry) ends them.
 * A finding an expired entry names gets none (`held`, with that entry): a new, undated entry would
 * quietly undo the end date. Nothing is written when no finding can be let through. A file kiwi
 * cannot add to as it stands is E_INPUT_INVALID, and stays as it was.
 */
export function addIgnoreEntries(root: string, findings: readonly Finding[], now: number, expires?: string): { file: string; added: NewEntry[]; held: HeldFinding[] } {
  const current = readIgnoreFileText(root, now);
  const { open, held } = holdExpired(findings, current?.text === undefined ? [] : parseIgnoreFile(current).expired);
  const added = entriesFor(open, `added by kiwi check --add-ignores on ${utcDay(now)}: say why it is let through, or fix it`, expires);
  if (added.length === 0) return { file: IGNORE_FILE, added, held };
  const refuse = (why: string) =>
    new KiwiError("E_INPUT_INVALID", `cannot add entries to ${IGNORE_FILE}: ${why}`, { hint: `fix it (kiwi check says where), or move it aside and run kiwi check --add-ignores again` });
  if (current !== undefined && current.text === undefined) throw refuse(`the file ${current.unreadable ?? "cannot be read"}`);
  const next = withEntries(current?.text, added);
  if ("problem" in next) throw refuse(next.problem);
  writeFileAtomic(join(root, IGNORE_FILE), next.text);
  return { file: IGNORE_FILE, added, held };
}

/** What `kiwi check --add-ignores` did, and what the check still reports. */
export interface IgnoresAdded {
  file: string;
  added: NewEntry[];
  /** Findings an expired entry names, which get no new entry. */
  held: HeldFinding[];
  /** What no entry lets through: the findings kiwi may not ignore, and the held ones. */
  remaining: Finding[];
  counts: Record<Severity, number>;
}

/** addIgnoreEntries for a check's findings, with what the check still reports once they are written. */
export function addIgnoresForCheck(root: string, findings: readonly Finding[], now: number, expires?: string): IgnoresAdded {
  const { file, added, held } = addIgnoreEntries(root, findings, now, expires);
  const heldFindings = new Set(held.map((h) => h.finding));
  const remaining = findings.filter((f) => !isIgnorable(f.rule, f.severity) || heldFindings.has(f));
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of remaining) counts[f.severity]++;
  return { file, added, held, remaining, counts };
}
