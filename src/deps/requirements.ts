// What packages a tool needs, from its manifest: `requires` strings that are not capabilities
// (`npm:<name>@<range>`, `pypi:<PEP 508>`, or bare, when the runtime decides the ecosystem), and
// an mcp_server's `config.package` (the server itself, run from its installed copy). Pure.
import { isRecord } from "../integrity/value.ts";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import type { NpmOverrides, Tool } from "../manifest/model.ts";
import type { ToolDependencies } from "../schema/lockfile.ts";
import { isSemverRange } from "../schema/vocabulary.ts";

export type Ecosystem = "npm" | "pypi";

/** One declared requirement, as kiwi reads it. */
export interface Requirement {
  ecosystem: Ecosystem;
  /** The package name (npm: with its scope). */
  name: string;
  /** The version range or exact version; "" for any (npm's "*"). */
  range: string;
  /** As written, for messages. */
  raw: string;
  /** Where it is declared. */
  pointer: string;
}

/** An mcp_server's own package: what `config.package` names, and which of its bins to run. */
export interface ServerPackage {
  requirement: Requirement;
  bin?: string;
}

/** A package whose install scripts (npm) or source build (pip) the tool allows to run at `kiwi install`. */
export interface ScriptAllowance {
  ecosystem: Ecosystem;
  /** npm: the name with its scope; PyPI: the normalised name (PEP 503). */
  name: string;
  pointer: string;
}

/** A tool's declared packages, and the declarations kiwi could not read. */
export interface DeclaredPackages {
  requirements: Requirement[];
  server?: ServerPackage;
  /** The tool's `allow_scripts` (and package.json's `allowScripts`): who may run code at install. */
  allowScripts: ScriptAllowance[];
  /** package.json's `overrides`: versions npm puts anywhere in the tree, whatever asks for them. */
  npmOverrides?: NpmOverrides;
  problems: { pointer: string; message: string; hint: string }[];
}

/** Runtimes whose packages come from npm or PyPI when a requirement names no ecosystem. */
const RUNTIME_ECOSYSTEM: Record<string, Ecosystem> = { node_runtime: "npm", bun_runtime: "npm", python_runtime: "pypi" };

/**
 * npm's package name rules (validate-npm-package-name): URL-safe, optionally @scope/name. Lower
 * case for new packages, but npm still installs the older names with capitals (JSONStream).
 */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[A-Za-z0-9][A-Za-z0-9._~-]*$/;

/** An npm alias spec, `npm:<name>[@<range>]`: the package installed under another name. */
const NPM_ALIAS = /^npm:(@?[^@]+)(?:@(.*))?$/;
/** An alias spec's `npm:<name>@`, leaving its range. */
const NPM_ALIAS_PREFIX = /^npm:@?[^@]+@/;

/**
 * Reads the packages a tool declares: its manifest's `requires` and `config.package` (kiwi
 * dialect; magray manifests declare none), and its own requirements.txt, package.json and PEP 723
 * block (discovery reads those into `fileRequirements`).
 */
