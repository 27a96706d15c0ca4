// Builds the fully resolved plan of one call: the verified chain, the merged config, and either the
// argv/env/cwd/limits of a subprocess (wrapped in its launcher) or the HTTP request. Pure: the host
// (PATH lookup) is injected, and what the launch needs from the machine (the sandbox probe, the
// program's real path, the host policy) comes in as input; the primitives in subprocess.ts and
// http.ts only run what this returns, unchanged.
import { isAbsolute, join, normalize } from "node:path";
import { KiwiError } from "../errors.ts";
import type { Limits, Tool } from "../manifest/model.ts";
import { type HttpRequestPlan, buildHttpRequest } from "./http-plan.ts";
import type { PlanLimits } from "../manifest/run-limits.ts";
import { mergeLimits, resolveLimits } from "../manifest/run-limits.ts";
import { mergeConfigs } from "./merge.ts";
import { type CanonicalValue, isMapping, isRecord, toPlain } from "../integrity/value.ts";
import { type ParamViolation, assertNoViolations } from "./params.ts";
import { declaredSecrets, referencedSecrets } from "../schema/placeholders.ts";
import { type StdinMode, isEnvName } from "../schema/vocabulary.ts";
import { type TemplateScope, assertEnvPresent, expandString, renderConfigText } from "./template.ts";
import { WASI_COMMAND } from "../wasm/wasi-command.ts";
import { toolPathProblem } from "../integrity/tool-path.ts";
// Imported, not required on first use: every call of a subprocess tool wraps its plan, and the
// first require() in a process costs ~0.25 ms in the compiled binary (setting up require itself;
// later ones ~0.03 ms). A warm exec of a script tool now makes none.
import { type LaunchFacts, type LaunchNotes, type SandboxSummary, launched } from "./launch-plan.ts";

/** Variables a subprocess inherits from kiwi's environment; everything else must be declared. */
export const ENV_ALLOWLIST = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ"] as const;

/** The fields of a tool the plan reads. */
export type PlanTool = Pick<Tool, "id" | "version" | "type" | "config" | "configLossless" | "limits" | "entrypoint" | "manifestFile"> & Partial<Pick<Tool, "dialect">>;

/** One verified link, tool first: the tool, its locked integrity and where its files were materialised. */
export interface LinkInput {
  tool: PlanTool;
  /** `sha256:<hex>`, or null when nothing was computed (never for a verified link). */
  integrity: string | null;
  /** Read-only run directory holding the verified copy of the link's files; null when it has none. */
  runDir: string | null;
}

/** What the plan needs from the machine, injected so the plan stays pure. */
export interface PlanHost {
  /** Absolute path of a command found on `path`, or null. */
  which(command: string, path: string | undefined): string | null;
  userAgent: string;
}

export interface PlanInput {
  /** The chain, tool first, primitive last. */
  chain: LinkInput[];
  /** Validated parameters with defaults applied. */
  params: Record<string, unknown>;
  /** kiwi's environment (for `${VAR}` and the allowlist). */
  env: Readonly<Record<string, string | undefined>>;
  host: PlanHost;
  mode: "locked" | "unlocked";
  /** Build the plan as shown: secret values become `***`. */
  redact?: boolean;
  /** A subprocess plan's launcher (launch-io.ts gathers it); without it the plan is bare (`launch` is `argv`). */
  launch?: LaunchFacts;
  /** An http_client plan's host policy, described (net-policy.ts, loaded by the caller only for HTTP tools). */
  network?: { enforced: boolean; policy: string };
}

export interface PlanLink {
  id: string;
  version: string;
  type: string;
  integrity: string | null;
  source: string;
  runDir: string | null;
}

export type { PlanLimits } from "../manifest/run-limits.ts";

/** Between SIGTERM and SIGKILL when a run is stopped. */
export const KILL_GRACE_MS = 2_000;


interface PlanCommon {
  plan: 1;
  tool: string;
  mode: "locked" | "unlocked";
  chain: PlanLink[];
  params: Record<string, unknown>;
  /** Merged config of the chain as written (templates unexpanded; 12345678901234567890 and 1.0 exact). */
  config: Record<string, unknown>;
  /** Environment variable names whose values are never shown. */
  secrets: string[];
  limits: PlanLimits;
}

