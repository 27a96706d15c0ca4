// The subprocess primitive: runs a SubprocessPlan through Bun.spawn and nothing else. The child
// leads its own process group (a new session), so a timeout, an output flood or kiwi's own
// interruption stops the whole group, grandchildren included: SIGTERM first, SIGKILL after a grace.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { KiwiError } from "../errors.ts";
import { INTERRUPT_SIGNALS, interruptedError, signalNumber } from "./interrupt.ts";
import { closeLaunchFiles, openLaunchFiles } from "./launch-files-io.ts";
import type { SubprocessPlan } from "./plan.ts";
import { signalFromSandboxExit } from "./sandbox-plan.ts";
import { WASM_TRAP_EXIT, WASM_VERDICT_FD_ENV } from "../wasm/wasi-command.ts";
import { type WasmEnding, howItEnded, openVerdict } from "../wasm/verdict-io.ts";

/**
 * Where the tool's output goes, chunk by chunk, as it arrives. A sink answers "closed" when its
 * reader has gone away (`kiwi exec … | head`): kiwi then stops reading that stream, so the tool's
 * own next write to it fails (SIGPIPE, or EPIPE where it ignores the signal) as it would without kiwi.
 */
export type SinkResult = void | "closed";
export interface OutputSinks {
  stdout(chunk: Uint8Array): SinkResult | Promise<SinkResult>;
  stderr(chunk: Uint8Array): SinkResult | Promise<SinkResult>;
  /** The charset stdout's bytes are in, when known (an http_client body's declared charset); else UTF-8. */
  charset?(label: string): void;
}

export interface SubprocessOutcome {
  /** The tool's exit code, when it exited by itself. */
  exitCode: number | null;
  /** The signal that ended it (`SIGKILL`…), when one did. */
  signal: string | null;
  timedOut: boolean;
  /** Output passed the cap and kiwi stopped the group. */
  outputCapped: boolean;
  /** kiwi got SIGINT/SIGTERM/SIGHUP and passed it on. */
  interruptedBy: string | null;
  /** SIGKILL was needed after SIGTERM's grace ran out. */
  escalated: boolean;
  outputBytes: number;
  /** A reader of kiwi's stdout or stderr went away, and kiwi stopped reading that stream of the tool's. */
  readerGone?: boolean;
  /** The limit or trap kiwi's WASI host says ended a WebAssembly run (its verdict descriptor), if one did. */
  wasmEnding?: WasmEnding;
}


/** The bytes a subprocess gets on stdin in `json` mode: the params object and a newline. */
export function renderStdinParams(params: Record<string, unknown>): string {
  return `${JSON.stringify(params)}\n`;
}

