// From a verified plan whose command is `kiwi:wasi` to the launch of kiwi's WASI host: checks the
// module (it is wasm, imports only WASI), instruments it with fuel and the memory cap (once: the
// result is cached by the digest of the published module and the limits, and checked against its
// own digest on every use), and names the directories the module may open.
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { KiwiError } from "../errors.ts";
import { DEFAULT_LIMITS } from "../manifest/run-limits.ts";
import { expandDeclaredPath } from "../manifest/capability-path.ts";
import { sha256Hex } from "../integrity/digest.ts";
import type { Capability, Limits } from "../manifest/model.ts";
import { isCompiled } from "../self.ts";
import { DEFAULT_FUEL, type WasmLimits, assertRunnable, readModuleInfo } from "./module-info.ts";

/** Bumped when instrument.ts changes what it writes, so old cache entries are not reused. */
const INSTRUMENTATION_VERSION = 2;

export interface WasmLaunchInput {
  toolId: string;
  /** The plan's argv: `kiwi:wasi`, the module (in its verified run directory), then its arguments. */
  argv: readonly string[];
  capabilities: readonly Capability[];
  limits: Limits;
  cacheDir: string;
  home: string;
  projectRoot: string;
  /** Plan only: nothing is instrumented or written. */
  dryRun: boolean;
  /** In a dry run (no run directory yet), the verified source of the module's planned path. */
  sourceOf?: (planned: string) => string | undefined;
}

export interface WasmLaunch {
  /** Runs the instrumented module on kiwi's WASI host. */
  argv: string[];
  /** Host files a sandbox must show read-only: the instrumented module (and the host file in a checkout). */
  readOnly: string[];
  limits: WasmLimits;
  /** Directories the module may open (WASI preopens), from the chain's fs.read and fs.write. */
  dirs: string[];
  run: WasmRun;
}

export function prepareWasmLaunch(input: WasmLaunchInput): WasmLaunch {
  const [, module, ...args] = input.argv;
  if (module === undefined) {
    throw new KiwiError("E_WASM_INVALID", `${input.toolId} runs on kiwi:wasi but names no module`, { hint: "give the tool an entrypoint ending in .wasm", details: { tool: input.toolId } });
  }
  const limits: WasmLimits = { fuel: input.limits.fuel ?? DEFAULT_FUEL, memoryMb: input.limits.memoryMb ?? DEFAULT_LIMITS.memoryMb };
  let bytes: Uint8Array;
  try {
    // A dry run builds no run directory: the module is read where it was just verified from.
    const source = input.dryRun ? input.sourceOf?.(module) : undefined;
    bytes = readFileSync(source !== undefined && !existsSync(module) ? source : module);
  } catch (error) {
    throw new KiwiError("E_IO", `cannot read the module of ${input.toolId} (${module}): ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { hint: 'run "kiwi install" to restore the verified copy', details: { tool: input.toolId, module } });
  }
  const subject = `${input.toolId}'s module ${basename(module)}`;
  assertRunnable(readModuleInfo(bytes, subject), subject, limits);
  const digest = sha256Hex(bytes);
  const instrumented = join(input.cacheDir, "wasm", `${digest}-f${limits.fuel}-m${limits.memoryMb}-v${INSTRUMENTATION_VERSION}.wasm`);
  const dirs = [...new Set(input.capabilities.filter((c) => c.name === "fs.read" || c.name === "fs.write").flatMap((c) => (c.paths ?? []).map((p) => expandDeclaredPath(p, input.home, input.projectRoot))))];
  const writable = new Set(input.capabilities.filter((c) => c.name === "fs.write").flatMap((c) => (c.paths ?? []).map((p) => expandDeclaredPath(p, input.home, input.projectRoot))));
  // The compiled kiwi is its own WASI host; a checkout runs the host file with bun.
  const script = isCompiled() ? undefined : fileURLToPath(new URL("./wasi-host-io.ts", import.meta.url));
  const host = script ? [process.execPath, script] : [process.execPath, "__wasi"];
  return {
    // A directory only fs.read names is preopened read-only (--read-dir): without a sandbox, the host is what keeps it so.
    argv: [...host, "--fuel", String(limits.fuel), "--memory-mb", String(limits.memoryMb), ...dirs.flatMap((d) => [writable.has(d) ? "--dir" : "--read-dir", d]), "--", instrumented, basename(module), ...args],
    readOnly: [instrumented, ...(script ? [script] : [])],
    limits,
    dirs,
    run: { ...limits, module, digest, instrumented },
  };
}

/** What the run needs to make the instrumented module before it starts (plan.subprocess.wasm). */
export interface WasmRun extends WasmLimits {
  /** The published module, in its verified run directory. */
  module: string;
  /** Its sha256, as checked when the launch was planned. */
  digest: string;
  /** Where the instrumented module is cached (and what the host runs). */
  instrumented: string;
}

/**
 * Instruments once per module and limits (binaryen loads only here); a cached copy is used only
 * while its own digest holds, and the module is instrumented only if it still has the digest the
 * plan checked.
 */
export async function ensureInstrumented(run: WasmRun, toolId: string): Promise<void> {
  const path = run.instrumented;
  const digestFile = `${path}.sha256`;
  const subject = `${toolId}'s module ${basename(run.module)}`;
  if (existsSync(path) && existsSync(digestFile)) {
    try {
      if (sha256Hex(readFileSync(path)) === readFileSync(digestFile, "utf8").trim()) return;
    } catch {
      // Unreadable: instrument again below.
    }
  }
  const bytes = readFileSync(run.module);
  if (sha256Hex(bytes) !== run.digest) {
    throw new KiwiError("E_INTEGRITY_MISMATCH", `${subject} changed after it was verified`, { hint: 'run "kiwi install" to restore the verified copy', details: { tool: toolId, module: run.module } });
  }
  const [{ instrumentModule }, { loadBinaryen }] = await Promise.all([import("./instrument.ts"), import("./binaryen-io.ts")]);
  const binaryen = await loadBinaryen();
  let out: Uint8Array;
  try {
    out = instrumentModule(binaryen, bytes, run);
  } catch (error) {
    throw new KiwiError("E_WASM_INVALID", `${subject} cannot be instrumented with fuel and a memory cap: ${binaryenMessage(error)}`, {
      hint: "check that the module is valid (wasm-validate) and built for wasm32-wasip1",
      cause: error,
    });
  }
  writeFileAtomic(path, out);
  writeFileAtomic(digestFile, `${sha256Hex(out)}\n`);
}

/** What binaryen said: it throws C++ exceptions as objects that are not Errors and may carry no message. */
function binaryenMessage(error: unknown): string {
  const message = typeof error === "object" && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === "string" && message !== "" ? message : "binaryen could not read or rewrite it";
}
