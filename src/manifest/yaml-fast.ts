// A fast path for the YAML most manifests are: Bun's native parser (~17x faster than the yaml
// library, which dominated a cold `kiwi check` or `kiwi lock`), used only when the text provably
// means the same to it as to the yaml library. Anything it cannot vouch for returns undefined and
// goes to the reference path in yaml.ts. Pure; test/manifest/yaml-fast.test.ts holds the two
// parsers to the same values over every manifest the tests know.
import { type CanonicalValue, setOwn } from "../integrity/value.ts";
import { MAX_DEPTH } from "../integrity/json-lossless.ts";

/**
 * Text the fast path leaves to the reference parser. Bun's parser is YAML 1.2 like the yaml library,
 * but it keeps no integer/float distinction (`1.0` becomes 1), accepts duplicate keys, and has not
 * been held to the same behaviour for anchors, tags, complex keys or multiple documents.
 */
const DEFER: readonly RegExp[] = [
  /[\t\r]/, // tabs and CRs: indentation subtleties
  /^(?:---|\.\.\.)(?:\s|$)/m, // document markers (multi-document streams)
  /^%/m, // directives
  /(?:^|[\s[{,])[&*!]/m, // anchors, aliases, tags
  /(?:^|[\s[{,])\?(?:\s|$)/m, // complex keys
  /(?:^|[\s{,])<<\s*:/m, // merge keys
  /(?<![\w.])[-+]?(?:\d[\d_]*\.0*|\.0+)(?![\w.])/, // floats with an integral value: 1.0, 5., .0
  /\d[eE][-+]?\d/, // exponents (1e3 is an integral float)
  /\.(?:inf|Inf|INF|nan|NaN|NAN)\b/, // non-finite numbers (the reference path reports them)
  /\d{16,}/, // integers that may pass 2^53
  /0[xXoObB][\da-fA-F_]{12,}/, // hex, octal or binary integers that may pass 2^53 (Bun reads them as text)
  /[-+]0[xXoObB]/, // a signed hex or octal: text in YAML 1.2's core schema, a number to Bun
];

/**
 * DEFER as one pattern: one scan of the text instead of ten (half the screen's time on a
 * 1,000-manifest lock). Only the `m` flag differs among them, and it only changes ^ and $, which
 * the patterns without it do not use.
 */
const DEFERRED = new RegExp(DEFER.map((re) => `(?:${re.source})`).join("|"), "m");

/** A block key at the start of a line (after indentation and `- ` sequence markers). */
const BLOCK_KEY = /^ *(?:- +)*(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|(?!- )[^\s#'"[\]{},:][^\n#]*?) *:(?= |$)/gm;
/** A key inside a flow mapping, after `{` or `,`. */
const FLOW_KEY = /[{,] *(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|[^\s#'"[\]{},:][^\n#{}[\],]*?) *:(?=[ ,}\]]|$)/g;

/** Parses YAML with Bun's parser when that is provably equivalent; undefined means "use yaml.ts". */
export function parseYamlFast(text: string): CanonicalValue | undefined {
  if (DEFERRED.test(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = Bun.YAML.parse(text);
  } catch {
    return undefined; // the reference parser words the error
  }
  const keys = { count: 0 };
  const value = convert(parsed, 0, keys);
  if (value === undefined) return undefined;
  // A duplicate key leaves fewer keys parsed than written; any mismatch (a key-like line inside a
  // block scalar, say) is simply left to the reference parser, which reports duplicates.
  const written = (text.match(BLOCK_KEY)?.length ?? 0) + (text.match(FLOW_KEY)?.length ?? 0);
  return written === keys.count ? value : undefined;
}

function convert(value: unknown, depth: number, keys: { count: number }): CanonicalValue | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) {
    const out: CanonicalValue[] = [];
    for (const item of value) {
      const converted = convert(item, depth + 1, keys);
      if (converted === undefined) return undefined;
      out.push(converted);
    }
    return out;
  }
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: { [key: string]: CanonicalValue } = {};
    for (const key of Object.keys(value)) {
      // A flow mapping written as a key (`{a: 1}: c`) is "[object Object]" here; the reference
      // parser refuses it.
      if (key === "[object Object]") return undefined;
      const converted = convert((value as Record<string, unknown>)[key], depth + 1, keys);
      if (converted === undefined) return undefined;
      keys.count++;
      setOwn(out, key, converted);
    }
    return out;
  }
  return undefined; // dates, binary, anything else: not a manifest value the fast path vouches for
}