/** Runs the plan's launch argv and streams its output; resolves when the group is gone. */
export async function runSubprocess(plan: SubprocessPlan, sinks: OutputSinks): Promise<SubprocessOutcome> {
  const spec = plan.subprocess;
  const { timeoutMs, killGraceMs, outputBytes: cap } = plan.limits;
  let proc: ReturnType<typeof Bun.spawn<"pipe" | "ignore" | "inherit" | Uint8Array, "pipe", "pipe">>;
  const stdin = spec.stdin === "json" ? new TextEncoder().encode(renderStdinParams(plan.params)) : spec.stdin === "inherit" ? "inherit" : "ignore";
  // The files the sandbox copies in reach bubblewrap as descriptors 3, 4, … (launch-files-io.ts).
  const files = openLaunchFiles(spec.files, plan.tool);
  // kiwi's WASI host says which limit ended a run on one more descriptor, after those.
  const verdict = spec.wasm ? openVerdict(dirname(spec.wasm.instrumented)) : undefined;
  try {
    proc = Bun.spawn(spec.launch, {
      cwd: spec.cwd,
      env: verdict ? { ...spec.env, [WASM_VERDICT_FD_ENV]: String(3 + files.length) } : spec.env,
      stdio: [stdin, "pipe", "pipe", ...files, ...(verdict ? [verdict.fd] : [])],
      // A new session makes the child a process-group leader: kill(-pid) reaches every descendant.
      detached: true,
    }) as typeof proc;
  } catch (error) {
    verdict?.discard();
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    if (code === "E2BIG") throw tooBig(plan, error);
    // spawn says ENOENT for a missing working folder as for a missing program: name the one it is.
    if ((code === "ENOENT" || code === "ENOTDIR") && !isDirectory(spec.cwd)) {
      throw new KiwiError("E_EXEC_FAILED", `could not start ${plan.tool}: its working folder ${spec.cwd} does not exist in its run directory`, {
        hint: "config.cwd must name a folder that holds some of the tool's files (a run directory holds only the files the lock records); fix it or leave it out",
        cause: error,
        details: { argv0: spec.argv[0], cwd: spec.cwd },
      });
    }
    throw new KiwiError("E_EXEC_FAILED", `could not start ${spec.launch[0]} for ${plan.tool}: ${code}`, {
      hint: code === "EACCES" ? "the file is not executable; set its execute bit and run \"kiwi lock\"" : "check that the command exists and is executable",
      cause: error,
      details: { argv0: spec.argv[0], cwd: spec.cwd },
    });
  } finally {
    closeLaunchFiles([...files, ...(verdict ? [verdict.fd] : [])]);
  }
  const pgid = proc.pid;
  const outcome: SubprocessOutcome = { exitCode: null, signal: null, timedOut: false, outputCapped: false, interruptedBy: null, escalated: false, outputBytes: 0 };
  let escalation: ReturnType<typeof setTimeout> | undefined;
  const stopGroup = () => {
    if (escalation) return;
    signalGroup(pgid, "SIGTERM");
    escalation = setTimeout(() => {
      if (groupAlive(pgid)) {
        outcome.escalated = true;
        signalGroup(pgid, "SIGKILL");
      }
    }, killGraceMs);
  };
  const timer = setTimeout(() => {
    outcome.timedOut = true;
    stopGroup();
  }, timeoutMs);
  const handlers = INTERRUPT_SIGNALS.map((sig) => {
    const handler = () => {
      // A second interruption does not wait for the grace.
      if (outcome.interruptedBy) {
        signalGroup(pgid, "SIGKILL");
        return;
      }
      outcome.interruptedBy = sig;
      // The tool gets the signal itself (its handler may clean up). Unsandboxed it leads kiwi's
      // process group. In bubblewrap's new session it is not in that group, and bubblewrap would
      // die of the signal and take the tool with it, so the processes below bubblewrap get it
      // instead. If the tool is still there after the grace, it is stopped as on a timeout.
      if (plan.sandbox?.active) signalDescendants(pgid, sig, "bwrap");
      else signalGroup(pgid, sig);
      if (!escalation) escalation = setTimeout(() => {
        escalation = undefined;
        stopGroup();
      }, killGraceMs);
    };
    process.on(sig, handler);
    return [sig, handler] as const;
  });
  // The reader of kiwi's stdout or stderr went away (`kiwi exec … | head -2`): the tool learns it
  // as a writer to a closed pipe does, by SIGPIPE (inside bubblewrap, below it, as interruptions
  // are passed on), and kiwi closes its end so a tool that ignores the signal gets EPIPE on its next
  // write. Bun's pipes are socket pairs, where a writer asleep on a full buffer when the reader
  // closes gets ECONNRESET and no SIGPIPE: the signal is what makes `yes` end as it does in a shell.
  const readerGone = () => {
    if (outcome.readerGone) return;
    outcome.readerGone = true;
    if (plan.sandbox?.active) signalDescendants(pgid, "SIGPIPE", "bwrap");
    else signalGroup(pgid, "SIGPIPE");
  };
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (c: Uint8Array) => SinkResult | Promise<SinkResult>) => {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (outcome.outputCapped) continue; // drain so the child never blocks on a full pipe
        const room = cap - outcome.outputBytes;
        const chunk = value.byteLength > room ? value.subarray(0, room) : value;
        outcome.outputBytes += chunk.byteLength;
        if (chunk.byteLength > 0 && (await sink(chunk)) === "closed") {
          readerGone();
          await reader.cancel().catch(() => {});
          break;
        }
        if (value.byteLength > room) {
          outcome.outputCapped = true;
          stopGroup();
        }
      }
    } finally {
      reader.releaseLock();
    }
  };
  const pumps = Promise.all([pump(proc.stdout, (c) => sinks.stdout(c)), pump(proc.stderr, (c) => sinks.stderr(c))]);
  try {
    await proc.exited;
    outcome.exitCode = proc.signalCode ? null : proc.exitCode;
    outcome.signal = proc.signalCode ? String(proc.signalCode) : null;
    // Inside bubblewrap a signal death reaches kiwi as bwrap's exit code 128+N.
    const sandboxSignal = plan.sandbox?.active && outcome.exitCode !== null ? signalFromSandboxExit(outcome.exitCode) : null;
    if (sandboxSignal) [outcome.exitCode, outcome.signal] = [null, sandboxSignal];
    // Whatever the tool left running in its group is stopped too: nothing outlives the call.
    if (groupAlive(pgid)) {
      stopGroup();
      await waitGroupGone(pgid, killGraceMs + 1000);
    }
    // A descendant that left the group (setsid) may still hold the pipes; do not wait on it forever.
    await raceTimeout(pumps, killGraceMs + 1000);
  } finally {
    clearTimeout(timer);
    if (escalation) clearTimeout(escalation);
    for (const [sig, handler] of handlers) process.off(sig, handler);
    if (spec.wasm) {
      const ending = howItEnded(verdict, outcome.exitCode);
      if (ending) outcome.wasmEnding = ending;
    }
  }
  return outcome;
}

