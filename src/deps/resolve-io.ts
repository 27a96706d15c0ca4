// `kiwi lock`'s dependency step: each tool's npm and Python requirements resolved to exact packages
// by the real npm and pip clients, reusing the locked resolution while a tool's requirements are unchanged (a warm
// lock never reaches the registry), or another locked tool's of the same requirements. Tools with
// the same requirements share one resolution.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { NpmOverrides, Tool } from "../manifest/model.ts";
import type { NpmDependencies, PypiDependencies, ToolDependencies } from "../schema/lockfile.ts";
import { resolveNpm } from "./npm-io.ts";
import { deprecatedPackages, packagesWithInstallScripts, parsePackageLock } from "./npm-lock.ts";
import { isSourceDistribution, resolvePip } from "./pip-io.ts";
import { allowedScripts, declaredPackages, npmDependencies, overridesKey, pypiRequirements, requirementChanges } from "./requirements.ts";

/** Resolutions run at once at most (npm is network- and CPU-bound). */
const CONCURRENCY = 2;

/** One resolution kiwi ran (not one it kept): whose, how many packages, and where they came from. */
export interface Resolution {
  tools: string[];
  ecosystem: "npm" | "pypi";
  packages: number;
  /** The registries or indexes (scheme://host[:port]) the packages' archives come from. */
  sources: string[];
  /** The setting that chose them (npm_config_registry, .npmrc, PIP_INDEX_URL, ...). */
  setting: string;
}

/**
 * The `dependencies` section for `tools`, warnings (install scripts kiwi will not run, allowances
 * that allow nothing), and the resolutions that ran, with where their packages came from.
 */
