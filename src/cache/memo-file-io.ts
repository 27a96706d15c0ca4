// Self-verifying memo files in kiwi's cache, and the identity of the kiwi that wrote them. A memo
// file is its body's sha256 on the first line, then the body: a truncated or damaged file reads as
// absent, never as a different answer. exec's memos (exec/memo-io.ts), the staged check's verdicts
// (ops/staged-memo-io.ts) and the child_schemas verdicts (validate/child-schema-memo-io.ts) are
// such files; each keys what it remembers with the running binary's identity where a rebuilt kiwi
// of the same version may answer differently.
import { readFileSync, statSync } from "node:fs";
import { writeFileAtomic } from "./atomic-io.ts";
import { sha256Hex } from "../integrity/digest.ts";

/** A self-verifying memo file's body, or undefined when absent, unreadable or damaged. */
export function readMemoFile(path: string): string | undefined {
  try {
    const text = readFileSync(path, "utf8");
    const nl = text.indexOf("\n");
    return nl === 64 && sha256Hex(text.slice(nl + 1)) === text.slice(0, nl) ? text.slice(nl + 1) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes a self-verifying memo file atomically, best effort: a read-only or full cache only costs
 * the next run some time. Read-only for everyone, or with `private` for its owner only.
 */
export function writeMemoFile(path: string, body: string, options: { private?: boolean } = {}): void {
  try {
    writeFileAtomic(path, `${sha256Hex(body)}\n${body}`, { mode: options.private ? 0o400 : 0o444 });
  } catch {
    // Nothing to do: memos are an optimisation.
  }
}

/** A file's stat identity (size, mtime, ctime, inode) as text, or "unreadable". */
export function statIdentity(path: string): string {
  try {
    const st = statSync(path);
    return `${st.size} ${st.mtimeMs} ${st.ctimeMs} ${st.ino}`;
  } catch {
    return "unreadable";
  }
}

/** The running executable (kiwi's binary, or bun running the sources) and its stat identity. */
export function binaryIdentity(): string {
  return `${process.execPath} ${statIdentity(process.execPath)}`;
}
