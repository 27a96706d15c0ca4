// Helpers for the sandbox tests: a temp HOME with a planted fake SSH key, a project, a run directory
// holding a real tool, and a runner that spawns a launch plan the way the subprocess primitive does.
import { chmodSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Capability, Limits } from "../../src/manifest/model.ts";
import type { SandboxPlan } from "../../src/exec/sandbox-plan.ts";
import type { SandboxInput } from "../../src/exec/sandbox-io.ts";
import { closeLaunchFiles, openLaunchFiles } from "../../src/exec/launch-files-io.ts";
import { makeTemp, writeTree } from "./tree.ts";

export interface SandboxFixture {
  home: string;
  project: string;
  runDir: string;
  /** Absolute path of the planted fake private key and its content. */
  keyPath: string;
  keySecret: string;
}

/** A temp HOME with `~/.ssh/id_rsa` (mode 0600), a project folder and a run directory with `files`. */
export function sandboxFixture(files: Record<string, string>): SandboxFixture {
  const home = makeTemp("kiwi-sbx-home-");
  const project = makeTemp("kiwi-sbx-project-");
  const keySecret = `FAKE-PRIVATE-KEY-${crypto.randomUUID()}`;
  writeTree(home, { ".ssh/id_rsa": { content: `-----BEGIN OPENSSH PRIVATE KEY-----\n${keySecret}\n`, mode: 0o600 } });
  chmodSync(join(home, ".ssh"), 0o700);
  const runDir = join(home, ".cache", "kiwi", "run", "tool-1");
  mkdirSync(runDir, { recursive: true });
  writeTree(runDir, files);
  return { home, project, runDir, keyPath: join(home, ".ssh", "id_rsa"), keySecret };
}

/** The sandbox input for running `argv` from the fixture's run directory. */
export function sandboxInput(fx: SandboxFixture, argv: string[], capabilities: Capability[] = [], limits: Limits = {}): SandboxInput {
  return {
    toolId: "probe-tool",
    argv,
    runDirs: [fx.runDir],
    cwd: fx.runDir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: fx.home, LANG: "C.UTF-8" },
    capabilities,
    limits,
    home: fx.home,
    projectRoot: fx.project,
  };
}

export interface LaunchResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  killed: boolean;
}

/** Spawns a plan (optionally behind `prefix`, e.g. setpriv) and SIGKILLs it after `killAfterMs`. */
export async function launch(plan: SandboxPlan, opts: { killAfterMs?: number; prefix?: string[]; onTick?: () => void } = {}): Promise<LaunchResult> {
  // The files the sandbox copies in reach bubblewrap as descriptors 3, 4, …, as kiwi passes them.
  const files = openLaunchFiles(plan.files, plan.argv.at(-1) ?? "the sandbox");
  const proc = Bun.spawn([...(opts.prefix ?? []), ...plan.argv], { cwd: opts.prefix ? "/" : plan.cwd, env: plan.env, stdio: ["ignore", "pipe", "pipe", ...files] });
  closeLaunchFiles(files);
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    proc.kill("SIGKILL");
  }, opts.killAfterMs ?? 20_000);
  const ticker = opts.onTick ? setInterval(opts.onTick, 20) : undefined;
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (ticker) clearInterval(ticker);
  return { exitCode: proc.exitCode, signal: proc.signalCode === null ? null : String(proc.signalCode), stdout, stderr, killed };
}

/** Live (non-zombie) processes whose real uid passes `match`, from /proc. */
export function processesOfUid(match: number | ((uid: number) => boolean)): number {
  const test = typeof match === "number" ? (uid: number) => uid === match : match;
  let n = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const status = readFileSync(`/proc/${d}/status`, "utf8");
      if (test(Number(/^Uid:\s+(\d+)/m.exec(status)?.[1])) && !/^State:\s+Z/m.test(status)) n++;
    } catch {
      // the process ended while we looked
    }
  }
  return n;
}

/** The uid passing `match` with the most live processes right now, and how many it has. */
export function busiestUid(match: (uid: number) => boolean): { uid: number; count: number } {
  const counts = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const status = readFileSync(`/proc/${d}/status`, "utf8");
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      if (match(uid) && !/^State:\s+Z/m.test(status)) counts.set(uid, (counts.get(uid) ?? 0) + 1);
    } catch {
      // the process ended while we looked
    }
  }
  let best = { uid: -1, count: 0 };
  for (const [uid, count] of counts) if (count > best.count) best = { uid, count };
  return best;
}

/** Polls until no live process of `uid` remains or `maxMs` passes; returns how many are left. */
export async function waitUidGone(match: number | ((uid: number) => boolean), maxMs = 15_000): Promise<number> {
  const deadline = Date.now() + maxMs;
  let left = processesOfUid(match);
  while (left > 0 && Date.now() < deadline) {
    await Bun.sleep(20);
    left = processesOfUid(match);
  }
  return left;
}

/** A capability as the manifest normaliser produces it. */
export const cap = (name: string, targets?: string[]): Capability =>
  name.startsWith("net.") ? { name, hosts: targets ?? [], pointer: "/requires/0" } : { name, paths: targets ?? [], pointer: "/requires/0" };
