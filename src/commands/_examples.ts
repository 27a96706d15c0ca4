// THE table of usage examples, keyed by command path ("" is kiwi itself, "hook install" a
// subcommand). src/cli.ts appends them to `--help`; a test checks every command has examples and
// that every example names real commands and flags, so they cannot rot.
import pc from "picocolors";

/** One example: what it does, then the command line exactly as a user types it. */
export type Example = readonly [description: string, command: string];

export const EXAMPLES: Readonly<Record<string, readonly Example[]>> = {
  "": [
    ["Start a project with one example tool of each type, and its lockfile", "kiwi init"],
    ["Validate every tool under .ai/tools/", "kiwi check"],
    ["Run a tool with parameters", "kiwi exec word_count --param text='to be or not to be'"],
  ],
  check: [
    ["Validate every tool under .ai/tools/", "kiwi check"],
    ["Report on two tools only (chain rules still see the whole tree)", "kiwi check weather .ai/tools/scripts/data_processor"],
    ["Treat security warnings as errors, as CI should", "kiwi check --strict"],
    ["Write SARIF for code scanning", "kiwi check --format sarif > kiwi.sarif"],
  ],
  init: [
    ["Scaffold .ai/tools/ in the current directory (existing files are never touched)", "kiwi init"],
    ["Scaffold another directory and list what was created as JSON", "kiwi init --cwd ./my-project --json"],
    ["Scaffold without writing tool.lock.json", "kiwi init --no-lock"],
  ],
  hook: [
    ["Check staged tools before every commit", "kiwi hook install"],
    ["Stop checking before commits", "kiwi hook uninstall"],
  ],
  "hook install": [
    ["Write .git/hooks/pre-commit (or into core.hooksPath); running it again changes nothing", "kiwi hook install"],
    ["Replace a hook kiwi did not write (it is kept as pre-commit.pre-kiwi)", "kiwi hook install --force"],
  ],
  "hook uninstall": [
    ["Remove kiwi's hook and put back any hook it replaced", "kiwi hook uninstall"],
  ],
  completion: [
    ["Complete kiwi in the current bash session", "source <(kiwi completion bash)"],
    ["Install zsh completions (a folder on $fpath)", "kiwi completion zsh > ~/.zfunc/_kiwi"],
    ["Install fish completions", "kiwi completion fish > ~/.config/fish/completions/kiwi.fish"],
  ],
};

/**
 * The EXAMPLES section for a command path, or "" when it has none. Styled like citty's headings;
 * src/cli.ts strips the colour codes when the terminal or NO_COLOR says so, as for the rest of help.
 */
export function renderExamples(path: readonly string[]): string {
  const examples = EXAMPLES[path.join(" ")];
  if (!examples?.length) return "";
  const c = pc.createColors(true);
  const lines = [c.underline(c.bold("EXAMPLES")), ""];
  for (const [description, command] of examples) lines.push(`  ${c.gray(`# ${description}`)}`, `  ${command}`, "");
  return `\n\n${lines.join("\n").trimEnd()}`;
}
