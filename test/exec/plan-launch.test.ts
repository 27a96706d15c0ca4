// A subprocess plan built with launch facts (the sandbox probe, the program's real path, the host
// policy) is final and sandboxed, from facts alone: the bubblewrap named here does not exist, so
// nothing could have been spawned or probed.
import { describe, expect, test } from "bun:test";
import type { LaunchFacts } from "../../src/exec/launch-plan.ts";
import { parseHostPolicy } from "../../src/exec/net-policy.ts";
import { type LinkInput, type PlanHost, type PlanInput, type PlanTool, type SubprocessPlan, buildPlan, buildPlans } from "../../src/exec/plan.ts";
import { SANDBOX_UID_BASE, type SandboxProbe } from "../../src/exec/sandbox-plan.ts";
import type { Capability } from "../../src/manifest/model.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";

const builtin = (id: string): PlanTool => builtinTools().find((t) => t.id === id)!;
const host: PlanHost = { which: (cmd) => `/usr/bin/${cmd}`, userAgent: "kiwi/test" };
const RUN = "/cache/runs/aa/files";
const tool: PlanTool = {
  id: "dp",
  version: "1.0.0",
  type: "script",
  config: { entrypoint: "main.py", args: ["{q}"], env: { API_TOKEN: "${API_TOKEN}" } },
  limits: { memoryMb: 256 },
  entrypoint: "main.py",
  manifestFile: ".ai/tools/dp/tool.yaml",
};
const chain: LinkInput[] = [
  { tool, integrity: "sha256:aa", runDir: RUN },
  { tool: builtin("python_runtime"), integrity: "sha256:bb", runDir: null },
  { tool: builtin("subprocess"), integrity: "sha256:cc", runDir: null },
];
const input: PlanInput = { chain, params: { q: "x" }, env: { PATH: "/usr/bin:/bin", HOME: "/home/u", API_TOKEN: "tok-123" }, host, mode: "locked" };
const usable: SandboxProbe = { bwrap: "/nonexistent/bwrap", usable: true, prlimit: "/nonexistent/prlimit", setpriv: "/nonexistent/setpriv", uid: 1000, pid: 4242 };
const cap = (name: string, targets: string[]): Capability => (name.startsWith("net.") ? { name, hosts: targets, pointer: "/capabilities/0" } : { name, paths: targets, pointer: "/capabilities/0" });

function facts(over: Partial<LaunchFacts> = {}): LaunchFacts {
  return {
    mode: "auto",
    probe: usable,
    home: "/home/u",
    projectRoot: "/proj",
    capabilities: [],
    limits: { memoryMb: 256 },
    runDirs: [RUN],
    programs: { "/usr/bin/python3": { resolved: "/usr/bin/python3", realPath: "/usr/bin/python3.12" } },
    ...over,
  };
}

describe("a plan built with launch facts", () => {
  test("is sandboxed by the probe it is given, as run and as shown alike, secrets only in the one run", () => {
    const { plan, shown, notes } = buildPlans({ ...input, launch: facts() }) as { plan: SubprocessPlan; shown: SubprocessPlan; notes: { warnings: string[] } };
    const launch = plan.subprocess.launch;
    expect(launch[0]).toBe("/nonexistent/bwrap");
    expect(launch).toContain("--unshare-all");
    expect(launch.slice(launch.indexOf("--chdir"), launch.indexOf("--chdir") + 2)).toEqual(["--chdir", RUN]);
    expect(launch.slice(launch.indexOf("--") + 1, launch.indexOf("--") + 2)).toEqual(["/nonexistent/prlimit"]);
    expect(launch.slice(-5)).toEqual(["/usr/bin/python3", "-B", "-u", `${RUN}/main.py`, "x"]);
    expect(plan.sandbox).toMatchObject({ mode: "auto", active: true, network: "none" });
    expect(shown.subprocess.launch).toEqual(launch);
    expect(plan.subprocess.env.API_TOKEN).toBe("tok-123");
    expect(shown.subprocess.env.API_TOKEN).toBe("***");
    expect(notes.warnings).toEqual([]);
  });

  test("names the declared fs.write folders for the caller to create, and creates none itself", () => {
    const { plan, notes } = buildPlans({ ...input, launch: facts({ capabilities: [cap("fs.write", ["~/.cache/dp"])] }) });
    expect(notes.writable).toEqual(["/home/u/.cache/dp"]);
    expect((plan as SubprocessPlan).subprocess.launch.join(" ")).toContain("/home/u/.cache/dp");
  });

  test("without a usable sandbox: plain under auto (with the warning), refused under require", () => {
    const broken: SandboxProbe = { ...usable, usable: false, reason: "user namespaces are off" };
    const { plan, notes } = buildPlans({ ...input, launch: facts({ probe: broken }) }) as { plan: SubprocessPlan; notes: { warnings: string[] } };
    expect(plan.subprocess.launch[0]).toBe("/nonexistent/prlimit");
    expect(plan.sandbox?.active).toBe(false);
    expect(notes.warnings.join("\n")).toContain("no sandbox: user namespaces are off");
    expect(() => buildPlans({ ...input, launch: facts({ probe: broken, mode: "require" }) })).toThrow(expect.objectContaining({ code: "E_SANDBOX" }));
  });

  test("a host-filtered tool goes through the proxy named in the facts; under root it runs as a uid of its own", () => {
    const capabilities = [cap("net.outbound", ["api.example.com"])];
    const policy = parseHostPolicy("dp", capabilities, true);
    const proxy = { launch: { socketDir: "/tmp/kiwi-net-1", binary: "/opt/kiwi", hosts: ["api.example.com"], pointers: policy.pointers }, socket: "/tmp/kiwi-net-1/proxy.sock" };
    const plan = buildPlan({ ...input, launch: facts({ capabilities, policy, proxy, probe: { ...usable, uid: 0 } }) }) as SubprocessPlan;
    expect(plan.sandbox).toMatchObject({ network: "filtered", hosts: ["api.example.com"] });
    expect(plan.subprocess.proxy).toEqual({ socket: "/tmp/kiwi-net-1/proxy.sock", uid: SANDBOX_UID_BASE + 4242 });
    expect(plan.subprocess.launch).toContain("/nonexistent/setpriv");
  });

  test("a program the facts say cannot start is refused by name", () => {
    const programs = { "/usr/bin/python3": { resolved: "/usr/bin/python3", problem: "it does not exist" } };
    expect(() => buildPlans({ ...input, launch: facts({ programs }) })).toThrow("cannot start /usr/bin/python3 for dp: it does not exist");
  });

  test("without facts the plan is bare: it launches its argv, with no sandbox account", () => {
    const plan = buildPlan(input) as SubprocessPlan;
    expect(plan.subprocess.launch).toEqual(plan.subprocess.argv);
    expect(plan.sandbox).toBeUndefined();
  });
});
