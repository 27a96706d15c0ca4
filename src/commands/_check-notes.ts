// What the check a command ran says, for the commands that lock (lock, install, add, publish): the
// report that stopped it, or the warnings that did not.
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { renderFindingsHuman } from "../ui/findings-render.ts";
import { showNote } from "../ui/output.ts";
import { findingsFromHere } from "./_relocate.ts";

/**
 * The warnings and infos of the check a lock, install or add ran (none when it remembered the tree's
 * verdict, or judged only what changed and that had none), on stderr, as kiwi check prints them:
 * what did not stop it is still said, as a compiler's warnings are. --json lists them instead.
 */
export function showCheckNotes(findings: readonly Finding[], ctx: { color: boolean; cwd: string }, json: boolean): void {
  if (json || findings.length === 0) return;
  showNote(renderFindingsHuman(findingsFromHere(findings, ctx.cwd), ctx).trimEnd());
}

/** Shows the check report that stopped a lock, install, add or remove, on stderr, before the error itself. */
export function showGateFindings(error: unknown, ctx: { color: boolean; cwd: string }): void {
  if (error instanceof KiwiError && error.code === "E_CHECK_FAILED" && Array.isArray(error.details?.findings)) {
    showNote(renderFindingsHuman(findingsFromHere(error.details.findings as Finding[], ctx.cwd), ctx));
  }
}
