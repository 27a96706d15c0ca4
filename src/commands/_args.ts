// A command's flags parsed exactly as citty 0.2 parses them (its parseArgs over node:util's
// parseArgs, strict: false), without loading either: citty evaluates node:util and re-spells every
// flag name character by character (scule), ~2 ms of every warm `kiwi exec`, a fifth of what kiwi
// adds to a call. citty still renders help and runs commands with subcommands; the two parsers are
// held equal by test/commands/args.test.ts, which runs both over every command's flags. Pure.
import type { ArgDef, ArgsDef } from "citty";
import { KiwiError } from "../errors.ts";

type Values = Record<string, unknown>;

/** The parsed arguments of `rawArgs` for `defs`: every flag under each of its spellings, positionals by name, `_` the rest. */
export function parseCommandArgs(rawArgs: readonly string[], defs: ArgsDef): Values {
  // Plain loops over the definitions, no spread copies or array builtins: this runs once per
  // process, in the interpreter, where every builtin and closure used for the first time costs.
  const booleans = new Set<string>();
  const strings = new Set<string>();
  const defaults: Values = {};
  const aliasMap: Record<string, string[]> = {};
  for (const name in defs) {
    const arg = defs[name] as ArgDef;
    if (arg.type === "positional") continue;
    if (arg.type === "string" || arg.type === "enum") strings.add(name);
    else if (arg.type === "boolean") booleans.add(name);
    if (arg.default !== undefined) defaults[name] = arg.default;
    const aliases = toArray((arg as { alias?: string | string[] }).alias).slice();
    const camel = camelCase(name);
    if (camel !== name && !aliases.includes(camel)) aliases.push(camel);
    const kebab = kebabCase(name);
    if (kebab !== name && !aliases.includes(kebab)) aliases.push(kebab);
    aliasMap[name] = aliases;
  }
  const parsed = parseRaw(rawArgs, booleans, strings, aliasMap, defaults);
  const positionals = parsed._ as string[];
  let nextPositional = 0;
  for (const name in defs) {
    const arg = defs[name] as ArgDef;
    if (arg.type === "positional") {
      const next = positionals[nextPositional];
      if (next !== undefined) {
        nextPositional++;
        parsed[name] = next;
      } else if (arg.default === undefined && arg.required !== false) throw usage(`Missing required positional argument: ${name.toUpperCase()}`);
      else parsed[name] = arg.default;
    } else if (arg.type === "enum") {
      const value = lookup(parsed, name);
      const options = (arg as { options?: string[] }).options ?? [];
      if (value !== undefined && options.length > 0 && !options.includes(value as string)) {
        throw usage(`Invalid value for argument: --${name} (${value}). Expected one of: ${options.join(", ")}.`);
      }
    } else if (arg.required && lookup(parsed, name) === undefined) throw usage(`Missing required argument: --${name}`);
  }
  return parsed;
}

/**
 * A positional that takes every word from it on (`kiwi check a b`, `kiwi remove x y`), or whose
 * command reads those words itself to refuse them with its own hint (`kiwi add a b`). citty has no
 * such notion and ignores the field; assertNoExtraPositionals reads it.
 */
export const VARIADIC = { variadic: true } as const;

/**
 * Refuses words past a command's positionals: citty drops them silently, so `kiwi key generate a b`
 * would write `a` and say nothing of `b`. Commands with a VARIADIC positional take them (or refuse
 * them) themselves. The message names the command; cli.ts turns the hint into its --help.
 */
export function assertNoExtraPositionals(parsed: Values, defs: ArgsDef, command: readonly string[]): void {
  const names: string[] = [];
  for (const name in defs) {
    const arg = defs[name] as ArgDef & { variadic?: boolean };
    if (arg.type !== "positional") continue;
    if (arg.variadic) return;
    names.push(name.toUpperCase());
  }
  const positionals = (parsed._ ?? []) as string[];
  if (positionals.length <= names.length) return;
  const extra = positionals.slice(names.length);
  const takes = names.length === 0 ? "takes no arguments" : `takes ${names.length === 1 ? "one argument" : `${names.length} arguments`} (${names.join(", ")})`;
  const words = extra.map((word) => JSON.stringify(word)).join(" ");
  throw usage(`${["kiwi", ...command].join(" ")} ${takes}; ${words} would be ignored, so nothing was done`);
}

/** citty's read of a flag: the name as given, else its camelCase, else its kebab-case spelling. */
function lookup(values: Values, name: string): unknown {
  return values[name] ?? values[camelCase(name)] ?? values[kebabCase(name)];
}

