// Puts a tool's verified files into a run directory: hard links to the read-only blobs where the
// file system allows, copies otherwise (and always for executables, since a link shares the
// blob's mode). Every file is re-hashed after it lands, so the run directory holds exactly the
// locked bytes even if the cache changed in between.
import { chmodSync, copyFileSync, linkSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { KiwiError } from "../errors.ts";
import { shortDigest } from "../integrity/digest.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { toolPathProblem } from "../integrity/tool-path.ts";
import { hashFileHex } from "./hash-io.ts";
import { type Store, blobPath, checkBlob, corruptError, missingBlob } from "./store-io.ts";

export interface MaterializeOptions {
  /** Hard-link non-executable files (default true); false copies everything. */
  link?: boolean;
  /** Leave folders writable (default false: folders become read-only once filled). */
  writableDirs?: boolean;
  /** Names the tool in messages about its files (`pad: node_modules/left-pad/index.js`). */
  subject?: string;
}

export interface MaterializeResult {
  dir: string;
  linked: number;
  copied: number;
}

/**
 * Fills `destDir` (created; must not exist or be empty) with the given files from the store.
 * Throws E_CACHE_MISSING / E_CACHE_CORRUPT (after evicting) / E_LOCK_INVALID for an unsafe path.
 */
export function materializeTool(store: Store, files: readonly FileEntry[], destDir: string, options: MaterializeOptions = {}): MaterializeResult {
  mkdirSync(destDir, { recursive: true });
  if (readdirSync(destDir).length > 0) {
    throw new KiwiError("E_INTERNAL", `run directory ${destDir} is not empty`, { hint: "materialize into a fresh directory" });
  }
  const result: MaterializeResult = { dir: destDir, linked: 0, copied: 0 };
  const dirs = new Set<string>();
  for (const file of files) {
    const problem = toolPathProblem(file.path, "locked");
    if (problem) {
      throw new KiwiError("E_LOCK_INVALID", `file path ${JSON.stringify(file.path)} ${problem}; refusing to place it in a run directory`, {
        hint: 'run "kiwi lock" to rewrite the lockfile from the tool tree',
      });
    }
    const dest = join(destDir, ...file.path.split("/"));
    const label = options.subject === undefined ? file.path : `${options.subject}: ${file.path}`;
    mkdirSync(dirname(dest), { recursive: true });
    for (let d = dirname(dest); d.length > destDir.length; d = dirname(d)) dirs.add(d);
    const source = blobPath(store, file.sha256);
    const linked = options.link !== false && !file.is_executable && tryLink(source, dest, file.sha256, label);
    if (!linked) {
      try {
        copyFileSync(source, dest);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") throw missingBlob(file.sha256, label);
        throw error;
      }
      chmodSync(dest, file.is_executable ? 0o555 : 0o444);
    }
    const actual = hashFileHex(dest);
    if (actual !== file.sha256) {
      rmSync(dest, { force: true });
      const verdict = checkBlob(store, file.sha256);
      if (verdict === "ok") {
        throw new KiwiError("E_CACHE_CORRUPT", `${file.path} changed while it was placed in ${destDir} (sha256:${shortDigest(actual)}, expected sha256:${shortDigest(file.sha256)})`, {
          hint: "run the command again; check what is writing to the cache",
        });
      }
      throw verdict === "missing" ? missingBlob(file.sha256, label) : corruptError(verdict, label);
    }
    if (linked) result.linked++;
    else result.copied++;
  }
  if (!options.writableDirs) {
    // Deepest first, so parents are still writable while their children change mode.
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) chmodSync(d, 0o555);
    chmodSync(destDir, 0o555);
  }
  return result;
}

function tryLink(source: string, dest: string, hex: string, label: string): boolean {
  try {
    linkSync(source, dest);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw missingBlob(hex, label);
    // EXDEV (another file system), EPERM/EMLINK (links not allowed or too many): copy instead.
    return false;
  }
}
