// citty's defineCommand (an identity that types a command), without importing citty: a command
// module that imported it would load citty, and with it node:util, on every run (see _args.ts).
import type { ArgsDef, CommandDef } from "citty";

/** Types a command definition; returns it unchanged. */
export function defineCommand<const T extends ArgsDef = ArgsDef>(def: CommandDef<T>): CommandDef<T> {
  return def;
}
