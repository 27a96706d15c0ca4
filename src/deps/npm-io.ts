// npm packages through the real npm client: `kiwi lock` resolves a tool's requirements with
// `npm install --package-lock-only --ignore-scripts` in a staging folder and records npm's own
// package-lock entries; `kiwi install` rebuilds that package-lock, runs `npm ci --ignore-scripts`
// (npm checks every tarball against its sha512), and stores every installed file in kiwi's
// content-addressed cache under one tree digest. Nothing here runs at `kiwi exec` time.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeStagingDir } from "./staging-io.ts";
import type { Store } from "../cache/store-io.ts";
import { removeTree } from "../cache/remove-io.ts";
import { KiwiError } from "../errors.ts";
import type { FileEntry } from "../integrity/tool.ts";
import type { NpmOverrides } from "../manifest/model.ts";
import type { NpmDependencies } from "../schema/lockfile.ts";
import { type PackageContext, hashInstalledTree } from "./installed-tree-io.ts";
import { packageLockOf, packagesWithInstallScripts, parsePackageLock } from "./npm-lock.ts";

/** How long one npm run may take before kiwi stops it. */
const NPM_TIMEOUT_MS = 5 * 60 * 1000;

/**
 * The layout kiwi locks and stores, whatever the user's npm settings say: npm's hoisted
 * node_modules of real folders, as the package-lock's paths name them (install-strategy=linked
 * would install symbolic links into node_modules/.store, which an installed tree does not keep).
 */
const LAYOUT = ["--install-strategy=hoisted"];

/**
 * Resolves `dependencies` to npm's exact tree (no tarball is downloaded or unpacked), starting
 * from `seed` (a package-lock's entries) when the tool has one.
 */
export async function resolveNpm(ctx: PackageContext, dependencies: Record<string, string>, seed?: NpmDependencies["packages"], overrides?: NpmOverrides): Promise<Omit<NpmDependencies, "tree">> {
  const dir = staging(ctx, "resolve");
  try {
    writePackageJson(dir, dependencies, overrides);
    // The tool's own package-lock: npm keeps every version it pins that still satisfies the ranges.
    if (seed) writeFileSync(join(dir, "package-lock.json"), packageLockOf({ requires: dependencies, packages: seed }));
    // Lockfile version 3 (packages only) is what kiwi reads, whatever lockfile-version an .npmrc sets.
    await runNpm(ctx, dir, ["install", "--package-lock-only", "--lockfile-version=3", ...LAYOUT, "--ignore-scripts", "--no-audit", "--no-fund"], dependencies);
    const text = readFileSync(join(dir, "package-lock.json"), "utf8");
    const packages = parsePackageLock(text, ctx.toolId);
    return { requires: dependencies, ...(overrides ? { overrides } : {}), packages };
  } finally {
    removeTree(dir);
  }
}

/**
 * Installs exactly the locked tree and stores its files; returns them (paths under
 * node_modules/). npm verifies each tarball against the locked integrity.
 */
export async function installNpm(ctx: PackageContext, store: Store, locked: NpmDependencies): Promise<FileEntry[]> {
  const dir = staging(ctx, "install");
  try {
    writePackageJson(dir, locked.requires, locked.overrides);
    writeFileSync(join(dir, "package-lock.json"), packageLockOf(locked));
    await runNpm(ctx, dir, ["ci", ...LAYOUT, "--ignore-scripts", "--no-audit", "--no-fund"], locked.requires, locked.packages);
    for (const [path, entry] of Object.entries(locked.packages)) {
      const installed = readInstalledVersion(join(dir, path, "package.json"));
      // An optional package for another platform (esbuild's @esbuild/darwin-arm64 on Linux: its
      // os/cpu do not match) is one npm ci skips, as it should.
      if (installed === undefined && (entry as Record<string, unknown>).optional === true) continue;
      if (installed !== entry.version) {
        throw new KiwiError("E_DEPS", `${ctx.toolId}: npm installed ${installed === undefined ? "nothing" : installed} at ${path}, but the lock has ${entry.version}`, {
          hint: 'run "kiwi lock" to resolve the requirements again',
          details: { tool: ctx.toolId, package: path },
        });
      }
    }
    await runAllowedScripts(ctx, dir, locked);
    return hashInstalledTree(ctx, store, join(dir, "node_modules"), "node_modules");
  } finally {
    removeTree(dir);
  }
}

