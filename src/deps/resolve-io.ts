// `kiwi lock`'s dependency step: each tool's npm requirements resolved to exact packages by the
// real npm client, reusing the locked resolution while a tool's requirements are unchanged (a warm
// lock never reaches the registry). Tools with the same requirements share one resolution.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import type { NpmDependencies, ToolDependencies } from "../schema/lockfile.ts";
import { resolveNpm } from "./npm-io.ts";
import { packagesWithInstallScripts } from "./npm-lock.ts";
import { declaredPackages, npmDependencies } from "./requirements.ts";

/** Resolutions run at once at most (npm is network- and CPU-bound). */
const CONCURRENCY = 2;

/** The `dependencies` section for `tools`, and warnings (install scripts kiwi will not run). */
export async function resolveDependencies(ctx: Context, root: string, tools: readonly Tool[], previous: Record<string, ToolDependencies>): Promise<{ dependencies: Record<string, ToolDependencies>; warnings: string[] }> {
  const dependencies: Record<string, ToolDependencies> = {};
  const warnings: string[] = [];
  const pending = new Map<string, { requires: Record<string, string>; tools: string[] }>();
  for (const tool of tools) {
    const npm = npmDependencies(declaredPackages(tool));
    if (!npm) continue;
    if (npm.conflicts.length > 0) {
      throw new KiwiError("E_DEPS", `${tool.id} (${tool.manifestFile}) declares conflicting requirements: ${npm.conflicts.join("; ")}`, { hint: "declare each package once", details: { tool: tool.id } });
    }
    const locked = previous[tool.id]?.npm;
    if (locked && sameRequires(locked.requires, npm.dependencies)) {
      dependencies[tool.id] = { npm: locked };
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
      for (const id of g.tools) dependencies[id] = { npm };
      const scripts = packagesWithInstallScripts(npm);
      if (scripts.length > 0) warnings.push(`${g.tools.join(", ")}: ${scripts.join(", ")} ${scripts.length === 1 ? "has an install script" : "have install scripts"}, which kiwi does not run`);
    });
  }
  return { dependencies, warnings };
}

function sameRequires(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
