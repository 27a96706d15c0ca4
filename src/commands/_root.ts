// The root command, handed over by src/cli.ts, so a command that describes the whole CLI
// (completion) can walk it without importing cli.ts: that import would wait on cli.ts's own
// top-level await (the running main()) and never finish.
import type { CommandDef } from "citty";
import { KiwiError } from "../errors.ts";

let registered: CommandDef<any> | undefined;

/** Called once by src/cli.ts with the root command. */
export function registerRoot(root: CommandDef<any>): void {
  registered = root;
}

/** The root command; throws E_INTERNAL if cli.ts has not registered it. */
export function currentRoot(): CommandDef<any> {
  if (!registered) throw new KiwiError("E_INTERNAL", "the root command was not registered", { hint: "src/cli.ts must call registerRoot(root)" });
  return registered;
}
