// Human text for `kiwi add --from`: what was written, from what, and what to run next.
import type { ImportResult } from "../ops/import-io.ts";
import { describeSignature } from "../formats/mcpb.ts";

/** The result lines of an import; notes and warnings go to stderr (renderImportNotes). */
export function renderImported(r: ImportResult): string {
  const lines = [`imported ${r.tool}@${r.version} from ${r.format} (${r.source})`, `wrote ${r.path}`];
  if (r.signature) lines.push(`signature: ${describeSignature(r.signature)}`);
  if (r.tools && r.format === "plugin") lines.push(`tools: ${r.tools.join(", ") || "none"}`);
  lines.push('next: run "kiwi lock" (and "kiwi install" for its packages)');
  return lines.join("\n");
}

/** Notes on what was not carried over, and check warnings, for stderr. */
export function renderImportNotes(r: ImportResult): string[] {
  return [...r.notes.map((n) => `note: ${n}`), ...r.findings.map((f) => `${f.severity}[${f.rule}]: ${f.file}: ${f.message}`)];
}
