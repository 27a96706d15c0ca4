// The syntax of http_client's `response_transform`, a JSONPath subset (documented in README "kiwi
// exec"): `$`, `.name`, `['name']`/`["name"]`, `[n]` (negative counts from the end), `[a:b]`
// slices and `[*]`/`.*`. No filters, no recursive descent, no scripts: a path is data, never code.
// kiwi check parses it (api/response-transform) as exec's plan does (exec/jsonpath.ts), so a
// tool whose every call would be refused is not locked. Pure.
import { ParseProblem } from "../integrity/parse-problem.ts";

export type PathSegment =
  | { kind: "name"; name: string }
  | { kind: "index"; index: number }
  | { kind: "slice"; start?: number; end?: number }
  | { kind: "wildcard" };

export interface JsonPath {
  text: string;
  segments: PathSegment[];
  /** True when the path can match at most one node (no slice, no wildcard): the result is that value. */
  definite: boolean;
}

/** Longest path text kiwi parses; a transform is a short selector, not a program. */
const MAX_PATH_LENGTH = 1024;

/**
 * Parses a path of the documented subset, or throws a ParseProblem (rule api/response-transform)
 * naming the column: kiwi check reports it as a finding, exec's plan as E_INPUT_INVALID.
 */
export function readJsonPath(text: string): JsonPath {
  const fail = (at: number, why: string): never => {
    throw new ParseProblem("api/response-transform", `response_transform ${JSON.stringify(text)}: ${why} at column ${at + 1}`, undefined, "kiwi supports $, .name, ['name'], [n], [a:b] and [*], e.g. $.forecast.daily[0:7]");
  };
  if (text.length > MAX_PATH_LENGTH) fail(MAX_PATH_LENGTH, `longer than ${MAX_PATH_LENGTH} characters`);
  if (text[0] !== "$") fail(0, 'a path starts with "$"');
  const segments: PathSegment[] = [];
  let i = 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === ".") {
      if (text[i + 1] === ".") fail(i, "recursive descent (..) is not supported");
      if (text[i + 1] === "*") {
        segments.push({ kind: "wildcard" });
        i += 2;
        continue;
      }
      const match = /^[A-Za-z_$][A-Za-z0-9_$-]*/.exec(text.slice(i + 1));
      if (!match) fail(i + 1, "expected a member name after '.'");
      segments.push({ kind: "name", name: match![0] });
      i += 1 + match![0].length;
    } else if (ch === "[") {
      const close = findClose(text, i + 1);
      if (close === -1) fail(i, "unclosed '['");
      segments.push(parseBracket(text.slice(i + 1, close), i + 1, fail));
      i = close + 1;
    } else {
      fail(i, `unexpected ${JSON.stringify(ch)}`);
    }
  }
  return { text, segments, definite: segments.every((s) => s.kind === "name" || s.kind === "index") };
}

function findClose(text: string, from: number): number {
  const quote = text[from];
  if (quote === "'" || quote === '"') {
    for (let j = from + 1; j < text.length; j++) {
      if (text[j] === "\\") j++;
      else if (text[j] === quote) return text[j + 1] === "]" ? j + 1 : -1;
    }
    return -1;
  }
  return text.indexOf("]", from);
}

function parseBracket(inner: string, at: number, fail: (at: number, why: string) => never): PathSegment {
  const body = inner.trim();
  if (body === "*") return { kind: "wildcard" };
  if (body[0] === "'" || body[0] === '"') {
    const quote = body[0];
    const raw = body.slice(1, -1);
    // Unescape \\ and \<quote> only; other escapes are literal characters.
    return { kind: "name", name: raw.replace(new RegExp(`\\\\([\\\\${quote}])`, "g"), "$1") };
  }
  const int = (s: string, what: string): number | undefined => {
    const t = s.trim();
    if (t === "") return undefined;
    if (!/^-?\d{1,9}$/.test(t)) fail(at, `${what} must be an integer (got ${JSON.stringify(t)})`);
    return Number(t);
  };
  if (body.includes(":")) {
    const parts = body.split(":");
    if (parts.length > 2) fail(at, "slice steps ([a:b:c]) are not supported");
    return { kind: "slice", start: int(parts[0]!, "a slice start"), end: int(parts[1]!, "a slice end") };
  }
  if (body === "") fail(at, "empty brackets");
  if (body.startsWith("?") || body.startsWith("(")) fail(at, "filters and script expressions are not supported");
  if (body.includes(",")) fail(at, "unions ([a,b]) are not supported");
  return { kind: "index", index: int(body, "an index")! };
}
