// Reference tables for the README, rendered from the code's own tables so the docs cannot drift:
// scripts/gen-docs.ts writes them between `<!-- BEGIN name -->` / `<!-- END name -->` markers and
// test/ui/docs.test.ts fails when the committed README differs.
import { ENV_VARS } from "../context.ts";
import { ERROR_CODES } from "../errors.ts";
import { renderRulesMarkdown } from "../findings/rules.ts";

/** Markdown table of exit codes and the error codes that map to each. */
export function renderExitCodeTable(): string {
  const rows = [
    "| exit | code | meaning |",
    "| --- | --- | --- |",
    "| 0 | — | success (warnings allowed) |",
    ...Object.entries(ERROR_CODES)
      .sort(([, a], [, b]) => a.exit - b.exit)
      .map(([code, { exit, meaning }]) => `| ${exit} | \`${code}\` | ${meaning} |`),
  ];
  return rows.join("\n");
}

/** Markdown table of the environment variables kiwi reads. */
export function renderEnvTable(): string {
  return ["| variable | effect |", "| --- | --- |", ...Object.entries(ENV_VARS).map(([name, effect]) => `| \`${name}\` | ${effect} |`)].join("\n");
}

/** Every generated README block, by marker name. Add new generated tables here. */
export const DOC_BLOCKS: Record<string, () => string> = {
  "exit-codes": renderExitCodeTable,
  env: renderEnvTable,
  rules: renderRulesMarkdown,
};

/** Replaces each `<!-- BEGIN name -->…<!-- END name -->` block with its freshly rendered table. */
export function renderDocBlocks(readme: string, blocks: Record<string, () => string> = DOC_BLOCKS): string {
  let out = readme;
  for (const [name, render] of Object.entries(blocks)) {
    const re = new RegExp(`<!-- BEGIN ${name} -->[\\s\\S]*?<!-- END ${name} -->`);
    // A replacer function: a replacement string would expand `$'` and `$&` found in the tables.
    out = out.replace(re, () => `<!-- BEGIN ${name} -->\n${render()}\n<!-- END ${name} -->`);
  }
  return out;
}
