// Reading a 2026-07-28 server's server/discover answer: the serverInfo it names, a broken answer
// told apart from a legacy one, and the per-connection invariance of tools/list. Pure. (What of
// discover is interface is listing.ts's discoverComponent, so hashing never loads the SDK.)
import { DiscoverResultSchema } from "@modelcontextprotocol/core";
import { KiwiError } from "../errors.ts";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import { type CanonicalValue, toPlain, isMapping } from "../integrity/value.ts";
import { type WireObject, withoutMeta } from "./listing.ts";

/** serverInfo of a discover result: top level (the spec's example) or in `_meta` (the SDK's place). */
export function discoverServerInfo(discover: WireObject): WireObject | undefined {
  if (isMapping(discover.serverInfo)) return discover.serverInfo;
  const meta = discover._meta;
  const info = isMapping(meta) ? meta["io.modelcontextprotocol/serverInfo"] : undefined;
  return isMapping(info) ? info : undefined;
}

/**
 * A server/discover answer that claims the stateless revision (it has supportedVersions or a
 * resultType) but does not follow its schema. The SDK reads any unusable answer as "legacy" and
 * falls back to initialize; a server that answered discover with a result is broken, not legacy,
 * and kiwi says so rather than pinning whatever initialize gives. Undefined when all is well.
 */
export function checkDiscoverAnswer(result: CanonicalValue | undefined, label: string): KiwiError | undefined {
  if (!isMapping(result) || (result.supportedVersions === undefined && result.resultType === undefined)) return undefined;
  const parsed = DiscoverResultSchema.safeParse(toPlain(result));
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length ? `/${issue.path.join("/")}: ` : "";
  return new KiwiError("E_MCP", `${label} sent a malformed server/discover result: ${where}${issue?.message ?? "invalid"}`, {
    hint: "the server claims revision 2026-07-28 but its discover answer does not follow the schema (supportedVersions: an array of revisions, capabilities: an object); report it to the server's author",
    details: { method: "server/discover", issues: parsed.error.issues.slice(0, 5).map((i) => ({ path: i.path.map(String), message: i.message })) },
  });
}

/** A 2026-07-28 server must answer tools/list alike within one connection; two answers are compared. */
export function assertSameList(label: string, first: WireObject[], second: WireObject[]): void {
  const text = (items: WireObject[]) => items.map((i) => renderCanonicalJson(withoutMeta(i))).sort();
  const a = text(first);
  const b = text(second);
  if (a.length === b.length && a.every((t, i) => t === b[i])) return;
  const names = (items: WireObject[]) => new Set(items.map((i) => String(i.name)));
  const before = names(first);
  const after = names(second);
  const added = [...after].filter((n) => !before.has(n));
  const removed = [...before].filter((n) => !after.has(n));
  const what = [added.length ? `added ${added.join(", ")}` : "", removed.length ? `removed ${removed.join(", ")}` : ""].filter(Boolean).join("; ") || "changed a tool's definition";
  throw new KiwiError("E_MCP", `${label} answered tools/list differently twice in one connection (${what}); revision 2026-07-28 requires tools/list not to vary per connection, so its interface cannot be pinned`, {
    hint: "the server changes its tools between calls (a rug pull, or state leaking between requests); report it to the server's author and do not trust it",
    details: { reason: "unstable-listing", added, removed },
  });
}