export function declaredPackages(tool: Pick<Tool, "doc" | "executor" | "type" | "config" | "dialect" | "fileRequirements">): DeclaredPackages {
  const out: DeclaredPackages = { requirements: [], allowScripts: [], problems: [] };
  const files = tool.fileRequirements;
  if (files) {
    for (const p of files.problems) out.problems.push({ pointer: "", message: `${p.source}: ${p.message}`, hint: p.hint });
    for (const { spec, source } of files.pypi) {
      const read = parseRequirement(`pypi:${spec}`, "", undefined);
      if ("message" in read) out.problems.push({ ...read, message: `${source}: ${read.message}` });
      else out.requirements.push({ ...read, raw: spec });
    }
    if (files.npm?.overrides) out.npmOverrides = files.npm.overrides;
    for (const [name, range] of Object.entries(files.npm?.dependencies ?? {})) {
      const read = parseRequirement(`npm:${name}@${range}`, "", undefined);
      if ("message" in read) out.problems.push({ ...read, message: `${files.npm!.source}: ${read.message}` });
      else out.requirements.push(read);
    }
    // npm's own allowScripts: `name` or `name@version` keys, true to allow.
    for (const [key, allowed] of Object.entries(files.npm?.allowScripts ?? {})) {
      if (allowed !== true) continue;
      const at = key.indexOf("@", key.startsWith("@") ? 1 : 0);
      const name = at === -1 ? key : key.slice(0, at);
      if (NPM_NAME.test(name)) out.allowScripts.push({ ecosystem: "npm", name, pointer: "" });
      else out.problems.push({ pointer: "", message: `${files.npm!.source}: allowScripts names ${JSON.stringify(key)}, which is not an npm package name`, hint: "key allowScripts by package name" });
    }
  }
  if (tool.dialect !== "kiwi") return out;
  const fallback = tool.executor ? RUNTIME_ECOSYSTEM[tool.executor.id] : undefined;
  if (tool.doc.allow_scripts !== undefined) readAllowScripts(tool.doc.allow_scripts, fallback, out);
  // kiwi's `requires`, and kiwi_mcp's package lists (`manifest.requires`, `config.requires`).
  const lists: [unknown, string][] = [
    [tool.doc.requires, "/requires"],
    [isRecord(tool.doc.manifest) ? tool.doc.manifest.requires : undefined, "/manifest/requires"],
    [tool.config.requires, "/config/requires"],
  ];
  for (const [list, base] of lists) {
    if (!Array.isArray(list)) continue;
    list.forEach((item, i) => {
      // A capability word (manifest/normalize.ts CAPABILITY_NAMES, all in these namespaces) is no
      // package; the pattern alone decides, so a warm exec need not load the manifest normaliser.
      if (typeof item !== "string" || /^(fs|net|shell|env|proc)\./.test(item)) return;
      const read = parseRequirement(item, `${base}/${i}`, fallback);
      if ("message" in read) out.problems.push(read);
      else out.requirements.push(read);
    });
  }
  if (tool.type === "mcp_server" && tool.config.package !== undefined) {
    const pointer = "/config/package";
    const bin = tool.config.bin;
    if (typeof tool.config.package !== "string") out.problems.push({ pointer, message: "config.package must be a string such as npm:@scope/server@1.2.3", hint: "name the server's package with its exact version" });
    else {
      const read = parseRequirement(tool.config.package, pointer, undefined);
      if ("message" in read) out.problems.push(read);
      else if (read.ecosystem === "npm" ? !isExactVersion(read.range.replace(NPM_ALIAS_PREFIX, "")) : !/^(?:\[[^\]]*\]\s*)?==\s*\d[\w.+!-]*$/.test(read.range)) {
        const pin = read.ecosystem === "npm" ? `npm:${read.name}@<version>` : `pypi:${read.name}==<version>`;
        out.problems.push({ pointer, message: `config.package ${JSON.stringify(read.raw)} names no exact version`, hint: `pin the server: ${pin} (a range or latest would let the server change under the lock)` });
      }
      else if (bin !== undefined && (typeof bin !== "string" || bin === "")) out.problems.push({ pointer: "/config/bin", message: "config.bin must be the name of one of the package's bins", hint: "omit it to run the package's only bin" });
      else out.server = { requirement: read, ...(typeof bin === "string" ? { bin } : {}) };
      if (typeof tool.config.command === "string" && out.server) out.problems.push({ pointer: "/config/command", message: "config.command and config.package both say how to start the server", hint: "keep config.package: kiwi runs the package's bin from its installed copy" });
    }
  }
  return out;
}

/** `allow_scripts: [npm:esbuild, pypi:legacy-pkg, name]`: names only, the runtime's ecosystem when unprefixed. */
function readAllowScripts(list: unknown, fallback: Ecosystem | undefined, out: DeclaredPackages): void {
  const hint = "list package names, npm:<name> or pypi:<name>, without versions";
  if (!Array.isArray(list)) {
    out.problems.push({ pointer: "/allow_scripts", message: "allow_scripts must be a list of package names", hint });
    return;
  }
  list.forEach((item, i) => {
    const pointer = `/allow_scripts/${i}`;
    const m = typeof item === "string" ? /^(?:(npm|pypi):)?(.+)$/.exec(item.trim()) : null;
    const ecosystem = (m?.[1] as Ecosystem | undefined) ?? fallback;
    const name = m?.[2]?.trim() ?? "";
    if (!m) out.problems.push({ pointer, message: "an allow_scripts entry must be a package name", hint });
    else if (!ecosystem) out.problems.push({ pointer, message: `allow_scripts entry ${JSON.stringify(item)} names no ecosystem, and the tool's runtime does not imply one`, hint: "write npm:<name> or pypi:<name>" });
    else if (ecosystem === "npm" ? !NPM_NAME.test(name) : !PYPI_NAME.test(name)) out.problems.push({ pointer, message: `allow_scripts entry ${JSON.stringify(item)} is not ${ecosystem === "npm" ? "an npm" : "a PyPI"} package name`, hint });
    else out.allowScripts.push({ ecosystem, name: ecosystem === "pypi" ? normalizeName(name) : name, pointer });
  });
}

