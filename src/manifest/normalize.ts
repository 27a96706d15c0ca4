// Maps a parsed manifest document of either dialect onto the tool model's fields, keeping a
// pointer for each so findings speak in the terms of the file the user wrote. Pure.
import { type CanonicalValue, isMapping, isRecord, toPlain } from "../integrity/value.ts";
import { ALIAS_GROUPS, chosenSpelling } from "./aliases.ts";
import type { Capability, Dialect, ExecutorRef, Limits, Tool } from "./model.ts";

/** Capability names a kiwi `requires` entry may declare; any other string is a package requirement. */
export const CAPABILITY_NAMES = ["fs.read", "fs.write", "net.outbound", "shell.execute", "env.read", "proc.spawn"] as const;

/** magray capability words and the kiwi capabilities their permissions map to. */
const MAGRAY_CAPABILITIES: Record<string, string> = {
  filesystem: "fs",
  network: "net.outbound",
  shell: "shell.execute",
  environment: "env.read",
  process: "proc.spawn",
};

/** Executor a magray tool runs on, by its type and entry point (magray manifests name none). */
export const SCRIPT_RUNTIMES: Record<string, string> = {
  ".py": "python_runtime",
  ".sh": "bash_runtime",
  ".js": "node_runtime",
  ".mjs": "node_runtime",
  ".cjs": "node_runtime",
  ".ts": "bun_runtime",
};

export type ToolFields = Omit<Tool, "root" | "rootAbs" | "manifestFile" | "form" | "files" | "locate">;

/** True when a JSON document has magray's tool.json shape rather than kiwi's. */
export function isMagrayShape(doc: Record<string, unknown>): boolean {
  if ("tool_id" in doc || "tool_type" in doc) return false;
  return "name" in doc && ("entry_point" in doc || "runtime_config" in doc || "capabilities" in doc || doc.type === "wasm" || doc.type === "native");
}

/** Parses `id@range` (range optional). */
export function parseExecutorRef(raw: string): ExecutorRef {
  const at = raw.indexOf("@");
  if (at <= 0) return { id: raw.trim(), range: null, raw };
  return { id: raw.slice(0, at).trim(), range: raw.slice(at + 1).trim() || null, raw };
}

/**
 * Fills the tool model's fields from a manifest document (value as written). `treePath` is the
 * tool's path under .ai/tools without extension (`ryeos/core/bundle/sign`): rye-os manifests take
 * their id from it, as rye's canonical refs do.
 */
export function normalizeManifest(value: CanonicalValue, fallbackId: string, treePath?: string): ToolFields & { dialect: Dialect } {
  const plain = toPlain(value);
  const doc = isRecord(plain) ? plain : {};
  return isMagrayShape(doc) ? fromMagray(value, doc) : fromKiwi(value, doc, fallbackId, treePath);
}

/**
 * A rye-os tool (the successors of kiwi_mcp) names its executor with `executor_id` and has no
 * tool_id: its id is its path under .ai/tools, so `core/sign.yaml` and `core/bundle/sign.yaml`
 * are two tools, not one id twice.
 */
function isRyeShape(doc: Record<string, unknown>): boolean {
  return typeof doc.executor_id === "string" && doc.executor === undefined && doc.tool_id === undefined;
}

/** A path under .ai/tools as a kiwi id: `ryeos/core/bundle/sign` -> `ryeos-core-bundle-sign`. */
export function pathToolId(path: string): string {
  return path
    .split("/")
    .filter((segment) => segment !== "")
    .map((segment) => segment.toLowerCase().replace(/[^a-z0-9_-]/g, "_"))
    .join("-");
}

/**
 * rye's executor_id: `@subprocess` (a primitive), `tool:<path under .ai/tools>` or a bare path
 * (`rye/core/runtimes/python_runtime`) name the executor the same way kiwi's `executor` does.
 */
export function ryeExecutorRef(raw: string): ExecutorRef {
  const bare = raw.startsWith("@") ? raw.slice(1) : raw.startsWith("tool:") ? raw.slice("tool:".length) : raw;
  return { id: bare.includes("/") || raw.startsWith("tool:") ? pathToolId(bare) : bare.trim(), range: null, raw };
}

/** The manifest's `config` as written (lossless), or an empty mapping, with its aliases read. */
function losslessConfig(value: CanonicalValue): { [key: string]: CanonicalValue } {
  return isMapping(value) && isMapping(value.config) ? withConfigAliases(value.config) : {};
}

