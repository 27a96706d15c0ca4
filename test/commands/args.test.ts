// kiwi's own flag parser (src/commands/_args.ts) against citty's parseArgs, which it stands in for
// on the hot path: for every command and subcommand, a table of argument lists built from its own
// flags must parse to the same values, or fail with the same message.
import { describe, expect, test } from "bun:test";
import { type ArgsDef, type CommandDef, parseArgs } from "citty";
import { COMMANDS } from "../../src/cli.ts";
import { VARIADIC, assertNoExtraPositionals, camelCase, kebabCase, parseCommandArgs } from "../../src/commands/_args.ts";

async function leaves(): Promise<[string, ArgsDef][]> {
  const out: [string, ArgsDef][] = [];
  const walk = async (name: string, cmd: CommandDef<any>) => {
    const args = (typeof cmd.args === "function" ? await cmd.args() : await cmd.args) ?? {};
    out.push([name, args as ArgsDef]);
    const subs = typeof cmd.subCommands === "function" ? await cmd.subCommands() : await cmd.subCommands;
    for (const [sub, def] of Object.entries(subs ?? {})) await walk(`${name} ${sub}`, typeof def === "function" ? await (def as () => Promise<CommandDef<any>>)() : await def);
  };
  for (const [name, load] of Object.entries(COMMANDS)) await walk(name, await load());
  return out;
}

/** Argument lists that exercise every flag of `defs` in each spelling and form. */
function samples(defs: ArgsDef): string[][] {
  const positionals = Object.entries(defs).filter(([, d]) => d.type === "positional").map(([n]) => `pos-${n}`);
  const lists: string[][] = [[], positionals, [...positionals, "extra"], [...positionals, "-"], [...positionals, "--", "--json", "x"], [...positionals, "-h"], [...positionals, "-abc"], [...positionals, "--unknown", "v"], [...positionals, "--unknown=v"], [...positionals, "-5"]];
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") continue;
    const spellings = [...new Set([name, kebabCase(name), camelCase(name)])];
    for (const s of spellings) {
      if (def.type === "boolean") {
        for (const form of [[`--${s}`], [`--${s}=false`], [`--${s}=true`], [`--${s}=no`], [`--no-${s}`], [`--${s}`, "word"], [`--no-${s}`, `--${s}`]]) lists.push([...positionals, ...form]);
      } else {
        const value = def.type === "enum" ? ((def as { options?: string[] }).options?.[0] ?? "v") : "v";
        for (const form of [[`--${s}`, value], [`--${s}=${value}`], [`--${s}`], [`--${s}`, "--json"], [`--${s}`, "-"], [`--no-${s}`], [`--${s}=a=b`], [`--${s}`, "1", `--${s}`, "2"], [`--${s}`, "--no-json", "q"]]) lists.push([...positionals, ...form]);
        if (def.type === "enum") lists.push([...positionals, `--${s}`, "not-an-option"]);
      }
    }
  }
  return lists;
}

function outcome(parse: () => Record<string, unknown>): unknown {
  try {
    return { ok: { ...parse() } };
  } catch (error) {
    return { error: (error as Error).message.replace(/\x1b\[[0-9;]*m/g, "") };
  }
}

describe("kiwi's flag parser", () => {
  test("parses every command's flags exactly as citty does", async () => {
    let compared = 0;
    for (const [name, defs] of await leaves()) {
      for (const argv of samples(defs)) {
        const ours = outcome(() => parseCommandArgs(argv, defs));
        const citty = outcome(() => parseArgs(argv, defs) as Record<string, unknown>);
        expect({ command: name, argv, parsed: ours }).toEqual({ command: name, argv, parsed: citty });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  test.each([["dryRun"], ["dry-run"], ["allow_any_host"], ["toolType"], ["JSONPath"], ["sha256Sum"], ["a--b"], ["X"], ["paramsFile"], ["allowAnyHost"], ["aB"], ["aBC"], ["aBc"], ["abCDe"], ["a1B"], ["a1Bc"], ["x-y"], ["Ab"], [""]])("spells %p as scule does", async (name) => {
    const defs = { [name]: { type: "string" } } as ArgsDef;
    expect(outcome(() => parseCommandArgs([`--${name}`, "v"], defs))).toEqual(outcome(() => parseArgs([`--${name}`, "v"], defs) as Record<string, unknown>));
  });

  test("names a missing positional and a bad enum value as usage errors", () => {
    expect(() => parseCommandArgs([], { tool: { type: "positional", required: true } })).toThrow("Missing required positional argument: TOOL");
    expect(() => parseCommandArgs(["--kind", "z"], { kind: { type: "enum", options: ["a", "b"] } })).toThrow("Invalid value for argument: --kind (z). Expected one of: a, b.");
  });

  test.each<[string, ArgsDef, string[], string | undefined]>([
    ["no positional, one word", {}, ["x"], 'kiwi c takes no arguments; "x" would be ignored, so nothing was done'],
    ["one positional, two words", { file: { type: "positional" } }, ["a", "b", "c"], 'kiwi c takes one argument (FILE); "b" "c" would be ignored, so nothing was done'],
    ["two positionals, three words", { a: { type: "positional" }, b: { type: "positional" } }, ["1", "2", "3"], 'kiwi c takes 2 arguments (A, B); "3" would be ignored, so nothing was done'],
    ["words after --", {}, ["--", "x"], 'kiwi c takes no arguments; "x" would be ignored, so nothing was done'],
    ["one positional, one word", { file: { type: "positional" } }, ["a"], undefined],
    ["a variadic positional, many words", { ids: { type: "positional", ...VARIADIC } as ArgsDef[string] }, ["a", "b", "c"], undefined],
  ])("refuses words past the positionals (%s)", (_, defs, argv, message) => {
    const check = () => assertNoExtraPositionals(parseCommandArgs(argv, defs), defs, ["c"]);
    if (message === undefined) expect(check).not.toThrow();
    else expect(check).toThrow(message);
  });

  test("every command that reads the words past its positionals says so (VARIADIC), and no other", async () => {
    const variadic = (await leaves()).filter(([, defs]) => Object.values(defs).some((d) => (d as { variadic?: boolean }).variadic)).map(([name]) => name);
    expect(variadic.sort()).toEqual(["add", "check", "exec", "export", "mcp pin", "mcp verify", "publish", "remove", "update"]);
  });
});
