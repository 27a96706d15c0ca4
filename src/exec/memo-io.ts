// exec's memos in the cache: results that are pure functions of content kiwi already verifies
// (manifest bytes -> parsed manifest, a parent/child integrity pair -> child_schemas verdict, a
// parameters list -> its JSON Schema), so a warm `kiwi exec` parses no YAML and loads no ajv.
// Keys hash kiwi's version, the memo format and the input; a damaged entry is ignored, never
// trusted into a pass: the parsed manifest is still hashed and compared with the lockfile.
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { readMemoFile, writeMemoFile } from "../cache/memo-file-io.ts";

/** Where exec keeps its state in the cache: run directories and memos (README "Cache layout"). */
export const EXEC_DIR = "exec";
/** Bumped whenever what a memo holds, or how its input is parsed, changes. */
const MEMO_FORMAT = 3;

export type MemoKind = "manifests" | "verdicts" | "params" | "probes" | "lockfiles" | "chains" | "staged" | "launches";

/** The memo key for an input (bytes or text). */
export function memoKey(kind: MemoKind, ...parts: (string | Uint8Array)[]): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`kiwi ${pkg.version} memo ${MEMO_FORMAT} ${kind}\0`);
  for (const p of parts) {
    hasher.update(p);
    hasher.update("\0");
  }
  return hasher.digest("hex");
}

function memoPath(cacheDir: string, kind: MemoKind, key: string): string {
  return join(cacheDir, EXEC_DIR, kind, key.slice(0, 2), key.slice(2));
}

/** The memo's text, or undefined when absent or unreadable. */
export function readMemo(cacheDir: string, kind: MemoKind, key: string): string | undefined {
  return readMemoFile(memoPath(cacheDir, kind, key));
}

/**
 * The memos that hold values from the environment, not from the project: a launch's plan holds the
 * variables its config.env and args expand (secret ones are stand-ins, but a DSN or a webhook URL
 * under a plain name is not), so only their owner may read them.
 */
const PRIVATE_KINDS: ReadonlySet<MemoKind> = new Set(["launches"]);

/** Writes a memo (best effort: a read-only or full cache only costs the next run some time). */
export function writeMemo(cacheDir: string, kind: MemoKind, key: string, text: string): void {
  writeMemoFile(memoPath(cacheDir, kind, key), text, { private: PRIVATE_KINDS.has(kind) });
}