/**
 * `config` with each aliased key (aliases.ts: mcp_tool_name, base_args) also under its canonical
 * name when only the alias is written, so every reader of the model sees one spelling.
 */
function withConfigAliases<T>(config: { [key: string]: T }): { [key: string]: T } {
  let out = config;
  for (const [canonical, ...aliases] of CONFIG_ALIASES) {
    if (Object.hasOwn(config, canonical)) continue;
    const alias = aliases.find((a) => Object.hasOwn(config, a));
    if (alias !== undefined) out = { ...out, [canonical]: config[alias]! };
  }
  return out;
}

/** Per alias group with config spellings, its config keys (canonical first): worked out once, not per tool. */
const CONFIG_ALIASES = ALIAS_GROUPS.map((group) => group.spellings.filter((p) => p.startsWith("/config/")).map((p) => p.slice("/config/".length))).filter((keys): keys is [string, ...string[]] => keys.length > 0);

/** Pointer and string value of an aliased field, when it is written as a string. */
function aliased(doc: Record<string, unknown>, field: string): { pointer: string; value: string } | undefined {
  const group = ALIAS_GROUPS.find((g) => g.field === field)!;
  const chosen = chosenSpelling(doc, group);
  return chosen && typeof chosen.value === "string" ? { pointer: chosen.pointer, value: chosen.value } : undefined;
}

function fromKiwi(value: CanonicalValue, doc: Record<string, unknown>, fallbackId: string, treePath?: string): ToolFields & { dialect: Dialect } {
  const config = isRecord(doc.config) ? withConfigAliases(doc.config) : {};
  const entrypoint = aliased(doc, "entrypoint");
  const language = aliased(doc, "language");
  const toolName = chosenSpelling(doc, ALIAS_GROUPS.find((g) => g.field === "toolName")!);
  const validation = isRecord(doc.validation) ? doc.validation : {};
  const rye = isRyeShape(doc);
  // executor_id stands in for executor whenever executor is absent.
  const ryeExecutor = doc.executor === undefined && typeof doc.executor_id === "string";
  const executor = typeof doc.executor === "string" ? parseExecutorRef(doc.executor) : ryeExecutor ? ryeExecutorRef(doc.executor_id as string) : null;
  return {
    id: typeof doc.tool_id === "string" ? doc.tool_id : rye && treePath !== undefined ? pathToolId(treePath) : fallbackId,
    version: typeof doc.version === "string" ? doc.version : String(doc.version ?? ""),
    type: typeof doc.tool_type === "string" ? doc.tool_type : "",
    executor,
    description: typeof doc.description === "string" ? doc.description : undefined,
    dialect: "kiwi",
    manifest: value,
    doc,
    config,
    configLossless: losslessConfig(value),
    parameters: doc.parameters,
    childSchemas: validation.child_schemas,
    entrypoint: entrypoint?.value,
    language: language?.value,
    capabilities: kiwiCapabilities(doc.requires),
    limits: kiwiLimits(doc.limits, config),
    pointers: {
      id: "/tool_id",
      version: "/version",
      type: "/tool_type",
      executor: ryeExecutor ? "/executor_id" : "/executor",
      description: "/description",
      config: "/config",
      parameters: "/parameters",
      childSchemas: "/validation/child_schemas",
      entrypoint: entrypoint?.pointer ?? "/config/entrypoint",
      language: language?.pointer ?? "/language",
      toolName: toolName?.pointer ?? "/config/tool_name",
      capabilities: "/requires",
      limits: "/limits",
    },
  };
}

function kiwiCapabilities(requires: unknown): Capability[] {
  if (!Array.isArray(requires)) return [];
  const out: Capability[] = [];
  requires.forEach((item, i) => {
    const pointer = `/requires/${i}`;
    if (typeof item === "string" && (CAPABILITY_NAMES as readonly string[]).includes(item)) out.push({ name: item, pointer });
    else if (isRecord(item) && Object.keys(item).length === 1) {
      const [name, targets] = Object.entries(item)[0]!;
      const list = Array.isArray(targets) ? targets.map(String) : typeof targets === "string" ? [targets] : [];
      out.push(name.startsWith("net.") ? { name, hosts: list, pointer } : { name, paths: list, pointer });
    }
  });
  return out;
}

