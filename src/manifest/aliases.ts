// Fields the systems kiwi descends from spell another way, and which spelling kiwi reads: one
// table, so normalize.ts takes the value and validate/universal.ts reports two spellings that
// disagree (`universal/alias-conflict`). Each group lists the canonical spelling first; the value
// read is the first spelling present. Pure.
import { isRecord } from "../integrity/value.ts";

export interface AliasGroup {
  /** The model field the group fills (for pointers). */
  field: string;
  /** JSON pointers of the spellings, canonical first. */
  spellings: readonly string[];
  /** Where the spellings come from, for the README's compatibility table and messages. */
  origin: string;
}

export const ALIAS_GROUPS: readonly AliasGroup[] = [
  { field: "entrypoint", spellings: ["/config/entrypoint", "/manifest/entrypoint", "/entrypoint"], origin: "kiwi_mcp's chain design puts entrypoint in a manifest: section or at the top level" },
  { field: "language", spellings: ["/language", "/manifest/language", "/config/language"], origin: "kiwi_mcp's chain design puts language in a manifest: section" },
  { field: "toolName", spellings: ["/config/tool_name", "/config/mcp_tool_name"], origin: "kiwi_mcp's validation design names an MCP tool with config.mcp_tool_name" },
  { field: "args", spellings: ["/config/args", "/config/base_args"], origin: "kiwi_mcp's runtimes give their fixed arguments as config.base_args" },
];

/**
 * Each pointer's keys, split once: discovery and the universal check read every alias spelling
 * of every tool, and splitting the pointer on each read was most of that (~10 ms a 1,000-tool lock).
 * Only the few fixed pointers of this table and the magray checks ever come here.
 */
const POINTER_KEYS = new Map<string, readonly string[]>();

/** The value at a JSON pointer of plain values (unescaped keys: these pointers name plain keys). */
export function valueAt(doc: Record<string, unknown>, pointer: string): unknown {
  let keys = POINTER_KEYS.get(pointer);
  if (keys === undefined) POINTER_KEYS.set(pointer, (keys = pointer.split("/").slice(1)));
  let node: unknown = doc;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (!isRecord(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** The spelling a group's value is read from, or undefined when none is written. */
export function chosenSpelling(doc: Record<string, unknown>, group: AliasGroup): { pointer: string; value: unknown } | undefined {
  for (const pointer of group.spellings) {
    const value = valueAt(doc, pointer);
    if (value !== undefined) return { pointer, value };
  }
  return undefined;
}

/** Spellings of one group that are written with different values: each pair is one conflict. */
export function aliasConflicts(doc: Record<string, unknown>): { group: AliasGroup; kept: string; other: string }[] {
  const out: { group: AliasGroup; kept: string; other: string }[] = [];
  for (const group of ALIAS_GROUPS) {
    const chosen = chosenSpelling(doc, group);
    if (!chosen) continue;
    for (const pointer of group.spellings) {
      const value = valueAt(doc, pointer);
      if (pointer !== chosen.pointer && value !== undefined && JSON.stringify(value) !== JSON.stringify(chosen.value)) out.push({ group, kept: chosen.pointer, other: pointer });
    }
  }
  return out;
}