/**
 * The install scripts the tool allows (its allow_scripts, recorded in the lock), run by
 * `npm rebuild <names>` after `npm ci --ignore-scripts` installed every package without any;
 * what they build becomes part of the installed tree. Every other package's scripts never run.
 */
async function runAllowedScripts(ctx: PackageContext, dir: string, locked: NpmDependencies): Promise<void> {
  const allowed = locked.allow_scripts ?? [];
  // A package nested at two paths is one name: npm rebuild finds every copy.
  const names = [...new Set(packagesWithInstallScripts(locked).filter((name) => allowed.includes(name)))];
  if (names.length === 0) return;
  try {
    await runNpm(ctx, dir, ["rebuild", "--ignore-scripts=false", "--foreground-scripts", ...names], locked.requires);
  } catch (error) {
    const npm = error instanceof KiwiError && Array.isArray(error.details?.npm) ? (error.details.npm as string[]) : [];
    throw new KiwiError("E_DEPS", `${ctx.toolId}: the install script of ${names.join(", ")} failed${npm.length > 0 ? `: ${npm[0]}` : ""}`, {
      hint: "the tool's allow_scripts lets it run at kiwi install; fix what it needs, or remove it from allow_scripts",
      details: { tool: ctx.toolId, packages: names, npm },
    });
  }
}

