// A tool's `parameters` list -> ONE JSON Schema (2020-12) for its call arguments: unknown
// arguments rejected, defaults included. Malformed declarations are findings pointing into the
// manifest. Pure. `kiwi check` reports the findings; exec validates calls with `compileParameters`.
import type { Finding } from "../findings/verdict.ts";
import type { Tool } from "../manifest/model.ts";
import { type FindingSubject, toolFinding } from "../findings/finding.ts";
import { compileUntrustedSchema, type SchemaError } from "./json-schema.ts";
import { UnsupportedPattern, linearRegExp } from "./linear-regex.ts";
import { checkRegexSafety } from "./regex-safety.ts";
import type { RuleId } from "../findings/rules.ts";
import { type JsonSchema, checkValue } from "./check-value.ts";
import { PARAMETER_FORMATS, PARAMETER_NAME, PARAMETER_TYPES, type ParameterType } from "../schema/parameter-fields.ts";
import { type CanonicalValue, Float, isRecord } from "../integrity/value.ts";
import { escapePointer, renderCanonicalJson } from "../integrity/canonical.ts";
import { exactText } from "./exact-text.ts";

export { checkValue, type JsonSchema } from "./check-value.ts";

/** Which contracts apply to which types. */
const CONTRACTS: Record<string, readonly ParameterType[]> = {
  minLength: ["string"],
  maxLength: ["string"],
  pattern: ["string"],
  format: ["string"],
  minimum: ["integer", "number"],
  maximum: ["integer", "number"],
  exclusiveMinimum: ["integer", "number"],
  exclusiveMaximum: ["integer", "number"],
  minItems: ["array"],
  maxItems: ["array"],
  non_empty: ["string", "array"],
  nonEmpty: ["string", "array"],
};

/** CONTRACTS as entries, in its order (a contract's check may read one set before it), built once rather than per parameter. */
const CONTRACT_ENTRIES = Object.entries(CONTRACTS);

const KNOWN_FIELDS = new Set(["name", "type", "required", "default", "enum", "description", ...Object.keys(CONTRACTS)]);



export interface ParametersSchema {
  ok: boolean;
  /** Always built (from the declarations that are well-formed), even when findings exist. */
  schema: JsonSchema;
  findings: Finding[];
}

export interface CompiledParameters extends ParametersSchema {
  /** Validates call arguments against the schema; absent when the declarations are broken. */
  validate?: (args: unknown) => SchemaError[];
}

/** A malformed declaration, before it is tied to a tool (its pointer is into the manifest). */
interface Problem {
  rule: RuleId;
  pointer: string;
  message: string;
  hint?: string;
}

/**
 * One check's problems by parameters pointer and the list's exact text (exact-text.ts): a large
 * tree repeats a few parameter lists, and judging a list is a pure function of that text and the
 * pointer, so each distinct list is judged once per check (checkProject makes one per run).
 */
export type ParameterMemo = Map<string, readonly Problem[]>;

/** Builds the tool's parameter schema and reports malformed declarations (pointers in the user's terms). */
export function buildParametersSchema(tool: FindingSubject & Pick<Tool, "parameters" | "pointers">): ParametersSchema {
  const built = judgeParameters(tool.parameters, tool.pointers.parameters ?? "/parameters");
  return done(built.schema, findingsOf(tool, built.problems));
}

/** The findings buildParametersSchema reports for the tool, each distinct list judged once per memo. */
export function checkParameters(tool: FindingSubject & Pick<Tool, "parameters" | "pointers">, memo: ParameterMemo): Finding[] {
  const base = tool.pointers.parameters ?? "/parameters";
  const text = tool.parameters === undefined || tool.parameters === null ? undefined : exactText(tool.parameters);
  if (text === undefined) return findingsOf(tool, judgeParameters(tool.parameters, base).problems);
  const key = `${base}\0${text}`;
  let problems = memo.get(key);
  if (problems === undefined) memo.set(key, (problems = judgeParameters(tool.parameters, base).problems));
  return findingsOf(tool, problems);
}

function findingsOf(tool: FindingSubject, problems: readonly Problem[]): Finding[] {
  return problems.map((p) => toolFinding(tool, p.rule, p.pointer, p.message, p.hint));
}

