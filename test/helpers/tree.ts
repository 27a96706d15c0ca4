// Hermetic temp trees for tests: inline file maps in, a real directory out.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A file's content, or content with a mode, or a symbolic link. */
export type TreeEntry = string | Uint8Array | { content: string | Uint8Array; mode?: number } | { symlink: string };

/** Creates a fresh temp directory (removed by `cleanupTemps`). */
export function makeTemp(prefix = "kiwi-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

const temps: string[] = [];

/** Removes every temp directory made by this process. Call from afterAll. */
export function cleanupTemps(): void {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Writes `files` (paths relative to `root`) into `root`, creating folders as needed. */
export function writeTree(root: string, files: Record<string, TreeEntry>): string {
  for (const [path, entry] of Object.entries(files)) {
    const abs = join(root, path);
    mkdirSync(dirname(abs), { recursive: true });
    if (typeof entry === "string" || entry instanceof Uint8Array) writeFileSync(abs, entry);
    else if ("symlink" in entry) symlinkSync(entry.symlink, abs);
    else {
      writeFileSync(abs, entry.content);
      if (entry.mode !== undefined) chmodSync(abs, entry.mode);
    }
  }
  return root;
}

/** A temp project: `files` are relative to the project root (put tools under `.ai/tools/`). */
export function makeProject(files: Record<string, TreeEntry>): string {
  const root = makeTemp("kiwi-project-");
  mkdirSync(join(root, ".ai", "tools"), { recursive: true });
  return writeTree(root, files);
}
