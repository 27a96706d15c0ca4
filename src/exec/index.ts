// exec/ owns running a verified tool: parameters, the pure plan (plan.ts, http-plan.ts, sandbox
// plans), chain verification, run directories and the run itself, and the two primitives that only
// run plans (subprocess.ts, http.ts). Preparing a run is the use case ops/prepare-exec-io.ts. It
// must not print (ui/ does) or write the lockfile.