/** The schema of a parameters list and its malformed declarations; `base` is the list's pointer. */
function judgeParameters(list: unknown, base: string): { schema: JsonSchema; problems: Problem[] } {
  const problems: Problem[] = [];
  const report = (rule: RuleId, pointer: string, message: string, hint?: string) => {
    problems.push(hint === undefined ? { rule, pointer, message } : { rule, pointer, message, hint });
  };
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const schema: JsonSchema = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", additionalProperties: false, properties, required };
  if (list === undefined || list === null) return { schema, problems };
  if (!Array.isArray(list)) {
    report("parameters/not-a-list", base, "parameters must be a list of declarations", "write `parameters:` as a list: `- name: city\\n  type: string`");
    return { schema, problems };
  }
  const seen = new Map<string, number>();
  list.forEach((entry, index) => {
    const at = `${base}/${index}`;
    if (!isRecord(entry)) {
      report("parameters/entry", at, `parameter ${index} must be a mapping with name and type`, "write each entry as `- name: city` with `type: string` below it");
      return;
    }
    for (const key of Object.keys(entry)) {
      if (!KNOWN_FIELDS.has(key)) report("parameters/unknown-field", `${at}/${escapePointer(key)}`, `parameter field "${key}" is not known`, `known fields: ${[...KNOWN_FIELDS].join(", ")}`);
    }
    const name = entry.name;
    if (typeof name !== "string" || !PARAMETER_NAME.test(name)) {
      report("parameters/name", name === undefined ? at : `${at}/name`, name === undefined ? `parameter ${index} has no name` : `parameter name ${JSON.stringify(name)} is not an identifier`, "use letters, digits and '_', starting with a letter or '_'");
      return;
    }
    // The one identifier no JavaScript object takes as a plain key: a call could never pass it.
    if (name === "__proto__") {
      report("parameters/name", `${at}/name`, 'parameter name "__proto__" is reserved: it is the prototype of every object that carries parameters', "rename the parameter (proto, prototype_ref…)");
      return;
    }
    if (seen.has(name)) {
      report("parameters/duplicate-name", `${at}/name`, `parameter "${name}" is declared twice (first at index ${seen.get(name)})`, "rename or remove one of them");
      return;
    }
    seen.set(name, index);
    const property = buildProperty(entry, name, at, report);
    if (!property) return;
    properties[name] = property;
    if (entry.required !== undefined && typeof entry.required !== "boolean") {
      report("parameters/constraint", `${at}/required`, `"required" of parameter "${name}" must be true or false`, "write required: true (YAML 1.2 reads yes, no, on and off as text)");
    } else if (entry.required === true) required.push(name);
  });
  return { schema, problems };
}

/** The parameter schema plus a validator for call arguments (exec uses this at run time). */
export function compileParameters(tool: FindingSubject & Pick<Tool, "parameters" | "pointers">): CompiledParameters {
  const built = buildParametersSchema(tool);
  if (!built.ok) return built;
  const compiled = compileUntrustedSchema(built.schema, { subject: `parameters of ${tool.id}` });
  if (!compiled.ok) {
    // Declarations were screened already, so this is a kiwi bug more than a user error; say so plainly.
    const findings = [...built.findings, toolFinding(tool, "parameters/constraint", tool.pointers.parameters ?? "/parameters", compiled.problem.message)];
    return { ok: false, schema: built.schema, findings };
  }
  return { ...built, validate: (args) => compiled.validate(args) };
}

function done(schema: JsonSchema, findings: Finding[]): ParametersSchema {
  if ((schema.required as string[]).length === 0) delete schema.required;
  return { ok: !findings.some((f) => f.severity === "error"), schema, findings };
}

/** A value's JSON type, as a parameter type names it. */
function kindOf(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v))) return "integer";
  if (typeof v === "number" || v instanceof Float) return "number";
  if (v === null) return "null";
  return typeof v === "object" ? "object" : typeof v;
}

type Report = (rule: RuleId, pointer: string, message: string, hint?: string) => void;

