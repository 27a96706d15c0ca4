// Flags shared by many commands, defined once, and the Context they build.
import type { ArgsDef } from "citty";
import { type Context, createContext } from "../context.ts";

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
  return createContext({ cwd: args.cwd });
}
