// The packages a tool declares (deps/requirements.ts): a requirement kiwi cannot read, and
// conflicting ranges for one package. Pure.
import { declaredPackages, npmDependencies, pypiRequirements } from "../deps/requirements.ts";
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
  // Where kiwi puts the declared packages beside the tool's files at exec (exec/packages-io.ts).
  if (npm || pypiRequirements(declared)) {
    for (const folder of ["node_modules", "site-packages"]) {
      const inside = tool.files.filter((f) => f.path.startsWith(`${folder}/`)).length;
      if (inside === 0) continue;
      out.push(
        toolFinding(tool, "deps/installed-folder", "", `${tool.id} declares packages but has its own ${folder}/ (${inside} ${inside === 1 ? "file" : "files"}), where kiwi installs them: it would be locked as the tool's files, and kiwi exec refuses it`, `delete ${tool.root ? `${tool.root}/` : ""}${folder}/ (an install run in the tool made it): kiwi install installs the declared packages into its cache`),
      );
    }
  }
  return out;
}
