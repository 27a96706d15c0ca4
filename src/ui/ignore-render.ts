// What `kiwi check --add-ignores` reports besides the findings that remain: the entries it added,
// and the findings an expired entry still names (it adds none for them), in text and in --json.
import type { IgnoredFinding } from "../findings/verdict.ts";
import type { IgnoresAdded } from "../ops/ignore-add-io.ts";
import { findingsDocument } from "./findings-render.ts";
import { plural } from "./plural.ts";

/** The check's JSON document over what remains, with the ignore file, the entries added and the findings held back. */
export function ignoresAddedDocument(outcome: IgnoresAdded, toolsChecked: number, ignored: readonly IgnoredFinding[]): Record<string, unknown> {
  const notAdded = outcome.held.map(({ finding: f, entry }) => ({
    rule: f.rule,
    ...(f.tool === undefined ? {} : { tool: f.tool }),
    file: f.file,
    ...(f.line === undefined ? {} : { line: f.line }),
    ...(f.pointer === undefined ? {} : { pointer: f.pointer }),
    expired_entry: { file: outcome.file, line: entry.line, expires: entry.expires },
  }));
  return { ...findingsDocument(outcome.remaining, { toolsChecked, counts: outcome.counts }, ignored), ignore_file: outcome.file, added: outcome.added, not_added: notAdded };
}

/**
 * The notes of the human report: what was added (or that nothing could be), and for each expired
 * entry the findings it held back. `shownFile` is the ignore file named from the current folder.
 */
export function ignoresAddedNotes(outcome: IgnoresAdded, shownFile: string, expires: string | undefined): string[] {
  const { file, added, held } = outcome;
  const notes: string[] = [];
  if (added.length > 0 || held.length === 0) {
    notes.push(added.length === 0 ? `nothing to add to ${file}: no finding here can be let through` : `added ${plural(added.length, "entry", "entries")} to ${file}${expires === undefined ? "" : `, each expiring on ${expires}`}: review each one, and say in its reason why the finding is let through`);
  }
  const byEntry = new Map<number, { expires: string; count: number }>();
  for (const h of held) {
    const seen = byEntry.get(h.entry.line);
    if (seen) seen.count++;
    else byEntry.set(h.entry.line, { expires: h.entry.expires ?? "", count: 1 });
  }
  for (const [line, { expires: day, count }] of byEntry) {
    notes.push(`added no entry for ${plural(count, "finding", "findings")} that ${shownFile}:${line} let through until it expired on ${day}: fix ${count === 1 ? "it" : "them"}, or, if its reason still holds, give that entry a later date`);
  }
  return notes;
}