/** Linux refuses one argument longer than this (MAX_ARG_STRLEN), and argv plus environment past ARG_MAX. */
const MAX_ARG_BYTES = 128 * 1024;

/** E2BIG, said as what it is: which argument is too long, and where large values belong. */
function tooBig(plan: SubprocessPlan, cause: unknown): KiwiError {
  const sizes = plan.subprocess.argv.map((a) => Buffer.byteLength(a));
  const largest = sizes.indexOf(Math.max(...sizes));
  const total = sizes.reduce((n, s) => n + s + 1, 0) + Object.entries(plan.subprocess.env).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v) + 2, 0);
  const which = sizes[largest]! > MAX_ARG_BYTES ? `argument ${largest} is ${sizes[largest]} bytes (the OS limit for one argument is ${MAX_ARG_BYTES})` : `its arguments and environment are ${total} bytes`;
  return new KiwiError("E_EXEC_FAILED", `could not start ${plan.tool}: ${which}, which exceeds the OS limit (E2BIG)`, {
    hint: "pass large values on stdin (the default for parameters: leave them out of config.args), not as command-line arguments",
    cause,
    details: { tool: plan.tool, argument: largest, bytes: sizes[largest], totalBytes: total },
  });
}

/**
 * Maps an outcome to kiwi's exit code: the tool's own code, 128+N for a signal; a timeout, an
 * output flood or a signal death becomes an E_EXEC_FAILED error that says so.
 */
