// kiwi's WASI host: `kiwi __wasi --fuel N --memory-mb M [--dir PATH]… -- <module> <name> [args…]`
// (fuel and memory are woven into the module already; the flags make the command line say so).
// Runs an instrumented module (prepare-io.ts) with WASI preview 1, the declared directories as
// its only preopens and the process environment, inside the sandbox exec sets up. When the module
// traps, the exported counters say whether fuel or the memory cap ended it: the host writes which
// to the descriptor exec names in KIWI_WASI_VERDICT_FD (exec turns it into E_WASM_LIMIT) and exits
// with WASM_EXIT.fuel or WASM_EXIT.memory; a module's own exit status, 250 included, is passed on
// as it is. Self-contained (node: modules only), so a checkout runs it with bun as is.
import { readFileSync, writeSync } from "node:fs";
import { WASI } from "node:wasi";

const EXIT = { fuel: 250, memory: 251, usage: 2, trap: 134 } as const; // wasi-command.ts WASM_EXIT, WASM_TRAP_EXIT
const VERDICT_FD_ENV = "KIWI_WASI_VERDICT_FD"; // wasi-command.ts WASM_VERDICT_FD_ENV

/**
 * Tells exec what ended the run, on the descriptor it opened for that (exit 250 alone could be the
 * module's own): `fuel`, `memory`, or `trap` and the trap's message. False when it could not.
 */
function reportEnd(fd: number | undefined, word: string): boolean {
  if (fd === undefined) return false;
  try {
    writeSync(fd, `${word}\n`);
    return true;
  } catch {
    // exec then takes the status for the module's own.
    return false;
  }
}

type SymlinkImport = (targetPtr: number, targetLen: number, fd: number, linkPtr: number, linkLen: number) => number;
/** WASI's errno for an operation not permitted (what wasmtime answers an absolute link target with). */
const ERRNO_PERM = 63;

/**
 * path_symlink that creates only links which stay inside the folder they are made in: a target
 * that is absolute or climbs with `..` is refused (EPERM) and nothing is written. wasmtime
 * (cap-std) refuses absolute targets and confines only the following of `..`; kiwi's preopens are
 * the user's own folders, which other programs follow links in, so no link leaving them is left
 * behind. A target without `..` resolves below the link's own directory, wherever that is moved.
 */
function confinedSymlink(create: SymlinkImport, memory: () => WebAssembly.Memory | undefined): SymlinkImport {
  return (targetPtr, targetLen, fd, linkPtr, linkLen) => {
    const buffer = memory()?.buffer;
    // Out-of-range pointers are the host's to answer (EFAULT); only a target it could read is judged.
    if (buffer && targetPtr >= 0 && targetLen >= 0 && targetPtr + targetLen <= buffer.byteLength) {
      const target = new TextDecoder().decode(new Uint8Array(buffer, targetPtr, targetLen));
      if (target.startsWith("/") || target.split("/").includes("..")) return ERRNO_PERM;
    }
    return create(targetPtr, targetLen, fd, linkPtr, linkLen);
  };
}

/** Runs the module; resolves to the exit status (a module's proc_exit ends the process itself). */
export async function runWasiHost(args: readonly string[]): Promise<number> {
  const sep = args.indexOf("--");
  const flags = sep === -1 ? args : args.slice(0, sep);
  const [module, name, ...rest] = sep === -1 ? [] : args.slice(sep + 1);
  const dirs: string[] = [];
  for (let i = 0; i < flags.length; i += 2) {
    const [flag, value] = [flags[i], flags[i + 1] ?? ""];
    if (flag === "--dir") dirs.push(value);
    else if (flag !== "--fuel" && flag !== "--memory-mb") {
      process.stderr.write(`kiwi __wasi: unknown flag ${flag}\n`);
      return EXIT.usage;
    }
  }
  if (!module || !name) {
    process.stderr.write("kiwi __wasi: usage: kiwi __wasi --fuel N --memory-mb M [--dir PATH]… -- <module> <name> [args…]\n");
    return EXIT.usage;
  }
  // The verdict descriptor is kiwi's, not the module's: its number stays out of the module's environment.
  const { [VERDICT_FD_ENV]: verdictVar, ...env } = process.env;
  const verdictFd = verdictVar !== undefined && /^\d+$/.test(verdictVar) && Number(verdictVar) > 2 ? Number(verdictVar) : undefined;
  const wasi = new WASI({ version: "preview1", args: [name, ...rest], env: env as Record<string, string>, preopens: Object.fromEntries(dirs.map((d) => [d, d])) });
  const compiled = await WebAssembly.compile(readFileSync(module));
  let memory: WebAssembly.Memory | undefined;
  const imports = { ...wasi.wasiImport, path_symlink: confinedSymlink(wasi.wasiImport.path_symlink as SymlinkImport, () => memory) };
  const instance = await WebAssembly.instantiate(compiled, { wasi_snapshot_preview1: imports as never });
  memory = instance.exports.memory as WebAssembly.Memory | undefined;
  try {
    wasi.start(instance);
    return 0;
  } catch (error) {
    const exports = instance.exports as Record<string, WebAssembly.Global | undefined>;
    // kiwi names the limit itself (E_WASM_LIMIT) from the status.
    if (typeof exports.kiwi_fuel?.value === "bigint" && exports.kiwi_fuel.value < 0n) {
      reportEnd(verdictFd, "fuel");
      return EXIT.fuel;
    }
    if (exports.kiwi_memory_exceeded?.value === 1) {
      reportEnd(verdictFd, "memory");
      return EXIT.memory;
    }
    const message = (error as Error)?.message ?? String(error);
    // exec names the trap in its own error; without a verdict descriptor, say it here.
    if (!reportEnd(verdictFd, `trap\n${message}`)) process.stderr.write(`kiwi: ${name} trapped: ${message}\n`);
    return EXIT.trap;
  }
}

if (import.meta.main) process.exit(await runWasiHost(process.argv.slice(2)));