export interface SubprocessSpec {
  /** The command and its arguments; each element is one argument, never shell-parsed. */
  argv: string[];
  /**
   * What is spawned: `argv` wrapped in the launcher (launch-plan.ts: bubblewrap and/or prlimit) when
   * the plan was built with launch facts, with `env` the launcher's; else `argv` itself.
   */
  launch: string[];
  /**
   * Host files `launch` reads from descriptors 3, 4, … in this order (bubblewrap copies them into
   * the sandbox), opened read-only just before the spawn (exec/launch-files-io.ts).
   */
  files?: string[];
  cwd: string;
  env: Record<string, string>;
  /** json: the params as JSON then EOF; none: empty stdin; inherit: kiwi's stdin. */
  stdin: StdinMode;
  /** Host filtering: kiwi's proxy listens on this Unix socket while the tool runs (launch-io.ts). */
  proxy?: { socket: string; uid?: number };
  /** A WebAssembly module on kiwi's WASI host, with the limits woven into it (wasm/prepare-io.ts). */
  wasm?: { fuel: number; memoryMb: number; module: string; digest: string; instrumented: string };
}

export interface SubprocessPlan extends PlanCommon {
  primitive: "subprocess";
  subprocess: SubprocessSpec;
  /** How the launch is contained (from the launch facts; absent in a bare plan). */
  sandbox?: SandboxSummary;
}

export type { SandboxSummary } from "./launch-plan.ts";

export interface HttpPlan extends PlanCommon {
  primitive: "http_client";
  http: HttpRequestPlan;
  /** Which hosts the request may reach (from the input's `network`; absent in a bare plan). */
  network?: { enforced: boolean; policy: string };
}

export type Plan = SubprocessPlan | HttpPlan;

/** The plan as run and as shown, final, and what their launch leaves to the caller. */
export interface Plans {
  plan: Plan;
  shown: Plan;
  notes: LaunchNotes;
}

/**
 * Builds the plan of a call as run and as shown (secret values as `***`), each wrapped in its
 * launcher when `launch` is given. Both are final: nothing edits them afterwards. `bare`, the
 * same input's plans built without `launch` (exec gathers the launch facts from them), are
 * wrapped instead of built again: a plan with a launch is its bare plan wrapped (buildPlan).
 */
export function buildPlans(input: PlanInput, bare?: { plan: Plan; shown: Plan }): Plans {
  const notes: LaunchNotes = { warnings: [], writable: [] };
  if (bare && input.launch && bare.plan.primitive === "subprocess" && bare.shown.primitive === "subprocess") {
    const plan = launched(bare.plan, input.launch, notes);
    return { plan, shown: bare.shown === bare.plan ? plan : launched(bare.shown, input.launch, undefined), notes };
  }
  const plan = buildPlan({ ...input, redact: false }, notes);
  return { plan, shown: shownTwin(plan, input), notes };
}

/**
 * The plan as shown: built again with secret values redacted, or, when the plan names no secret
 * (redaction replaces only the values of secret names), the plan itself, which is then never
 * changed (a warm exec builds one plan instead of two).
 */
export function shownTwin(plan: Plan, input: PlanInput): Plan {
  return plan.secrets.length === 0 ? plan : buildPlan({ ...input, redact: true });
}

/**
 * Refuses a runtime, a primitive or an MCP server as the tool of a call: each is what other tools run
 * on, not a call of its own (run alone, python_runtime would execute the parameters' JSON as Python
 * and exit 0). kiwi's MCP commands plan a server's launch without this check.
 */
export function assertCallable(tool: { id: string; type: string; manifestFile: string }): void {
  const notCalled = NOT_CALLED_ALONE[tool.type];
  if (!notCalled) return;
  throw new KiwiError("E_CHAIN", `${tool.id} is ${notCalled.what} (${tool.manifestFile}): it is not called on its own`, {
    hint: notCalled.hint(tool.id),
    details: { tool: tool.id, toolType: tool.type },
  });
}