/** A PyPI project name (PEP 508), without extras or specifiers. */
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** pip's normalised project name (PEP 503). */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** The names of one ecosystem's packages the tool allows to run code at install, sorted, once each. */
export function allowedScripts(declared: DeclaredPackages, ecosystem: Ecosystem): string[] {
  return [...new Set(declared.allowScripts.filter((a) => a.ecosystem === ecosystem).map((a) => a.name))].sort();
}

/**
 * One requirement string: `npm:name@range`, `pypi:spec`, or bare (the runtime's ecosystem). An
 * npm requirement without `@range` takes any version ("*"), as npm does.
 */
export function parseRequirement(raw: string, pointer: string, fallback: Ecosystem | undefined): Requirement | { pointer: string; message: string; hint: string } {
  const m = /^(npm|pypi):(.*)$/.exec(raw.trim());
  const ecosystem = (m?.[1] as Ecosystem | undefined) ?? fallback;
  const spec = (m ? m[2]! : raw).trim();
  if (!ecosystem) {
    return { pointer, message: `requirement ${JSON.stringify(raw)} names no ecosystem, and the tool's runtime does not imply one`, hint: "write npm:<name>@<range> or pypi:<requirement>" };
  }
  if (ecosystem === "pypi") {
    // PEP 508's name, then anything pip reads (extras, specifiers, markers); pip judges the rest.
    const name = /^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)/.exec(spec)?.[1];
    if (!name) return { pointer, message: `requirement ${JSON.stringify(raw)} is not a PEP 508 requirement`, hint: "write a name and an optional specifier: pypi:httpx>=0.24" };
    const range = spec.slice(name.length).trim();
    // A direct reference (`name @ https://…/x.whl`, `name[extra] @ file:///…`) names an archive, not
    // a version an index serves: kiwi install takes the locked version from the index.
    if (/^(?:\[[^\]]*\]\s*)?@/.test(range)) {
      return { pointer, message: `requirement ${JSON.stringify(raw)} is a direct reference (a URL or path), not a version from an index`, hint: `require ${name} by version (pypi:${name}==<version>) from an index; PIP_INDEX_URL or PIP_FIND_LINKS can name your own, a folder of wheels included` };
    }
    return { ecosystem, name, range, raw, pointer };
  }
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  const name = at === -1 ? spec : spec.slice(0, at);
  const range = at === -1 ? "" : spec.slice(at + 1).trim();
  if (!NPM_NAME.test(name) || name.length > 214) {
    return { pointer, message: `requirement ${JSON.stringify(raw)}: ${JSON.stringify(name)} is not an npm package name`, hint: "npm names are URL-safe (letters, digits, . _ ~ -), optionally @scope/name" };
  }
  // An alias (`npm install pad@npm:left-pad@^1`, package.json's "pad": "npm:left-pad@^1"): another
  // package installed under this name, pinned by version like any; its own range is judged below.
  const alias = NPM_ALIAS.exec(range);
  if (alias && (!NPM_NAME.test(alias[1]!) || alias[1]!.length > 214)) {
    return { pointer, message: `requirement ${JSON.stringify(raw)}: ${JSON.stringify(alias[1])} is not an npm package name`, hint: "an alias names the package it installs: npm:<alias>@npm:<name>@<range>" };
  }
  // A semver range or exact version: a dist-tag (latest, next), a URL or a path is no version.
  if (!isSemverRange(alias ? (alias[2] ?? "") : range)) {
    return { pointer, message: `requirement ${JSON.stringify(raw)}: ${JSON.stringify(range)} is not a version range`, hint: "use a semver range (^1.2.0, ~1.2, 1.2.3); tags, URLs and paths are not pinned by version" };
  }
  return { ecosystem, name, range, raw, pointer };
}

/** True for an exact semver version (what config.package must name). */
export function isExactVersion(range: string): boolean {
  return /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(range);
}

/**
 * The npm `dependencies` map a tool's requirements make (its server package included), or
 * undefined when it needs no npm packages. Two tools with the same map share one installed copy.
 * A name declared twice with different ranges is a conflict the caller reports.
 */