export async function resolveDependencies(ctx: Context, root: string, tools: readonly Tool[], previous: Record<string, ToolDependencies>): Promise<{ dependencies: Record<string, ToolDependencies>; warnings: string[]; resolutions: Resolution[] }> {
  const dependencies: Record<string, ToolDependencies> = {};
  const warnings: string[] = [];
  const resolutions: Resolution[] = [];
  const pending = new Map<string, { requires: Record<string, string>; overrides: NpmOverrides | undefined; allow: string[]; seed: NpmDependencies["packages"] | undefined; tools: string[] }>();
  const pendingPypi = new Map<string, { requires: string[]; allow: string[]; tools: string[] }>();
  // Another tool's resolution of the same requirements serves a tool the lock does not know by its
  // id (renamed, moved or copied), as the registry would resolve them: the lock's, tree included.
  const byRequirements = new Map<string, NpmDependencies | PypiDependencies>();
  for (const d of Object.values(previous)) {
    if (d.npm) byRequirements.set(npmKey(d.npm.requires, d.npm.overrides, d.npm.allow_scripts ?? []), d.npm);
    if (d.pypi) byRequirements.set(pypiKey(d.pypi.requires, d.pypi.allow_scripts ?? []), d.pypi);
  }
  for (const tool of tools) {
    const declared = declaredPackages(tool);
    // A tool whose requirements did not change keeps its resolution, per ecosystem.
    const changed = new Set(requirementChanges(tool, previous[tool.id]).map((c) => c.ecosystem));
    const pypi = pypiRequirements(declared);
    if (pypi) {
      const allow = allowedScripts(declared, "pypi");
      const locked = previous[tool.id]?.pypi && !changed.has("pypi") ? previous[tool.id]!.pypi : (byRequirements.get(pypiKey(pypi, allow)) as PypiDependencies | undefined);
      if (locked) dependencies[tool.id] = { ...dependencies[tool.id], pypi: locked };
      else {
        const key = JSON.stringify([pypi, allow]);
        const group = pendingPypi.get(key) ?? { requires: pypi, allow, tools: [] };
        group.tools.push(tool.id);
        pendingPypi.set(key, group);
      }
    }
    const npm = npmDependencies(declared);
    if (!npm) continue;
    if (npm.conflicts.length > 0) {
      throw new KiwiError("E_DEPS", `${tool.id} (${tool.manifestFile}) declares conflicting requirements: ${npm.conflicts.join("; ")}`, { hint: "declare each package once", details: { tool: tool.id } });
    }
    const seed = readToolPackageLock(tool);
    const allow = allowedScripts(declared, "npm");
    const locked = previous[tool.id]?.npm && !changed.has("npm") ? previous[tool.id]!.npm : (byRequirements.get(npmKey(npm.dependencies, npm.overrides, allow)) as NpmDependencies | undefined);
    if (locked && (!seed || seedDropped(seed, locked.packages).length === 0)) {
      dependencies[tool.id] = { ...dependencies[tool.id], npm: locked };
      continue;
    }
    const key = JSON.stringify([npm.dependencies, overridesKey(npm.overrides) ?? null, allow, seed ?? null]);
    const group = pending.get(key) ?? { requires: npm.dependencies, overrides: npm.overrides, allow, seed, tools: [] };
    group.tools.push(tool.id);
    pending.set(key, group);
  }
  const groups = [...pending.values()];
  for (let i = 0; i < groups.length; i += CONCURRENCY) {
    const batch = groups.slice(i, i + CONCURRENCY);
    const resolved = await Promise.all(batch.map((g) => resolveNpm({ root, cacheDir: ctx.cacheDir, env: ctx.env, toolId: g.tools.join(", ") }, g.requires, g.seed, g.overrides)));
    batch.forEach((g, j) => {
      const npm: NpmDependencies = { ...resolved[j]!, ...(g.allow.length > 0 ? { allow_scripts: g.allow } : {}) };
      for (const id of g.tools) dependencies[id] = { ...dependencies[id], npm };
      // npm leaves `resolved` out only for its configured registry.
      const urls = Object.values(npm.packages).map((p) => p.resolved);
      resolutions.push({ tools: g.tools, ecosystem: "npm", packages: urls.length, sources: originsOf(urls), setting: npmSetting(ctx.env, root) });
      const moved = g.seed ? seedDropped(g.seed, npm.packages) : [];
      if (moved.length > 0) warnings.push(`${g.tools.join(", ")}: package-lock.json pins ${moved.join(", ")}, which its requirements no longer allow; kiwi resolved ${moved.length === 1 ? "it" : "them"} anew (run npm install in the tool to update its package-lock.json)`);
      const scripts = packagesWithInstallScripts(npm);
      const blocked = scripts.filter((name) => !g.allow.includes(name));
      if (blocked.length > 0) warnings.push(`${g.tools.join(", ")}: ${blocked.join(", ")} ${blocked.length === 1 ? "has an install script" : "have install scripts"}, which kiwi does not run (allow_scripts: [${blocked.join(", ")}] would run ${blocked.length === 1 ? "it" : "them"} at kiwi install)`);
      for (const deprecated of deprecatedPackages(npm)) warnings.push(`${g.tools.join(", ")}: deprecated ${deprecated}`);
      const idle = g.allow.filter((name) => !scripts.includes(name));
      if (idle.length > 0) warnings.push(`${g.tools.join(", ")}: allow_scripts names ${idle.join(", ")}, which ${idle.length === 1 ? "has" : "have"} no install script in the resolved packages`);
    });
  }
  const pypiGroups = [...pendingPypi.values()];
  for (let i = 0; i < pypiGroups.length; i += CONCURRENCY) {
    const batch = pypiGroups.slice(i, i + CONCURRENCY);
    const resolved = await Promise.all(batch.map((g) => resolvePip({ root, cacheDir: ctx.cacheDir, env: ctx.env, toolId: g.tools.join(", ") }, g.requires, g.allow)));
    batch.forEach((g, j) => {
      for (const id of g.tools) dependencies[id] = { ...dependencies[id], pypi: resolved[j]! };
      const urls = Object.values(resolved[j]!.packages).map((p) => p.url);
      resolutions.push({ tools: g.tools, ecosystem: "pypi", packages: urls.length, sources: originsOf(urls), setting: pipSetting(ctx.env) });
      const built = Object.entries(resolved[j]!.packages).filter(([, p]) => isSourceDistribution(p.url)).map(([name]) => name);
      const idle = g.allow.filter((name) => !built.includes(name));
      if (idle.length > 0) warnings.push(`${g.tools.join(", ")}: allow_scripts names ${idle.join(", ")}, which pip installs from ${idle.length === 1 ? "a wheel" : "wheels"} (nothing is built)`);
    });
  }
  return { dependencies, warnings, resolutions };
}