/** The tool types a call refuses as its tool, each with what it is and what to run instead. */
const NOT_CALLED_ALONE: Partial<Record<string, { what: string; hint: (id: string) => string }>> = {
  runtime: { what: "a runtime", hint: (id) => `run a tool whose executor is ${id} instead ("kiwi list" shows the project's tools)` },
  primitive: { what: "a primitive", hint: (id) => `run a tool whose chain ends in ${id} instead ("kiwi list" shows the project's tools)` },
  mcp_server: { what: "an MCP server", hint: (id) => `call one of its tools: kiwi exec <an mcp_tool whose executor is ${id}> ("kiwi list" shows them)` },
};

/**
 * Builds the plan; throws E_CHAIN, E_PARAMS_INVALID (placement violations), E_EXEC_FAILED or
 * E_SANDBOX. The launch's warnings and folders to create go into `notes` when given.
 */
export function buildPlan(input: PlanInput, notes?: LaunchNotes): Plan {
  const { chain } = input;
  const leaf = chain[0];
  const root = chain[chain.length - 1];
  if (!leaf || !root) throw new KiwiError("E_INTERNAL", "buildPlan got an empty chain");
  if (chain.length === 1 && leaf.tool.type === "knowledge") {
    throw new KiwiError("E_CHAIN", `${leaf.tool.id} is a knowledge document (${leaf.tool.manifestFile}): there is nothing to run`, {
      hint: `read it instead (kiwi show ${leaf.tool.id} names its file); kiwi exec runs tools whose chain ends in subprocess or http_client`,
    });
  }
  if (root.tool.type !== "primitive" || (root.tool.id !== "subprocess" && root.tool.id !== "http_client")) {
    throw new KiwiError("E_CHAIN", `the chain of ${leaf.tool.id} ends at ${root.tool.id} (${root.tool.type || "no type"}), not at a primitive`, {
      hint: "every chain must end in subprocess or http_client",
    });
  }
  const rootFirst = [...chain].reverse();
  // Values are rendered from the config as written, so what runs is what the lock hashed; the
  // plain view (numbers as JavaScript numbers) only decides (method, retries, cwd, stdin).
  const exact = mergeConfigs(rootFirst.map((l) => exactConfig(l.tool)));
  const config = toPlain(exact as CanonicalValue) as Record<string, unknown>;
  const declared = mergeLimits(rootFirst.map((l) => l.tool.limits));
  const secrets = secretNames(config);
  const scope: TemplateScope = { params: input.params, env: input.env, secrets: new Set(secrets), redact: input.redact === true, missingEnv: new Set() };
  const violations: ParamViolation[] = [];
  const common = {
    plan: 1 as const,
    tool: leaf.tool.id,
    mode: input.mode,
    chain: chain.map(toPlanLink),
    params: input.params,
    config: exact,
    secrets,
  };
  let plan: Plan;
  // The timeout is named in hints as it was written: by the link that declared it (the tool's own when none did).
  const timeoutBy = chain.find((l) => l.tool.limits.timeoutMs !== undefined) ?? leaf;
  const timeoutField = timeoutBy.tool.dialect === "magray" ? { timeoutField: "runtime_config.max_execution_time_ms" } : {};
  if (root.tool.id === "subprocess") {
    const limits = { ...resolvePlanLimits(declared, true), ...timeoutField };
    const spec = buildSubprocessSpec(rootFirst, config, exact, scope, input, violations);
    plan = { ...common, primitive: "subprocess", limits, subprocess: spec };
  } else {
    const limits = { ...resolvePlanLimits(declared, false), ...timeoutField };
    const http = buildHttpRequest({ toolId: leaf.tool.id, config, exact, scope, limits, userAgent: input.host.userAgent, violations });
    plan = { ...common, primitive: "http_client", limits, http, ...(input.network ? { network: { ...input.network } } : {}) };
  }
  assertNoViolations(violations, leaf.tool.id);
  assertEnvPresent(scope, leaf.tool.id);
  return plan.primitive === "subprocess" && input.launch ? launched(plan, input.launch, notes) : plan;
}

