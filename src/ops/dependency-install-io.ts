// `kiwi install`'s dependency step: every tool's locked packages installed by `npm ci` or
// `pip install --require-hashes` (once per distinct package set), every installed file stored in
// the cache, and the tree's file list stored as a content-addressed index entry whose digest the
// lock records. A tree already in the cache with all its blobs is reused: a warm install never
// runs npm or pip.
import { type Store, checkBlob, ensureStore, readTreeEntry, writeToolEntry } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { formatDigest, sha256Hex, shortDigest } from "../integrity/digest.ts";
import type { Lockfile, NpmDependencies, PypiDependencies } from "../schema/lockfile.ts";
import { installNpm } from "../deps/npm-io.ts";
import { renderInstalledTree } from "../deps/installed-tree.ts";
import { cachedTreeMismatch, treeMismatchError } from "../deps/installed-tree-io.ts";
import { installPip } from "../deps/pip-io.ts";

export interface DependencyInstall {
  /** `sha256:` tree digests of each tool's installed packages, by ecosystem. */
  trees: Record<string, { npm?: string; pypi?: string }>;
  /** Package sets installed now, and sets found in the cache. */
  installed: number;
  reused: number;
}

type Ecosystem = "npm" | "pypi";

/** Installs (or finds in the cache) the packages `lock` records; checks locked tree digests. */
export async function installDependencies(ctx: Context, root: string, lock: Lockfile, store: Store): Promise<DependencyInstall> {
  const result: DependencyInstall = { trees: {}, installed: 0, reused: 0 };
  const groups = new Map<string, { ecosystem: Ecosystem; locked: NpmDependencies | PypiDependencies; tools: string[] }>();
  for (const [id, deps] of Object.entries(lock.dependencies ?? {})) {
    for (const ecosystem of ["npm", "pypi"] as const) {
      const locked = deps[ecosystem];
      if (!locked) continue;
      // Who may run install scripts is part of the set: the same packages built or not are two trees.
      const key = JSON.stringify([ecosystem, locked.requires, locked.packages, locked.allow_scripts ?? []]);
      const group = groups.get(key) ?? { ecosystem, locked, tools: [] };
      group.tools.push(id);
      groups.set(key, group);
    }
  }
  for (const group of groups.values()) {
    const subject = group.tools.join(", ");
    const lockedTree = group.tools.map((id) => lock.dependencies![id]![group.ecosystem]!.tree).find((t) => t !== undefined);
    let tree = lockedTree !== undefined && cachedTree(store, lockedTree.slice("sha256:".length)) ? lockedTree : undefined;
    if (tree) {
      // The cached tree must be the packages the entry lists, not another resolution's.
      const problems = cachedTreeMismatch(store, group.ecosystem, tree.slice("sha256:".length), group.locked);
      if (problems.length > 0) throw treeMismatchError(subject, group.ecosystem, tree, problems);
      result.reused++;
    }
    else {
      ensureStore(store);
      const packageCtx = { root, cacheDir: ctx.cacheDir, env: ctx.env, toolId: subject };
      const files = group.ecosystem === "npm" ? await installNpm(packageCtx, store, group.locked as NpmDependencies) : await installPip(packageCtx, store, group.locked as PypiDependencies);
      const text = renderInstalledTree(`${group.ecosystem}-tree`, files);
      const installed = sha256Hex(text);
      writeToolEntry(store, installed, text);
      tree = formatDigest(installed);
      result.installed++;
      if (lockedTree !== undefined && lockedTree !== tree) {
        // Every archive matched its locked hash, so the files changed after unpacking: a build
        // the tool allowed, or something that rewrote them.
        const built = group.locked.allow_scripts ?? [];
        // Or the packages hold an optional one per platform (esbuild's binaries), of which npm
        // installs those whose os, cpu and libc fit: the tree is the machine's that installed it.
        const platformOnly = group.ecosystem === "npm" ? platformPackages(group.locked as NpmDependencies) : [];
        const why =
          built.length > 0 ? `; the build that allow_scripts runs (${built.join(", ")}) made other files here`
          : platformOnly.length > 0 ? `; they include optional packages for particular platforms (${platformOnly.slice(0, 3).join(", ")}${platformOnly.length > 3 ? ", …" : ""}), so the installed tree depends on the machine, and the lock records another platform's`
          : "";
        throw new KiwiError("E_INTEGRITY_MISMATCH", `${subject}: the installed ${group.ecosystem} packages (tree ${shortDigest(installed)}) are not the ones tool.lock.json records (${shortDigest(lockedTree.slice("sha256:".length))})${why}`, {
          hint:
            built.length > 0
              ? "every archive matched its locked hash, so the build is not reproducible on this machine (timestamps, paths, a download); remove the tree from the lock's entry and run kiwi install to record this build, after checking why it differs"
              : platformOnly.length > 0
                ? "tool.lock.json records one installed tree per tool, from the platform (os, cpu, libc) that first ran kiwi install: install on that platform, or remove the tree from the lock's entry and run kiwi install to record this one's"
                : "every archive matched its locked hash, so something rewrote the installed files; run kiwi install again, or kiwi lock to resolve anew",
          details: { tools: group.tools },
        });
      }
    }
    for (const id of group.tools) result.trees[id] = { ...result.trees[id], [group.ecosystem]: tree };
  }
  return result;
}

/** The locked optional packages npm installs only on some platforms (os, cpu or libc), by name. */
function platformPackages(locked: NpmDependencies): string[] {
  return Object.entries(locked.packages)
    .filter(([, e]) => {
      const entry = e as Record<string, unknown>;
      return entry.optional === true && (entry.os !== undefined || entry.cpu !== undefined || entry.libc !== undefined);
    })
    .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
}

/** Whether the cache holds the tree's index entry and every blob of it. */
function cachedTree(store: Store, treeHex: string): boolean {
  try {
    const files = readTreeEntry(store, treeHex);
    return files !== undefined && files.every((f) => checkBlob(store, f.sha256) === "ok");
  } catch {
    return false;
  }
}
