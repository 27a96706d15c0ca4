// A chain link's packages at exec time: the lock's installed trees (npm's node_modules/, Python's
// site-packages/), read from the cache and checked against the digests tool.lock.json records,
// merged into the link's run directory, where node finds node_modules beside the tool's files and
// python finds site-packages through PYTHONPATH; an mcp_server's `config.package` becomes
// `node <its bin>` from that copy. Nothing is downloaded here: a missing tree is "run kiwi install".
import { readFileSync } from "node:fs";
import { type Store, getVerifiedBlobPath, readTreeEntry } from "../cache/store-io.ts";
import { cachedTreeMismatch, treeMismatchError } from "../deps/installed-tree-io.ts";
import { type BinLink, binLinks, serverBin } from "../deps/npm-lock.ts";
import { declaredPackages, requirementChanges } from "../deps/requirements.ts";
import { KiwiError } from "../errors.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { type Tool, withConfig } from "../manifest/model.ts";
import type { ToolDependencies } from "../schema/lockfile.ts";
import type { VerifiedLink } from "./chain-verify-io.ts";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";

export interface LinkPackages {
  /** The tool as it runs: an mcp_server package started as `node <bin>` from the run directory. */
  tool: Tool;
  /** The installed files, under node_modules/ and site-packages/. */
  files: FileEntry[];
  /** The installed trees' digests (hex, npm's then Python's): part of the run directory's name (cache-layout.ts runDirName). */
  trees: string[];
  /** Whether Python packages are installed (the run then gets PYTHONPATH=<run dir>/site-packages). */
  python: boolean;
  /** The node_modules/.bin links npm would make, recreated from the locked bins (the tree holds no links). */
  links: BinLink[];
}

/** The verified installed packages of `link`; throws E_DEPS / E_CACHE_MISSING with what to run. */
export function linkPackages(store: Store, link: Pick<VerifiedLink, "tool" | "packages">): LinkPackages {
  const { tool, packages } = link;
  const declared = declaredPackages(tool);
  // The lock must resolve exactly what the tool declares now (a hand-edited or older lock may not).
  const [change] = requirementChanges(tool, packages);
  if (change) {
    throw new KiwiError("E_DEPS", `${tool.id} needs ${change.ecosystem === "npm" ? "npm" : "Python"} packages that tool.lock.json does not hold (${change.changes.join(", ")})`, {
      hint: 'run "kiwi install": it resolves, installs and records them (kiwi never downloads at exec time)',
      details: { tool: tool.id, ecosystem: change.ecosystem, changes: change.changes },
    });
  }
  const clash = tool.files.find((f) => /^(node_modules|site-packages)(\/|$)/.test(f.path));
  if (clash) {
    throw new KiwiError("E_DEPS", `${tool.id} has its own ${clash.path}, where its installed packages go`, { hint: "remove that folder from the tool: kiwi installs the declared packages", details: { tool: tool.id } });
  }
  const files: FileEntry[] = [];
  const trees: string[] = [];
  for (const ecosystem of ["npm", "pypi"] as const) {
    const locked = packages?.[ecosystem];
    if (!locked) continue;
    if (!locked.tree) throw new KiwiError("E_DEPS", `${tool.id}'s ${ecosystem} packages are locked but not installed`, { hint: 'run "kiwi install"', details: { tool: tool.id } });
    const treeHex = locked.tree.slice("sha256:".length);
    const tree = readTreeEntry(store, treeHex);
    if (!tree) {
      throw new KiwiError("E_CACHE_MISSING", `${tool.id}'s installed ${ecosystem} packages (tree sha256:${treeHex.slice(0, 12)}) are not in the cache`, { hint: 'run "kiwi install" to install them again', details: { tool: tool.id } });
    }
    assertTreeIsPackages(store, tool.id, ecosystem, locked);
    files.push(...tree);
    trees.push(treeHex);
  }
  const links = packages?.npm ? binLinks(packages.npm, new Set(files.map((f) => f.path))) : [];
  const result = { files, trees, python: packages?.pypi !== undefined, links };
  const server = declared.server;
  if (!server) return { tool, ...result };
  if (server.requirement.ecosystem === "pypi") {
    // A Python server runs its console script the way the script's wrapper would: import, call, exit.
    const script = consoleScript(store, files, server.requirement.name, server.bin);
    if ("problem" in script) throw new KiwiError("E_DEPS", `${tool.id}: config.package: ${script.problem}`, { hint: "name the console script with config.bin", details: { tool: tool.id } });
    const call = `import sys; from ${script.module} import ${script.attr.split(".")[0]}; sys.argv[0] = ${JSON.stringify(script.name)}; sys.exit(${script.attr}())`;
    return { tool: withConfig(tool, (config) => ({ ...config, command: "python3", args: ["-c", call, ...(Array.isArray(config.args) ? config.args : [])] })), ...result };
  }
  if (!packages?.npm) return { tool, ...result };
  const bin = serverBin(packages.npm, server.requirement.name, server.bin);
  if ("problem" in bin) throw new KiwiError("E_DEPS", `${tool.id}: config.package: ${bin.problem}`, { hint: "name the bin with config.bin", details: { tool: tool.id } });
  return { tool: { ...withConfig(tool, (config) => ({ ...config, command: "node" })), entrypoint: bin.path }, ...result };
}