function toPlanLink(l: LinkInput): PlanLink {
  return { id: l.tool.id, version: l.tool.version, type: l.tool.type, integrity: l.integrity, source: l.tool.manifestFile, runDir: l.runDir };
}

/** A link's config as written (lossless); a tool built without it (tests, built-ins) has only the plain one. */
function exactConfig(tool: PlanTool): Record<string, unknown> {
  return tool.configLossless ?? tool.config;
}

/** Names declared in `config.secrets` plus every referenced `${VAR}` whose name looks secret. */
export function secretNames(config: Record<string, unknown>): string[] {
  const declared = declaredSecrets(config);
  const names = new Set(declared);
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      for (const name of referencedSecrets(v, declared)) names.add(name);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (isRecord(v)) Object.values(v).forEach(walk);
  };
  walk(config);
  return [...names].sort();
}

type ArgPart = { text: string; literal: boolean };

function buildSubprocessSpec(rootFirst: LinkInput[], config: Record<string, unknown>, exact: Record<string, unknown>, scope: TemplateScope, input: PlanInput, violations: ParamViolation[]): SubprocessSpec {
  const leaf = rootFirst[rootFirst.length - 1]!;
  // The command comes from the link nearest the tool that declares one (the child overrides).
  let commandLink: LinkInput | undefined;
  for (const l of rootFirst) if (typeof l.tool.config.command === "string") commandLink = l;
  const parts: ArgPart[] = [];
  let command: string | undefined;
  for (const link of rootFirst) {
    if (link.tool.entrypoint !== undefined) {
      const entry = resolveInRunDir(link, link.tool.entrypoint, "entrypoint");
      // With no command anywhere (a native tool straight on subprocess) the entry point is the program.
      if (!commandLink && command === undefined) command = entry;
      else parts.push({ text: entry, literal: true });
    }
    const args = exactConfig(link.tool).args;
    if (Array.isArray(args)) for (const a of args) parts.push({ text: renderConfigText(a), literal: false });
  }
  const env = buildEnv(exact, scope, input.env, leaf.tool.id);
  if (commandLink) command = resolveCommand(commandLink, scope, env.PATH, input.host);
  if (command === undefined) {
    throw new KiwiError("E_EXEC_FAILED", `nothing to run for ${leaf.tool.id}: no link of its chain declares a command or an entrypoint`, {
      hint: "give the tool an entrypoint, or its runtime a config.command",
    });
  }
  const argv = [command];
  for (const part of parts) {
    if (part.literal) {
      argv.push(part.text);
      continue;
    }
    const e = expandString(part.text, scope);
    if (e.absent) continue; // an argument naming an absent optional parameter is left out whole
    if (e.value.includes("\0")) {
      for (const p of e.params) violations.push({ pointer: `/${p}`, rule: "argv", message: "must not contain NUL bytes when passed as an argument", value: scope.params[p] });
      continue;
    }
    argv.push(e.value);
  }
  // A mode exec does not know is json, the default (kiwi check reports it: config/stdin).
  const stdin = config.stdin === "none" || config.stdin === "inherit" ? config.stdin : "json";
  // An mcp_tool is a call into its server, and the server process runs among the server's own files
  // (at lock the server is the leaf, so it starts in the same place at lock and at exec).
  // A server without files of its own has no run directory: it keeps the leaf's, as before.
  const server = leaf.tool.type === "mcp_tool" && rootFirst.length >= 2 ? rootFirst[rootFirst.length - 2]! : undefined;
  const home = server?.runDir ? server : leaf;
  return { argv, launch: argv, cwd: resolveCwd(home, config), env, stdin };
}

