// `kiwi mcp skill <server> <uri>`: fetch one skill of a server's Skills extension (SEP-2640) the
// way a host loads it: skills/get for the entry, which must equal the entry pinned in
// tool.lock.json, then every listed file through resources/read, each checked against its size and
// sha256 digest, and SKILL.md's frontmatter against the entry's. Nothing unverified is returned.
import { isMapping } from "../integrity/value.ts";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Context } from "../context.ts";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { KiwiError } from "../errors.ts";
import type { McpSession } from "../mcp/mcp-client-io.ts";
import { negotiationFor, withServerSession } from "./mcp-inspect-io.ts";
import { SKILLS_EXTENSION, type WireObject, withoutMeta } from "../mcp/listing.ts";
import { readMcpProject, selectServers } from "../mcp/mcp-project-io.ts";
import { type VerifiedFile, assertFrontmatterMatches, checkSkillEntry, skillFiles, verifySkillFile } from "../mcp/skills.ts";

export interface FetchedSkill {
  server: string;
  entry: WireObject;
  /** Every file of the skill, verified, in the entry's order. */
  files: VerifiedFile[];
  /** The skill's folder URI (`skill://git-workflow/`): files are named relative to it. */
  root: string;
  /** Set when the server has no pin and `unlocked` let the fetch go ahead. */
  unpinned?: boolean;
}

/** `kiwi mcp skill`: fetches and verifies one skill, then (with `out`, relative to the project's cwd) writes its files. */
export async function getSkill(ctx: Context, serverId: string, uri: string, options: { unlocked: boolean; out?: string }): Promise<FetchedSkill & { written?: string[] }> {
  const fetched = await fetchSkill(ctx, serverId, uri, options);
  return options.out === undefined ? fetched : { ...fetched, written: writeSkillFiles(resolve(ctx.cwd, options.out), fetched) };
}

/** Fetches and verifies one skill; throws E_MCP_DRIFT, E_MCP_UNPINNED or E_INTEGRITY_MISMATCH. */
export async function fetchSkill(ctx: Context, serverId: string, uri: string, options: { unlocked: boolean }): Promise<FetchedSkill> {
  const project = readMcpProject(ctx);
  const [server] = selectServers(project, [serverId]);
  const pin = project.pins[server!.id];
  const pinned = pin ? (Array.isArray(pin.interface.skills) ? pin.interface.skills : []).find((s) => isMapping(s) && s.uri === uri) : undefined;
  if (!pin && !options.unlocked) {
    throw new KiwiError("E_MCP_UNPINNED", `MCP server "${serverId}" has no pin in tool.lock.json, so its skills have nothing to be checked against`, {
      hint: `pin it with "kiwi mcp pin ${serverId}" (or pass --unlocked to fetch against the live entry alone)`,
      details: { server: serverId },
    });
  }
  return withServerSession(ctx, serverId, { unlocked: options.unlocked, negotiation: negotiationFor(pin) }, async (session) => {
    const entry = await getEntry(session, serverId, uri);
    if (pin) {
      if (!isMapping(pinned)) {
        throw new KiwiError("E_MCP_DRIFT", `MCP server "${serverId}" serves the skill ${uri}, which its pin does not list`, {
          hint: `review it with "kiwi mcp diff ${serverId}", then "kiwi mcp approve ${serverId}"`,
          details: { server: serverId, skill: uri },
        });
      }
      if (renderCanonicalJson(withoutMeta(pinned)) !== renderCanonicalJson(withoutMeta(entry))) {
        throw new KiwiError("E_MCP_DRIFT", `MCP server "${serverId}": the skill ${uri} changed since it was pinned (its frontmatter or file digests differ)`, {
          hint: `review the change with "kiwi mcp diff ${serverId}", then accept it with "kiwi mcp approve ${serverId}"`,
          details: { server: serverId, skill: uri },
        });
      }
    }
    const files = skillFiles(entry);
    if (files === "dynamic") {
      throw new KiwiError("E_INTEGRITY_MISMATCH", `MCP server "${serverId}": the skill ${uri} is "dynamic" (no file digests), so kiwi cannot verify it`, {
        hint: "SEP-2640 lets hosts decline skills without digests; kiwi does",
        details: { server: serverId, skill: uri },
      });
    }
    const verified: VerifiedFile[] = [];
    for (const file of files) {
      const { bytes, text } = await readFile(session, serverId, file.uri);
      const checked = verifySkillFile(serverId, uri, file, bytes);
      if (file.uri === uri) assertFrontmatterMatches(serverId, entry, text ?? new TextDecoder().decode(bytes));
      verified.push(text === undefined ? checked : { ...checked, text });
    }
    return { server: serverId, entry, files: verified, root: uri.slice(0, -"SKILL.md".length), ...(pin ? {} : { unpinned: true }) };
  });
}

async function getEntry(session: McpSession, serverId: string, uri: string): Promise<WireObject> {
  const caps = (session.discoverResult ?? session.initResult).capabilities;
  const extensions = isMapping(caps) ? caps.extensions : undefined;
  if (!isMapping(extensions) || extensions[SKILLS_EXTENSION] === undefined) {
    throw new KiwiError("E_MCP", `MCP server "${serverId}" does not declare the Skills extension (${SKILLS_EXTENSION})`, { hint: "the server serves no skills" });
  }
  await session.request("skills/get", { uri });
  const result = session.takeResult("skills/get");
  const entry: CanonicalValue = (isMapping(result) ? result.skill : undefined) ?? null;
  checkSkillEntry(entry, session.label, "skills/get");
  if (entry.uri !== uri) throw new KiwiError("E_MCP", `${session.label} answered skills/get for ${uri} with the skill ${String(entry.uri)}`, { hint: "the server is broken or hostile" });
  return entry;
}

/** One file through resources/read: its text (UTF-8 bytes) or its base64 blob. */
async function readFile(session: McpSession, serverId: string, uri: string): Promise<{ bytes: Uint8Array; text?: string }> {
  const result = (await session.request("resources/read", { uri })) as { contents?: { uri?: string; text?: string; blob?: string }[] };
  const contents = (result.contents ?? []).filter((c) => c.uri === undefined || c.uri === uri);
  const item = contents[0];
  if (!item || (typeof item.text !== "string" && typeof item.blob !== "string") || contents.length > 1) {
    throw new KiwiError("E_MCP", `MCP server "${serverId}" answered resources/read for ${uri} without exactly one text or blob content`, { hint: "the server is broken; report it to its author" });
  }
  if (typeof item.text === "string") return { bytes: new TextEncoder().encode(item.text), text: item.text };
  return { bytes: Buffer.from(item.blob!, "base64") };
}

/**
 * Writes a fetched skill's verified files under `dir`, at their paths inside the skill's folder;
 * each file goes to a temporary name first and is renamed into place (entry paths were checked:
 * no `..`, no empty or encoded separators). Returns the paths written, relative to `dir`.
 */
export function writeSkillFiles(dir: string, skill: FetchedSkill): string[] {
  const written: string[] = [];
  for (const file of skill.files) {
    const rel = file.uri.slice(skill.root.length);
    const target = join(dir, ...rel.split("/"));
    mkdirSync(dirname(target), { recursive: true });
    const temp = `${target}.kiwi-${process.pid}.tmp`;
    try {
      writeFileSync(temp, file.bytes);
      renameSync(temp, target);
    } catch (error) {
      rmSync(temp, { force: true });
      throw new KiwiError("E_IO", `cannot write ${target}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { hint: "check that --out names a writable folder" });
    }
    written.push(rel);
  }
  return written;
}
