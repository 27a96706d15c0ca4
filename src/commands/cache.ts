// `kiwi cache dir|verify|prune|clean`: where the cache is, re-verify all of it, drop what no
// known lockfile references, or remove everything kiwi put there.
import { defineCommand } from "./_define.ts";
import { cleanCacheDir, pruneCacheDir, verifyCacheDir } from "../ops/cache-maintain-io.ts";
import { KiwiError } from "../errors.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { plural } from "../ui/plural.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

const dir = defineCommand({
  meta: { name: "dir", description: "Print the cache directory ($KIWI_CACHE_DIR, else $XDG_CACHE_HOME/kiwi, else ~/.cache/kiwi)" },
  args: { ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    if (args.json) showJson({ dir: ctx.cacheDir });
    else showResult(ctx.cacheDir);
    return 0;
  },
});

const verify = defineCommand({
  meta: { name: "verify", description: "Re-hash every cached blob and tool entry; evict (quarantine) any that fail" },
  args: { ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const progress = createProgress(ctx, !args.json);
    const { report, evictions, error } = verifyCacheDir(ctx, (d, t) => progress.update("verifying", d, t));
    progress.end();
    if (error) {
      if (!args.json) for (const message of evictions) showNote(message);
      throw error;
    }
    if (args.json) showJson({ ok: true, dir: ctx.cacheDir, ...report });
    else showResult(`${ctx.cacheDir}: ${entries(report.blobs, report.index, report.trees)} verified${report.tempsRemoved ? `; removed ${plural(report.tempsRemoved, "leftover temp file")}` : ""}`);
    return 0;
  },
});

const prune = defineCommand({
  meta: { name: "prune", description: "Remove entries no registered project's tool.lock.json references" },
  args: {
    ...projectFlags,
    grace: { type: "string", default: "600", description: "Keep entries used in the last N seconds (an install may be running)", valueHint: "seconds" },
  },
  run({ args }) {
    const ctx = contextFromArgs(args);
    // Decimal seconds only: Number() takes "" (a bare --grace, or --grace=) as 0, which would prune
    // what a running install just stored, and "0x10" as 16.
    const grace = /^\s*\d+(?:\.\d+)?\s*$/.test(String(args.grace)) ? Number(args.grace) : Number.NaN;
    if (!Number.isFinite(grace) || grace < 0) throw new KiwiError("E_USAGE", `--grace must be a number of seconds, got "${args.grace}"`, { hint: "for example --grace 0" });
    const report = pruneCacheDir(ctx, { graceMs: grace * 1000, now: ctx.now() });
    for (const s of report.skipped) showNote(`warning: kept nothing for ${s.root}: ${s.reason}`);
    if (args.json) showJson({ ok: true, dir: ctx.cacheDir, ...report });
    else {
      showResult(
        `removed ${entries(report.removedBlobs, report.removedIndex, report.removedTrees, report.removedOther)} (${formatBytes(report.bytesFreed)}) not referenced by ${plural(report.projects.length, "project lockfile")}` +
          (report.removedOther ? ` (other files: stat caches, memos, run folders, quarantined entries)` : "") +
          (report.keptRecent ? `; kept ${report.keptRecent} used in the last ${grace} s` : ""),
      );
    }
    return 0;
  },
});

const clean = defineCommand({
  meta: { name: "clean", description: "Remove everything kiwi stored in the cache directory" },
  args: { ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const removed = cleanCacheDir(ctx);
    if (args.json) showJson({ ok: true, dir: ctx.cacheDir, removed });
    else showResult(removed.length ? `removed ${removed.join(", ")} from ${ctx.cacheDir}` : `${ctx.cacheDir} holds nothing of kiwi's`);
    return 0;
  },
});

export default defineCommand({
  meta: { name: "cache", description: "Inspect and maintain the content-addressed cache" },
  subCommands: { dir, verify, prune, clean },
});

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

/**
 * `3 blobs and 10 tool entries`, with `1 package tree` when index entries list installed packages
 * and, for prune, `2 other files` (stat caches, memos, run folders: `removedOther`).
 */
function entries(blobs: number, index: number, trees: number, other = 0): string {
  const parts = [plural(blobs, "blob"), plural(index - trees, "tool entry", "tool entries")];
  if (trees) parts.push(plural(trees, "package tree"));
  if (other) parts.push(plural(other, "other file"));
  return `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}