/**
 * Refuses a recorded tree that is not the packages the entry lists (a merge that kept one side's
 * `tree` line and the other's packages), as kiwi verify and kiwi install do: on a machine that
 * already holds that tree, exec would otherwise run the other side's packages. The verdict is a
 * pure function of the tree's digest and the listed versions, so it is remembered under both and
 * a tree is read through once, not on every call.
 */
function assertTreeIsPackages(store: Store, toolId: string, ecosystem: "npm" | "pypi", locked: NonNullable<ToolDependencies["npm" | "pypi"]>): void {
  const tree = locked.tree!;
  const versions = Object.entries(locked.packages).map(([key, p]) => `${key}@${p.version}${p.optional === true ? "?" : ""}`).sort();
  const key = memoKey("verdicts", "installed tree", ecosystem, tree, ...versions);
  if (readMemo(store.dir, "verdicts", key) === "ok") return;
  const problems = cachedTreeMismatch(store, ecosystem, tree.slice("sha256:".length), locked);
  if (problems.length > 0) throw treeMismatchError(toolId, ecosystem, tree, problems);
  writeMemo(store.dir, "verdicts", key, "ok");
}

/**
 * A distribution's console script (`[console_scripts]` of its entry_points.txt in the installed
 * tree): `name = module:attr`. The named one (config.bin), or the only one.
 */
function consoleScript(store: Store, files: readonly FileEntry[], project: string, bin: string | undefined): { name: string; module: string; attr: string } | { problem: string } {
  const norm = (n: string) => n.toLowerCase().replace(/[-_.]+/g, "_");
  const entry = files.find((f) => /^site-packages\/[^/]+\.dist-info\/entry_points\.txt$/.test(f.path) && norm(f.path.split("/")[1]!.replace(/-[^-]+\.dist-info$/, "")) === norm(project));
  if (!entry) return { problem: `${project} installs no console script (no entry_points.txt)` };
  // Re-verified like every cached byte: the command line is built from it.
  const text = readFileSync(getVerifiedBlobPath(store, entry.sha256), "utf8");
  const section = /\[console_scripts\]([^[]*)/.exec(text)?.[1] ?? "";
  const scripts = section.split("\n").map((l) => /^\s*([^=\s]+)\s*=\s*([\w.]+)\s*:\s*([\w.]+)\s*$/.exec(l)).filter((m): m is RegExpExecArray => m !== null).map((m) => ({ name: m[1]!, module: m[2]!, attr: m[3]! }));
  const chosen = bin ? scripts.find((s) => s.name === bin) : scripts.length === 1 ? scripts[0] : undefined;
  if (!chosen) return { problem: scripts.length === 0 ? `${project} has no console script` : bin ? `${project} has no console script named ${bin} (it has ${scripts.map((s) => s.name).join(", ")})` : `${project} has several console scripts (${scripts.map((s) => s.name).join(", ")}): name one with config.bin` };
  return chosen;
}
