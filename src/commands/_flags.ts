// Flags shared by many commands, defined once, and the Context they build.
import type { ArgsDef } from "citty";
import { type Context, createContext } from "../context.ts";
import { KiwiError } from "../errors.ts";

/** `--cwd`, `--json`: on every command that reads a project. */
export const projectFlags = {
  cwd: { type: "string", description: "Run as if kiwi was started in this directory", valueHint: "dir" },
  json: { type: "boolean", description: "Print exactly one JSON document on stdout" },
} as const satisfies ArgsDef;

/** `--strict`: warnings that security cares about become errors. */
export const strictFlag = {
  strict: { type: "boolean", description: "Treat security warnings (risky combinations, missing child_schemas, scan hits) as errors" },
} as const satisfies ArgsDef;

/** Builds the Context from parsed shared flags. */
export function contextFromArgs(args: { cwd?: string }): Context {
  // `--cwd` with nothing after it (`kiwi lock --cwd $PROJECT` with PROJECT unset) parses as "",
  // which would resolve to the folder kiwi was started in: the wrong project, silently.
  if (args.cwd === "") throw new KiwiError("E_USAGE", "--cwd needs a folder", { hint: "pass --cwd <dir>, or leave --cwd out to use the folder kiwi runs in" });
  return createContext({ cwd: args.cwd });
}

/** `--mcp-mode`, `--warn-only`: on commands that call MCP tools (modes: src/mcp/modes.ts). */
export const mcpFlags = {
  mcpMode: { type: "string", description: "MCP pin mode: auto, verify, pin, approval or off (default auto, or KIWI_MCP_MODE)", valueHint: "mode" },
  warnOnly: { type: "boolean", description: "Downgrade MCP pin refusals (changed or unpinned server) to warnings" },
} as const satisfies ArgsDef;
