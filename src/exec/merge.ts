// Config merged down an executor chain (README "kiwi exec", "How config merges"); limits merge in
// manifest/run-limits.ts.
// Root (the primitive) first, then each executor, then the tool: the child overrides the parent.
// Pure.
import { Float, isRecord, setOwn } from "../integrity/value.ts";

/** Keys whose lists accumulate down the chain instead of being replaced. */
const CONCAT_KEYS = new Set(["args"]);
/** Keys whose lists are a set union down the chain. */
const UNION_KEYS = new Set(["secrets"]);
/** Keys whose values are payloads, replaced whole even when they are maps. */
const OPAQUE_KEYS = new Set(["body"]);

/**
 * Merges configs given root-first. Rules: a scalar or list in the child replaces the parent's;
 * maps merge key by key, recursively; `null` in the child removes the key; `args` concatenates
 * (parent first); `secrets` is a union; `body` is replaced whole. Takes plain or lossless configs.
 */
export function mergeConfigs(configs: readonly Record<string, unknown>[]): Record<string, unknown> {
  let merged: Record<string, unknown> = {};
  for (const config of configs) merged = mergeMap(merged, config, true);
  return merged;
}

function mergeMap(parent: Record<string, unknown>, child: Record<string, unknown>, top: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parent)) setOwn(out, k, v);
  for (const [key, value] of Object.entries(child)) {
    const prev = out[key];
    if (value === null) {
      delete out[key];
    } else if (top && CONCAT_KEYS.has(key) && Array.isArray(value)) {
      setOwn(out, key, [...(Array.isArray(prev) ? prev : []), ...value]);
    } else if (top && UNION_KEYS.has(key) && Array.isArray(value)) {
      setOwn(out, key, [...new Set([...(Array.isArray(prev) ? prev : []), ...value])]);
    } else if (!(top && OPAQUE_KEYS.has(key)) && isMap(value) && isMap(prev)) {
      setOwn(out, key, mergeMap(prev, value, false));
    } else {
      setOwn(out, key, value);
    }
  }
  return out;
}

/** A map to merge into: a lossless Float (1.0) is a number, not a map. */
function isMap(v: unknown): v is Record<string, unknown> {
  return isRecord(v) && !(v instanceof Float);
}
