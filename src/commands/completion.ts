// `kiwi completion bash|zsh|fish`: prints a completion script generated from the command table.
import { defineCommand } from "citty";
import { KiwiError } from "../errors.ts";
import { currentRoot } from "./_root.ts";
import { renderBash } from "../completion/bash.ts";
import { renderFish } from "../completion/fish.ts";
import { resolveCompletionTree } from "../completion/model.ts";
import { renderZsh } from "../completion/zsh.ts";
import { showResult } from "../ui/output.ts";

/** The shells kiwi writes completions for, and their renderers. */
export const SHELLS = { bash: renderBash, zsh: renderZsh, fish: renderFish } as const;

export default defineCommand({
  meta: { name: "completion", description: "Print a shell completion script for kiwi's commands and flags" },
  args: {
    shell: { type: "positional", description: "The shell to complete in", valueHint: Object.keys(SHELLS).join("|") },
  },
  async run({ args }) {
    const render = SHELLS[args.shell as keyof typeof SHELLS];
    if (!render) {
      throw new KiwiError("E_USAGE", `kiwi has no completions for the shell "${args.shell}"`, {
        hint: `choose one of: ${Object.keys(SHELLS).join(", ")}`,
      });
    }
    showResult(render(await resolveCompletionTree(currentRoot())));
    return 0;
  },
});
