// `kiwi check [paths...]`: validates every tool (or the given ones; chain rules still see the whole
// tree) and prints findings as human text, JSON or SARIF. Exit 0 without errors, 1 with errors.
import { defineCommand } from "./_define.ts";
import { VARIADIC } from "./_args.ts";
import pkg from "../../package.json" with { type: "json" };
import { KiwiError } from "../errors.ts";
import { FINDING_FORMATS, type FindingFormat, findingsDocument, renderFindingsHuman, renderFindingsSummary, sarifDocument } from "../ui/findings-render.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags, strictFlag } from "./_flags.ts";
import { jitAtFullSpeed } from "../self.ts";
import type { Context } from "../context.ts";
import type { CheckTreeResult } from "../ops/check-io.ts";
import { ignoresAddedDocument, ignoresAddedNotes } from "../ui/ignore-render.ts";
import { join } from "node:path";
import { display, findingsFromHere } from "./_relocate.ts";

export default defineCommand({
  meta: { name: "check", description: "Validate tools: manifests, types, security, executor chains, child_schemas and parameters" },
  args: {
    paths: { type: "positional", ...VARIADIC, required: false, description: "Tool ids or paths to report on (default: every tool)", valueHint: "tool-id|path" },
    ...projectFlags,
    ...strictFlag,
    format: { type: "string", description: "Output format: human, json or sarif (--json is --format json)", valueHint: FINDING_FORMATS.join("|") },
    staged: { type: "boolean", description: "Check what a commit changes: the staged tools (or the files given, as pre-commit passes them), every tool whose chain includes them, and their tool.lock.json entries" },
    "add-ignores": { type: "boolean", description: "Add an entry to .ai/kiwi-ignore.yaml for every finding kiwi can let through (a baseline to review), then report what remains" },
    expires: { type: "string", description: "With --add-ignores: the day (UTC) from which the entries it adds ignore nothing", valueHint: "YYYY-MM-DD" },
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const started = ctx.now();
    const format = formatOf(args.format, args.json);
    const targets = (args._ ?? []).map(String);
    const addIgnores = args["add-ignores"] === true;
    if (addIgnores && (args.staged || format === "sarif")) throw new KiwiError("E_USAGE", `--add-ignores does not go with ${args.staged ? "--staged" : "--format sarif"}`, { hint: "run kiwi check --add-ignores (with --json for one document), then commit the file it writes" });
    if (args.expires !== undefined) {
      if (!addIgnores) throw new KiwiError("E_USAGE", "--expires goes with --add-ignores", { hint: "kiwi check --add-ignores --expires 2027-03-31 dates the entries it adds; write expires: in an entry of .ai/kiwi-ignore.yaml yourself otherwise" });
      (await import("../ops/ignore-add-io.ts")).assertExpiry(args.expires, started);
    }
    if (args.staged) return (await import("./_staged.ts")).runStagedCheck(ctx, { files: targets, strict: args.strict, format });
    // Validating every tool runs long: compiled code pays (the staged check, ~40 ms, keeps the start-up policy: cli.ts).
    jitAtFullSpeed();
    // Loaded here, not at the top: the staged check's remembered verdict needs none of the validator.
    const { checkTree } = await import("../ops/check-io.ts");
    const { project, result } = await checkTree({ cwd: ctx.cwd, env: ctx.env, cacheDir: ctx.cacheDir, now: ctx.now(), strict: args.strict, targets });
    if (addIgnores) return addIgnoresAndReport(project.root, result, { ctx, started, expires: args.expires, json: format === "json" });
    const summary = { toolsChecked: result.toolsChecked, counts: result.counts, elapsedMs: ctx.now() - started, ignored: result.ignored };
    if (format === "json") showJson(findingsDocument(result.findings, summary, result.ignored));
    else if (format === "sarif") showJson(sarifDocument(result.findings, pkg.version, result.ignored));
    else {
      const text = renderFindingsHuman(findingsFromHere(result.findings, ctx.cwd, project.root), ctx);
      if (text) showResult(text);
    }
    if (format === "human") showNote(renderFindingsSummary(summary, ctx));
    return result.ok ? 0 : 1;
  },
});

/**
 * `--add-ignores`: writes the entries, then reports what the check found that no entry can let
 * through, and what an expired entry names (no entry is added for it: the person renews that entry
 * or fixes the finding), as the check would; exit 1 while an error remains.
 */
async function addIgnoresAndReport(root: string, result: CheckTreeResult["result"], options: { ctx: Context; started: number; expires: string | undefined; json: boolean }): Promise<number> {
  const { ctx } = options;
  const outcome = (await import("../ops/ignore-add-io.ts")).addIgnoresForCheck(root, result.findings, options.started, options.expires);
  const code = outcome.counts.error === 0 ? 0 : 1;
  if (options.json) {
    showJson(ignoresAddedDocument(outcome, result.toolsChecked, result.ignored));
    return code;
  }
  const text = renderFindingsHuman(findingsFromHere(outcome.remaining, ctx.cwd, root), ctx);
  if (text) showResult(text);
  for (const note of ignoresAddedNotes(outcome, display(join(root, outcome.file), ctx.cwd), options.expires)) showNote(note);
  showNote(renderFindingsSummary({ toolsChecked: result.toolsChecked, counts: outcome.counts, elapsedMs: ctx.now() - options.started, ignored: result.ignored }, ctx));
  return code;
}

function formatOf(format: string | undefined, json: boolean | undefined): FindingFormat {
  if (format === undefined) return json ? "json" : "human";
  if (!(FINDING_FORMATS as readonly string[]).includes(format)) {
    throw new KiwiError("E_USAGE", `unknown format "${format}"`, { hint: `use --format ${FINDING_FORMATS.join(", --format ")}` });
  }
  if (json && format !== "json") throw new KiwiError("E_USAGE", `--json and --format ${format} disagree`, { hint: "pass one of them" });
  return format as FindingFormat;
}
