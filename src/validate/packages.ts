// The packages a tool declares (deps/requirements.ts): a requirement kiwi cannot read, conflicting
// ranges for one package, and Python requirements, which kiwi does not install yet. Pure.
import { declaredPackages, npmDependencies } from "../deps/requirements.ts";
import type { Finding } from "../findings.ts";
import type { Tool } from "../manifest/model.ts";
import { toolFinding } from "./finding.ts";

/** Package findings for one tool. */
export function checkPackages(tool: Tool): Finding[] {
  if (tool.dialect !== "kiwi" || tool.form === "builtin") return [];
  const declared = declaredPackages(tool);
  const out = declared.problems.map((p) => toolFinding(tool, "deps/requirement", p.pointer, p.message, p.hint));
  const npm = npmDependencies(declared);
  for (const conflict of npm?.conflicts ?? []) out.push(toolFinding(tool, "deps/conflict", "/requires", `conflicting requirements: ${conflict}`, "declare each package once"));
  for (const r of declared.requirements.filter((q) => q.ecosystem === "pypi")) {
    out.push(toolFinding(tool, "deps/not-installed", r.pointer, `${r.raw} is a Python requirement, which kiwi does not install yet: it must already be importable by the runtime's interpreter`, "install it into the interpreter the runtime uses, or vendor it in the tool folder"));
  }
  return out;
}
