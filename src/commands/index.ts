// commands/ holds one file per verb: flags -> one or two core calls -> ui/. Commands are thin: no
// file system walking, hashing or spawning here. The table of commands is COMMANDS in src/cli.ts.
export { contextFromArgs, mcpFlags, projectFlags, strictFlag } from "./_flags.ts";