/** The hint of a usage error that names no command: cli.ts names the command's own --help once it knows it. */
export const USAGE_HINT = 'run "kiwi --help" for the commands and flags';

function usage(message: string): KiwiError {
  return new KiwiError("E_USAGE", message, { hint: USAGE_HINT });
}

/** Whether `set` holds any of `names`. */
function holdsAny(set: Set<string>, names: readonly string[] | undefined): boolean {
  if (names) for (let i = 0; i < names.length; i++) if (set.has(names[i]!)) return true;
  return false;
}

/** citty's parseRawArgs: --no-<flag>, type coercion and every spelling of a flag kept equal. */
function parseRaw(args: readonly string[], booleans: Set<string>, strings: Set<string>, aliasMap: Record<string, string[]>, defaults: Values): Values {
  const aliasToMain = new Map<string, string>();
  const mainToAliases = new Map<string, string[]>();
  const link = (from: string, to: string) => {
    const list = mainToAliases.get(from);
    if (list) list.push(to);
    else mainToAliases.set(from, [to]);
  };
  for (const key in aliasMap) {
    for (const target of aliasMap[key]!) {
      aliasToMain.set(key, target);
      link(target, key);
      aliasToMain.set(target, key);
      link(key, target);
    }
  }
  const getType = (name: string) => (booleans.has(name) || holdsAny(booleans, mainToAliases.get(name)) ? "boolean" : "string");
  const isStringType = (name: string) => strings.has(name) || holdsAny(strings, mainToAliases.get(name));
  // node:util's options in citty's order: booleans, strings, flag names, their spellings, defaults.
  const options = new Map<string, { type: "boolean" | "string"; default: unknown; short?: string }>();
  const addOption = (name: string) => {
    if (!options.has(name)) options.set(name, { type: getType(name), default: defaults[name] });
  };
  for (const name of booleans) addOption(name);
  for (const name of strings) addOption(name);
  for (const name in aliasMap) addOption(name);
  for (const name in aliasMap) for (const alias of aliasMap[name]!) addOption(alias);
  for (const name in defaults) addOption(name);
  for (const [alias, main] of aliasToMain) {
    const option = options.get(main);
    if (alias.length === 1 && option && !option.short) option.short = alias;
  }
  const processed: string[] = [];
  const negated: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      for (let j = i; j < args.length; j++) processed.push(args[j]!);
      break;
    }
    if (arg.startsWith("--no-")) {
      if (!negated.includes(arg.slice(5))) negated.push(arg.slice(5));
      continue;
    }
    processed.push(arg);
  }
  const { values, positionals } = parseNodeStyle(processed, options);
  const out: Values = { _: positionals };
  for (const key in values) {
    const value = values[key];
    let coerced = value;
    if (getType(key) === "boolean" && typeof value === "string") coerced = value !== "false";
    else if (isStringType(key) && typeof value === "boolean") coerced = "";
    out[key] = coerced;
  }
  for (const name of negated) {
    out[name] = false;
    const main = aliasToMain.get(name);
    if (main) out[main] = false;
    for (const alias of mainToAliases.get(name) ?? []) out[alias] = false;
  }
  for (const [alias, main] of aliasToMain) {
    if (out[alias] !== undefined && out[main] === undefined) out[main] = out[alias];
    if (out[main] !== undefined && out[alias] === undefined) out[alias] = out[main];
    if (out[alias] !== out[main] && defaults[main] === out[main]) out[main] = out[alias];
  }
  return out;
}

/**
 * node:util parseArgs with strict: false and positionals allowed, as Bun implements it: a string
 * option takes the next argument whatever it looks like; -abc is -a -b -c; unknown options are
 * kept (true, or their =value); defaults fill what was not given.
 */
