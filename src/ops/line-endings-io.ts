// Tool files whose only change is git's line-ending conversion on checkout (core.autocrlf, or an
// eol=crlf attribute): a frozen kiwi install and kiwi verify mark them, and say the real fix.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../integrity/digest.ts";
import type { DiffSummary } from "../lockfile/lock-diff.ts";
import type { Tool } from "../manifest/model.ts";

/** Largest file read again to see whether only its line endings changed. */
const LINE_ENDINGS_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Marks each changed file whose bytes, with CRLF read as LF, hash to the locked digest: git
 * converted its line endings on checkout (a Windows clone with core.autocrlf), which no relock on
 * that machine should make the team's lockfile. Returns how many were marked.
 */
export function markConvertedLineEndings(summary: DiffSummary, tools: ReadonlyMap<string, Tool>): number {
  let marked = 0;
  for (const ch of summary.changed) {
    const tool = tools.get(ch.id);
    if (!tool || tool.form === "builtin") continue;
    for (const f of ch.files) {
      if (f.change !== "changed" || f.before === undefined) continue;
      let bytes: Buffer;
      try {
        if (statSync(join(tool.rootAbs, f.path)).size > LINE_ENDINGS_MAX_BYTES) continue;
        bytes = readFileSync(join(tool.rootAbs, f.path));
      } catch {
        continue;
      }
      if (!bytes.includes("\r\n")) continue;
      const lf = Buffer.from(bytes.toString("latin1").replaceAll("\r\n", "\n"), "latin1");
      if (sha256Hex(lf) !== f.before) continue;
      f.lineEndings = "crlf";
      marked++;
    }
  }
  return marked;
}

/** The hint for a tree whose `converted` files differ from the lock only in their line endings. */
export function convertedLineEndingsHint(converted: number): string {
  return `git converted line endings to CRLF when it checked ${converted === 1 ? "a tool file" : `${converted} tool files`} out (core.autocrlf, or an eol=crlf attribute): add "/.ai/tools/** -text" to .gitattributes so tool files keep their bytes, and check them out again; "kiwi lock" would lock the converted bytes`;
}
