// A call's parameters against the tool's `parameters` list: merged from every source, coerced,
// defaulted and validated, with every violation reported at once. Pure.
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import type { ParametersSchema } from "../validate/parameters.ts";
import { compileParamSchema } from "../validate/check-value.ts";
import { type ParamSources, applyParamDefaults, assertNoViolations, mergeParamSources, toViolations } from "./params.ts";

export type ParamTool = Pick<Tool, "id" | "manifestFile" | "locate" | "parameters" | "pointers">;

/** validate/parameters.ts, loaded on first use: it pulls in ajv, which a memoised warm run never needs. */
export function buildParametersSchemaLazily(tool: ParamTool): ParametersSchema {
  return (require("../validate/parameters.ts") as typeof import("../validate/parameters.ts")).buildParametersSchema(tool);
}

/**
 * The call's sources with the JSON on stdin added: read only when no flag gives parameters, and
 * never when the chain hands stdin to the tool (`config.stdin: inherit`).
 */
export function withStdinSource(sources: ParamSources, stdinMode: unknown, readStdin: (() => string | undefined) | undefined): ParamSources {
  const flagsGiven = sources.json !== undefined || sources.file !== undefined || (sources.pairs?.length ?? 0) > 0;
  const text = flagsGiven || stdinMode === "inherit" ? undefined : readStdin?.();
  return text === undefined ? sources : { ...sources, stdin: { text } };
}

/** Merges, coerces, defaults and validates the call's parameters; throws E_PARAMS_INVALID listing all violations. */
export function resolveCallParams(tool: ParamTool, sources: ParamSources, schemaOf: (tool: ParamTool) => ParametersSchema = buildParametersSchemaLazily): Record<string, unknown> {
  const built = schemaOf(tool);
  if (!built.ok) {
    const errors = built.findings.filter((f) => f.severity === "error");
    throw new KiwiError("E_CHECK_FAILED", `the parameters list of ${tool.id} is malformed: ${errors.map((f) => `${f.pointer ?? ""} ${f.message}`.trim()).join("; ")}`, {
      hint: 'fix the declarations (run "kiwi check"), then run "kiwi lock"',
      details: { findings: built.findings },
    });
  }
  const merged = applyParamDefaults(mergeParamSources(sources, built.schema), built.schema);
  // exec/schema.ts (and through it ajv) loads only for a schema the direct validator does not take.
  const validate = compileParamSchema(built.schema) ?? (require("./schema.ts") as typeof import("./schema.ts")).compileLockedSchema(built.schema, `parameters of ${tool.id}`);
  assertNoViolations(toViolations(validate(merged), merged, built.schema), tool.id);
  return merged;
}
