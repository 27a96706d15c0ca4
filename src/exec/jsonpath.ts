// The JSONPath subset behind http_client's `response_transform` (documented in README "kiwi exec"):
// `$`, `.name`, `['name']`/`["name"]`, `[n]` (negative counts from the end), `[a:b]` slices and
// `[*]`/`.*`. No filters, no recursive descent, no scripts: a path is data, never code. Pure.
import { KiwiError } from "../errors.ts";
import { isRecord } from "../integrity/value.ts";

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

/** Parses a path of the documented subset, or throws E_INPUT_INVALID naming the column. */
export function parseJsonPath(text: string): JsonPath {
  const fail = (at: number, why: string): never => {
    throw new KiwiError("E_INPUT_INVALID", `response_transform ${JSON.stringify(text)}: ${why} at column ${at + 1}`, {
      hint: "kiwi supports $, .name, ['name'], [n], [a:b] and [*], e.g. $.forecast.daily[0:7]",
    });
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

/** The nodes a path selects, in document order. */
export function selectJsonPath(path: JsonPath, root: unknown): unknown[] {
  let nodes: unknown[] = [root];
  for (const seg of path.segments) {
    const next: unknown[] = [];
    for (const node of nodes) {
      switch (seg.kind) {
        case "name":
          if (isRecord(node) && Object.hasOwn(node, seg.name)) next.push(node[seg.name]);
          break;
        case "index":
          if (Array.isArray(node)) {
            const i = seg.index < 0 ? node.length + seg.index : seg.index;
            if (i >= 0 && i < node.length) next.push(node[i]);
          }
          break;
        case "slice":
          if (Array.isArray(node)) next.push(...node.slice(seg.start ?? 0, seg.end ?? node.length));
          break;
        case "wildcard":
          if (Array.isArray(node)) next.push(...node);
          else if (isRecord(node)) next.push(...Object.values(node));
          break;
      }
    }
    nodes = next;
  }
  return nodes;
}

/**
 * Applies a transform: a definite path gives its one value (E_EXEC_FAILED when nothing matches);
 * a path with a slice or wildcard gives the array of every match (possibly empty).
 */
export function applyJsonPath(path: JsonPath, root: unknown, subject: string): unknown {
  const nodes = selectJsonPath(path, root);
  if (!path.definite) return nodes;
  if (nodes.length === 0) {
    throw new KiwiError("E_EXEC_FAILED", `${subject}: response_transform ${path.text} matched nothing in the response`, {
      hint: "check the path against the API's response, or use a slice/wildcard path to accept an empty result",
    });
  }
  return nodes[0];
}
