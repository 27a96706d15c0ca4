// npm's package-lock.json as kiwi keeps it: the entries of every package (read from what npm
// resolved), the package-lock rebuilt from them for `npm ci`, and the bin an MCP server runs. Pure.
import { KiwiError } from "../errors.ts";
import { compareCodePoints, renderCanonicalJson } from "../integrity/canonical.ts";
import { sha256Hex } from "../integrity/digest.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { isRecord } from "../integrity/value.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import type { NpmDependencies } from "../schema/lockfile.ts";

/** The name npm gives the staging package (package-lock's root entry). */
const ROOT_NAME = "kiwi-tool-packages";

/**
 * The package entries of npm's package-lock.json (v2/v3), keyed by node_modules path, sorted. Every
 * package must come from a registry tarball with an integrity, or inside one (a bundled dependency):
 * a git or local dependency could change under the lock, so it is refused.
 */
export function parsePackageLock(text: string, toolId: string): NpmDependencies["packages"] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new KiwiError("E_DEPS", `${toolId}: npm wrote a package-lock.json kiwi cannot read (${(error as Error).message})`, { hint: "check the npm version (npm 7 or later)" });
  }
  const packages = isRecord(doc) && isRecord(doc.packages) ? doc.packages : undefined;
  if (!packages) throw new KiwiError("E_DEPS", `${toolId}: npm's package-lock.json has no "packages" (npm 7 or later writes them)`, { hint: "use npm 7 or later" });
  const out: NpmDependencies["packages"] = {};
  for (const path of Object.keys(packages).sort(compareCodePoints)) {
    if (path === "") continue;
    const entry = packages[path];
    if (!isRecord(entry)) continue;
    const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
    // npm leaves `resolved` out when it is the configured registry's URL (omit-lockfile-registry-resolved).
    const resolved = entry.resolved;
    // A bundled package (bundleDependencies) comes inside its bundler's tarball, whose integrity covers it.
    const bundled = entry.inBundle === true && resolved === undefined && entry.integrity === undefined;
    if (entry.link === true || (resolved !== undefined && (typeof resolved !== "string" || !/^https?:\/\//.test(resolved))) || (typeof entry.integrity !== "string" && !bundled)) {
      throw new KiwiError("E_DEPS", `${toolId}: ${name} does not come from a registry tarball with an integrity (${typeof resolved === "string" ? resolved : entry.link === true ? "a link" : "no integrity"})`, {
        hint: "require packages from a registry by version; git, file and link dependencies cannot be pinned by digest",
        details: { tool: toolId, package: path },
      });
    }
    if (typeof entry.version !== "string") throw new KiwiError("E_DEPS", `${toolId}: ${path} has no version in npm's package-lock.json`, { hint: "run kiwi lock again" });
    out[path] = entry as NpmDependencies["packages"][string];
  }
  return out;
}

/** The package-lock.json `npm ci` installs from, rebuilt from the locked entries. */
export function packageLockOf(locked: Pick<NpmDependencies, "requires" | "packages">): string {
  const packages: Record<string, unknown> = { "": { name: ROOT_NAME, version: "0.0.0", dependencies: locked.requires } };
  for (const path of Object.keys(locked.packages).sort(compareCodePoints)) packages[path] = locked.packages[path];
  return `${JSON.stringify({ name: ROOT_NAME, version: "0.0.0", lockfileVersion: 3, requires: true, packages }, null, 2)}\n`;
}

/** Packages whose install scripts kiwi did not run (npm marks them hasInstallScript). */
export function packagesWithInstallScripts(locked: Pick<NpmDependencies, "packages">): string[] {
  return Object.entries(locked.packages)
    .filter(([, e]) => (e as Record<string, unknown>).hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
}

/**
 * Locked packages their registry marks deprecated (npm copies `deprecated` into the package-lock),
 * as npm warns: `name@version: message`, on one line and without the registry's control characters.
 */
export function deprecatedPackages(locked: Pick<NpmDependencies, "packages">): string[] {
  return Object.entries(locked.packages)
    .filter(([, e]) => typeof (e as Record<string, unknown>).deprecated === "string")
    .map(([path, e]) => `${path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)}@${e.version}: ${((e as Record<string, unknown>).deprecated as string).replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").trim()}`);
}

/** A `node_modules/.bin` link as npm makes it: `path` (relative to the run directory) points at `target` (relative to the link's folder). */
export interface BinLink {
  path: string;
  target: string;
}

/**
 * The `.bin` links npm would make for the locked packages (each entry's `bin`), whose targets are
 * files of the installed tree (`files`, run-directory paths). A bin name that is not a plain file
 * name, or a target outside its package or not installed, gets no link; of two packages that claim
 * one name in a folder, the first by path keeps it.
 */
export function binLinks(locked: Pick<NpmDependencies, "packages">, files: ReadonlySet<string>): BinLink[] {
  const links = new Map<string, BinLink>();
  for (const path of Object.keys(locked.packages).sort(compareCodePoints)) {
    const bins = (locked.packages[path] as Record<string, unknown>).bin;
    if (!isRecord(bins)) continue;
    const at = path.lastIndexOf("node_modules/");
    const folder = path.slice(0, at + "node_modules".length);
    const name = path.slice(at + "node_modules/".length);
    for (const [bin, target] of Object.entries(bins).sort(([a], [b]) => compareCodePoints(a, b))) {
      if (typeof target !== "string" || !/^[^/\\]+$/.test(bin) || bin === "." || bin === "..") continue;
      const rel = target.replace(/^\.\//, "");
      if (rel.startsWith("/") || rel.split("/").some((seg) => seg === ".." || seg === "" || seg === ".")) continue;
      if (!files.has(`${path}/${rel}`)) continue;
      const link = `${folder}/.bin/${bin}`;
      if (!links.has(link)) links.set(link, { path: link, target: `../${name}/${rel}` });
    }
  }
  return [...links.values()];
}

/**
 * The file (relative to the run directory) an mcp_server's `config.package` runs: the named bin
 * of the package, or its only bin. Undefined with the reason when the lock has no such bin.
 */
export function serverBin(locked: Pick<NpmDependencies, "packages">, name: string, bin: string | undefined): { path: string } | { problem: string } {
  const entry = locked.packages[`node_modules/${name}`] as Record<string, unknown> | undefined;
  if (!entry) return { problem: `the lock has no package ${name}` };
  const bins = isRecord(entry.bin) ? (entry.bin as Record<string, unknown>) : {};
  const names = Object.keys(bins).sort();
  const chosen = bin ?? (names.length === 1 ? names[0] : undefined);
  if (chosen === undefined) return { problem: names.length === 0 ? `${name} has no bin to run` : `${name} has several bins (${names.join(", ")}): name one with config.bin` };
  const target = bins[chosen];
  if (typeof target !== "string") return { problem: `${name} has no bin named ${chosen} (it has ${names.join(", ") || "none"})` };
  const rel = target.replace(/^\.\//, "");
  if (rel.split("/").some((s) => s === ".." || s === "") || rel.startsWith("/")) return { problem: `${name}'s bin ${chosen} points outside the package (${target})` };
  return { path: `node_modules/${name}/${rel}` };
}