function buildProperty(entry: Record<string, unknown>, name: string, at: string, report: Report): JsonSchema | undefined {
  const type = entry.type;
  if (Array.isArray(type) && type.length > 1) {
    // A JSON Schema union (kiwi_mcp's CONFIG_SCHEMA, a parameters file): kiwi reads [T, "null"] as an optional T, nothing wider.
    report("parameters/type", `${at}/type`, `parameter "${name}" has the union type ${JSON.stringify(type)}, and a kiwi parameter has one type (only [T, "null"] is read, as an optional T)`, `choose one type (a string the tool parses, say), or declare one parameter per type`);
    return undefined;
  }
  if (type === undefined && Array.isArray(entry.enum) && entry.enum.length > 0) {
    const kinds = [...new Set(entry.enum.filter((v) => v !== null).map(kindOf))];
    report("parameters/type", at, `parameter "${name}" has no type${kinds.length > 1 ? `, and its enum mixes ${kinds.join(" and ")} values, so kiwi cannot take one from it` : ""}`, kinds.length > 1 ? `set type: string and write every value as a string (${JSON.stringify(entry.enum.filter((v) => v !== null).map(String))}), or keep values of one type` : `use one of ${PARAMETER_TYPES.join(", ")}`);
    return undefined;
  }
  if (typeof type !== "string" || !(PARAMETER_TYPES as readonly string[]).includes(type)) {
    report("parameters/type", type === undefined ? at : `${at}/type`, type === undefined ? `parameter "${name}" has no type` : `parameter "${name}" has unknown type ${JSON.stringify(type)}`, `use one of ${PARAMETER_TYPES.join(", ")}`);
    return undefined;
  }
  const t = type as ParameterType;
  const contract: JsonSchema = { type: t };
  let broken = false;
  const fail = (rule: RuleId, key: string, message: string, hint?: string) => {
    broken = true;
    report(rule, `${at}/${key}`, message, hint);
  };
  for (const [key, types] of CONTRACT_ENTRIES) {
    const value = entry[key];
    if (value === undefined) continue;
    if (!types.includes(t)) {
      fail(key === "format" ? "parameters/format" : key === "pattern" ? "parameters/pattern" : "parameters/constraint", key, `"${key}" does not apply to ${t} parameter "${name}"`, `it applies to ${types.join(" and ")} parameters`);
      continue;
    }
    if (key === "minLength" || key === "maxLength" || key === "minItems" || key === "maxItems") {
      if (!Number.isSafeInteger(value) || (value as number) < 0) fail("parameters/constraint", key, `"${key}" of "${name}" must be a non-negative integer`, `write a whole number, 0 or more: ${key}: 1`);
      else contract[key] = value;
    } else if (key === "minimum" || key === "maximum" || key === "exclusiveMinimum" || key === "exclusiveMaximum") {
      if (typeof value !== "number" || !Number.isFinite(value)) fail("parameters/constraint", key, `"${key}" of "${name}" must be a number`, `write it unquoted: ${key}: 10`);
      else contract[key] = value;
    } else if (key === "non_empty" || key === "nonEmpty") {
      if (typeof value !== "boolean") fail("parameters/constraint", key, `"${key}" of "${name}" must be true or false`, `write ${key}: true (YAML 1.2 reads yes, no, on and off as text)`);
      else if (value) {
        const k = t === "string" ? "minLength" : "minItems";
        contract[k] = Math.max(1, typeof contract[k] === "number" ? (contract[k] as number) : 0);
      }
    } else if (key === "pattern") {
      if (typeof value !== "string") fail("parameters/pattern", key, `"pattern" of "${name}" must be a string`, "write the regular expression in quotes: pattern: '^[a-z]+$'");
      else {
        const verdict = checkRegexSafety(value);
        const unsupported = verdict.ok ? linearProblem(value) : undefined;
        if (!verdict.ok) fail("parameters/pattern", key, `pattern of "${name}": ${verdict.reason}`, "simplify the pattern: avoid nested repetition like (a+)+ and overlapping alternatives like (a|ab)*");
        else if (unsupported) fail("parameters/pattern", key, `pattern of "${name}": ${unsupported}`, "rewrite it without lookahead, lookbehind or backreferences");
        else contract.pattern = value;
      }
    } else if (key === "format") {
      if (typeof value !== "string" || !(PARAMETER_FORMATS as readonly string[]).includes(value)) fail("parameters/format", key, `format ${JSON.stringify(value)} of "${name}" is not known`, `use one of ${PARAMETER_FORMATS.join(", ")}`);
      else contract.format = value;
    }
  }
  // Bounds must leave room for at least one value.
  const pairs: [string, string][] = [["minLength", "maxLength"], ["minItems", "maxItems"]];
  for (const [lo, hi] of pairs) {
    if (typeof contract[lo] === "number" && typeof contract[hi] === "number" && (contract[lo] as number) > (contract[hi] as number)) {
      // non_empty sets the lower bound when no minLength/minItems is written: name what was written.
      const written = entry[lo] !== undefined ? lo : entry.non_empty !== undefined ? "non_empty" : "nonEmpty";
      if (written === lo) fail("parameters/constraint", lo, `"${lo}" (${contract[lo]}) of "${name}" is greater than "${hi}" (${contract[hi]})`, `make ${lo} at most ${hi}, or ${hi} at least ${lo}`);
      else fail("parameters/constraint", written, `"${written}" of "${name}" asks for at least 1, more than "${hi}" (${contract[hi]}) allows`, `make ${hi} at least 1, or drop ${written}`);
    }
  }
  const lower = [contract.minimum, contract.exclusiveMinimum].filter((v): v is number => typeof v === "number");
  const upper = [contract.maximum, contract.exclusiveMaximum].filter((v): v is number => typeof v === "number");
  if (lower.length && upper.length) {
    const lo = Math.max(...lower);
    const hi = Math.min(...upper);
    const strict = contract.exclusiveMinimum === lo || contract.exclusiveMaximum === hi;
    if (lo > hi || (lo === hi && strict)) fail("parameters/constraint", entry.minimum !== undefined ? "minimum" : "exclusiveMinimum", `the bounds of "${name}" leave no allowed value (${lo} .. ${hi})`, "make the lower bound less than the upper one (equal only when both are inclusive: minimum and maximum)");
  }
  if (broken) return undefined;
  // Parameters travel as JSON numbers: an integer past 2^53 would be passed on rounded (what runs
  // would not be what was hashed), and --param refuses one for the same reason.
  const pastExact = (v: unknown) => t === "integer" && typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v);
  const PAST_EXACT_HINT = "keep integer parameters within ±9007199254740991, or make the parameter a string";
  if (entry.enum !== undefined) {
    if (!Array.isArray(entry.enum) || entry.enum.length === 0) {
      report("parameters/enum", `${at}/enum`, `enum of "${name}" must be a non-empty list`, "list the allowed values: enum: [metric, imperial]");
      return undefined;
    }
    // Members compare as JSON Schema (and checkValue) compare them: key order does not matter.
    const seen = new Set<string>();
    for (const [i, v] of entry.enum.entries()) {
      const key = JSON.stringify(v);
      const canonical = renderCanonicalJson(v as CanonicalValue);
      if (seen.has(canonical)) {
        report("parameters/enum", `${at}/enum/${i}`, `enum of "${name}" lists ${key} twice`, `remove the second ${key}`);
        return undefined;
      }
      seen.add(canonical);
      if (pastExact(v)) {
        report("parameters/enum", `${at}/enum/${i}`, `enum value ${i} of "${name}" is an integer past 2^53, which a parameter cannot carry exactly (it would be passed as ${key})`, PAST_EXACT_HINT);
        return undefined;
      }
      const problem = checkValue(contract, v);
      if (problem) {
        report("parameters/enum", `${at}/enum/${i}`, `enum value ${key} of "${name}" is not a valid ${t} (${problem})`, `list only ${t} values that meet the parameter's contracts${t === "string" ? " (quote a value YAML reads as a number or boolean: '1')" : ""}`);
        return undefined;
      }
    }
  }
  const property: JsonSchema = { ...contract };
  if (entry.enum !== undefined) property.enum = entry.enum;
  if (entry.default !== undefined) {
    if (pastExact(entry.default)) {
      report("parameters/default", `${at}/default`, `default of "${name}" is an integer past 2^53, which a parameter cannot carry exactly (it would be passed as ${JSON.stringify(entry.default)})`, PAST_EXACT_HINT);
      return undefined;
    }
    const problem = checkValue(property, entry.default);
    if (problem) {
      report("parameters/default", `${at}/default`, `default ${JSON.stringify(entry.default)} of "${name}" does not satisfy its own declaration (${problem})`, "change the default or the contract");
      return undefined;
    }
    property.default = entry.default;
  }
  if (entry.description !== undefined) {
    if (typeof entry.description !== "string") {
      report("parameters/constraint", `${at}/description`, `description of "${name}" must be a string`, "write it as one line of text, quoted if it holds a colon: description: \"City name: where to look\"");
      return undefined;
    }
    property.description = entry.description;
  }
  return property;
}


/** Why the linear-time engine cannot run `pattern`, or undefined when it can. */
function linearProblem(pattern: string): string | undefined {
  try {
    linearRegExp(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof UnsupportedPattern) return error.message;
    throw error;
  }
}
