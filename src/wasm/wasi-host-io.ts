// kiwi's WASI host: `kiwi __wasi --fuel N --memory-mb M [--dir PATH | --read-dir PATH]… -- <module> <name> [args…]`
// (fuel and memory are woven into the module already; the flags make the command line say so;
// a --read-dir is preopened read-only).
// Runs an instrumented module (prepare-io.ts) with WASI preview 1, the declared directories as
// its only preopens and the process environment, inside the sandbox exec sets up. When the module
// traps, the exported counters say whether fuel or the memory cap ended it: the host writes which
// to the descriptor exec names in KIWI_WASI_VERDICT_FD (exec turns it into E_WASM_LIMIT) and exits
// with WASM_EXIT.fuel or WASM_EXIT.memory; a module's own exit status, 250 included, is passed on
// as it is. Self-contained (node: modules only), so a checkout runs it with bun as is.
import { readFileSync, statSync, writeSync } from "node:fs";
import { resolve } from "node:path";
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

/** WASI's errno for a read-only file system (what a module meets in the sandbox's read-only mounts). */
const ERRNO_ROFS = 69;
/** Rights that let a descriptor change a file's contents or size (fd_datasync, fd_write, fd_allocate, fd_filestat_set_size). */
const WRITE_RIGHTS = (1n << 0n) | (1n << 6n) | (1n << 8n) | (1n << 22n);
const OFLAGS_CREAT_OR_TRUNC = 1 | 8;
type Imports = Record<string, unknown>;
type Call = (...args: never[]) => number;

/**
 * The WASI imports with every change under a --read-dir refused (EROFS) unless a --dir inside it
 * holds the path: creating, truncating or opening a file for writing, making or removing a
 * directory, unlinking, renaming, linking and setting times or sizes. A sandbox mounts an fs.read
 * directory read-only; without one (--sandbox=off, or no bubblewrap) this host is what keeps it so.
 * Where a descriptor points comes from the host's own table; when it cannot be read, every change
 * is refused.
 */
function readOnlyGuard(imports: Imports, wasi: WASI, dirs: readonly string[], readOnly: ReadonlySet<string>, memory: () => WebAssembly.Memory | undefined): Imports {
  const table = (wasi as unknown as { FD_MAP?: Map<number, { path?: unknown }> }).FD_MAP;
  const roots = dirs.map((d) => resolve(d)).sort((a, b) => b.length - a.length);
  const readOnlyRoots = new Set([...readOnly].map((d) => resolve(d)));
  const text = (ptr: number, len: number): string | undefined => {
    const buffer = memory()?.buffer;
    return buffer && ptr >= 0 && len >= 0 && ptr + len <= buffer.byteLength ? new TextDecoder().decode(new Uint8Array(buffer, ptr, len)) : undefined;
  };
  /** True when the file `fd` (and `ptr`/`len`, a path relative to it) names lies under a read-only directory. */
  const locked = (fd: number, ptr?: number, len?: number): boolean => {
    const base = table?.get(fd)?.path;
    if (typeof base !== "string") return true;
    const rel = ptr === undefined || len === undefined ? "" : text(ptr, len);
    if (rel === undefined) return false; // the host answers a pointer out of range (EFAULT)
    const target = resolve(base, rel);
    const root = roots.find((r) => target === r || target.startsWith(r.endsWith("/") ? r : `${r}/`));
    return root !== undefined && readOnlyRoots.has(root);
  };
  const guard = (name: string, refuse: (...args: number[]) => boolean): [string, Call] => {
    const call = imports[name] as (...args: unknown[]) => number;
    return [name, ((...args: number[]) => (refuse(...args) ? ERRNO_ROFS : call(...args))) as Call];
  };
  return {
    ...imports,
    ...Object.fromEntries([
      guard("path_open", (fd, _dirflags, ptr, len, oflags, rights) => ((oflags! & OFLAGS_CREAT_OR_TRUNC) !== 0 || (BigInt(rights!) & WRITE_RIGHTS) !== 0n) && locked(fd!, ptr, len)),
      guard("path_create_directory", (fd, ptr, len) => locked(fd!, ptr, len)),
      guard("path_remove_directory", (fd, ptr, len) => locked(fd!, ptr, len)),
      guard("path_unlink_file", (fd, ptr, len) => locked(fd!, ptr, len)),
      guard("path_filestat_set_times", (fd, _flags, ptr, len) => locked(fd!, ptr, len)),
      guard("path_symlink", (_tptr, _tlen, fd, ptr, len) => locked(fd!, ptr, len)),
      // A hard link to a read-only file from a writable folder would let it be written there.
      guard("path_link", (oldFd, _flags, oldPtr, oldLen, newFd, newPtr, newLen) => locked(oldFd!, oldPtr, oldLen) || locked(newFd!, newPtr, newLen)),
      guard("path_rename", (oldFd, oldPtr, oldLen, newFd, newPtr, newLen) => locked(oldFd!, oldPtr, oldLen) || locked(newFd!, newPtr, newLen)),
      guard("fd_filestat_set_times", (fd) => locked(fd!)),
      guard("fd_filestat_set_size", (fd) => locked(fd!)),
      guard("fd_allocate", (fd) => locked(fd!)),
    ]),
  };
}