export function resolveOutcome(plan: SubprocessPlan, outcome: SubprocessOutcome): number {
  const tool = plan.tool;
  const how = outcome.escalated ? `SIGTERM, then SIGKILL after ${plan.limits.killGraceMs} ms` : "SIGTERM";
  if (outcome.timedOut) {
    throw new KiwiError("E_EXEC_FAILED", `${tool} timed out after ${plan.limits.timeoutMs} ms; its process group got ${how}`, {
      hint: `raise ${plan.limits.timeoutField ?? "limits.timeout_ms (or config.timeout, in seconds)"} in the tool's manifest if it needs longer`,
      details: { tool, timeoutMs: plan.limits.timeoutMs, escalated: outcome.escalated },
    });
  }
  if (outcome.outputCapped) {
    throw new KiwiError("E_EXEC_FAILED", `${tool} wrote more than ${plan.limits.outputBytes} bytes to stdout and stderr; kiwi stopped it (${how})`, {
      hint: "raise limits.output_bytes in the tool's manifest, or make the tool write less",
      details: { tool, outputBytes: plan.limits.outputBytes },
    });
  }
  if (outcome.interruptedBy) {
    // Interrupted by the user (or a supervisor): the tool's own outcome is beside the point.
    throw interruptedError(tool, outcome.interruptedBy, `passed it on to the tool${outcome.escalated || outcome.signal === "SIGKILL" ? ", which had to be killed" : ""}`, { toolExitCode: outcome.exitCode, toolSignal: outcome.signal });
  }
  // The host's verdict, not its status: a module may exit 250 or 251 itself.
  if (plan.subprocess.wasm && outcome.wasmEnding && "trap" in outcome.wasmEnding) {
    // The host's status for a trap is wasmtime's (134): through bubblewrap it would read as SIGABRT.
    const { trap } = outcome.wasmEnding;
    throw new KiwiError("E_EXEC_FAILED", `${tool}'s WebAssembly module trapped: ${trap}`, {
      hint: "a trap is the module's own failure (unreachable code, an out-of-bounds access, a call stack too deep); fix the module or what it was given",
      exitCode: WASM_TRAP_EXIT,
      details: { tool, trap, exitCode: WASM_TRAP_EXIT },
    });
  }
  if (plan.subprocess.wasm && outcome.wasmEnding && "limit" in outcome.wasmEnding) {
    const { fuel, memoryMb } = plan.subprocess.wasm;
    const which = outcome.wasmEnding.limit;
    throw new KiwiError(
      "E_WASM_LIMIT",
      which === "fuel" ? `${tool} ran out of fuel: its limit is ${fuel} function entries, loop iterations and returns` : `${tool} tried to grow its linear memory past its limit of ${memoryMb} MiB`,
      {
        hint: which === "fuel" ? "raise runtime_config.fuel_limit (limits.fuel) if the work is legitimate, or look for a loop that never ends" : "raise runtime_config.max_memory_mb (limits.memory_mb) if the module really needs more",
        details: { tool, limit: which, ...(which === "fuel" ? { fuel } : { memoryMb }) },
      },
    );
  }
  // Its reader gone, the tool died of SIGPIPE on its next write, as `yes | head -2` ends: kiwi
  // ends as that writer does in a shell, with 128 + 13 and nothing to report.
  if (outcome.signal === "SIGPIPE" && outcome.readerGone) return 128 + (signalNumber("SIGPIPE") ?? 13);
  if (outcome.signal) {
    const number = signalNumber(outcome.signal) ?? 0;
    const exitCode = 128 + number;
    const why = outcome.interruptedBy ? ` after kiwi passed on ${outcome.interruptedBy}` : "";
    throw new KiwiError("E_EXEC_FAILED", `${tool} was killed by ${outcome.signal} (signal ${number})${why}`, {
      hint: signalHint(outcome.signal, plan),
      exitCode,
      details: { tool, signal: outcome.signal, exitCode },
    });
  }
  return outcome.exitCode ?? 1;
}

function signalHint(signal: string, plan: SubprocessPlan): string {
  const cpu = plan.limits.cpuSeconds;
  if (signal === "SIGXCPU") return "the tool may have hit its CPU limit (limits.cpu_seconds)";
  if (signal === "SIGKILL") return `SIGKILL comes from the hard CPU limit${cpu !== undefined ? ` (${cpu} s + 1)` : ""}, the kernel's out-of-memory killer, or another process`;
  return "the tool crashed or was killed; its stderr above may say why";
}

/** Sends `signal` to every live descendant of `pid` (found through /proc) whatever its session, except processes named `skip`. */
function signalDescendants(pid: number, signal: string, skip: string): void {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return;
  }
  const children = new Map<number, number[]>();
  for (const name of names) {
    if (name.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after the command name (which may hold spaces and parentheses): state, ppid, ...
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const child = queue.shift()!;
    try {
      if (readFileSync(`/proc/${child}/comm`, "utf8").trim() !== skip) process.kill(child, signal);
    } catch {
      // Gone, or not ours to signal.
    }
    queue.push(...(children.get(child) ?? []));
  }
}

function signalGroup(pgid: number, signal: string): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** True while a process of the group is running (zombies waiting for a reaper do not count). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return hasLiveMember(pgid);
}

/**
 * Scans /proc for a member of the group that is not a zombie. An orphaned zombie keeps a group
 * "existing" until init reaps it, which some inits do lazily; where /proc is absent, assume alive.
 */
function hasLiveMember(pgid: number): boolean {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const name of names) {
    if (name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after the parenthesised command: state, ppid, pgrp, …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

async function raceTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

async function waitGroupGone(pgid: number, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  for (let wait = 5; groupAlive(pgid) && Date.now() < deadline; wait = Math.min(wait * 2, 100)) await Bun.sleep(wait);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
