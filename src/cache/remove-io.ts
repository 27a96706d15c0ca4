// Removing cache folders that kiwi made read-only on purpose (run directories), for clean, prune
// and exec's own clean-up.
import { chmodSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

/** rm -rf that also removes read-only folders (run directories are made read-only on purpose). */
export function removeTree(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") throw error;
    makeWritable(path);
    rmSync(path, { recursive: true, force: true });
  }
}

function makeWritable(path: string): void {
  try {
    if (!lstatSync(path).isDirectory()) return;
    chmodSync(path, 0o755);
    for (const name of readdirSync(path)) makeWritable(join(path, name));
  } catch {
    // What cannot be made writable makes the rm that follows report the error.
  }
}
