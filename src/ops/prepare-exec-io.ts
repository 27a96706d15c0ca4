// From a tool id and the call's parameter sources to a verified, fully resolved plan: verify the
// chain, validate the parameters, materialise the verified files into run directories and build
// the plan (as run, and as shown with secrets redacted). Nothing runs here.
import { join } from "node:path";
import { runDirName } from "../cache/cache-layout.ts";
import type { Store } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { type ParamTool, buildParametersSchemaLazily, resolveCallParams, withStdinSource } from "../exec/call-params.ts";
import { type Lookup, planHost } from "../exec/host-io.ts";
import { chainDeclarations, gatherLaunchFacts, settleLaunch } from "../exec/launch-io.ts";
import { mergeConfigs } from "../exec/merge.ts";
import { type LinkInput, type PlanInput, type Plans, type SubprocessPlan, assertCallable, buildPlan, buildPlans, shownTwin } from "../exec/plan.ts";
import { RUNS_DIR, ensureRunDir } from "../exec/rundir-io.ts";
import { declaresPackages } from "../deps/requirements.ts";
import { KiwiError } from "../errors.ts";
import { type Tool, withConfig } from "../manifest/model.ts";
import type { ExecRequest, PreparedExec } from "../exec/prepared.ts";
import { makeRedactor } from "../exec/template.ts";
import { memoKey, readMemo, writeMemo } from "../exec/memo-io.ts";
import type { ParametersSchema } from "../validate/parameters.ts";
import { type VerifiedChain, verifyChain } from "../exec/chain-verify-io.ts";
import type { HostPolicy } from "../exec/net-policy.ts";
import { type RememberedLaunch, rememberLaunch } from "../exec/launch-memo-io.ts";


/** Verifies, validates and plans one call of `toolId`. */
export type { ExecRequest, PreparedExec };

