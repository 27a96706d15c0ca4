#!/usr/bin/env bun
// The root command: lazy subcommands, --help/--version, unknown-flag checks, and the single place
// that renders errors and sets the exit code. Commands return an exit code or throw KiwiError.
import type { ArgsDef, CommandDef } from "citty";
import { USAGE_HINT, assertNoExtraPositionals, kebabCase, parseCommandArgs } from "./commands/_args.ts";
import { defineCommand } from "./commands/_define.ts";
import pkg from "../package.json" with { type: "json" };
import { createContext } from "./context.ts";
import { KiwiError, toKiwiError } from "./errors.ts";
import { showError } from "./ui/error.ts";
import { registerRoot } from "./commands/_root.ts";
import { COMMAND_SUMMARIES } from "./commands/_summaries.ts";
import { jitAtFullSpeed } from "./self.ts";
import { suggest } from "./resolve/suggest.ts";
import { showJson, showNote, showResult } from "./ui/output.ts";

type Lazy = () => Promise<CommandDef<any>>;

/** Every subcommand, loaded only when used so start-up stays fast. */
export const COMMANDS: Record<string, Lazy> = {
  check: () => import("./commands/check.ts").then((m) => m.default),
  exec: () => import("./commands/exec.ts").then((m) => m.default),
  tree: () => import("./commands/tree.ts").then((m) => m.default),
  list: () => import("./commands/list.ts").then((m) => m.default),
  show: () => import("./commands/show.ts").then((m) => m.default),
  hash: () => import("./commands/hash.ts").then((m) => m.default),
  lock: () => import("./commands/lock.ts").then((m) => m.default),
  install: () => import("./commands/install.ts").then((m) => m.default),
  verify: () => import("./commands/verify.ts").then((m) => m.default),
  cache: () => import("./commands/cache.ts").then((m) => m.default),
  init: () => import("./commands/init.ts").then((m) => m.default),
  hook: () => import("./commands/hook.ts").then((m) => m.default),
  completion: () => import("./commands/completion.ts").then((m) => m.default),
  mcp: () => import("./commands/mcp.ts").then((m) => m.default),
  publish: () => import("./commands/publish.ts").then((m) => m.default),
  add: () => import("./commands/add.ts").then((m) => m.default),
  remove: () => import("./commands/remove.ts").then((m) => m.default),
  export: () => import("./commands/export.ts").then((m) => m.default),
  outdated: () => import("./commands/outdated.ts").then((m) => m.default),
  update: () => import("./commands/update.ts").then((m) => m.default),
  key: () => import("./commands/key.ts").then((m) => m.default),
};

export const VERSION: string = pkg.version;

export const root = defineCommand({
  meta: { name: "kiwi", version: VERSION, description: "Package manager and verified executor for AI-agent tools" },
  subCommands: COMMANDS,
});
registerRoot(root);

/** Runs kiwi with the given arguments and returns the exit code (never calls process.exit). */
export async function main(given: string[]): Promise<number> {
  // `kiwi help exec` is `kiwi exec --help`, as in git and npm.
  const rawArgs = given[0] === "help" ? [...given.slice(1), "--help"] : given;
  const separator = rawArgs.indexOf("--");
  // Arguments after `--` belong to the tool (kiwi exec), never to kiwi.
  const flags = separator === -1 ? rawArgs : rawArgs.slice(0, separator);
  const jsonWanted = flags.includes("--json");
  // The command resolved, once it is: a usage error names its own --help.
  let command: string[] = [];
  try {
    if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
      showResult(VERSION);
      return 0;
    }
    const [cmd, parent, path] = await resolveCommand(root, rawArgs);
    command = path;
    if (flags.includes("--help") || flags.includes("-h") || (!cmd.run && path.length === rawArgs.length)) {
      // citty pads its columns; trailing blanks are noise in terminals and snapshots.
      // citty names only the direct parent in USAGE ("mcp pin"): name the whole path from kiwi.
      const named = parent && path.length > 1 ? { ...parent, meta: { ...(await resolveMeta(parent)), name: ["kiwi", ...path.slice(0, -1)].join(" ") } } : parent;
      const { renderUsage } = await import("citty");
      const usage = (await renderUsage(await withKebabFlags(cmd === root ? rootForHelp() : cmd), named)).replace(/[ \t]+$/gm, "").trimEnd() + (await import("./commands/_examples.ts")).renderExamples(path);
      showResult(`${createContext().color ? usage : stripAnsi(usage)}\n`);
      return 0;
    }
    await assertKnownFlags(cmd, rawArgs.slice(path.length), path);
    // Start-up is over for every command but exec, which says so itself once the tool runs, and
    // lock: a cold lock's code runs once per tool while a worker hashes on the second core, and
    // compiling it at the normal policy took that core ~60-90 ms of CPU (x0.88-0.92 of a cold
    // 1,000-tool lock's CPU) without making this thread faster (same-run A/B, issue 14). And
    // check, which says so itself where it runs long (commands/check.ts): the staged check's code
    // mostly runs once, and compiling it made the first check of a commit use ~20% more CPU.
    if (path[0] !== "exec" && path[0] !== "lock" && path[0] !== "check") jitAtFullSpeed();
    // Run the resolved command itself: citty drops a subcommand's return value, and it is the exit code.
    const result = await runLeaf(cmd, rawArgs.slice(path.length), path);
    return typeof result === "number" ? result : 0;
  } catch (thrown) {
    const error = isCittyError(thrown) ? new KiwiError("E_USAGE", stripAnsi((thrown as Error).message), { hint: USAGE_HINT }) : toKiwiError(thrown);
    const named = error.code === "E_USAGE" && error.hint === USAGE_HINT && command.length > 0;
    return showError(named ? new KiwiError("E_USAGE", error.message, { hint: `run "kiwi ${command.join(" ")} --help" for its arguments and flags`, details: error.details }) : error, createContext(), jsonWanted);
  }
}

