// `kiwi completion --tools`: the project's tool ids, for shell completion. Its own file so a TAB
// loads discovery alone, not the inventory's lockfile, chain and parameter modules.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { readProject } from "../manifest/discover-io.ts";

/**
 * `kiwi completion --tools`: the tool ids of the project around the context's cwd, sorted and
 * unique, optionally of one type; none outside a project, so a TAB never prints an error.
 */
export function toolIds(ctx: Context, type?: string): string[] {
  let tools;
  try {
    tools = readProject(ctx.cwd, { cacheDir: ctx.cacheDir }).tools;
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_NO_PROJECT") return [];
    throw error;
  }
  return [...new Set(tools.filter((t) => !type || t.type === type).map((t) => t.id))].sort();
}
