// A value's exact JSON text, the key of the memos that remember verdicts by value (child_schemas
// verdicts, one check's parameter declarations): equal texts only for values no check can tell
// apart. Pure.

/** Most values one key text may hold; past it the value is judged afresh (aliases can multiply a document). */
const EXACT_TEXT_BUDGET = 200_000;

/**
 * The value's JSON text (key order kept: ajv reports errors in that order, and parameter findings
 * follow it) when that text tells it apart from every other value a check could see, else
 * undefined: JSON.stringify folds -0 into 0, NaN and Infinity into null and drops undefined, and a
 * class instance, a cycle or a huge value has no faithful text. Such values (never seen in
 * practice) are simply judged afresh.
 */
export function exactText(value: unknown): string | undefined {
  let budget = EXACT_TEXT_BUDGET;
  const plain = (v: unknown, depth: number): boolean => {
    if (--budget < 0 || depth > 512) return false;
    if (v === null || typeof v === "string" || typeof v === "boolean") return true;
    if (typeof v === "number") return Number.isFinite(v) && !Object.is(v, -0);
    if (typeof v !== "object") return false;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (!(i in v) || !plain(v[i], depth + 1)) return false;
      return true;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const key in v) if (!plain((v as Record<string, unknown>)[key], depth + 1)) return false;
    return true;
  };
  return plain(value, 0) ? JSON.stringify(value) : undefined;
}
