// `kiwi hook install|uninstall`: a plain git pre-commit hook that runs `kiwi check --staged`.
import { defineCommand } from "./_define.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { applyHook } from "../ops/hook-install-io.ts";
import { kiwiInvocation } from "../self.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";

const install = defineCommand({
  meta: { name: "install", description: "Write a git pre-commit hook that runs \"kiwi check --staged\" (honours core.hooksPath)" },
  args: {
    ...projectFlags,
    force: { type: "boolean", description: "Replace a pre-commit hook kiwi did not write (it is kept as pre-commit.pre-kiwi)" },
  },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const { outcome, shown } = applyHook({ cwd: ctx.cwd, env: ctx.env, force: args.force, command: kiwiInvocation() });
    if (args.json) showJson({ ok: true, ...outcome });
    else showResult(`${outcome.status} ${shown.hook}`);
    if (shown.backup) showNote(`kept the previous hook as ${shown.backup}; "kiwi hook uninstall" puts it back`);
    return 0;
  },
});

const uninstall = defineCommand({
  meta: { name: "uninstall", description: "Remove kiwi's git pre-commit hook (never one kiwi did not write)" },
  args: { ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const { outcome, shown } = applyHook({ cwd: ctx.cwd, env: ctx.env });
    if (args.json) showJson({ ok: true, ...outcome });
    else showResult(`${outcome.status} ${shown.hook}`);
    if (outcome.status === "foreign") showNote(`${shown.hook} was not written by kiwi, so it was left alone`);
    if (shown.backup) showNote(`restored the hook kiwi had replaced from ${shown.backup}`);
    return 0;
  },
});

export default defineCommand({
  meta: { name: "hook", description: "Install or remove the git pre-commit hook that checks staged tools" },
  subCommands: { install, uninstall },
});
