// Human text for the registry commands: publish, add, outdated and update's diff. Pure.
import { renderCanonicalJson } from "../integrity/canonical.ts";
import type { FileEntry } from "../integrity/tool.ts";
import type { CanonicalValue } from "../integrity/value.ts";

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
  const a = (isObject(from.manifest) ? from.manifest : {}) as Record<string, CanonicalValue>;
  const b = (isObject(to.manifest) ? to.manifest : {}) as Record<string, CanonicalValue>;
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
