// A tool's parameter schema kept in a file beside its manifest (`parameters: params.yaml`), as
// VAPORA keeps one schema per tool: a parameters list (YAML or JSON), or a JSON Schema object
// whose `properties` and `required` become that list, the form kiwi_mcp's CONFIG_SCHEMA takes
// too. Pure: the caller reads the file (discover-io.ts).
import { type CanonicalValue, Float, isMapping, toPlain } from "../integrity/value.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";
import { parseYaml } from "./yaml.ts";

/** Parameter fields a JSON Schema property carries over (validate/parameters.ts knows them all). */
const PARAMETER_FIELDS = ["type", "description", "default", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "minItems", "maxItems"];

/** JSON Schema annotations: they constrain nothing, so a parameter leaves them out without a word. */
const ANNOTATIONS = new Set(["title", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$id", "$schema", "$anchor"]);

/**
 * A JSON Schema's `properties` and `required` as a parameters list. Nested schemas (items,
 * properties of a property) are not carried over; the property keeps its type. With
 * `keepUnknown`, every other keyword but an annotation is kept as written, so the parameters check
 * reports it (parameters/unknown-field) instead of the constraint vanishing unenforced.
 */
export function parametersFromJsonSchema(schema: CanonicalValue | undefined, options: { keepUnknown?: boolean } = {}): CanonicalValue[] | undefined {
  if (!isMapping(schema) || !isMapping(schema.properties)) return undefined;
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(schema.properties).map(([name, property]) => {
    const out: { [key: string]: CanonicalValue } = { name };
    if (isMapping(property)) {
      const read = nullableBranch(property) ?? property;
      for (const key of PARAMETER_FIELDS) if (read[key] !== undefined) out[key] = read[key]!;
      const type = typeOf(read) ?? unionOf(read);
      if (type !== undefined) out.type = type;
      if (options.keepUnknown) for (const [key, value] of Object.entries(read)) if (!(key in out) && key !== "name" && key !== "required" && !ANNOTATIONS.has(key)) out[key] = value;
      if (read !== property || isNullable(property.type) || (read.type === undefined && Array.isArray(read.enum) && read.enum.includes(null))) dropNull(out);
    }
    if (required.includes(name)) out.required = true;
    return out;
  });
}

/** `["T", "null"]`: a type that also allows null, which an optional kiwi parameter expresses by being left out. */
function isNullable(type: CanonicalValue | undefined): boolean {
  return Array.isArray(type) && type.length === 2 && type.includes("null") && type.some((t) => typeof t === "string" && t !== "null");
}

/**
 * An optional value as Pydantic and zod-to-json-schema write it, with no `type` of its own:
 * `anyOf` (or `oneOf`) of one schema and `{ type: "null" }`. It reads as that schema, with the
 * property's own fields (description, default) over it; anything else is no such branch.
 */
function nullableBranch(property: { [key: string]: CanonicalValue }): { [key: string]: CanonicalValue } | undefined {
  if (property.type !== undefined) return undefined;
  const key = property.anyOf !== undefined ? "anyOf" : property.oneOf !== undefined ? "oneOf" : undefined;
  const branches = key ? property[key] : undefined;
  if (!Array.isArray(branches) || branches.length !== 2 || !branches.every(isMapping)) return undefined;
  const isNull = (b: CanonicalValue) => isMapping(b) && b.type === "null" && Object.keys(b).length === 1;
  const other = branches.find((b) => !isNull(b));
  if (!isMapping(other) || !branches.some(isNull) || other.anyOf !== undefined || other.oneOf !== undefined) return undefined;
  const { [key!]: _branches, ...own } = property;
  return { ...other, ...own };
}

/**
 * The types an `anyOf`/`oneOf` of typed schemas allows, with no `type` of its own: a union no kiwi
 * parameter holds, carried as a type list so the check names it as one.
 */
function unionOf(property: { [key: string]: CanonicalValue }): CanonicalValue | undefined {
  if (property.type !== undefined) return undefined;
  const branches = property.anyOf ?? property.oneOf;
  if (!Array.isArray(branches) || !branches.every((b) => isMapping(b) && typeof b.type === "string")) return undefined;
  const types = [...new Set(branches.map((b) => (b as { type: string }).type))];
  return types.length > 1 ? types : undefined;
}

/**
 * A nullable property as a parameter: null is how the schema says "not given", which a kiwi
 * parameter says by being left out, so a `default: null` and a null among the enum's values go.
 */
function dropNull(out: { [key: string]: CanonicalValue }): void {
  if (out.default === null) delete out.default;
  if (Array.isArray(out.enum) && out.enum.includes(null)) out.enum = out.enum.filter((v) => v !== null);
}

/**
 * The parameter type of a property written in JSON Schema's other common ways: optional as
 * `["string", "null"]` (kiwi's parameters are optional by leaving them out, so null adds nothing a
 * call needs), or only an `enum`, whose values say the type (`enum: [fast, slow]` is a string).
 * Undefined where `type` says it already, or nothing does (the check names the property).
 */
function typeOf(property: { [key: string]: CanonicalValue }): CanonicalValue | undefined {
  const t = property.type;
  if (Array.isArray(t) && t.length === 2 && t.includes("null")) {
    const other = t.find((x) => x !== "null");
    return typeof other === "string" ? other : undefined;
  }
  if (t !== undefined || !Array.isArray(property.enum) || property.enum.length === 0) return undefined;
  const values = property.enum.filter((v) => v !== null);
  if (values.length === 0) return undefined;
  const kinds = new Set(values.map((v) => (typeof v === "string" ? "string" : typeof v === "boolean" ? "boolean" : typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v)) ? "integer" : typeof v === "number" || v instanceof Float ? "number" : "other")));
  if (kinds.size === 1 && !kinds.has("other")) return [...kinds][0];
  if (kinds.size === 2 && kinds.has("integer") && kinds.has("number")) return "number";
  return undefined;
}

/** The parameters list a parameters file holds, or why it holds none. */
export function parametersFromFile(read: string, fileName: string): { ok: true; parameters: unknown[] } | { ok: false; problem: string } {
  // A byte-order mark (Windows editors write one) is no part of the text: JSON refuses it, and the
  // yaml library takes a list after it for a syntax error.
  const text = read.charCodeAt(0) === 0xfeff ? read.slice(1) : read;
  let value: CanonicalValue;
  try {
    value = /\.json$/i.test(fileName) ? parseJsonLossless(text).value : parseYaml(text).value;
  } catch (error) {
    return { ok: false, problem: `it is not valid ${/\.json$/i.test(fileName) ? "JSON" : "YAML"}: ${(error as Error).message}` };
  }
  if (Array.isArray(value)) return { ok: true, parameters: toPlain(value) as unknown[] };
  // A parameters file is one of the tool's files, so what the list holds is no part of the lock's
  // digest: a keyword kiwi does not enforce is kept here for the check to name.
  const fromSchema = parametersFromJsonSchema(value, { keepUnknown: true });
  if (fromSchema) return { ok: true, parameters: toPlain(fromSchema) as unknown[] };
  return { ok: false, problem: "it holds neither a parameters list nor a JSON Schema with properties" };
}