/**
 * Runs a resolved command with its flags parsed by commands/_args.ts, citty's parser without
 * citty (whose module, with node:util and its flag re-spelling, costs a warm `kiwi exec` ~2 ms).
 * The command gets a plain object (citty hands it a Proxy that re-spells every unset flag it is
 * asked for). Commands with setup, cleanup, plugins or subcommands go through citty's runCommand.
 */
async function runLeaf(cmd: CommandDef<any>, rawArgs: string[], path: readonly string[]): Promise<unknown> {
  if (typeof cmd.run !== "function" || cmd.setup || cmd.cleanup || cmd.plugins || cmd.subCommands) {
    const { runCommand } = await import("citty");
    return (await runCommand(cmd, { rawArgs })).result;
  }
  const defs: ArgsDef = (typeof cmd.args === "function" ? await cmd.args() : await cmd.args) ?? {};
  const args = parseCommandArgs(rawArgs, defs);
  assertNoExtraPositionals(args, defs, path);
  return cmd.run({ rawArgs, args: args as never, cmd, data: undefined });
}

/** Removes ANSI colour codes (citty colours help text whatever the terminal is). */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}

async function resolveMeta(cmd: CommandDef<any>): Promise<Record<string, unknown>> {
  return ((typeof cmd.meta === "function" ? await cmd.meta() : await cmd.meta) ?? {}) as Record<string, unknown>;
}

/** The root command with each subcommand reduced to its name and summary, so help loads none of them. */
function rootForHelp(): CommandDef<any> {
  const subCommands = Object.fromEntries(Object.keys(COMMANDS).map((name) => [name, { meta: { name, description: COMMAND_SUMMARIES[name] ?? "" } }]));
  return { ...root, subCommands };
}

function isCittyError(error: unknown): boolean {
  return error instanceof Error && error.name === "CLIError";
}

async function resolveCommand(cmd: CommandDef<any>, rawArgs: string[]): Promise<[CommandDef<any>, CommandDef<any> | undefined, string[]]> {
  let current = cmd;
  let parent: CommandDef<any> | undefined;
  const path: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") break;
    if (arg.startsWith("-")) break;
    const subs = typeof current.subCommands === "function" ? await current.subCommands() : await current.subCommands;
    if (!subs) break;
    const next = subs[arg];
    if (!next) {
      const known = Object.keys(subs);
      throw new KiwiError("E_USAGE", `unknown command "${[...path, arg].join(" ")}"`, {
        hint: `${suggest(arg, known) ? `did you mean "${suggest(arg, known)}"? ` : ""}commands: ${known.join(", ")}`,
      });
    }
    parent = current;
    current = typeof next === "function" ? await (next as Lazy)() : await next;
    path.push(arg);
  }
  return [current, parent, path];
}

async function assertKnownFlags(cmd: CommandDef<any>, rest: string[], path: string[]): Promise<void> {
  const defs: ArgsDef = (typeof cmd.args === "function" ? await cmd.args() : await cmd.args) ?? {};
  // Every command takes --help; kiwi itself takes --version (main answers both before this).
  // Plain loops and string slicing, no regular expression: each one compiles on first use, and
  // this runs on every call (a warm exec paid ~0.1 ms for them).
  const names = new Set<string>(path.length === 0 ? ["help", "version"] : ["help"]);
  for (const name in defs) {
    const def = defs[name]!;
    if (def.type === "positional") continue;
    names.add(name);
    names.add(kebabCase(name));
    const alias = "alias" in def ? def.alias : undefined;
    if (typeof alias === "string") names.add(alias);
    else if (alias) for (const a of alias) names.add(a);
    if (def.type === "boolean") {
      names.add(`no-${kebabCase(name)}`);
      names.add(`no${name[0]!.toUpperCase()}${name.slice(1)}`);
    }
  }
  for (const arg of rest) {
    if (arg === "--") break;
    if (!arg.startsWith("-") || arg === "-") continue;
    const dashless = arg.slice(arg.startsWith("--") ? 2 : 1);
    const eq = dashless.indexOf("=");
    const name = eq === -1 ? dashless : dashless.slice(0, eq);
    if (!names.has(name)) {
      const near = suggest(name, [...names]);
      throw new KiwiError("E_USAGE", `unknown flag "${arg.split("=")[0]}" for "${["kiwi", ...path].join(" ")}"`, {
        hint: near ? `did you mean "--${near}"?` : `run "${["kiwi", ...path, "--help"].join(" ")}" for its flags`,
      });
    }
  }
}

/**
 * The command as help should show it: flag keys are camelCase in code (`dryRun`) but users type
 * `--dry-run`, which citty accepts too, so help lists the kebab-case spelling.
 */
async function withKebabFlags(cmd: CommandDef<any>): Promise<CommandDef<any>> {
  const defs: ArgsDef = (typeof cmd.args === "function" ? await cmd.args() : await cmd.args) ?? {};
  return { ...cmd, args: Object.fromEntries(Object.entries(defs).map(([name, def]) => [def.type === "positional" ? name : kebabCase(name), def])) };
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  // Nothing to flush: results are written synchronously (ui/output.ts) and a tool's streamed
  // output is awaited chunk by chunk (ui/stream.ts).
  process.exit(code);
}
