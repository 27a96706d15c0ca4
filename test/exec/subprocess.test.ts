// The subprocess primitive against real processes: exit codes, streaming, limits, and the
// process-group kill that reaches grandchildren ignoring SIGTERM.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type PlanTool, type SubprocessPlan, buildPlan, buildPlans } from "../../src/exec/plan.ts";
import { planHost } from "../../src/exec/host-io.ts";
import { gatherLaunchFacts } from "../../src/exec/launch-io.ts";
import { resolveOutcome, runSubprocess } from "../../src/exec/subprocess.ts";
import type { Limits } from "../../src/manifest/model.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const subprocess = builtinTools().find((t) => t.id === "subprocess")!;

/** A plan that runs `command args…` straight on the subprocess primitive. */
function plan(command: string, args: string[], limits: Limits = {}, params: Record<string, unknown> = {}, config: Record<string, unknown> = {}): SubprocessPlan {
  const tool: PlanTool = { id: "t", version: "1.0.0", type: "native", config: { command, args, ...config }, limits, manifestFile: ".ai/tools/t.yaml" };
  const runDir = makeTemp("kiwi-run-");
  const chain = [{ tool, integrity: null, runDir }, { tool: subprocess, integrity: null, runDir: null }];
  const input = { chain, params, env: { PATH: process.env.PATH, HOME: "/nonexistent-home", SECRET: "leak" }, host: planHost(), mode: "unlocked" as const };
  // Sandbox off: these tests are about the primitive; prlimit still applies the limits.
  const { facts } = gatherLaunchFacts([buildPlan(input) as SubprocessPlan], chain, { mode: "off", env: process.env, home: "/nonexistent-home", projectRoot: runDir });
  return buildPlans({ ...input, launch: facts }).plan as SubprocessPlan;
}

function collect() {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString("utf8");
  return { sinks: { stdout: (c: Uint8Array) => void out.push(c), stderr: (c: Uint8Array) => void err.push(c) }, stdout: () => text(out), stderr: () => text(err), bytes: () => out.reduce((n, c) => n + c.byteLength, 0) };
}

/** The files under `dir` this process holds open. */
function openUnder(dir: string): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(`${dir}/`) ? [target] : [];
    } catch {
      return []; // closed while listed
    }
  });
}

