// child_schemas verdicts remembered in the cache, the I/O half of layer.ts ChildSchemaMemo: ajv's
// errors for a (schema, child link document) pair that was judged before, so a check whose pairs
// are all known never loads or runs ajv (about 10 ms of a first `kiwi check --staged`, issue 14).
// One file, <cache>/check/child-schemas-v1.json, read once and written once per run (atomically)
// when something new was judged. Its first line is the digest of the rest: a damaged file reads as
// empty. Keys are salted with kiwi's version and the running binary's stat identity (builds of one
// version differ while kiwi is developed), so another kiwi's verdicts are never read.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { sha256Hex } from "../integrity/digest.ts";
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
  let entries: Map<string, unknown> | undefined;
  const used = new Set<string>();
  let added = false;
  const load = () => (entries ??= readEntries(path));
  return {
    salt: `kiwi ${options.version ?? pkg.version} ${binaryIdentity()} child-schemas ${MEMO_FORMAT}`,
    get(key) {
      const value = load().get(key);
      if (!isSchemaErrors(value)) return undefined;
      used.add(key);
      return value;
    },
    set(key, errors) {
      // Only what survives JSON comes back as it went in; anything else is judged afresh next time.
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
      const body = `${JSON.stringify({ format: MEMO_FORMAT, entries: kept })}\n`;
      try {
        writeFileAtomic(path, `${sha256Hex(body)}\n${body}`);
      } catch {
        // A read-only or full cache directory: the check itself still worked.
      }
      added = false;
    },
  };
}

/** The running executable (kiwi's binary, or bun running the sources): path, size and mtime. */
function binaryIdentity(): string {
  try {
    const st = statSync(process.execPath);
    return `${process.execPath} ${st.size} ${st.mtimeMs}`;
  } catch {
    return process.execPath;
  }
}

/** The file's verdicts by key; empty when it is missing, unreadable, damaged or of another format. */
function readEntries(path: string): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  try {
    const text = readFileSync(path, "utf8");
    const nl = text.indexOf("\n");
    const body = text.slice(nl + 1);
    if (nl !== 64 || sha256Hex(body) !== text.slice(0, nl)) return entries;
    const parsed = JSON.parse(body) as { format?: unknown; entries?: unknown };
    if (parsed.format !== MEMO_FORMAT || !isRecord(parsed.entries)) return entries;
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