function kiwiLimits(limits: unknown, config: Record<string, unknown>): Limits {
  const l = isRecord(limits) ? limits : {};
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  const timeoutSeconds = num(config.timeout);
  return {
    memoryMb: num(l.memory_mb),
    timeoutMs: num(l.timeout_ms) ?? (timeoutSeconds !== undefined ? timeoutSeconds * 1000 : undefined),
    cpuSeconds: num(l.cpu_seconds),
    openFiles: num(l.open_files),
    processes: num(l.processes),
    outputBytes: num(l.output_bytes),
    fuel: num(l.fuel),
  };
}

function fromMagray(value: CanonicalValue, doc: Record<string, unknown>): ToolFields & { dialect: Dialect } {
  const type = typeof doc.type === "string" ? doc.type : "";
  const entry = typeof doc.entry_point === "string" ? doc.entry_point : undefined;
  const rc = isRecord(doc.runtime_config) ? doc.runtime_config : {};
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  let executorId: string | null = null;
  if (type === "native") executorId = "subprocess";
  else if (type === "wasm") executorId = "wasm_runtime";
  else if (type === "script" && entry) {
    const ext = entry.slice(entry.lastIndexOf(".")).toLowerCase();
    executorId = SCRIPT_RUNTIMES[ext] ?? null;
  }
  return {
    id: typeof doc.name === "string" ? doc.name : "",
    version: typeof doc.version === "string" ? doc.version : String(doc.version ?? ""),
    type,
    executor: executorId ? { id: executorId, range: null, raw: executorId } : null,
    description: typeof doc.description === "string" ? doc.description : undefined,
    dialect: "magray",
    manifest: value,
    doc,
    config: { ...(isRecord(doc.config) ? doc.config : {}), ...(entry ? { entrypoint: entry } : {}) },
    configLossless: losslessConfig(value),
    parameters: isRecord(doc.config) ? doc.config.parameters : undefined,
    childSchemas: undefined,
    entrypoint: entry,
    capabilities: magrayCapabilities(doc.capabilities, doc.permissions),
    limits: {
      memoryMb: num(rc.max_memory_mb),
      timeoutMs: num(rc.max_execution_time_ms),
      fuel: num(rc.fuel_limit),
    },
    pointers: {
      id: "/name",
      version: "/version",
      type: "/type",
      executor: "/type",
      description: "/description",
      config: "/config",
      parameters: "/config/parameters",
      childSchemas: "/config",
      entrypoint: "/entry_point",
      capabilities: "/capabilities",
      permissions: "/permissions",
      limits: "/runtime_config",
    },
  };
}

function magrayCapabilities(capabilities: unknown, permissions: unknown): Capability[] {
  if (!Array.isArray(capabilities)) return [];
  const perms = isRecord(permissions) ? permissions : {};
  const out: Capability[] = [];
  capabilities.forEach((cap, i) => {
    if (typeof cap !== "string") return;
    // A null permission group is "none": the capability word grants nothing.
    if (perms[cap] === null) return;
    const pointer = `/capabilities/${i}`;
    const mapped = MAGRAY_CAPABILITIES[cap];
    const perm = isRecord(perms[cap]) ? (perms[cap] as Record<string, unknown>) : {};
    const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : undefined);
    const words = Array.isArray(perms[cap]) ? (perms[cap] as unknown[]).map(String) : undefined;
    if (mapped === "fs" && words) {
      // magray's own form: `"filesystem": ["read", "write"]` (no paths: the whole tool sandbox).
      if (words.includes("read")) out.push({ name: "fs.read", paths: [], pointer });
      if (words.includes("write")) out.push({ name: "fs.write", paths: [], pointer });
      if (!words.includes("read") && !words.includes("write")) out.push({ name: "fs.read", paths: [], pointer });
    } else if (mapped === "fs") {
      if (perm.read !== undefined) out.push({ name: "fs.read", paths: list(perm.read) ?? [], pointer });
      if (perm.write !== undefined) out.push({ name: "fs.write", paths: list(perm.write) ?? [], pointer });
      if (perm.read === undefined && perm.write === undefined) out.push({ name: "fs.read", paths: [], pointer });
    } else if (mapped === "net.outbound") out.push({ name: mapped, hosts: list(perm.hosts ?? perm.allowed_hosts) ?? [], pointer });
    else out.push({ name: mapped ?? cap, pointer });
  });
  return out;
}
