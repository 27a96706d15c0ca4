// Where remote tools live in a project and how they get there: verified cached files are
// materialized in a temp folder and swapped into .ai/tools/.remote/<id>/ by one rename.
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { hashFileHex } from "../cache/hash-io.ts";
import { removeDeadLeftovers } from "../cache/projects-io.ts";
import { materializeTool } from "../cache/materialize-io.ts";
import { removeTree } from "../cache/remove-io.ts";
import type { Store } from "../cache/store-io.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { REMOTE_TOOLS_DIR } from "../manifest/model.ts";

const TEMP_DIR = join(".ai", ".kiwi-tmp");

/** Places verified cached files in .ai/tools/.remote/<id>/ by one rename; returns the folder. */
export async function placeTool(root: string, store: Store, id: string, files: readonly FileEntry[]): Promise<string> {
  const remoteDir = join(root, REMOTE_TOOLS_DIR);
  mkdirSync(remoteDir, { recursive: true });
  const ignore = join(remoteDir, ".gitignore");
  if (!existsSync(ignore)) await Bun.write(ignore, "# kiwi: remote tools are installed from tool.lock.json by `kiwi install`\n*\n");
  const temp = tempPathFor(root, id);
  materializeTool(store, files, temp, { link: false, writableDirs: true });
  const dest = join(remoteDir, id);
  if (existsSync(dest)) {
    const old = `${temp}.old`;
    renameSync(dest, old);
    renameSync(temp, dest);
    removeTree(old);
  } else renameSync(temp, dest);
  releaseTemps(root);
  return dest;
}

/**
 * A path in .ai/.kiwi-tmp/ for a remote tool's folder on its way in (placeTool) or out (kiwi
 * remove), named `<id>.<pid>.<random>`: the folders of runs that were killed (kill -9) before their
 * rename are removed first. The folder itself is not made.
 */
export function tempPathFor(root: string, id: string): string {
  const tempRoot = join(root, TEMP_DIR);
  removeDeadLeftovers(tempRoot, (name) => Number(name.split(".")[1]), removeTree);
  mkdirSync(tempRoot, { recursive: true });
  return join(tempRoot, `${id}.${process.pid}.${Math.random().toString(36).slice(2, 8)}`);
}

/** Removes .ai/.kiwi-tmp/ once it is empty. */
export function releaseTemps(root: string): void {
  try {
    rmdirSync(join(root, TEMP_DIR));
  } catch {
    // Another pull is using it, or it holds a dead pull's leftovers for the next cleanup.
  }
}

/** True when `dir` holds exactly the locked files (bytes and executable bits), nothing more. */
export function folderMatches(dir: string, files: readonly FileEntry[]): boolean {
  const want = new Map(files.map((f) => [f.path, f]));
  let count = 0;
  const walk = (abs: string, rel: string): boolean => {
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch {
      return false;
    }
    for (const name of names) {
      const path = rel ? `${rel}/${name}` : name;
      const full = join(abs, name);
      const st = lstatSync(full);
      if (st.isDirectory()) {
        if (!walk(full, path)) return false;
        continue;
      }
      const f = want.get(path);
      if (!f || !st.isFile() || ((st.mode & 0o111) !== 0) !== f.is_executable || hashFileHex(full) !== f.sha256) return false;
      count++;
    }
    return true;
  };
  return walk(dir, "") && count === want.size;
}
