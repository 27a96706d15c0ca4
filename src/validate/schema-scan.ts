// The walk every schema gets before ajv sees it: bounds depth and size, refuses non-local $ref,
// screens patterns, picks the draft, and builds the canonical text used as the cache key. Pure.
import { checkRegexSafety } from "./regex-safety.ts";
import { isRecord } from "../integrity/value.ts";
import { escapePointer } from "../integrity/canonical.ts";

/** Why an untrusted schema is refused, and where. */
export interface SchemaProblem {
  kind: "not-a-schema" | "too-large" | "too-deep" | "remote-ref" | "unsafe-pattern" | "unsupported-draft" | "invalid";
  message: string;
  pointer: string;
}

/** Deepest schema accepted (objects and arrays count as levels). */
export const MAX_SCHEMA_DEPTH = 64;
/** Most nodes (values of any kind) one schema may contain. */
export const MAX_SCHEMA_NODES = 20_000;

export const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";
export const DRAFT_07 = "http://json-schema.org/draft-07/schema";

export type Scan = { ok: true; key: string; draft: "2020-12" | "draft-07" } | { ok: false; problem: SchemaProblem };

/**
 * Walks the schema once before ajv sees it: bounds depth and size, refuses any $ref that is not
 * local (`#...`), screens patterns, and builds the canonical text used as the cache key.
 */
export function scanSchema(schema: unknown, screenPatterns = true): Scan {
  if (typeof schema !== "boolean" && !isRecord(schema)) {
    return { ok: false, problem: { kind: "not-a-schema", message: "a JSON Schema must be an object or a boolean", pointer: "" } };
  }
  let draft: "2020-12" | "draft-07" = "2020-12";
  if (isRecord(schema) && schema.$schema !== undefined) {
    const d = draftOf(schema.$schema);
    if (!d) {
      return {
        ok: false,
        problem: {
          kind: "unsupported-draft",
          message: `unsupported $schema ${JSON.stringify(schema.$schema)}; use ${DRAFT_2020} or ${DRAFT_07}#`,
          pointer: "/$schema",
        },
      };
    }
    draft = d;
  }
  let nodes = 0;
  let problem: SchemaProblem | undefined;
  // `parentKey` is the keyword this value sits under: below properties, patternProperties and $defs
  // the keys are names, not keywords; `data` marks instance data (const, enum, default, examples).
  const walk = (value: unknown, pointer: string, depth: number, parentKey: string | undefined, data = false): string => {
    if (problem) return "";
    if (++nodes > MAX_SCHEMA_NODES) {
      problem = { kind: "too-large", message: `the schema has more than ${MAX_SCHEMA_NODES} nodes`, pointer };
      return "";
    }
    if (depth > MAX_SCHEMA_DEPTH) {
      problem = { kind: "too-deep", message: `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, pointer };
      return "";
    }
    if (Array.isArray(value)) return `[${value.map((v, i) => walk(v, `${pointer}/${i}`, depth + 1, undefined, data)).join(",")}]`;
    if (!isRecord(value)) return JSON.stringify(value) ?? "null";
    const keys = Object.keys(value).sort();
const keywordsHere = !data && parentKey !== "properties" && parentKey !== "patternProperties" && parentKey !== "$defs" && parentKey !== "definitions" && parentKey !== "dependentSchemas";
    const parts: string[] = [];
    for (const key of keys) {
      const child = value[key];
      const childPointer = `${pointer}/${escapePointer(key)}`;
      if (keywordsHere && (key === "$ref" || key === "$dynamicRef" || key === "$recursiveRef") && typeof child === "string" && !child.startsWith("#")) {
        problem = { kind: "remote-ref", message: `${key} ${JSON.stringify(child)} is not local; kiwi never fetches schemas`, pointer: childPointer };
        return "";
      }
      if (screenPatterns && keywordsHere && key === "pattern" && typeof child === "string") {
        const verdict = checkRegexSafety(child);
        if (!verdict.ok) {
          problem = { kind: "unsafe-pattern", message: `pattern ${JSON.stringify(child)}: ${verdict.reason}`, pointer: childPointer };
          return "";
        }
      }
      if (screenPatterns && parentKey === "patternProperties") {
        const verdict = checkRegexSafety(key);
        if (!verdict.ok) {
          problem = { kind: "unsafe-pattern", message: `patternProperties key ${JSON.stringify(key)}: ${verdict.reason}`, pointer: childPointer };
          return "";
        }
      }
      const isData = data || (keywordsHere && DATA_KEYWORDS.has(key));
      parts.push(`${JSON.stringify(key)}:${walk(child, childPointer, depth + 1, keywordsHere ? key : undefined, isData)}`);
    }
    return `{${parts.join(",")}}`;
  };
  const key = walk(schema, "", 0, undefined);
  if (problem) return { ok: false, problem };
  return { ok: true, key: `${draft}\n${key}`, draft };
}

/** Keywords whose values are instance data, not schemas: a `$ref` key inside them is just data. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);

function draftOf(value: unknown): "2020-12" | "draft-07" | undefined {
  if (typeof value !== "string") return undefined;
  const v = value.replace(/^https?:\/\//, "").replace(/#$/, "");
  if (v === "json-schema.org/draft/2020-12/schema") return "2020-12";
  if (v === "json-schema.org/draft-07/schema") return "draft-07";
  return undefined;
}