export function prepareExec(ctx: Context, req: ExecRequest): PreparedExec {
  const chain = verifyChain(ctx, req.toolId, { unlocked: req.unlocked, strict: req.strict });
  const leaf = chain.links[0]!;
  if (!req.server) assertCallable(leaf.tool);
  const primitive = chain.links[chain.links.length - 1]!.tool.id;
  const mergedStdin = mergeConfigs([...chain.links].reverse().map((l) => l.tool.config)).stdin;
  let schema: Record<string, unknown> | undefined;
  const params = resolveCallParams(leaf.tool, withStdinSource(req.sources, mergedStdin, req.readStdin), (tool) => {
    const built = memoParametersSchema(ctx.cacheDir, tool);
    if (built.ok) schema = built.schema;
    return built;
  });
  // The store is opened only when a run directory must be built or packages linked (its modules then load).
  let opened: Store | undefined;
  const store = () => (opened ??= (require("../cache/store-io.ts") as typeof import("../cache/store-io.ts")).openStore(ctx.cacheDir, ctx.env));
  const cleanups: (() => void)[] = [];
  // What a replay must find intact (exec/launch-memo-io.ts); a link with packages is never replayed.
  const runDirs: RememberedLaunch["runDirs"] = [];
  // Said as kiwi install says it: a corrupt blob a run directory needed, evicted and stored again.
  const evictions: string[] = [];
  // An mcp_tool's chain plans its server's launch, but the call is made over MCP (ops/exec-io.ts);
  // a server's launch planned for kiwi mcp is no call either: remembered under the server's id, it
  // would let `kiwi exec <server>` replay what exec refuses to run.
  // A dry run builds no run directory: each planned path's verified source, for what must read one.
  const dryRunSources = new Map<string, string>();
  let replayable = !req.dryRun && !req.server && chain.proof !== undefined && leaf.tool.type !== "mcp_tool";
  if (chain.links.filter((l) => l.packages).length > 1) assertNoPackageConflicts(chain.links);
  const links: LinkInput[] = chain.links.map((l, i) => {
    const hex = l.integrity.slice("sha256:".length);
    // A tool with npm packages runs beside their verified, installed copy (deps/ loads only then).
    const wanted = l.packages || declaresPackages(l.tool);
    if (wanted) replayable = false;
    const packages = wanted ? (require("../exec/packages-io.ts") as typeof import("../exec/packages-io.ts")).linkPackages(store(), l) : undefined;
    let tool = packages?.tool ?? l.tool;
    const files = packages ? [...l.hashed.files, ...packages.files] : l.hashed.files;
    const needsDir = files.length > 0 || (i === 0 && primitive === "subprocess");
    if (!needsDir) return { tool, integrity: l.integrity, runDir: null };
    const dirName = runDirName(hex, packages?.trees);
    let runDir = join(ctx.cacheDir, RUNS_DIR, dirName, "files");
    if (req.dryRun) for (const f of l.tool.files) dryRunSources.set(join(runDir, f.path), f.abs);
    if (!req.dryRun) {
      const byPath = new Map(l.tool.files.map((f) => [f.path, f.abs]));
      const run = ensureRunDir({ cacheDir: ctx.cacheDir, store, integrityHex: dirName, files, ...(packages?.links.length ? { links: packages.links } : {}), sourceOf: (p) => byPath.get(p), subject: l.tool.id });
      if (run.cleanup) {
        cleanups.push(run.cleanup);
        replayable = false;
      }
      for (const e of run.evicted ?? []) evictions.push(`evicted a corrupt cached ${e.kind} sha256:${e.expected.slice(0, 12)} of ${l.tool.id} (it held sha256:${e.actual.slice(0, 12)}) to ${e.quarantined}; restored from the tree`);
      runDir = run.dir;
      runDirs.push({ name: dirName, files: [...files] });
    }
    // Python imports the installed distributions from the run directory's site-packages, and
    // nothing from the user's own (~/.local/lib/python3.x/site-packages, visible without the
    // sandbox): an undeclared import would otherwise resolve there, and its usercustomize.py run.
    if (packages?.python) {
      const site = join(runDir, "site-packages");
      tool = withConfig(tool, (config) => {
        const env = typeof config.env === "object" && config.env !== null ? (config.env as Record<string, unknown>) : {};
        return { ...config, env: { ...env, PYTHONPATH: typeof env.PYTHONPATH === "string" && env.PYTHONPATH !== "" ? `${site}:${env.PYTHONPATH}` : site, PYTHONNOUSERSITE: "1" } };
      });
    }
    return { tool, integrity: l.integrity, runDir };
  });
  const lookups: Lookup[] = [];
  const input: PlanInput = { chain: links, params, env: ctx.env, host: planHost(lookups), mode: chain.mode };
  const warnings = [...chain.warnings, ...evictions];
  let checkUrl = async (_url: URL) => {};
  let netPolicy: HostPolicy | undefined;
  // The plans are built once the machine's facts are in: a bare plan names the programs the launch
  // looks up (and the module it instruments); the final plans are built with what was found.
  const bare = buildPlan(input);
  let built: Plans;
  if (bare.primitive === "subprocess") {
    const launchLinks = chain.links.map((l, i) => ({ ...links[i]!, tool: { ...links[i]!.tool, capabilities: l.tool.capabilities } }));
    const launchCtx = { mode: req.sandbox, env: ctx.env, home: ctx.home, projectRoot: chain.root, cacheDir: ctx.cacheDir, dryRun: req.dryRun, allowAnyHost: req.allowAnyHost, npmPackages: chain.links.some((l) => l.packages?.npm !== undefined), sourceOf: (planned: string) => dryRunSources.get(planned) };
    const shownBare = shownTwin(bare, input) as SubprocessPlan;
    const { facts, cleanup } = gatherLaunchFacts([bare, shownBare], launchLinks, launchCtx);
    try {
      built = buildPlans({ ...input, launch: facts }, { plan: bare, shown: shownBare });
    } catch (error) {
      cleanup();
      throw error;
    }
    const launched = settleLaunch(built.plan as SubprocessPlan, facts, built.notes, cleanup, launchCtx);
    warnings.push(...launched.warnings);
    cleanups.push(launched.cleanup);
    netPolicy = launched.proxy?.policy;
    // A call that warned, goes through kiwi's proxy or runs a WebAssembly module is planned the long way every time.
    if (replayable && schema && warnings.length === 0 && !facts.policy && !facts.proxy && !facts.wasm) {
      const { capabilities, limits, runDirs: dirs, home, projectRoot } = facts;
      rememberLaunch(ctx, req.toolId, req.sandbox, {
        root: chain.root,
        watch: chain.proof!,
        runDirs,
        tool: { id: leaf.tool.id, manifestFile: leaf.tool.manifestFile, parameters: leaf.tool.parameters, pointers: leaf.tool.pointers },
        schema,
        ...(typeof mergedStdin === "string" ? { stdin: mergedStdin } : {}),
        bare,
        // The bare plan's lookups only (the shown twin repeats them).
        lookups: [...new Map(lookups.map((l) => [l.join("\0"), l])).values()],
        facts: { capabilities, limits, runDirs: dirs, home, projectRoot },
      });
    }
  } else {
    // The host policy (and its DNS and IP libraries) load only for HTTP tools.
    const { assertPolicyUsable, describeHostPolicy, parseHostPolicy } = require("../exec/net-policy.ts") as typeof import("../exec/net-policy.ts");
    const { assertUrlAllowedIo } = require("../exec/net-policy-io.ts") as typeof import("../exec/net-policy-io.ts");
    const policy = parseHostPolicy(req.toolId, chainDeclarations(chain.links).capabilities, req.sandbox !== "off");
    assertPolicyUsable(policy, { allowAnyHost: req.allowAnyHost });
    built = buildPlans({ ...input, network: { enforced: policy.enforced, policy: describeHostPolicy(policy) } });
    checkUrl = (url: URL) => assertUrlAllowedIo(url, policy);
    netPolicy = policy.enforced ? policy : undefined;
  }
  const { plan, shown } = built;
  const redact = makeRedactor(plan.secrets.map((n) => ctx.env[n] ?? ""));
  return { plan, shown, redact, checkUrl, chain, warnings, ...(netPolicy ? { netPolicy } : {}), refusals: [], cleanup: () => cleanups.forEach((c) => c()) };
}

