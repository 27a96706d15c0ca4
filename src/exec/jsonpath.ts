// The JSONPath subset behind http_client's `response_transform` (documented in README "kiwi exec"),
// parsed by validate/jsonpath-parse.ts (kiwi check reads it the same way) and applied here to a
// response. Pure.
import { KiwiError } from "../errors.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";
import { isRecord } from "../integrity/value.ts";
import { isRawJson } from "../integrity/canonical.ts";
import { type JsonPath, readJsonPath } from "../validate/jsonpath-parse.ts";

/** Parses a path of the documented subset, or throws E_INPUT_INVALID naming the column. */
export function parseJsonPath(text: string): JsonPath {
  try {
    return readJsonPath(text);
  } catch (error) {
    if (!(error instanceof ParseProblem)) throw error;
    throw new KiwiError("E_INPUT_INVALID", error.message, { hint: error.hint });
  }
}


/** An object whose members a path can select (a number kept as its text is none). */
const hasMembers = (node: unknown): node is Record<string, unknown> => isRecord(node) && !isRawJson(node);

/** The nodes a path selects, in document order. */
export function selectJsonPath(path: JsonPath, root: unknown): unknown[] {
  let nodes: unknown[] = [root];
  for (const seg of path.segments) {
    const next: unknown[] = [];
    for (const node of nodes) {
      switch (seg.kind) {
        case "name":
          if (hasMembers(node) && Object.hasOwn(node, seg.name)) next.push(node[seg.name]);
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
          else if (hasMembers(node)) next.push(...Object.values(node));
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