/** What makes two npm resolutions the same (requirementChanges' terms): the requirements, overrides and the allowance. */
function npmKey(requires: Record<string, string>, overrides: NpmOverrides | undefined, allow: readonly string[]): string {
  return JSON.stringify(["npm", Object.entries(requires).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), overridesKey(overrides) ?? null, [...allow].sort()]);
}

/** The same for PEP 508 requirements, a set as requirementChanges reads them. */
function pypiKey(requires: readonly string[], allow: readonly string[]): string {
  return JSON.stringify(["pypi", [...new Set(requires)].sort(), [...allow].sort()]);
}

/**
 * A directory tool's package-lock.json beside its package.json: the versions its author tested,
 * which kiwi resolves from, as `npm install` would. Git, file and link entries are refused.
 */
function readToolPackageLock(tool: Tool): NpmDependencies["packages"] | undefined {
  if (!tool.fileRequirements?.npm) return undefined;
  const file = tool.files.find((f) => f.path === "package-lock.json");
  if (!file) return undefined;
  const source = `${tool.root ? `${tool.root}/` : ""}package-lock.json`;
  let text: string;
  try {
    text = readFileSync(file.abs, "utf8");
  } catch (error) {
    throw new KiwiError("E_IO", `${tool.id}: cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { hint: "check the file's permissions", details: { tool: tool.id } });
  }
  // devDependencies are not the tool's run time (package.json's are not read either).
  const packages = parsePackageLock(text, `${tool.id} (${source})`);
  return Object.fromEntries(Object.entries(packages).filter(([, e]) => (e as Record<string, unknown>).dev !== true));
}

/** The seed's packages the resolution did not keep at their pinned version: `name version`. */
function seedDropped(seed: NpmDependencies["packages"], resolved: NpmDependencies["packages"]): string[] {
  return Object.entries(seed)
    .filter(([path, entry]) => resolved[path]?.version !== entry.version)
    .map(([path, entry]) => `${path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)} ${entry.version}`);
}

/**
 * The distinct origins of archive URLs; an absent URL is npm's configured registry. A file: URL
 * (pip's PIP_FIND_LINKS folder, a file:// index) has no origin (URL.origin is "null"): its folder is named.
 */
export function originsOf(urls: readonly (string | undefined)[]): string[] {
  const origins = new Set<string>();
  for (const url of urls) {
    try {
      const parsed = url === undefined ? undefined : new URL(url);
      origins.add(parsed === undefined ? "the configured registry" : parsed.protocol === "file:" ? `file://${parsed.pathname.slice(0, parsed.pathname.lastIndexOf("/") + 1)}` : parsed.origin);
    } catch {
      origins.add(url!);
    }
  }
  return [...origins].sort();
}

/** Which of the user's settings chose npm's registry, in npm's order of precedence. */
function npmSetting(env: Context["env"], root: string): string {
  const named = Object.keys(env).find((k) => k.toLowerCase() === "npm_config_registry" && env[k]);
  if (named) return named;
  try {
    // `registry=`, or a scope's own (`@acme:registry=`), as company registries are set.
    if (/^\s*(?:@[^:\s]+:)?registry\s*=/m.test(readFileSync(join(root, ".npmrc"), "utf8"))) return "the project's .npmrc";
  } catch {
    // No project .npmrc.
  }
  return "npm's configuration (npm config get registry)";
}

/** Which of the user's settings chose pip's index. */
function pipSetting(env: Context["env"]): string {
  const set = ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"].filter((k) => env[k]);
  return set.length > 0 ? set.join(", ") : "pip's configuration (pip config list)";
}