function buildEnv(config: Record<string, unknown>, scope: TemplateScope, kiwiEnv: PlanInput["env"], toolId: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_ALLOWLIST) {
    const v = kiwiEnv[name];
    if (v !== undefined) env[name] = v;
  }
  if (isMapping(config.env as CanonicalValue)) {
    for (const [name, raw] of Object.entries(config.env as Record<string, unknown>)) {
      if (!isEnvName(name)) {
        throw new KiwiError("E_EXEC_FAILED", `${toolId}: config.env has an invalid variable name ${JSON.stringify(name)}`, { hint: "environment names cannot be empty or contain '=' or NUL" });
      }
      const e = expandString(renderConfigText(raw), scope);
      if (e.absent) continue;
      if (e.value.includes("\0")) {
        throw new KiwiError("E_PARAMS_INVALID", `${toolId}: the value of env ${name} contains a NUL byte`, { hint: "parameters placed in the environment cannot contain NUL bytes" });
      }
      env[name] = e.value;
    }
  }
  return env;
}

function resolveCommand(link: LinkInput, scope: TemplateScope, path: string | undefined, host: PlanHost): string {
  const raw = String(link.tool.config.command);
  // Parameters never choose the program: only ${VAR} expands in a command.
  const unsetBefore = scope.missingEnv.size;
  const e = expandString(raw, { ...scope, params: {} });
  if (e.absent) {
    throw new KiwiError("E_EXEC_FAILED", `${link.tool.id}: config.command ${JSON.stringify(raw)} uses the parameter {${e.param}}; parameters cannot choose the program`, {
      hint: "pass parameters through args or stdin",
    });
  }
  const command = e.value;
  // A command built from an unset variable is no program to look for: the plan is refused once
  // complete, naming every unset variable (assertEnvPresent), not as a command missing from PATH.
  if (scope.missingEnv.size > unsetBefore) return command;
  // kiwi's own WASI host (wasm/): exec replaces it with the host program when it launches.
  if (command === WASI_COMMAND) return command;
  if (command.includes("/")) return isAbsolute(command) ? command : resolveInRunDir(link, command, "command");
  const found = host.which(command, path);
  if (!found) {
    throw new KiwiError("E_EXEC_FAILED", `${command} (the command of ${link.tool.id}) was not found on PATH`, {
      hint: `install ${command}, or fix PATH for kiwi (the tool sees only PATH and the allowlisted variables)`,
      details: { command, tool: link.tool.id, path },
    });
  }
  return found;
}

/** A path inside a link's run directory; refuses what kiwi check refuses (integrity/tool-path.ts, as written). */
function resolveInRunDir(link: LinkInput, rel: string, field: string): string {
  if (!link.runDir) {
    throw new KiwiError("E_EXEC_FAILED", `${link.tool.id}: ${field} ${JSON.stringify(rel)} names a file, but the tool has no materialised files`, {
      hint: 'run "kiwi lock" so the tool\'s files are locked and cached',
    });
  }
  const problem = toolPathProblem(rel, "written");
  if (problem) {
    throw new KiwiError("E_EXEC_FAILED", `${link.tool.id}: ${field} ${JSON.stringify(rel)} leaves the tool directory (it ${problem})`, { hint: `make ${field} a relative path inside the tool, without '..'` });
  }
  return join(link.runDir, normalize(rel));
}

function resolveCwd(leaf: LinkInput, config: Record<string, unknown>): string {
  if (!leaf.runDir) throw new KiwiError("E_INTERNAL", `${leaf.tool.id} has no run directory`);
  return typeof config.cwd === "string" && config.cwd !== "" && config.cwd !== "." ? resolveInRunDir(leaf, config.cwd, "cwd") : leaf.runDir;
}

/** Declared limits (a child overrides its parent) filled with kiwi's defaults; resource limits only for subprocesses. */
export function resolvePlanLimits(declared: Limits, subprocess: boolean): PlanLimits {
  const table = resolveLimits(declared);
  const out: PlanLimits = {
    timeoutMs: table.timeoutMs.value,
    killGraceMs: subprocess ? KILL_GRACE_MS : 0,
    outputBytes: table.outputBytes.value,
    declared: Object.entries(table)
      .filter(([, l]) => l.source === "declared")
      .map(([name]) => name)
      .filter((name) => subprocess || name === "timeoutMs" || name === "outputBytes"),
  };
  if (subprocess) {
    out.memoryMb = table.memoryMb.value;
    out.cpuSeconds = table.cpuSeconds.value;
    out.openFiles = table.openFiles.value;
    out.processes = table.processes.value;
  }
  return out;
}
