// Python packages through the real pip, in a venv made by `python3 -m venv` (never the system's
// interpreter, so Debian's externally-managed Python is no obstacle): `kiwi lock` resolves a tool's
// requirements with `pip install --dry-run --report` and records each distribution's exact version,
// URL and sha256; `kiwi install` installs exactly those with `--require-hashes --no-deps` into a
// plain folder (`site-packages/`), which kiwi stores like any tree. Indexes come from the user's pip
// settings (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf). Nothing here runs at `kiwi exec` time.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeStagingDir } from "./staging-io.ts";
import { removeTree } from "../cache/remove-io.ts";
import type { Store } from "../cache/store-io.ts";
import { KiwiError } from "../errors.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { isRecord } from "../integrity/value.ts";
import type { PypiDependencies } from "../schema/lockfile.ts";
import { type PackageContext, hashInstalledTree } from "./installed-tree-io.ts";
import { normalizeName } from "./requirements.ts";

/** How long one pip run may take before kiwi stops it. */
const PIP_TIMEOUT_MS = 5 * 60 * 1000;

/** Whether pip chose a source distribution (whose build runs its code) rather than a wheel. */
export function isSourceDistribution(url: string): boolean {
  return !/\.whl$/i.test(url.replace(/[#?].*$/, ""));
}

/**
 * Resolves PEP 508 requirements to exact distributions with their sha256 (nothing is installed).
 * Wheels only, so resolving runs no package's code, unless `allow` names distributions pip may
 * build from source; a source distribution of any other is refused.
 */
export async function resolvePip(ctx: PackageContext, requires: string[], allow: readonly string[] = []): Promise<Omit<PypiDependencies, "tree">> {
  const dir = makeStagingDir("kiwi-pip-resolve");
  try {
    const python = await makeVenv(ctx, dir);
    writeFileSync(join(dir, "requirements.in"), `${requires.join("\n")}\n`);
    const report = join(dir, "report.json");
    const formats = allow.length === 0 ? ["--only-binary", ":all:"] : ["--prefer-binary"];
    await runPip(ctx, python, ["install", "--dry-run", "--ignore-installed", ...formats, "--report", report, "-r", join(dir, "requirements.in")], requires, { wheelsOnly: allow.length === 0, resolving: true });
    const packages: PypiDependencies["packages"] = {};
    const doc = JSON.parse(readFileSync(report, "utf8")) as { install?: unknown[] };
    for (const item of doc.install ?? []) {
      if (!isRecord(item) || !isRecord(item.metadata) || !isRecord(item.download_info)) continue;
      const name = normalizeName(String(item.metadata.name));
      const info = item.download_info;
      const archive = isRecord(info.archive_info) ? info.archive_info : {};
      const hashes = isRecord(archive.hashes) ? archive.hashes : {};
      const sha256 = typeof hashes.sha256 === "string" ? hashes.sha256 : typeof archive.hash === "string" && archive.hash.startsWith("sha256=") ? archive.hash.slice(7) : undefined;
      if (!sha256 || typeof info.url !== "string") {
        throw new KiwiError("E_DEPS", `${ctx.toolId}: ${name} ${String(item.metadata.version)} comes with no sha256 from its index (${String(info.url)})`, {
          hint: "use an index that publishes hashes (PEP 503 #sha256= links, as PyPI does); a distribution without one cannot be pinned by digest",
          details: { tool: ctx.toolId, package: name },
        });
      }
      if (isSourceDistribution(info.url) && !allow.includes(name)) {
        throw new KiwiError("E_DEPS", `${ctx.toolId}: ${name} ${String(item.metadata.version)} comes only as a source distribution (${info.url.split("/").pop()}), and building it runs its code`, {
          hint: `allow the build with allow_scripts: [pypi:${name}] in the tool's manifest, or require a version published as a wheel`,
          details: { tool: ctx.toolId, package: name },
        });
      }
      packages[name] = { version: String(item.metadata.version), url: info.url, sha256 };
    }
    const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { requires, packages: sorted, ...(allow.length > 0 ? { allow_scripts: [...allow] } : {}) };
  } finally {
    removeTree(dir);
  }
}

/** Installs exactly the locked distributions into a folder and stores its files (`site-packages/...`). */
export async function installPip(ctx: PackageContext, store: Store, locked: PypiDependencies): Promise<FileEntry[]> {
  const dir = makeStagingDir("kiwi-pip-install");
  try {
    const python = await makeVenv(ctx, dir);
    const lines = Object.entries(locked.packages).map(([name, p]) => `${name}==${p.version} --hash=sha256:${p.sha256}`);
    writeFileSync(join(dir, "requirements.txt"), `${lines.join("\n")}\n`);
    const target = join(dir, "site-packages");
    // Wheels only, but for the source distributions the lock chose because the tool allowed them.
    const built = Object.entries(locked.packages).filter(([, p]) => isSourceDistribution(p.url)).map(([name]) => name);
    const unallowed = built.find((name) => !(locked.allow_scripts ?? []).includes(name));
    if (unallowed) {
      throw new KiwiError("E_LOCK_INVALID", `${ctx.toolId}: the lock installs ${unallowed} from source, which its allow_scripts does not allow`, {
        hint: 'run "kiwi lock" to resolve the requirements again (tool.lock.json may have been edited by hand)',
        details: { tool: ctx.toolId, package: unallowed },
      });
    }
    const formats = ["--only-binary", ":all:", ...(built.length > 0 ? ["--no-binary", built.join(",")] : [])];
    // --no-compile: bytecode is not reproducible; python writes none at run time (-B).
    await runPip(ctx, python, ["install", "--require-hashes", "--no-deps", "--no-compile", ...formats, "--target", target, "-r", join(dir, "requirements.txt")], locked.requires, { wheelsOnly: false, resolving: false });
    dropScriptRecords(target);
    return hashInstalledTree(ctx, store, target, "site-packages");
  } finally {
    removeTree(dir);
  }
}

/**
 * A distribution's RECORD without its lines for the scripts pip wrote into bin/ (console scripts,
 * a wheel's .data/scripts). pip records each wrapper's sha256, and a wrapper's first line names the
 * python that ran pip: kiwi's staging venv, a new path on every install. The installed tree leaves
 * bin/ out, so those lines name files it does not hold; without them RECORD, and so the tree's
 * digest, is the same on every install and machine.
 */
export function recordWithoutScripts(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^"?(?:\.\.\/)+bin\//.test(line))
    .join("\n");
}

/** Rewrites every RECORD of an installed --target folder with recordWithoutScripts. */
function dropScriptRecords(target: string): void {
  if (!existsSync(target)) return;
  for (const name of readdirSync(target)) {
    if (!name.endsWith(".dist-info")) continue;
    const record = join(target, name, "RECORD");
    if (!existsSync(record)) continue;
    const text = readFileSync(record, "utf8");
    const kept = recordWithoutScripts(text);
    if (kept !== text) writeFileSync(record, kept);
  }
}

/** A venv for pip to run in; its python. */
async function makeVenv(ctx: PackageContext, dir: string): Promise<string> {
  const python3 = Bun.which("python3", { PATH: ctx.env.PATH ?? "" });
  if (!python3) throw new KiwiError("E_DEPS", `${ctx.toolId} needs Python packages, but python3 is not installed`, { hint: "install python3 with venv support (Debian: python3-venv)", details: { tool: ctx.toolId } });
  const venv = join(dir, "venv");
  const proc = Bun.spawn([python3, "-m", "venv", venv], { env: envOf(ctx), stdout: "pipe", stderr: "pipe" });
  const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const python = join(venv, "bin", "python");
  if (code !== 0 || !existsSync(python)) {
    throw new KiwiError("E_DEPS", `${ctx.toolId}: python3 -m venv failed: ${stderr.trim().split("\n").pop() ?? `exit ${code}`}`, { hint: "install venv support (Debian: python3-venv)", details: { tool: ctx.toolId } });
  }
  return python;
}

/**
 * The user's pip settings decide where packages come from (indexes, proxies, certificates), not
 * what is resolved or where pip installs: an environment variable outranks pip.conf, so these turn
 * off a no-deps (which would lock a package without its dependencies), a user, prefix or root
 * install (which clash with the venv and --target), and a global require-hashes (kiwi pins the
 * hashes itself; a requirement's own --hash still counts).
 */
const KIWI_PIP_SETTINGS = { PIP_NO_DEPS: "0", PIP_USER: "0", PIP_REQUIRE_HASHES: "0", PIP_PREFIX: undefined, PIP_ROOT: undefined, PIP_TARGET: undefined } as const;

function envOf(ctx: PackageContext): Record<string, string> {
  return Object.fromEntries(Object.entries({ ...ctx.env, ...KIWI_PIP_SETTINGS, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1", PIP_RETRIES: ctx.env.PIP_RETRIES ?? "1", PIP_TIMEOUT: ctx.env.PIP_TIMEOUT ?? "15" }).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/** How a pip failure reads: whether only wheels were allowed, and whether kiwi lock was resolving (no lock to mismatch yet). */
interface PipRun {
  wheelsOnly: boolean;
  resolving: boolean;
}

async function runPip(ctx: PackageContext, python: string, args: string[], requires: string[], run: PipRun): Promise<void> {
  const proc = Bun.spawn([python, "-m", "pip", ...args], { cwd: tmpdir(), env: envOf(ctx), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), PIP_TIMEOUT_MS);
  const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (code === 0) return;
  throw pipError(ctx.toolId, stderr, code, requires, run);
}

/** pip's failure as a coded error naming the tool and, when pip says, the requirement. */
export function pipError(toolId: string, stderr: string, code: number | null, requires: string[], run: PipRun = { wheelsOnly: false, resolving: false }): KiwiError {
  const { wheelsOnly, resolving } = run;
  const text = stderr.replace(/\r/g, "");
  const hashMismatch = /THESE PACKAGES DO NOT MATCH THE HASHES/.test(text);
  // One requirement with --hash (pip-compile --generate-hashes) makes pip want a hash and an ==
  // pin for every distribution; it lists, indented, those that lack them.
  const unhashed = /Hashes are required in --require-hashes mode/.test(text);
  const unpinned = /In --require-hashes mode, all requirements must have their versions pinned/.test(text);
  const listed = text.split("\n").filter((l) => /^ {4}\S/.test(l)).map((l) => l.trim().split(/\s+/)[0]!);
  const hashMode = (unhashed || unpinned) && listed.length > 0 ? `${listed.join(", ")} ${listed.length === 1 ? "has" : "have"} no ${unhashed ? "--hash" : "== pin"}, which pip requires of every distribution once one requirement has a --hash` : undefined;
  const named = requires.find((r) => text.toLowerCase().includes(normalizeName(r.split(/[<>=!~ ;[]/)[0]!).replace(/-/g, "")) || text.includes(r.split(/[<>=!~ ;[]/)[0]!)) ?? (requires.length === 1 ? requires[0] : undefined);
  // A requirement as named in a message, without the --hash options pip-compile puts after it.
  const what = named?.replace(/\s+--hash[= ]\S+/g, "") ?? "its packages";
  const noMatch = /No matching distribution found|Could not find a version that satisfies/.test(text);
  // The requirement pip could not satisfy, as pip spells it, and who asked for it: one the tool
  // declares, or a dependency of one ("old-dist>=5 (from needs-newer)").
  const unsatisfied = /satisfies the requirement (\S+)(?: \(from ([^)]+)\))?/.exec(text) ?? /No matching distribution found for (\S+)/.exec(text);
  const nameOf = (spec: string) => normalizeName(spec.split(/[<>=!~ ;[]/)[0]!);
  const dependency = unsatisfied && !requires.some((r) => nameOf(r) === nameOf(unsatisfied[1]!)) ? { spec: unsatisfied[1]!, from: unsatisfied[2] } : undefined;
  // A dependency's message names the requirement pip says asked for it.
  const asker = dependency?.from === undefined ? undefined : requires.find((r) => nameOf(r) === nameOf(dependency.from!));
  // pip says no version matches when it could not reach the index too: then that is the reason.
  const unreachable = /Connection refused|Failed to establish a new connection|NewConnectionError|Name or service not known|Max retries exceeded/.test(text);
  // At install pip is given the lock's pins, not the tool's requirements: the one it cannot find is the subject.
  const pinMissing = noMatch && !unreachable && !resolving && unsatisfied !== null;
  const subject = pinMissing ? `${unsatisfied[1]!}, which tool.lock.json pins` : (asker?.replace(/\s+--hash[= ]\S+/g, "") ?? what);
  const [reason, hint] = hashMismatch
    ? resolving
      ? ["a distribution does not match the sha256 its index lists or its --hash names (the index served other bytes, or the --hash is wrong)", "check which index served it (PIP_INDEX_URL, PIP_FIND_LINKS) and the tool's --hash options; nothing was locked"]
      : ["a distribution does not match the sha256 in the lock (the index served other bytes)", "the lock pins each distribution's sha256; check which index served it (PIP_INDEX_URL, PIP_FIND_LINKS)"]
    : hashMode
      ? [hashMode, "give every requirement, its dependencies included, an == pin and a --hash (pip-compile --generate-hashes writes them all), or drop the --hash options: kiwi locks each distribution's sha256 either way"]
      : unreachable
        ? ["the index cannot be reached", "check the index (PIP_INDEX_URL) and the network; kiwi never downloads at exec time"]
      : pinMissing
        ? ["the index does not have it", "check the index (PIP_INDEX_URL, PIP_FIND_LINKS): it must serve every distribution the lock pins, as the index kiwi lock resolved from did (a mirror may lag behind)"]
      : noMatch && dependency
        ? [
            `no version of its dependency ${dependency.spec}${dependency.from ? ` (which ${dependency.from} requires)` : ""} matches`,
            `a distribution the tool requires needs a version the index does not have: check the index (PIP_INDEX_URL, PIP_FIND_LINKS), or require another version of the distribution that needs it${wheelsOnly ? "; kiwi takes wheels only, so one published only as source needs allow_scripts: [pypi:<name>]" : ""}`,
          ]
        : noMatch
        ? [`no version of ${what} matches`, wheelsOnly ? "fix the requirement in the tool's manifest; kiwi takes wheels only, so a distribution published only as source needs allow_scripts: [pypi:<name>] (its build runs its code)" : "fix the requirement in the tool's manifest"]
        : /ResolutionImpossible|conflict/i.test(text)
          ? ["the requirements conflict", "fix the requirement in the tool's manifest"]
          : [code === null ? "pip did not finish in time" : (text.split("\n").map((l) => l.replace(/^ERROR: /, "").trim()).filter(Boolean).pop() ?? `pip exited with ${code}`), "fix the requirement in the tool's manifest"];
  return new KiwiError(hashMismatch ? "E_INTEGRITY_MISMATCH" : "E_DEPS", hashMode ? `${toolId}: ${reason}` : `${toolId}: cannot get ${subject}: ${reason}`, {
    hint,
    details: { tool: toolId, pip: text.split("\n").filter(Boolean).slice(-5) },
  });
}