function readInstalledVersion(path: string): string | undefined {
  try {
    const v = (JSON.parse(readFileSync(path, "utf8")) as { version?: unknown }).version;
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

function staging(ctx: PackageContext, what: "resolve" | "install"): string {
  const dir = makeStagingDir(what === "resolve" ? "kiwi-npm-resolve" : "kiwi-npm-install");
  // The project's registry settings, as npm would read them in the project itself.
  const npmrc = join(ctx.root, ".npmrc");
  if (existsSync(npmrc)) copyFileSync(npmrc, join(dir, ".npmrc"));
  return dir;
}

/** The staging package.json: the tool's dependencies, and its package.json's overrides, which npm applies anywhere in the tree. */
function writePackageJson(dir: string, dependencies: Record<string, string>, overrides?: NpmOverrides): void {
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "kiwi-tool-packages", version: "0.0.0", private: true, dependencies, ...(overrides ? { overrides } : {}) }, null, 2)}\n`);
}

/** Runs npm; a failure is E_DEPS in npm's own words, naming the tool and the package when npm does. */
async function runNpm(ctx: PackageContext, cwd: string, args: string[], dependencies: Record<string, string>, packages?: NpmDependencies["packages"]): Promise<void> {
  const npm = Bun.which("npm", { PATH: ctx.env.PATH ?? "" });
  if (!npm) throw new KiwiError("E_DEPS", `${ctx.toolId} needs npm packages, but npm is not installed`, { hint: "install Node.js with npm; kiwi drives the real npm client", details: { tool: ctx.toolId } });
  // npm's default retry backoff (10 s to 60 s) makes a bad tarball cost over two minutes; kiwi
  // waits 1 to 5 s between tries unless the user set their own.
  const defaults = { npm_config_fetch_retry_mintimeout: "1000", npm_config_fetch_retry_maxtimeout: "5000" };
  const env = Object.fromEntries(Object.entries({ ...defaults, ...ctx.env, npm_config_update_notifier: "false", npm_config_loglevel: "error" }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const proc = Bun.spawn([npm, ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), NPM_TIMEOUT_MS);
  const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (code === 0) return;
  throw npmError(ctx.toolId, stderr, code, dependencies, packages);
}

/** npm's failure as a coded error: which package, and what went wrong, from npm's error codes. */
export function npmError(toolId: string, stderr: string, code: number | null, dependencies: Record<string, string>, packages?: NpmDependencies["packages"]): KiwiError {
  const npmCode = /npm (?:error|ERR!) code (\w+)/.exec(stderr)?.[1];
  const lines = stderr.split("\n").map((l) => l.replace(/^npm (error|ERR!) ?/, "").trim()).filter((l) => l && !/^(code|errno|syscall|A complete log|\d{4}-)/.test(l));
  // An integrity failure names the digest, not the package: the lock says whose digest it is.
  const byIntegrity = Object.entries(packages ?? {}).find(([, e]) => e.integrity !== undefined && stderr.includes(e.integrity));
  const lockedName = byIntegrity ? byIntegrity[0].slice(byIntegrity[0].lastIndexOf("node_modules/") + "node_modules/".length) : undefined;
  const names = Object.keys(dependencies);
  // The package npm could not find (E404) or match (ETARGET), as npm spells it: one the tool
  // requires, or a dependency of one, which the tool's manifest does not name.
  const spec = /'((?:@[^/'\s]+\/)?[^@'\s]+)@([^']*)' (?:could not be found|is not in this registry)/.exec(stderr) ?? /No matching version found for ((?:@[^/\s]+\/)?[^@\s]+)@(\S+?)\.?\s*$/m.exec(stderr);
  // An alias's package (pad: npm:left-pad@^1, which npm names as left-pad) is the requirement itself.
  const required = spec ? (names.includes(spec[1]!) ? spec[1] : names.find((n) => dependencies[n] === `npm:${spec[1]}` || dependencies[n]!.startsWith(`npm:${spec[1]}@`))) : undefined;
  const dependency = spec && !required ? `${spec[1]}@${spec[2]}` : undefined;
  // Which of the tool's requirements: npm's own words, else the one the output mentions (not for a
  // dependency, whose dependents the output does not name), else the only one.
  const named = lockedName ?? required ?? (dependency ? undefined : names.find((name) => stderr.includes(name))) ?? (names.length === 1 ? names[0] : undefined);
  const what = lockedName ? `${lockedName}@${byIntegrity![1].version}` : named ? `${named}@${dependencies[named]}` : "its packages";
  const reason =
    dependency && (npmCode === "ETARGET" || npmCode === "E404")
      ? npmCode === "ETARGET"
        ? `no version of its dependency ${dependency} matches`
        : `its dependency ${dependency} is not in the registry`
      : npmCode === "ETARGET"
      ? `no version of ${what} matches`
      : npmCode === "E404"
        ? `${required && spec && required !== spec[1] ? `${spec[1]} (which ${required} installs)` : (named ?? "a package")} is not in the registry`
        : npmCode === "EINTEGRITY"
          ? "a tarball does not match the integrity in the lock (the registry served other bytes)"
          : npmCode && /^E(CONNREFUSED|NOTFOUND|AI_AGAIN|CONNRESET|TIMEDOUT)$|^ENOTFOUND$/.test(npmCode)
            ? "the registry cannot be reached"
            : code === null
              ? "npm did not finish in time"
              : (lines[0] ?? `npm exited with ${code}`);
  return new KiwiError(npmCode === "EINTEGRITY" ? "E_INTEGRITY_MISMATCH" : "E_DEPS", `${toolId}: cannot get ${what}: ${reason}`, {
    hint:
      npmCode === "EINTEGRITY"
        ? "the lock pins the registry's sha512 for each tarball; check which registry served it (.npmrc, npm_config_registry)"
        : npmCode && /CONN|NOTFOUND|AI_AGAIN|TIMEDOUT/.test(npmCode)
          ? "check the registry (npm config get registry) and the network; kiwi never downloads at exec time"
          : dependency
            ? "a package the tool requires needs a version the registry does not have: check the registry (a mirror may lag behind), or require another version of the package that needs it"
            : "fix the requirement in the tool's manifest",
    details: { tool: toolId, npmCode, npm: lines.slice(0, 5) },
  });
}