export function npmDependencies(declared: DeclaredPackages): { dependencies: Record<string, string>; conflicts: string[]; overrides?: NpmOverrides } | undefined {
  const npm = [...declared.requirements.filter((r) => r.ecosystem === "npm"), ...(declared.server?.requirement.ecosystem === "npm" ? [declared.server.requirement] : [])];
  if (npm.length === 0) return undefined;
  const dependencies: Record<string, string> = {};
  const conflicts: string[] = [];
  for (const r of npm) {
    const range = r.range === "" ? "*" : r.range;
    if (dependencies[r.name] !== undefined && dependencies[r.name] !== range) conflicts.push(`${r.name} is required as ${dependencies[r.name]} and as ${range}`);
    dependencies[r.name] = range;
  }
  return { dependencies: Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), conflicts, ...(declared.npmOverrides ? { overrides: declared.npmOverrides } : {}) };
}

/** The PEP 508 requirements a tool declares (without the `pypi:` prefix), or undefined for none. */
export function pypiRequirements(declared: DeclaredPackages): string[] | undefined {
  // The same requirement written in two places (config.requires and requirements.txt) is one.
  const server = declared.server?.requirement.ecosystem === "pypi" ? [declared.server.requirement] : [];
  const specs = [...new Set([...declared.requirements, ...server].filter((r) => r.ecosystem === "pypi").map((r) => r.raw.replace(/^pypi:/, "").trim()))];
  return specs.length > 0 ? specs : undefined;
}

/** Whether a tool needs any npm or Python package (what lock, install and exec ask first). */
export function declaresPackages(tool: Parameters<typeof declaredPackages>[0]): boolean {
  const declared = declaredPackages(tool);
  return npmDependencies(declared) !== undefined || pypiRequirements(declared) !== undefined;
}

/** What changed between a tool's locked requirements and its declared ones, per ecosystem. */
export interface RequirementChange {
  ecosystem: Ecosystem;
  /** `+ a@^1`, `- b@2`, `~ c ^1 -> ^2` for npm; `+ spec`, `- spec` for PEP 508 requirements. */
  changes: string[];
}

/**
 * The requirements a tool declares that its lock entry does not record (or records differently):
 * empty when the lock resolves exactly what the tool declares. Lock reuses a resolution only then,
 * and a frozen install refuses anything else with these changes.
 */
export function requirementChanges(tool: Parameters<typeof declaredPackages>[0], locked: ToolDependencies | undefined): RequirementChange[] {
  const declared = declaredPackages(tool);
  const out: RequirementChange[] = [];
  const npmDeclared = npmDependencies(declared)?.dependencies;
  const npm = mapChanges(locked?.npm?.requires ?? {}, npmDeclared ?? {});
  // package.json's overrides force versions anywhere in the tree: another set is another resolution.
  const overrides = npmDeclared ? declared.npmOverrides : undefined;
  if (overridesKey(locked?.npm?.overrides) !== overridesKey(overrides)) npm.push(`~ overrides ${overridesKey(locked?.npm?.overrides) ?? "(none)"} -> ${overridesKey(overrides) ?? "(none)"}`);
  // Who may run install scripts is part of what the lock pins: it changes the installed tree.
  if (npmDeclared || locked?.npm) npm.push(...setChanges(locked?.npm?.allow_scripts ?? [], npmDeclared ? allowedScripts(declared, "npm") : [], "allow_scripts "));
  if (npm.length > 0) out.push({ ecosystem: "npm", changes: npm });
  const pypiDeclared = pypiRequirements(declared);
  // A set, as npm's map is: the same requirements in another order resolve alike.
  const pypi = setChanges(locked?.pypi?.requires ?? [], pypiDeclared ?? [], "");
  if (pypiDeclared || locked?.pypi) pypi.push(...setChanges(locked?.pypi?.allow_scripts ?? [], pypiDeclared ? allowedScripts(declared, "pypi") : [], "allow_scripts "));
  if (pypi.length > 0) out.push({ ecosystem: "pypi", changes: pypi });
  return out;
}

/** Overrides as one comparable text (canonical JSON: key order does not count); undefined for none. */
export function overridesKey(overrides: NpmOverrides | undefined): string | undefined {
  return overrides && Object.keys(overrides).length > 0 ? renderCanonicalJson(overrides as unknown as CanonicalValue) : undefined;
}

function setChanges(before: readonly string[], after: readonly string[], label: string): string[] {
  return [...after.filter((r) => !before.includes(r)).map((r) => `+ ${label}${r}`), ...before.filter((r) => !after.includes(r)).map((r) => `- ${label}${r}`)];
}

function mapChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.flatMap((n) => (before[n] === after[n] ? [] : before[n] === undefined ? [`+ ${n}@${after[n]}`] : after[n] === undefined ? [`- ${n}@${before[n]}`] : [`~ ${n} ${before[n]} -> ${after[n]}`]));
}
