// `kiwi lock`'s dependency step: each tool's npm and Python requirements resolved to exact packages
// by the real npm and pip clients, reusing the locked resolution while a tool's requirements are unchanged (a warm
// lock never reaches the registry). Tools with the same requirements share one resolution.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import type { NpmDependencies, ToolDependencies } from "../schema/lockfile.ts";
import { resolveNpm } from "./npm-io.ts";
import { packagesWithInstallScripts } from "./npm-lock.ts";
import { resolvePip } from "./pip-io.ts";
import { declaredPackages, npmDependencies, pypiRequirements, requirementChanges } from "./requirements.ts";

/** Resolutions run at once at most (npm is network- and CPU-bound). */
const CONCURRENCY = 2;

/** The `dependencies` section for `tools`, and warnings (install scripts kiwi will not run). */
export async function resolveDependencies(ctx: Context, root: string, tools: readonly Tool[], previous: Record<string, ToolDependencies>): Promise<{ dependencies: Record<string, ToolDependencies>; warnings: string[] }> {
  const dependencies: Record<string, ToolDependencies> = {};
  const warnings: string[] = [];
  const pending = new Map<string, { requires: Record<string, string>; tools: string[] }>();
  const pendingPypi = new Map<string, { requires: string[]; tools: string[] }>();
  for (const tool of tools) {
    const declared = declaredPackages(tool);
    // A tool whose requirements did not change keeps its resolution, per ecosystem.
    const changed = new Set(requirementChanges(tool, previous[tool.id]).map((c) => c.ecosystem));
    const pypi = pypiRequirements(declared);
    if (pypi) {
      const locked = previous[tool.id]?.pypi;
      if (locked && !changed.has("pypi")) dependencies[tool.id] = { ...dependencies[tool.id], pypi: locked };
      else {
        const key = JSON.stringify(pypi);
        const group = pendingPypi.get(key) ?? { requires: pypi, tools: [] };
        group.tools.push(tool.id);
        pendingPypi.set(key, group);
      }
    }
    const npm = npmDependencies(declared);
    if (!npm) continue;
    if (npm.conflicts.length > 0) {
      throw new KiwiError("E_DEPS", `${tool.id} (${tool.manifestFile}) declares conflicting requirements: ${npm.conflicts.join("; ")}`, { hint: "declare each package once", details: { tool: tool.id } });
    }
    const locked = previous[tool.id]?.npm;
    if (locked && !changed.has("npm")) {
      dependencies[tool.id] = { ...dependencies[tool.id], npm: locked };
      continue;
    }
    const key = JSON.stringify(npm.dependencies);
    const group = pending.get(key) ?? { requires: npm.dependencies, tools: [] };
    group.tools.push(tool.id);
    pending.set(key, group);
  }
  const groups = [...pending.values()];
  for (let i = 0; i < groups.length; i += CONCURRENCY) {
    const batch = groups.slice(i, i + CONCURRENCY);
    const resolved = await Promise.all(batch.map((g) => resolveNpm({ root, cacheDir: ctx.cacheDir, env: ctx.env, toolId: g.tools.join(", ") }, g.requires)));
    batch.forEach((g, j) => {
      const npm: NpmDependencies = resolved[j]!;
      for (const id of g.tools) dependencies[id] = { ...dependencies[id], npm };
      const scripts = packagesWithInstallScripts(npm);
      if (scripts.length > 0) warnings.push(`${g.tools.join(", ")}: ${scripts.join(", ")} ${scripts.length === 1 ? "has an install script" : "have install scripts"}, which kiwi does not run`);
    });
  }
  const pypiGroups = [...pendingPypi.values()];
  for (let i = 0; i < pypiGroups.length; i += CONCURRENCY) {
    const batch = pypiGroups.slice(i, i + CONCURRENCY);
    const resolved = await Promise.all(batch.map((g) => resolvePip({ root, cacheDir: ctx.cacheDir, env: ctx.env, toolId: g.tools.join(", ") }, g.requires)));
    batch.forEach((g, j) => {
      for (const id of g.tools) dependencies[id] = { ...dependencies[id], pypi: resolved[j]! };
    });
  }
  return { dependencies, warnings };
}
