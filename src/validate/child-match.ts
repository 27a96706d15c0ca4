// Which `validation.child_schemas` entry judges a child: the one rule `kiwi check` and `kiwi exec`
// both apply, so a chain that passes at lock time is never refused at run time. Pure.
import { type LinkSource, linkDocument } from "./link-document.ts";
import { isRecord } from "../integrity/value.ts";

/** The fields of a child that `match` may name. */
export type MatchableTool = LinkSource;

/**
 * Index of the first entry whose `match` keys all equal the child's values, or -1. Keys name the
 * link document (link-document.ts: the manifest as written with the link fields over it; dotted
 * paths such as `config.transport` or `manifest.language` reach into it), plus `type`, so one
 * entry (`tool_type: script`) matches both dialects (magray writes `type`). `doc` is the child's
 * link document when the caller built it already (it is only read here).
 */
export function findChildSchemaEntry(entries: readonly { match: Record<string, unknown> }[], child: MatchableTool, doc: Record<string, unknown> = linkDocument(child)): number {
  const view: Record<string, unknown> = { type: child.type, ...doc };
  return entries.findIndex((e) => Object.entries(e.match).every(([key, want]) => deepEqual(lookup(view, key), want)));
}

/** A key, or a dotted path such as `config.transport`. */
function lookup(view: Record<string, unknown>, key: string): unknown {
  if (Object.hasOwn(view, key)) return view[key];
  let node: unknown = view;
  for (const part of key.split(".")) {
    if (!isRecord(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

/** Structural equality of plain JSON values (key order does not matter). */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}
