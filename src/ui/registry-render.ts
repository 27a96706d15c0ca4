// Human text for the registry commands: publish, add, remove, outdated and update's diff. Pure.
import { plural } from "./plural.ts";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { type CanonicalValue, isRecord } from "../integrity/value.ts";
import type { AddResult, OutdatedEntry } from "../ops/registry-add-io.ts";
import type { PublishResult } from "../ops/publish-io.ts";
import type { RemoveResult } from "../ops/registry-remove-io.ts";

/** A short digest for tables: `sha256:` + 12 hex digits. */
export function short(digest: string): string {
  return digest.slice(0, "sha256:".length + 12);
}

/** What changed between two versions of a remote tool: files, manifest fields, permissions. */
export function renderUpdateDiff(from: { version: string; digest: string; manifest: unknown; files: FileEntry[] }, to: { version: string; digest: string; manifest: unknown; files: FileEntry[] }): string {
  const lines = [`${from.version} (${short(from.digest)}) -> ${to.version} (${short(to.digest)})`];
  const before = new Map(from.files.map((f) => [f.path, f]));
  const after = new Map(to.files.map((f) => [f.path, f]));
  for (const [path, f] of after) {
    const old = before.get(path);
    if (!old) lines.push(`  + ${path}`);
    else if (old.sha256 !== f.sha256) lines.push(`  ~ ${path}`);
    else if (old.is_executable !== f.is_executable) lines.push(`  ~ ${path} (executable: ${old.is_executable} -> ${f.is_executable})`);
  }
  for (const path of before.keys()) if (!after.has(path)) lines.push(`  - ${path}`);
  const a = (isRecord(from.manifest) ? from.manifest : {}) as Record<string, CanonicalValue>;
  const b = (isRecord(to.manifest) ? to.manifest : {}) as Record<string, CanonicalValue>;
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const x = a[key] === undefined ? undefined : renderCanonicalJson(a[key]!);
    const y = b[key] === undefined ? undefined : renderCanonicalJson(b[key]!);
    if (x === y) continue;
    // Permissions decide what the tool may touch: a reviewer must see them, whatever else moved.
    const label = /permission|capabilit|requires/i.test(key) ? `manifest ${key} (PERMISSIONS)` : `manifest ${key}`;
    lines.push(`  ${label}: ${x ?? "(absent)"} -> ${y ?? "(absent)"}`);
  }
  return lines.join("\n");
}

/** What `kiwi publish` pushed. */
export function renderPublished(r: PublishResult): string {
  const lines = [`published ${r.tool}@${r.version} to ${r.reference}`, `digest ${r.digest}`, `integrity ${r.integrity}`, `${plural(r.files, "file")} (${r.pushed} pushed, ${r.present} already there)`];
  for (const d of r.dependencies) lines.push(`needs ${d.tool_id}@${d.version} (${d.integrity}) in the consumer's project`);
  if (r.mcpPin) lines.push("MCP interface pin published in the config");
  if (r.signature) lines.push(`signed by ${r.signature.keyId}`);
  return lines.join("\n");
}

/** What `kiwi add` placed and locked. */
export function renderAdded(r: Omit<AddResult, "findings">): string {
  const lines = [`added ${r.tool}@${r.version} from ${r.source}`, `integrity ${r.integrity}`, `placed in ${r.path} (${plural(r.files, "file")}, ${r.fetched} downloaded)`];
  if (r.replaced) lines.push(`replaced ${r.tool}@${r.replaced.version} (${r.replaced.integrity})`);
  if (r.signedBy) lines.push(`signature verified: ${r.signedBy}`);
  return lines.join("\n");
}

/** The warning for a cached blob of a remote tool that failed its check, was evicted, and was fetched again. */
export function renderRefetched(e: { kind: string; expected: string; actual: string; quarantined: string }): string {
  return `warning: evicted a corrupt cached ${e.kind} sha256:${e.expected.slice(0, 12)} (it held sha256:${e.actual.slice(0, 12)}) to ${e.quarantined}; fetched again from the registry`;
}

/** What `kiwi remove` took out: a line per tool, then the lockfile's change. */
export function renderRemoved(r: RemoveResult): string {
  const lines = r.removed.map((t) => `removed ${t.tool}@${t.version} (${t.reference}, ${short(t.digest)})${t.placed ? "" : ": it was not installed here"}`);
  lines.push(`wrote ${r.lockfile}: ${plural(r.diff.removed.length, "tool")} removed; the cached files stay until "kiwi cache prune"`);
  return lines.join("\n");
}

/** One line per remote tool: where its tag points now. */
export function renderOutdated(entries: readonly OutdatedEntry[]): string {
  if (entries.length === 0) return "no remote tools";
  const state = (e: OutdatedEntry) => (e.error ? `not checked: ${e.error.message}` : e.outdated ? `now ${short(e.latest!)} (run "kiwi update ${e.tool}")` : "up to date");
  return entries.map((e) => `${e.tool}  ${e.reference}  locked ${short(e.locked)}  ${state(e)}`).join("\n");
}
