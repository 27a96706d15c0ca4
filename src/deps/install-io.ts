// `kiwi install`'s dependency step: every tool's locked npm packages installed by `npm ci` (once
// per distinct package set), every installed file stored in the cache, and the tree's file list
// stored as a content-addressed index entry whose digest the lock records. A tree already in the
// cache with all its blobs is reused: a warm install never runs npm.
import { type Store, checkBlob, ensureStore, readTreeEntry, writeToolEntry } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { formatDigest, shortDigest } from "../integrity/digest.ts";
import type { Lockfile, NpmDependencies } from "../schema/lockfile.ts";
import { installNpm } from "./npm-io.ts";
import { npmTreeText } from "./npm-lock.ts";

export interface DependencyInstall {
  /** `sha256:` tree digest of each tool with npm packages. */
  trees: Record<string, string>;
  /** Package sets npm installed now, and sets found in the cache. */
  installed: number;
  reused: number;
}

/** Installs (or finds in the cache) the npm packages `lock` records; checks locked tree digests. */
export async function installDependencies(ctx: Context, root: string, lock: Lockfile, store: Store): Promise<DependencyInstall> {
  const result: DependencyInstall = { trees: {}, installed: 0, reused: 0 };
  const groups = new Map<string, { npm: NpmDependencies; tools: string[] }>();
  for (const [id, deps] of Object.entries(lock.dependencies ?? {})) {
    if (!deps.npm) continue;
    const key = JSON.stringify([deps.npm.requires, deps.npm.packages]);
    const group = groups.get(key) ?? { npm: deps.npm, tools: [] };
    group.tools.push(id);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    const subject = group.tools.join(", ");
    const locked = group.tools.map((id) => lock.dependencies![id]!.npm!.tree).find((t) => t !== undefined);
    let tree = locked !== undefined && cachedTree(store, locked.slice("sha256:".length)) ? locked : undefined;
    if (tree) result.reused++;
    else {
      ensureStore(store);
      const installed = await installNpm({ root, cacheDir: ctx.cacheDir, env: ctx.env, toolId: subject }, store, group.npm);
      writeToolEntry(store, installed.tree, npmTreeText(installed.files));
      tree = formatDigest(installed.tree);
      result.installed++;
      if (locked !== undefined && locked !== tree) {
        throw new KiwiError("E_INTEGRITY_MISMATCH", `${subject}: npm installed a package tree (${shortDigest(installed.tree)}) other than the one tool.lock.json records (${shortDigest(locked.slice("sha256:".length))})`, {
          hint: "the packages' tarballs matched their integrity, so something rewrote the installed files; run kiwi install again, or kiwi lock to resolve anew",
          details: { tools: group.tools },
        });
      }
    }
    for (const id of group.tools) result.trees[id] = tree;
  }
  return result;
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
