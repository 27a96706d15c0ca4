// A call's parameters against the tool's `parameters` list: merged from every source, coerced,
// defaulted and validated, with every violation reported at once. Pure.
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import { buildParametersSchema } from "../schema/parameters.ts";
import { type ParamSources, applyParamDefaults, assertNoViolations, mergeParamSources, toViolations } from "./params.ts";
import { compileLockedSchema } from "./schema.ts";

/** Merges, coerces, defaults and validates the call's parameters; throws E_PARAMS_INVALID listing all violations. */
export function resolveCallParams(tool: Pick<Tool, "id" | "manifestFile" | "locate" | "parameters" | "pointers">, sources: ParamSources): Record<string, unknown> {
  const built = buildParametersSchema(tool);
  if (!built.ok) {
    const errors = built.findings.filter((f) => f.severity === "error");
    throw new KiwiError("E_CHECK_FAILED", `the parameters list of ${tool.id} is malformed: ${errors.map((f) => `${f.pointer ?? ""} ${f.message}`.trim()).join("; ")}`, {
      hint: 'fix the declarations (run "kiwi check"), then run "kiwi lock"',
      details: { findings: built.findings },
    });
  }
  const merged = applyParamDefaults(mergeParamSources(sources, built.schema), built.schema);
  const errors = compileLockedSchema(built.schema, `parameters of ${tool.id}`)(merged);
  assertNoViolations(toViolations(errors, merged, built.schema), tool.id);
  return merged;
}
