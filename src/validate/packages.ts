// The packages a tool declares (deps/requirements.ts): a requirement kiwi cannot read, and
// conflicting ranges for one package. Pure.
import { declaredPackages, npmDependencies } from "../deps/requirements.ts";
import type { Finding } from "../findings/verdict.ts";
import type { Tool } from "../manifest/model.ts";
import { toolFinding } from "../findings/finding.ts";

/** Package findings for one tool. */
export function checkPackages(tool: Tool): Finding[] {
  if (tool.dialect !== "kiwi" || tool.form === "builtin") return [];
  const declared = declaredPackages(tool);
  const out = declared.problems.map((p) => toolFinding(tool, "deps/requirement", p.pointer, p.message, p.hint));
  const npm = npmDependencies(declared);
  for (const conflict of npm?.conflicts ?? []) out.push(toolFinding(tool, "deps/conflict", "/requires", `conflicting requirements: ${conflict}`, "declare each package once"));
  return out;
}
