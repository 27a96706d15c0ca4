// exec's launch memo: a warm `kiwi exec <tool>` without the CLI, the chain's verification or the
// plan's construction. A call proven by the chain memo (chain-memo-io.ts) ends in a plan that
// depends on nothing but
//   - the chain's files, manifests and folders and the lockfile, each proven unchanged by stat
//     (chainProof: exactly what replayVerifiedChain would compare);
//   - the run directories, proven intact by their markers (rundir-io.ts, as ensureRunDir reuses them);
//   - the call's parameters, which only fill the plan's stdin when no part of the merged config
//     references one (anything else is never remembered);
//   - the environment, the working directory, the sandbox mode and the kiwi binary, which are the key;
//   - the commands the plan looked up on PATH, which must still find the same programs;
//   - the machine's facts (the sandbox probe, each program's resolution through PATH), which the
//     replay gathers again, exactly as the long way does, before the launch is planned anew.
// So the memo holds the plan without its launch (a bare plan), the parameter schema and the facts
// that come from the chain; a replay proves every input, validates the parameters, plans the
// launch and runs it. It is a memo, never a source of truth: anything that does not hold, or does
// not read back exactly, sends the call the long way, which records it again.
// A secret's value (plan.secrets: a `${VAR}` whose name looks secret, or one `config.secrets`
// names) never reaches the memo's file: it is written with a stand-in in its place, and the replay
// puts this environment's value back (the key holds the environment, so it is the value the plan
// was built with).
import type { Context } from "../context.ts";
import { binaryIdentity } from "../cache/memo-file-io.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { type CanonicalValue, isRecord, survivesJsonParse } from "../integrity/value.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import { referencedParams } from "../schema/placeholders.ts";
import { type WatchedPath, allUnchanged } from "./stat-proof-io.ts";
import { type Lookup, sameLookups } from "./host-io.ts";
import type { LaunchFacts } from "./launch-plan.ts";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";
import type { ParamTool } from "./call-params.ts";
import type { SubprocessPlan } from "./plan.ts";
import { intactRunDir } from "./rundir-io.ts";
import type { SandboxMode } from "./sandbox-plan.ts";

/** Bumped whenever what a remembered launch holds changes. */
const LAUNCH_FORMAT = 2;

/** The facts of a launch that come from the chain, not from the machine. */
export type ChainFacts = Pick<LaunchFacts, "capabilities" | "limits" | "runDirs" | "home" | "projectRoot">;

export interface RememberedLaunch {
  format: typeof LAUNCH_FORMAT;
  /** The project root the working directory led to. */
  root: string;
  /** Every input of the verified chain with its stat identity (chain-memo-io.ts chainProof). */
  watch: WatchedPath[];
  /** Each run directory the plan names (its folder name in runs/) and the locked files it holds. */
  runDirs: { name: string; files: FileEntry[] }[];
  /** The tool's parameters list, as parameter errors name it. */
  tool: Omit<ParamTool, "locate">;
  /** The parameters list as a JSON Schema (exec/call-params.ts). */
  schema: Record<string, unknown>;
  /** The chain's merged `config.stdin`: "inherit" means parameters never come from stdin. */
  stdin?: string;
  /** Every PATH lookup the plan made (a command name resolved to a program) and what it found. */
  lookups: Lookup[];
  /** The plan without its launch, built with the recording call's parameters (replaced on replay). */
  bare: SubprocessPlan;
  /** Each secret whose value `bare` holds, and the stand-in written in its place. */
  secrets: { name: string; standIn: string }[];
  facts: ChainFacts;
}

/** The memo key of a call: everything outside the project that a plan may read. */
function launchKey(ctx: Pick<Context, "cwd" | "env">, toolId: string, mode: SandboxMode): string {
  // `NAME=value` of every variable, sorted by name, joined by NUL; a plain loop, not map and join:
  // run once per process in the interpreter, map with a closure took ~0.06 ms more for 19 variables
  // (a compiled micro-benchmark), and an agent's environment often holds more.
  const names = Object.keys(ctx.env).sort();
  let env = "";
  for (let i = 0; i < names.length; i++) env += `${i === 0 ? "" : "\0"}${names[i]}=${ctx.env[names[i]!] ?? ""}`;
  return memoKey("launches", binaryIdentity(), ctx.cwd, toolId, mode, env);
}

/**
 * Whether a plan built from `config` (the chain's merged config) differs between two calls only in
 * its parameters: no string of it names a parameter, so no argument, variable, folder or command
 * is built from one.
 */
export function parameterFree(config: unknown): boolean {
  if (typeof config === "string") return referencedParams(config).length === 0;
  if (Array.isArray(config)) return config.every(parameterFree);
  if (isRecord(config)) return Object.values(config).every(parameterFree);
  return true;
}

/**
 * Remembers the launch of a call that ran the long way, when it can be replayed exactly: its bare
 * plan reads back from JSON unchanged and references no parameter. The caller decides the rest
 * (a proven chain, no warnings, nothing filtered or installed). Best effort, like every memo.
 */