function parseNodeStyle(args: readonly string[], options: Map<string, { type: "boolean" | "string"; default: unknown; short?: string }>): { values: Values; positionals: string[] } {
  const values: Values = {};
  const positionals: string[] = [];
  const longFor = (short: string) => {
    for (const [name, option] of options) if (option.short === short) return name;
    return short;
  };
  const typeOf = (name: string) => options.get(name)?.type;
  const store = (name: string, value: string | undefined) => {
    if (name === "__proto__") return;
    values[name] = value ?? true;
  };
  const remaining = [...args];
  while (remaining.length > 0) {
    const arg = remaining.shift()!;
    const next = remaining[0];
    if (arg === "--") {
      positionals.push(...remaining);
      break;
    }
    if (arg.length === 2 && arg[0] === "-" && arg[1] !== "-") {
      const name = longFor(arg[1]!);
      store(name, typeOf(name) === "string" && next !== undefined ? remaining.shift() : undefined);
      continue;
    }
    if (arg.length > 2 && arg[0] === "-" && arg[1] !== "-") {
      if (typeOf(longFor(arg[1]!)) !== "string") {
        // A group of short flags: each becomes its own argument; a string flag takes the rest.
        const expanded: string[] = [];
        for (let i = 1; i < arg.length; i++) {
          const short = arg[i]!;
          if (typeOf(longFor(short)) !== "string" || i === arg.length - 1) expanded.push(`-${short}`);
          else {
            expanded.push(`-${short}`, arg.slice(i + 1));
            break;
          }
        }
        remaining.unshift(...expanded);
      } else store(longFor(arg[1]!), arg.slice(2));
      continue;
    }
    if (arg.length > 2 && arg.startsWith("--")) {
      const eq = arg.indexOf("=", 3);
      if (eq === -1) {
        const name = arg.slice(2);
        store(name, typeOf(name) === "string" && next !== undefined ? remaining.shift() : undefined);
      } else store(arg.slice(2, eq), arg.slice(eq + 1));
      continue;
    }
    positionals.push(arg);
  }
  for (const [name, option] of options) if (option.default !== undefined && values[name] === undefined) values[name] = option.default;
  return { values, positionals };
}

function toArray(value: string | string[] | undefined): string[] {
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

/** `dry-run` -> `dryRun`, as scule 1.3 (citty's) spells it. */
export function camelCase(name: string): string {
  if (plainKebab(name) !== undefined) return name;
  const pascal = splitByCase(name)
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1) : ""))
    .join("");
  return pascal ? pascal[0]!.toLowerCase() + pascal.slice(1) : "";
}

/** `dryRun` -> `dry-run`, as scule 1.3 spells it. */
export function kebabCase(name: string): string {
  const plain = plainKebab(name);
  if (plain !== undefined) return plain;
  return splitByCase(name)
    .map((p) => p.toLowerCase())
    .join("-");
}

/**
 * The kebab-case spelling of a name that scule splits only before its capitals and whose camelCase
 * is the name itself: one word of lower-case letters and digits (`json`, `cwd`), or lower-case
 * letters where each capital starts a word and is followed by a lower-case letter (`dryRun`,
 * `allowAnyHost`); undefined for any other name. Nearly every flag is such a name, and start-up runs
 * in the interpreter, where scule's character-by-character splitter cost a warm exec ~0.1 ms.
 */
function plainKebab(name: string): string | undefined {
  let kebab = "";
  let start = 0;
  let digits = false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 97 && c <= 122) continue;
    if (c >= 48 && c <= 57) {
      digits = true;
      continue;
    }
    const next = name.charCodeAt(i + 1);
    if (c < 65 || c > 90 || i === 0 || !(next >= 97 && next <= 122)) return undefined;
    kebab += `${name.slice(start, i)}-`;
    start = i;
  }
  if (start === 0) return name;
  // Digits have no case: scule does not split before a capital that follows one (`sha256Sum`).
  return digits ? undefined : `${kebab}${name.slice(start)}`.toLowerCase();
}

/** scule 1.3's splitByCase: at - _ / . and where the case turns (digits have none). */
function splitByCase(str: string): string[] {
  const parts: string[] = [];
  if (!str) return parts;
  let buff = "";
  let previousUpper: boolean | undefined;
  let previousSplitter: boolean | undefined;
  for (const char of str) {
    const isSplitter = char === "-" || char === "_" || char === "/" || char === ".";
    if (isSplitter) {
      parts.push(buff);
      buff = "";
      previousUpper = undefined;
      continue;
    }
    const isUpper = char >= "0" && char <= "9" ? undefined : char !== char.toLowerCase();
    if (previousSplitter === false) {
      if (previousUpper === false && isUpper === true) {
        parts.push(buff);
        buff = char;
        previousUpper = isUpper;
        continue;
      }
      if (previousUpper === true && isUpper === false && buff.length > 1) {
        const lastChar = buff.at(-1)!;
        parts.push(buff.slice(0, Math.max(0, buff.length - 1)));
        buff = lastChar + char;
        previousUpper = isUpper;
        continue;
      }
    }
    buff += char;
    previousUpper = isUpper;
    previousSplitter = isSplitter;
  }
  parts.push(buff);
  return parts;
}