/** Runs the module; resolves to the exit status (a module's proc_exit ends the process itself). */
export async function runWasiHost(args: readonly string[]): Promise<number> {
  const sep = args.indexOf("--");
  const flags = sep === -1 ? args : args.slice(0, sep);
  const [module, name, ...rest] = sep === -1 ? [] : args.slice(sep + 1);
  const dirs: string[] = [];
  const readOnly = new Set<string>();
  for (let i = 0; i < flags.length; i += 2) {
    const [flag, value] = [flags[i], flags[i + 1] ?? ""];
    if (flag === "--dir") dirs.push(value);
    else if (flag === "--read-dir") {
      dirs.push(value);
      readOnly.add(value);
    }
    else if (flag !== "--fuel" && flag !== "--memory-mb") {
      process.stderr.write(`kiwi __wasi: unknown flag ${flag}\n`);
      return EXIT.usage;
    }
  }
  if (!module || !name) {
    process.stderr.write("kiwi __wasi: usage: kiwi __wasi --fuel N --memory-mb M [--dir PATH | --read-dir PATH]… -- <module> <name> [args…]\n");
    return EXIT.usage;
  }
  // The verdict descriptor is kiwi's, not the module's: its number stays out of the module's environment.
  const { [VERDICT_FD_ENV]: verdictVar, ...env } = process.env;
  const verdictFd = verdictVar !== undefined && /^\d+$/.test(verdictVar) && Number(verdictVar) > 2 ? Number(verdictVar) : undefined;
  // A declared folder that does not exist is left out, as the sandbox leaves out its mount: the
  // module cannot open it (ENOENT), instead of the host dying on it before the module starts.
  const present = dirs.filter((d) => statSync(d, { throwIfNoEntry: false }) !== undefined);
  let wasi: WASI;
  try {
    wasi = new WASI({ version: "preview1", args: [name, ...rest], env: env as Record<string, string>, preopens: Object.fromEntries(present.map((d) => [d, d])) });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    process.stderr.write(`kiwi __wasi: cannot open the declared folder ${e.path ?? ""} for ${name}: ${e.code ?? e.message}\n`);
    return EXIT.usage;
  }
  const compiled = await WebAssembly.compile(readFileSync(module));
  let memory: WebAssembly.Memory | undefined;
  const confined = { ...wasi.wasiImport, path_symlink: confinedSymlink(wasi.wasiImport.path_symlink as SymlinkImport, () => memory) };
  const imports = readOnly.size ? readOnlyGuard(confined, wasi, present, readOnly, () => memory) : confined;
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
