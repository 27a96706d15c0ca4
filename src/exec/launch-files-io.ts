// The host files a launch hands its launcher as open descriptors (SubprocessSpec.files: bubblewrap
// copies each into the sandbox with --file). They are opened read-only just before the spawn, in
// order, to become descriptors 3, 4, … of the child, and closed in kiwi once it has started.
import { closeSync, openSync } from "node:fs";
import { KiwiError } from "../errors.ts";

/**
 * Opens `files` for the launch of `what` (a tool, an MCP server); the descriptors to pass after
 * stdin, stdout and stderr. A file that cannot be opened is E_EXEC_FAILED: it was there when the
 * launch was planned, a moment before.
 */
export function openLaunchFiles(files: readonly string[] | undefined, what: string): number[] {
  const fds: number[] = [];
  for (const file of files ?? []) {
    try {
      fds.push(openSync(file, "r"));
    } catch (error) {
      closeLaunchFiles(fds);
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new KiwiError("E_EXEC_FAILED", `cannot start ${what}: ${file}, which the sandbox gets a copy of, cannot be opened (${code})`, {
        hint: "it was there when the launch was planned; if it was removed or replaced just now, run the call again",
        details: { file, code },
      });
    }
  }
  return fds;
}

/** Closes the descriptors once the child holds its own (or the spawn failed). */
export function closeLaunchFiles(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // Already closed: nothing is lost.
    }
  }
}
