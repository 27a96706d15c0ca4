// The project a command works on, as discovery finds it (manifest/project-io.ts findProjectRoot):
// commands name findings from the folder kiwi runs in and may not reach manifest/ themselves.
import { KiwiError } from "../errors.ts";
import { findProjectRoot } from "../manifest/project-io.ts";

/** The nearest folder at or above `cwd` that holds `.ai/tools/`; undefined outside a project. */
export function projectAround(cwd: string): string | undefined {
  try {
    return findProjectRoot(cwd);
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_NO_PROJECT") return undefined;
    throw error;
  }
}