/** The tool's parameter schema, memoised by its parameters list (building it loads ajv). */
function memoParametersSchema(cacheDir: string, tool: ParamTool): ParametersSchema {
  const key = memoKey("params", JSON.stringify(tool.parameters ?? null));
  const hit = readMemo(cacheDir, "params", key);
  if (hit !== undefined) return { ok: true, schema: JSON.parse(hit) as Record<string, unknown>, findings: [] };
  const built = buildParametersSchemaLazily(tool);
  if (built.ok) writeMemo(cacheDir, "params", key, JSON.stringify(built.schema));
  return built;
}

/**
 * Two links of one chain that both bring packages must not bring one package at two versions:
 * which one the tool would import depends on lookup order, so it is refused, naming both.
 */
function assertNoPackageConflicts(links: VerifiedChain["links"]): void {
  const seen = new Map<string, { version: string; tool: string }>();
  for (const link of links) {
    const npm = Object.entries(link.packages?.npm?.packages ?? {}).map(([path, e]) => [`npm:${path.slice(path.lastIndexOf("node_modules/") + 13)}`, e.version] as const);
    const pypi = Object.entries(link.packages?.pypi?.packages ?? {}).map(([name, e]) => [`pypi:${name}`, e.version] as const);
    for (const [name, version] of [...npm, ...pypi]) {
      const before = seen.get(name);
      if (before && before.version !== version && before.tool !== link.tool.id) {
        throw new KiwiError("E_DEPS", `the chain of ${links[0]!.tool.id} brings ${name.slice(name.indexOf(":") + 1)} twice: ${before.version} for ${before.tool} and ${version} for ${link.tool.id}`, {
          hint: "make the two tools require compatible versions, so one resolution serves both",
          details: { package: name, tools: [before.tool, link.tool.id] },
        });
      }
      if (!before) seen.set(name, { version, tool: link.tool.id });
    }
  }
}
