// The command tree shells complete from, read from the citty definitions themselves (the COMMANDS
// table and each command's args), so completions can never drift from the real commands.
import type { ArgDef, ArgsDef, CommandDef } from "citty";

/** What a flag's value or a positional may be completed with. */
export type ValueKind =
  | { kind: "none" }
  | { kind: "file" }
  | { kind: "dir" }
  | { kind: "choices"; choices: string[] }
  /** The project's tool ids, asked of kiwi at completion time (`kiwi completion --tools`). */
  | { kind: "tool"; toolType?: string };

export interface CompletionFlag {
  /** Long name as typed, kebab-case, without dashes. */
  name: string;
  /** Short (one letter) aliases. */
  short: string[];
  /** Other long aliases. */
  long: string[];
  /** False for booleans; true for string and enum flags. */
  takesValue: boolean;
  value: ValueKind;
  description: string;
}

export interface CompletionNode {
  /** Subcommand names from the root, e.g. ["hook", "install"]; [] for kiwi itself. */
  path: string[];
  description: string;
  flags: CompletionFlag[];
  /** What the node's positionals complete with (the first positional's kind, if any). */
  positional: ValueKind | undefined;
  children: CompletionNode[];
}

/** Flags every command accepts (handled by src/cli.ts rather than each command's args). */
const HELP_FLAG: CompletionFlag = { name: "help", short: ["h"], long: [], takesValue: false, value: { kind: "none" }, description: "Show help for the command" };
const VERSION_FLAG: CompletionFlag = { name: "version", short: ["v"], long: [], takesValue: false, value: { kind: "none" }, description: "Print kiwi's version" };

/** Walks the command tree from `root`, loading every lazy subcommand. Hidden commands are left out. */
export async function resolveCompletionTree(root: CommandDef<any>): Promise<CompletionNode> {
  const node = await resolveNode(root, []);
  node.flags.push(VERSION_FLAG);
  return node;
}

async function resolveNode(cmd: CommandDef<any>, path: string[]): Promise<CompletionNode> {
  const meta = await resolveValue(cmd.meta);
  const args: ArgsDef = (await resolveValue(cmd.args)) ?? {};
  const subs = (await resolveValue(cmd.subCommands)) ?? {};
  const children: CompletionNode[] = [];
  for (const [name, sub] of Object.entries(subs)) {
    const def = (await resolveValue(sub)) as CommandDef<any>;
    const subMeta = await resolveValue(def.meta);
    if (subMeta?.hidden) continue;
    children.push(await resolveNode(def, [...path, name]));
  }
  const flags: CompletionFlag[] = [];
  let positional: ValueKind | undefined;
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") {
      positional ??= valueKindOf(name, def);
      continue;
    }
    const aliases = [("alias" in def ? def.alias : undefined) ?? []].flat();
    flags.push({
      name: kebab(name),
      short: aliases.filter((a) => a.length === 1),
      long: aliases.filter((a) => a.length > 1).map(kebab),
      takesValue: def.type === "string" || def.type === "enum",
      value: valueKindOf(name, def),
      description: def.description ?? "",
    });
  }
  flags.push(HELP_FLAG);
  return { path, description: meta?.description ?? "", flags, positional, children };
}

/**
 * How a value completes: an enum's options; names and hints that speak of a server or a tool
 * complete tool ids; a hint of lowercase words `a|b|c` lists choices; a dir or a file/path
 * completes paths; anything else is free text.
 */
export function valueKindOf(name: string, def: ArgDef): ValueKind {
  if (def.type === "boolean") return { kind: "none" };
  if (def.type === "enum" && def.options?.length) return { kind: "choices", choices: [...def.options] };
  const hint = def.valueHint ?? "";
  const words = `${hint} ${name}`.toLowerCase();
  if (/^servers?$/i.test(name)) return { kind: "tool", toolType: "mcp_server" };
  if (/\btools?\b|tool-id/.test(words)) return { kind: "tool" };
  const parts = hint.split("|");
  if (parts.length > 1 && parts.every((p) => /^[a-z][a-z0-9-]*$/.test(p))) return { kind: "choices", choices: parts };
  if (/\b(dir|directory|folder)\b|dir$/.test(words)) return { kind: "dir" };
  if (/file|path/.test(words)) return { kind: "file" };
  return { kind: "none" };
}

/** Every node of the tree, root first, depth-first. */
export function flattenTree(node: CompletionNode): CompletionNode[] {
  return [node, ...node.children.flatMap(flattenTree)];
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`);
}

async function resolveValue<T>(value: T | Promise<T> | (() => T) | (() => Promise<T>) | undefined): Promise<T | undefined> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}
