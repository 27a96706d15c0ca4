// exec/ owns running a verified tool: parameters, the pure plan (plan.ts, http-plan.ts, sandbox
// plans), chain verification and run directories, and the two primitives that only run plans
// (subprocess.ts, http.ts). It must not print (ui/ does) or write the lockfile.
export { buildPlan } from "./plan.ts";
export { redactError, runPrepared } from "./run-io.ts";
export { prepareSandbox, probeSandbox } from "./sandbox-io.ts";
export { DEFAULT_LIMITS, mergeLimits, resolveLimits } from "./run-limits.ts";
