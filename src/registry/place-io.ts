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
  const tempRoot = join(root, TEMP_DIR);
  removeDeadTemps(tempRoot);
  const temp = join(tempRoot, `${id}.${process.pid}.${Math.random().toString(36).slice(2, 8)}`);
  materializeTool(store, files, temp, { link: false, writableDirs: true });
  const dest = join(remoteDir, id);
  if (existsSync(dest)) {
    const old = `${temp}.old`;
    renameSync(dest, old);
    renameSync(temp, dest);
    removeTree(old);
  } else renameSync(temp, dest);
  try {
    rmdirSync(tempRoot);
  } catch {
    // Another pull is using it, or it holds a dead pull's leftovers for the next cleanup.
  }
  return dest;
}

/** Temp folders of pulls that were killed (kill -9) before their rename (named `<x>.<pid>…`). */
function removeDeadTemps(tempRoot: string): void {
  removeDeadLeftovers(tempRoot, (name) => Number(name.split(".")[1]), removeTree);
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