/** Running (a zombie awaiting its reaper has already stopped). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return false;
  }
}

describe("the subprocess primitive", () => {
  test("passes the tool's exit code through and streams stdout and stderr", async () => {
    const p = plan("bash", ["-c", "echo out; echo err >&2; exit 3"]);
    const io = collect();
    const outcome = await runSubprocess(p, io.sinks);
    expect(resolveOutcome(p, outcome)).toBe(3);
    expect(io.stdout()).toBe("out\n");
    expect(io.stderr()).toBe("err\n");
  });

  test("gives the parameters as JSON on stdin, runs in the run directory with a minimal environment", async () => {
    const p = plan("bash", ["-c", 'cat; pwd; env | sort | grep -v "^_=" | grep -v "^PWD=\\|^SHLVL=\\|^OLDPWD="'], {}, { city: "Oslo" });
    const io = collect();
    expect(resolveOutcome(p, await runSubprocess(p, io.sinks))).toBe(0);
    const lines = io.stdout().trim().split("\n");
    expect(lines[0]).toBe('{"city":"Oslo"}');
    expect(lines[1]).toBe(p.subprocess.cwd);
    expect(lines.slice(2).map((l) => l.split("=")[0])).toEqual(["HOME", "PATH"]);
  });

  test("stdin: none gives the tool an empty stdin", async () => {
    const p = plan("bash", ["-c", "wc -c"], {}, { a: 1 }, { stdin: "none" });
    const io = collect();
    await runSubprocess(p, io.sinks);
    expect(io.stdout().trim()).toBe("0");
  });

  test("a sink whose reader went away passes it on: the endless writer dies of SIGPIPE and kiwi ends as a shell's writer does (141, no error)", async () => {
    const p = plan("yes", [], { timeoutMs: 60_000 });
    let chunks = 0;
    const outcome = await runSubprocess(p, { stdout: () => (++chunks > 2 ? "closed" : undefined), stderr: () => {} });
    expect([outcome.readerGone, outcome.signal, outcome.timedOut]).toEqual([true, "SIGPIPE", false]);
    expect(resolveOutcome(p, outcome)).toBe(141);
  });

  test("a tool that ignores SIGPIPE learns from its next write (EPIPE), and its own exit code is kiwi's", async () => {
    const p = plan("python3", ["-c", "import sys\ntry:\n  while True: sys.stdout.write('y' * 4096)\nexcept OSError as e:\n  sys.stderr.write(type(e).__name__); sys.exit(5)"], { timeoutMs: 60_000 });
    const err: string[] = [];
    const outcome = await runSubprocess(p, { stdout: () => "closed", stderr: (c) => void err.push(Buffer.from(c).toString()) });
    expect(outcome.readerGone).toBe(true);
    expect(resolveOutcome(p, outcome)).toBe(5);
    expect(err.join("")).toMatch(/BrokenPipeError|ConnectionResetError/);
  });

  test("a hanging tool is stopped at its timeout and reported as such", async () => {
    const p = plan("sleep", ["30"], { timeoutMs: 300 });
    const outcome = await runSubprocess(p, collect().sinks);
    expect(outcome.timedOut).toBe(true);
    expect(outcome.escalated).toBe(false);
    expect(() => resolveOutcome(p, outcome)).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", message: "t timed out after 300 ms; its process group got SIGTERM" }));
  });

  test("a timeout reaches grandchildren that ignore SIGTERM: SIGKILL to the whole group after the grace", async () => {
    const p = plan("bash", ["-c", "trap '' TERM; (trap '' TERM; exec sleep 60) & echo $!; wait; wait"], { timeoutMs: 500 });
    const io = collect();
    const outcome = await runSubprocess(p, io.sinks);
    const grandchild = Number(io.stdout().trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(outcome.timedOut).toBe(true);
    expect(outcome.escalated).toBe(true);
    expect(alive(grandchild)).toBe(false);
    expect(() => resolveOutcome(p, outcome)).toThrow(expect.objectContaining({ message: "t timed out after 500 ms; its process group got SIGTERM, then SIGKILL after 2000 ms" }));
  });

  test("a tool that floods stdout is stopped at the output cap; exactly the cap is forwarded", async () => {
    const p = plan("yes", ["flood"], { outputBytes: 100_000 });
    const io = collect();
    const outcome = await runSubprocess(p, io.sinks);
    expect(outcome.outputCapped).toBe(true);
    expect(io.bytes()).toBe(100_000);
    expect(() => resolveOutcome(p, outcome)).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining("wrote more than 100000 bytes") }));
  });

  test("death by a signal is reported as such, with exit code 128+N", async () => {
    const p = plan("bash", ["-c", "kill -SEGV $$"]);
    const outcome = await runSubprocess(p, collect().sinks);
    expect(outcome.signal).toBe("SIGSEGV");
    expect(() => resolveOutcome(p, outcome)).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", exitCode: 139, message: "t was killed by SIGSEGV (signal 11)" }));
  });

  test("processes the tool leaves behind are stopped when it exits", async () => {
    const p = plan("bash", ["-c", "sleep 60 & echo $!"]);
    const io = collect();
    expect(resolveOutcome(p, await runSubprocess(p, io.sinks))).toBe(0);
    const left = Number(io.stdout().trim());
    expect(left).toBeGreaterThan(0);
    expect(alive(left)).toBe(false);
  });

  test("a memory limit is applied through prlimit", async () => {
    const p = plan("python3", ["-c", "bytearray(512 * 1024 * 1024)"], { memoryMb: 128 });
    expect(p.subprocess.launch[0]).toEndWith("prlimit");
    const io = collect();
    expect(resolveOutcome(p, await runSubprocess(p, io.sinks))).toBe(1);
    expect(io.stderr()).toContain("MemoryError");
  });

  test("a CPU limit is applied through prlimit: SIGXCPU at the soft limit", async () => {
    const p = plan("python3", ["-c", "while True: pass"], { cpuSeconds: 1 });
    const outcome = await runSubprocess(p, collect().sinks);
    expect(["SIGXCPU", "SIGKILL"]).toContain(outcome.signal!);
    expect(() => resolveOutcome(p, outcome)).toThrow(expect.objectContaining({ hint: expect.stringMatching(/CPU (time|limit)/) }));
  });

  test("a program that does not exist is refused before any launcher wraps it", () => {
    expect(() => plan("/nonexistent/tool", [])).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", message: "cannot start /nonexistent/tool for t: it does not exist" }));
  });

  test("a spawn failure of a bare plan is E_EXEC_FAILED naming the program", async () => {
    const p = plan("true", []);
    p.subprocess.launch = ["/nonexistent/tool"];
    await expect(runSubprocess(p, collect().sinks)).rejects.toMatchObject({ code: "E_EXEC_FAILED", message: expect.stringContaining("could not start") });
  });

  test("a working folder that does not exist is named as such, not as the program missing (spawn says ENOENT for both)", async () => {
    const p = plan("true", []);
    p.subprocess.cwd = join(makeTemp("kiwi-cwd-"), "nowhere");
    await expect(runSubprocess(p, collect().sinks)).rejects.toMatchObject({
      code: "E_EXEC_FAILED",
      message: `could not start t: its working folder ${p.subprocess.cwd} does not exist in its run directory`,
      details: { cwd: p.subprocess.cwd },
    });
  });

  test("hands the launch's files over as descriptors 3, 4, … in order, and keeps none of them open", async () => {
    const dir = makeTemp("kiwi-files-");
    writeFileSync(join(dir, "a"), "first\n");
    writeFileSync(join(dir, "b"), "second\n");
    const p = plan("bash", ["-c", "cat <&4; cat <&3"]);
    p.subprocess.files = [join(dir, "a"), join(dir, "b")];
    const io = collect();
    expect(resolveOutcome(p, await runSubprocess(p, io.sinks))).toBe(0);
    expect(io.stdout()).toBe("second\nfirst\n");
    expect(openUnder(dir)).toEqual([]);
  });

  test("a launch file that cannot be opened is E_EXEC_FAILED naming it; nothing starts, nothing stays open", async () => {
    const dir = makeTemp("kiwi-files-");
    writeFileSync(join(dir, "a"), "first\n");
    const marker = join(dir, "started");
    const p = plan("bash", ["-c", `touch ${marker}`]);
    p.subprocess.files = [join(dir, "a"), join(dir, "gone")];
    const thrown = await runSubprocess(p, collect().sinks).catch((e: unknown) => e);
    expect(thrown).toMatchObject({ code: "E_EXEC_FAILED", message: `cannot start t: ${join(dir, "gone")}, which the sandbox gets a copy of, cannot be opened (ENOENT)` });
    expect([existsSync(marker), openUnder(dir)]).toEqual([false, []]);
  });
});