export function rememberLaunch(ctx: Pick<Context, "cwd" | "env" | "cacheDir">, toolId: string, mode: SandboxMode, launch: Omit<RememberedLaunch, "format" | "secrets">): void {
  if (!parameterFree(launch.bare.config) || !survivesJsonParse(launch.bare as unknown as CanonicalValue) || !survivesJsonParse(launch.facts as unknown as CanonicalValue)) return;
  const masked = maskSecrets({ ...launch.bare, params: {} }, ctx.env);
  if (!masked) return;
  const memo: RememberedLaunch = { format: LAUNCH_FORMAT, ...launch, bare: masked.bare, secrets: masked.secrets };
  writeMemo(ctx.cacheDir, "launches", launchKey(ctx, toolId, mode), JSON.stringify(memo));
}

/**
 * The plan with each secret's value replaced by a stand-in no real text holds (it carries a random
 * nonce); undefined when that cannot be shown to be so: a secret's value still in the text (one
 * inside a stand-in, say), or a plan that does not come back exactly when the values are put back.
 */
function maskSecrets(bare: SubprocessPlan, env: Context["env"]): { bare: SubprocessPlan; secrets: RememberedLaunch["secrets"] } | undefined {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("hex");
  const values = bare.secrets.flatMap((name) => (env[name] ? [{ name, value: env[name]!, standIn: `<kiwi secret ${nonce} ${name}>` }] : []));
  if (values.length === 0) return { bare, secrets: [] };
  // The longest first, so a secret that holds another is replaced whole.
  values.sort((a, b) => b.value.length - a.value.length);
  const text = JSON.stringify(bare);
  const masked = mapStrings(bare, (s) => values.reduce((out, v) => out.split(v.value).join(v.standIn), s)) as SubprocessPlan;
  const secrets = values.map(({ name, standIn }) => ({ name, standIn }));
  const maskedText = JSON.stringify(masked);
  if (values.some((v) => maskedText.includes(v.value)) || JSON.stringify(restoreSecrets(masked, secrets, env)) !== text) return undefined;
  return { bare: masked, secrets };
}

/** The remembered plan with this environment's value of each secret in place of its stand-in; undefined when one is unset. */
function restoreSecrets(bare: SubprocessPlan, secrets: RememberedLaunch["secrets"], env: Context["env"]): SubprocessPlan | undefined {
  if (secrets.length === 0) return bare;
  if (secrets.some((s) => !env[s.name])) return undefined;
  return mapStrings(bare, (s) => secrets.reduce((out, v) => (out.includes(v.standIn) ? out.split(v.standIn).join(env[v.name]!) : out), s)) as SubprocessPlan;
}

/** A JSON value with every string (keys aside) passed through `f`. */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    // defineProperty: a key such as "__proto__" (an environment variable's name) stays a key.
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: mapStrings(v, f), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/**
 * The remembered launch of this call, when every input it stands on still holds: the same project
 * root, every chain input with its stat identity, every run directory intact. Reads and stats;
 * changes nothing.
 */
export function recallLaunch(ctx: Pick<Context, "cwd" | "env" | "cacheDir">, toolId: string, mode: SandboxMode): RememberedLaunch | undefined {
  const text = readMemo(ctx.cacheDir, "launches", launchKey(ctx, toolId, mode));
  if (text === undefined) return undefined;
  let memo: RememberedLaunch;
  try {
    memo = JSON.parse(text) as RememberedLaunch;
  } catch {
    return undefined;
  }
  if (!isRememberedLaunch(memo) || memo.bare.tool !== toolId) return undefined;
  const bare = restoreSecrets(memo.bare, memo.secrets, ctx.env);
  if (!bare) return undefined;
  try {
    if (findProjectRoot(ctx.cwd) !== memo.root) return undefined;
  } catch {
    return undefined;
  }
  if (!allUnchanged(memo.watch) || !sameLookups(memo.lookups)) return undefined;
  for (const run of memo.runDirs) if (intactRunDir(ctx.cacheDir, run.name, run.files) === undefined) return undefined;
  return { ...memo, bare };
}

function isRememberedLaunch(v: unknown): v is RememberedLaunch {
  const m = v as RememberedLaunch;
  return (
    isRecord(m) &&
    m.format === LAUNCH_FORMAT &&
    typeof m.root === "string" &&
    Array.isArray(m.watch) &&
    m.watch.every((w) => Array.isArray(w) && w.length === 5 && typeof w[0] === "string") &&
    Array.isArray(m.runDirs) &&
    Array.isArray(m.lookups) &&
    m.lookups.every((l) => Array.isArray(l) && l.length === 3 && typeof l[0] === "string" && typeof l[1] === "string" && (typeof l[2] === "string" || l[2] === null)) &&
    m.runDirs.every((r) => isRecord(r) && typeof r.name === "string" && Array.isArray(r.files)) &&
    isRecord(m.tool) &&
    typeof m.tool.id === "string" &&
    isRecord(m.schema) &&
    isRecord(m.bare) &&
    m.bare.primitive === "subprocess" &&
    isRecord(m.bare.subprocess) &&
    Array.isArray(m.bare.subprocess.argv) &&
    isRecord(m.facts) &&
    Array.isArray(m.facts.runDirs) &&
    Array.isArray(m.secrets) &&
    m.secrets.every((s) => isRecord(s) && typeof s.name === "string" && typeof s.standIn === "string" && s.standIn.length > 0)
  );
}
