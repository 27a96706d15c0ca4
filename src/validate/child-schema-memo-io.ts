// child_schemas verdicts remembered in the cache, the I/O half of layer.ts ChildSchemaMemo: ajv's
// errors for a (schema, child link document) pair that was judged before, so a check whose pairs
// are all known never loads or runs ajv (about 10 ms of a first `kiwi check --staged`, issue 14).
// Only project executors' verdicts come here: the built-ins' schemas are compiled at build time.
// One self-verifying memo file (cache/memo-file-io.ts), <cache>/check/child-schemas-v1.json, read
// once and written once per run when something new was judged; a damaged file reads as empty. The
// file belongs to one kiwi: its version and the running binary's stat identity (builds of one
// version differ while kiwi is developed) are its salt, written in the file and mixed into every
// key. Another kiwi reads it as empty and replaces it, so it never grows past what this kiwi
// judged (a staged check reads it whole); two kiwis taking turns on one cache only re-judge.
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { binaryIdentity, readMemoFile, writeMemoFile } from "../cache/memo-file-io.ts";
import { isRecord } from "../integrity/value.ts";
import type { SchemaError } from "./json-schema.ts";
import type { ChildSchemaMemo } from "./layer.ts";

/** Where verdicts are remembered, relative to the cache directory. */
export const CHILD_SCHEMA_MEMO_FILE = join("check", "child-schemas-v1.json");
/** Bumped whenever what a verdict holds, or how a key is made (chain-layer.ts), changes. */
const MEMO_FORMAT = 1;
/** Most verdicts kept; the least recently used are dropped first (a 1,000-tool tree needs ~1,000). */
const MEMO_LIMIT = 10_000;

/** A memo backed by the cache file; `save` writes it when this run added verdicts. */
export interface StoredChildSchemaMemo extends ChildSchemaMemo {
  save(): void;
}

export interface ChildSchemaMemoOptions {
  /** The kiwi version keys are salted with (tests pass another one). */
  version?: string;
}

/** The memo in `cacheDir` (read on first use); undefined without a cache directory. */
export function openChildSchemaMemo(cacheDir: string | undefined, options: ChildSchemaMemoOptions = {}): StoredChildSchemaMemo | undefined {
  if (!cacheDir) return undefined;
  const path = join(cacheDir, CHILD_SCHEMA_MEMO_FILE);
  const salt = `kiwi ${options.version ?? pkg.version} ${binaryIdentity()} child-schemas ${MEMO_FORMAT}`;
  let entries: Map<string, unknown> | undefined;
  const used = new Set<string>();
  let added = false;
  const load = () => (entries ??= readEntries(path, salt));
  return {
    salt,
    get(key) {
      const value = load().get(key);
      if (!isSchemaErrors(value)) return undefined;
      used.add(key);
      return value;
    },
    set(key, errors) {
      // Kept as JSON: what chain-layer.ts renders (instancePath, keyword, message and the params it
      // names) survives it unchanged; errors JSON cannot hold are not remembered.
      let copy: unknown;
      try {
        copy = JSON.parse(JSON.stringify(errors));
      } catch {
        return;
      }
      const map = load();
      map.delete(key);
      map.set(key, copy);
      added = true;
    },
    save() {
      if (!added || !entries) return;
      // The verdicts this run used move to the end with the new ones, so the oldest go first.
      for (const key of used) {
        const value = entries.get(key);
        if (value === undefined) continue;
        entries.delete(key);
        entries.set(key, value);
      }
      const keys = [...entries.keys()];
      const kept: Record<string, unknown> = {};
      for (const key of keys.slice(Math.max(0, keys.length - MEMO_LIMIT))) kept[key] = entries.get(key);
      writeMemoFile(path, `${JSON.stringify({ format: MEMO_FORMAT, salt, entries: kept })}\n`);
      added = false;
    },
  };
}

/** The file's verdicts by key; empty when it is missing, unreadable, damaged, or another kiwi's. */
function readEntries(path: string, salt: string): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  try {
    const body = readMemoFile(path);
    if (body === undefined) return entries;
    const parsed = JSON.parse(body) as { format?: unknown; salt?: unknown; entries?: unknown };
    if (parsed.format !== MEMO_FORMAT || parsed.salt !== salt || !isRecord(parsed.entries)) return entries;
    for (const [key, value] of Object.entries(parsed.entries)) entries.set(key, value);
  } catch {
    // Missing or unreadable: nothing remembered.
  }
  return entries;
}

/** A remembered value is served only if it has the shape ajv's errors have (chain-layer.ts renders them). */
function isSchemaErrors(value: unknown): value is SchemaError[] {
  return (
    Array.isArray(value) &&
    value.every((e) => isRecord(e) && typeof e.instancePath === "string" && typeof e.schemaPath === "string" && typeof e.keyword === "string" && typeof e.message === "string" && isRecord(e.params))
  );
}
