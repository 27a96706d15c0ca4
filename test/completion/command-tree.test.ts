import { describe, expect, test } from "bun:test";
import { type ArgDef, defineCommand } from "citty";
import { COMMANDS, root } from "../../src/cli.ts";
import { type ValueKind, flattenTree, resolveCompletionTree, valueKindOf } from "../../src/completion/command-tree.ts";

const sample = defineCommand({
  meta: { name: "tool" },
  subCommands: {
    run: () =>
      Promise.resolve(
        defineCommand({
          meta: { name: "run", description: "Run it" },
          args: {
            target: { type: "positional", description: "what" },
            paramsFile: { type: "string", description: "a file", alias: ["p", "pf"] },
            mode: { type: "enum", options: ["a", "b"], description: "mode" },
            dryRun: { type: "boolean", description: "plan only" },
          },
        }),
      ),
    secret: defineCommand({ meta: { name: "secret", hidden: true } }),
  },
});

describe("the completion model", () => {
  test("reads subcommands, flags, aliases and value kinds from the citty definitions", async () => {
    const tree = await resolveCompletionTree(sample);
    expect(tree.children.map((c) => c.path)).toEqual([["run"]]);
    const run = tree.children[0]!;
    expect(run.description).toBe("Run it");
    expect(run.flags.map((f) => [f.name, f.short, f.long, f.takesValue, f.value])).toEqual([
      ["params-file", ["p"], ["pf"], true, { kind: "file" }],
      ["mode", [], [], true, { kind: "choices", choices: ["a", "b"] }],
      ["dry-run", [], [], false, { kind: "none" }],
      ["help", ["h"], [], false, { kind: "none" }],
    ]);
    expect(tree.flags.map((f) => f.name)).toEqual(["help", "version"]);
  });

  const KINDS: [string, string, ArgDef, ValueKind][] = [
    ["an enum", "x", { type: "enum", options: ["json", "sarif"] }, { kind: "choices", choices: ["json", "sarif"] }],
    ["a value hint listing choices", "shell", { type: "positional", valueHint: "bash|zsh|fish" }, { kind: "choices", choices: ["bash", "zsh", "fish"] }],
    ["a dir hint", "cwd", { type: "string", valueHint: "dir" }, { kind: "dir" }],
    ["a name ending in file", "paramsFile", { type: "string" }, { kind: "file" }],
    ["a FILE|- hint as a file, not as choices", "input", { type: "positional", valueHint: "FILE|-" }, { kind: "file" }],
    ["a tool argument as tool ids", "tool", { type: "positional", valueHint: "tool" }, { kind: "tool" }],
    ["a tool-id|path hint as tool ids, not as choices", "paths", { type: "positional", valueHint: "tool-id|path" }, { kind: "tool" }],
    ["a server argument as mcp_server ids", "servers", { type: "positional" }, { kind: "tool", toolType: "mcp_server" }],
    ["free text", "param", { type: "string", valueHint: "key=value" }, { kind: "none" }],
    ["a boolean", "json", { type: "boolean" }, { kind: "none" }],
  ];
  test.each(KINDS)("completes %s", (_name, argName, def, kind) => {
    expect(valueKindOf(argName, def)).toEqual(kind);
  });

  test("covers every command of kiwi's COMMANDS table", async () => {
    const tree = await resolveCompletionTree(root);
    expect(tree.children.map((c) => c.path[0])).toEqual(Object.keys(COMMANDS));
    const paths = flattenTree(tree).map((n) => n.path.join(" "));
    expect(paths).toContain("hook install");
    expect(paths).toContain("hook uninstall");
  });
});
