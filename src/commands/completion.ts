// `kiwi completion bash|zsh|fish`: prints a completion script generated from the command table.
// `kiwi completion --tools` lists the project's tool ids for those scripts.
import { defineCommand } from "./_define.ts";
import { KiwiError } from "../errors.ts";
import { renderBash } from "../completion/bash.ts";
import { renderFish } from "../completion/fish.ts";
import { resolveCompletionTree } from "../completion/command-tree.ts";
import { renderZsh } from "../completion/zsh.ts";
import { toolIds } from "../ops/tool-ids-io.ts";
import { TOOL_TYPES } from "../schema/vocabulary.ts";
import { showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { currentRoot } from "./_root.ts";

/** The shells kiwi writes completions for, and their renderers. */
export const SHELLS = { bash: renderBash, zsh: renderZsh, fish: renderFish } as const;

export default defineCommand({
  meta: { name: "completion", description: "Print a shell completion script for kiwi's commands, flags and tool ids" },
  args: {
    shell: { type: "positional", required: false, description: "The shell to complete in", valueHint: Object.keys(SHELLS).join("|") },
    tools: { type: "boolean", description: "List the project's tool ids instead, one per line (what the scripts complete tool arguments with)" },
    "tool-type": { type: "enum", options: [...TOOL_TYPES], description: "With --tools: only tools of this type" },
    cwd: projectFlags.cwd,
  },
  async run({ args }) {
    if (args.tools) return listTools(args);
    const render = SHELLS[args.shell as keyof typeof SHELLS];
    if (!render) {
      throw new KiwiError("E_USAGE", args.shell ? `kiwi has no completions for the shell "${args.shell}"` : "which shell? kiwi completion needs one", {
        hint: `choose one of: ${Object.keys(SHELLS).join(", ")}`,
      });
    }
    showResult(render(await resolveCompletionTree(currentRoot())));
    return 0;
  },
});

/** Tool ids of the project around --cwd; nothing (and exit 0) outside a project, so a TAB never prints errors. */
function listTools(args: { cwd?: string; "tool-type"?: string }): number {
  const ids = toolIds(contextFromArgs(args), args["tool-type"]);
  if (ids.length > 0) showResult(ids.join("\n"));
  return 0;
}
