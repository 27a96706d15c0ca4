// Installed package trees into kiwi's cache: every file an installer (npm, pip) wrote, hashed and
// stored as a blob, under a size cap so a runaway or hostile package cannot fill the disk.
import { existsSync, lstatSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { hashFileHex } from "../cache/hash-io.ts";
import { getVerifiedBlobPath, putBlobFromFile, readTreeEntry, type Store } from "../cache/store-io.ts";
import { KiwiError } from "../errors.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { treePackageMismatch } from "./installed-tree.ts";

/** Where npm or pip runs and what it sees: the user's own settings, never kiwi's cache for theirs. */
export interface PackageContext {
  /** The project root (its .npmrc is honoured, as npm would in the project). */
  root: string;
  /** kiwi's cache directory. */
  cacheDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Names the tool in messages. */
  toolId: string;
}

/** Bytes an installed tree may hold by default: past it the install is refused (a runaway or hostile package). */
export const MAX_TREE_BYTES = 512 * 1024 * 1024;

/** The cap in force: KIWI_MAX_PACKAGE_BYTES, else MAX_TREE_BYTES. */
function maxTreeBytes(env: PackageContext["env"]): number {
  const n = Number(env.KIWI_MAX_PACKAGE_BYTES);
  return Number.isInteger(n) && n > 0 ? n : MAX_TREE_BYTES;
}

/**
 * Every regular file of an installed tree, stored, with paths under `prefix`: npm's hidden
 * lockfile and `.bin` links, and Python's `__pycache__` and `bin/` scripts, are the installers'
 * bookkeeping, not the packages' bytes, and are left out; so are symbolic links.
 */
export function hashInstalledTree(ctx: PackageContext, store: Store, top: string, prefix: string): FileEntry[] {
  const files: FileEntry[] = [];
  const cap = maxTreeBytes(ctx.env);
  let bytes = 0;
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const childAbs = join(abs, name);
      const childRel = `${rel}/${name}`;
      if (childRel === "node_modules/.package-lock.json" || name === ".bin" || name === "__pycache__" || childRel === "site-packages/bin") continue;
      const st = lstatSync(childAbs);
      if (st.isDirectory()) walk(childAbs, childRel);
      else if (st.isFile()) {
        bytes += st.size;
        if (bytes > cap) {
          throw new KiwiError("E_DEPS", `${ctx.toolId}: its packages install more than ${cap} bytes (${childRel} passed the cap)`, {
            hint: "check for an oversized dependency; KIWI_MAX_PACKAGE_BYTES raises the cap (default 512 MiB)",
            details: { tool: ctx.toolId },
          });
        }
        const sha256 = hashFileHex(childAbs);
        putBlobFromFile(store, childAbs, sha256, `${ctx.toolId}: ${childRel}`);
        files.push({ path: childRel, sha256, is_executable: (st.mode & 0o100) !== 0 });
      }
    }
  };
  if (existsSync(top)) walk(top, prefix);
  return files;
}

/**
 * How the cached tree `treeHex` differs from the packages a lock entry lists (deps/installed-tree.ts
 * treePackageMismatch), reading its package.json and METADATA files from their verified blobs.
 */
export function cachedTreeMismatch(store: Store, ecosystem: "npm" | "pypi", treeHex: string, locked: Parameters<typeof treePackageMismatch>[2]): string[] {
  const files = readTreeEntry(store, treeHex) ?? [];
  return treePackageMismatch(`${ecosystem}-tree`, files, locked, (f) => readFileSync(getVerifiedBlobPath(store, f.sha256), "utf8"));
}

/** The E_LOCK_INVALID for an entry whose recorded tree is not the packages it lists. */
export function treeMismatchError(toolId: string, ecosystem: "npm" | "pypi", tree: string, problems: readonly string[]): KiwiError {
  return new KiwiError("E_LOCK_INVALID", `tool.lock.json: the installed ${ecosystem} tree recorded for ${toolId} (${tree.slice(0, "sha256:".length + 12)}) is not the packages its entry lists: ${problems.slice(0, 3).join("; ")}${problems.length > 3 ? `; and ${problems.length - 3} more` : ""}`, {
    hint: `the entry's tree and packages come from two resolutions (a merge that kept one side's of each?); delete the "tree" line of ${toolId}'s ${ecosystem} entry and run kiwi install to record the tree of the packages it lists`,
    details: { tool: toolId, ecosystem, tree, problems },
  });
}
