// What kiwi needs to know about a WebAssembly module before it runs one: that it is wasm at all,
// what it imports (only WASI preview 1 functions: kiwi's host provides nothing else) and its
// memory. Reads the binary's sections directly (no compile). Pure.
import { KiwiError } from "../errors.ts";

/** Fuel and the linear-memory cap of one run. */
export interface WasmLimits {
  /** Function entries, loop iterations and returns the module may execute. */
  fuel: number;
  /** Linear memory, MiB (64 KiB pages). */
  memoryMb: number;
}

/** kiwi's defaults when the chain declares none (magray's documented maximum fuel). */
export const DEFAULT_FUEL = 100_000_000;

export const PAGE_BYTES = 64 * 1024;

/**
 * Entries the module's tables may hold in all. Tables live in the engine's memory, outside the
 * linear-memory cap: a table grown without end took the host past its limit (cap + 512 MiB) and
 * crashed it (JSC spends ~60 bytes an entry; its own ceiling is 10,000,000 a table). A million is
 * ~60 MiB, far more than programs use (a function-pointer table holds thousands).
 */
export const TABLE_ENTRIES_CAP = 1_000_000;

/** WASI preview 1 (wasi_snapshot_preview1): the functions kiwi's host provides. */
export const WASI_FUNCTIONS: ReadonlySet<string> = new Set([
  "args_get", "args_sizes_get", "environ_get", "environ_sizes_get", "clock_res_get", "clock_time_get",
  "fd_advise", "fd_allocate", "fd_close", "fd_datasync", "fd_fdstat_get", "fd_fdstat_set_flags",
  "fd_fdstat_set_rights", "fd_filestat_get", "fd_filestat_set_size", "fd_filestat_set_times", "fd_pread",
  "fd_prestat_get", "fd_prestat_dir_name", "fd_pwrite", "fd_read", "fd_readdir", "fd_renumber", "fd_seek",
  "fd_sync", "fd_tell", "fd_write", "path_create_directory", "path_filestat_get", "path_filestat_set_times",
  "path_link", "path_open", "path_readlink", "path_remove_directory", "path_rename", "path_symlink",
  "path_unlink_file", "poll_oneoff", "proc_exit", "proc_raise", "sched_yield", "random_get", "sock_accept",
  "sock_recv", "sock_send", "sock_shutdown",
]);
export const WASI_MODULE = "wasi_snapshot_preview1";

/** The exports instrumentation adds (instrument.ts), which the host reads after a trap. */
export const FUEL_GLOBAL = "kiwi_fuel";
export const MEMORY_GLOBAL = "kiwi_memory_exceeded";

export interface ModuleImport {
  module: string;
  name: string;
  kind: "function" | "table" | "memory" | "global" | "tag" | "unknown";
}

export interface ModuleInfo {
  imports: ModuleImport[];
  /** Defined memories (initial and maximum in pages; memory64 and shared flagged). */
  memories: { initial: number; maximum?: number; memory64: boolean; shared: boolean }[];
  /** Defined tables' initial sizes, as far as the section could be read (newer encodings stop it). */
  tables: { initial: number }[];
  exports: { name: string; kind: ModuleImport["kind"] }[];
}

const KINDS = ["function", "table", "memory", "global", "tag"] as const;

/** Reads the sections kiwi checks; throws E_WASM_INVALID naming `subject` when the bytes are not wasm. */
export function readModuleInfo(bytes: Uint8Array, subject: string): ModuleInfo {
  const bad = (why: string) =>
    new KiwiError("E_WASM_INVALID", `${subject} is not a WebAssembly module: ${why}`, { hint: "the entry point of a wasm tool must be a .wasm binary (build .wat text with wat2wasm)", details: { module: subject } });
  if (bytes.byteLength < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw bad("it does not start with \\0asm");
  const version = bytes[4]! | (bytes[5]! << 8) | (bytes[6]! << 16) | (bytes[7]! << 24);
  if (version !== 1) throw bad(version === 0x1000d ? "it is a component (component model), not a core module" : `binary version ${version} (only 1)`);
  const info: ModuleInfo = { imports: [], memories: [], tables: [], exports: [] };
  let pos = 8;
  const u32 = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= bytes.byteLength) throw bad("it is truncated");
      const b = bytes[pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw bad("a number is malformed");
    }
  };
  const name = (): string => {
    const len = u32();
    if (pos + len > bytes.byteLength) throw bad("it is truncated");
    const s = new TextDecoder().decode(bytes.subarray(pos, pos + len));
    pos += len;
    return s;
  };
  const limits = () => {
    const flags = u32();
    const initial = u32();
    const maximum = flags & 1 ? u32() : undefined;
    return { initial, ...(maximum !== undefined ? { maximum } : {}), memory64: (flags & 4) !== 0, shared: (flags & 2) !== 0 };
  };
  while (pos < bytes.byteLength) {
    const id = bytes[pos++]!;
    const size = u32();
    const end = pos + size;
    if (end > bytes.byteLength) throw bad("a section runs past the end");
    if (id === 2) {
      for (let n = u32(); n > 0; n--) {
        const module = name();
        const field = name();
        const kind = bytes[pos++]!;
        info.imports.push({ module, name: field, kind: KINDS[kind] ?? "unknown" });
        // The rest of the entry is not needed: kiwi refuses every import but WASI functions.
        if (kind !== 0) break;
        u32(); // type index
      }
    } else if (id === 4) {
      for (let n = u32(); n > 0; n--) {
        // A reference type (funcref 0x70, externref 0x6f, or 0x63/0x64 and a heap type), then limits;
        // a table with an initialiser (0x40 0x00 …) is not read further.
        const type = bytes[pos++]!;
        if (type === 0x63 || type === 0x64) u32();
        else if (type !== 0x70 && type !== 0x6f) break;
        info.tables.push({ initial: limits().initial });
      }
    } else if (id === 5) {
      for (let n = u32(); n > 0; n--) info.memories.push(limits());
    } else if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const exported = name();
        info.exports.push({ name: exported, kind: KINDS[bytes[pos++]!] ?? "unknown" });
        u32();
      }
    }
    pos = end;
  }
  return info;
}

/**
 * Refuses what kiwi's host cannot run: an import other than a WASI preview 1 function, an
 * imported or 64-bit or shared memory, several memories, no `_start` function, no memory exported
 * as `memory`, or a memory whose initial size is already past the cap. E_WASM_INVALID, or E_WASM_LIMIT for the memory cap.
 */
export function assertRunnable(info: ModuleInfo, subject: string, limits: WasmLimits): void {
  for (const imp of info.imports) {
    if (imp.module === WASI_MODULE && imp.kind === "function" && WASI_FUNCTIONS.has(imp.name)) continue;
    const what = imp.kind === "function" ? "function" : imp.kind;
    throw new KiwiError("E_WASM_INVALID", `${subject} imports ${what} ${imp.module}.${imp.name}, which kiwi's WASI host does not provide`, {
      hint: `a wasm tool may import only WASI preview 1 functions (${WASI_MODULE}); build it for wasm32-wasip1 without other host imports`,
      details: { module: subject, import: `${imp.module}.${imp.name}`, kind: imp.kind },
    });
  }
  const reserved = info.exports.map((e) => e.name).find((e) => e === FUEL_GLOBAL || e === MEMORY_GLOBAL);
  if (reserved !== undefined) {
    throw new KiwiError("E_WASM_INVALID", `${subject} exports ${reserved}, a name kiwi reserves for the counter it adds to the module`, {
      hint: `rename the module's export ${reserved}; kiwi's host reads it to tell which limit ended a run`,
      details: { module: subject, export: reserved },
    });
  }
  if (!info.exports.some((e) => e.name === "_start" && e.kind === "function")) {
    throw new KiwiError("E_WASM_INVALID", `${subject} exports no _start function: it is not a WASI command`, { hint: "build the module as a WASI command (a program with main), not a library", details: { module: subject } });
  }
  if (info.memories.length > 1) throw new KiwiError("E_WASM_INVALID", `${subject} defines ${info.memories.length} memories; kiwi caps one`, { hint: "build without multi-memory", details: { module: subject } });
  const mem = info.memories[0];
  if (mem && (mem.memory64 || mem.shared)) {
    throw new KiwiError("E_WASM_INVALID", `${subject} uses a ${mem.memory64 ? "64-bit" : "shared"} memory, which kiwi's host does not run`, { hint: "build for wasm32 without threads", details: { module: subject } });
  }
  // WASI functions read and write the module's memory by the name "memory": a command without it
  // traps in the host before its first instruction.
  if (!info.exports.some((e) => e.name === "memory" && e.kind === "memory")) {
    throw new KiwiError("E_WASM_INVALID", `${subject} exports no memory named "memory": it is not a WASI command`, {
      hint: 'a WASI command exports its linear memory as "memory" (compilers targeting wasm32-wasip1 do); export it',
      details: { module: subject },
    });
  }
  const entries = info.tables.reduce((n, t) => n + t.initial, 0);
  if (entries > TABLE_ENTRIES_CAP) {
    throw new KiwiError("E_WASM_LIMIT", `${subject} starts with ${entries} table entries, past kiwi's limit of ${TABLE_ENTRIES_CAP}`, {
      hint: "build the module with smaller tables; kiwi caps them because they live outside the linear-memory limit",
      details: { module: subject, limit: "tables", tableEntries: TABLE_ENTRIES_CAP },
    });
  }
  if (mem && mem.initial * PAGE_BYTES > limits.memoryMb * 1024 * 1024) {
    throw new KiwiError("E_WASM_LIMIT", `${subject} starts with ${(mem.initial * PAGE_BYTES) / 1024 / 1024} MiB of linear memory, past its memory limit of ${limits.memoryMb} MiB`, {
      hint: "raise limits.memory_mb (runtime_config.max_memory_mb) or build the module with a smaller initial memory",
      details: { module: subject, limit: "memory", memoryMb: limits.memoryMb },
    });
  }
}

/**
 * The module without its "name" custom section (debug names of functions, globals, locals…), every
 * other byte as it was. Instrumentation adds functions and globals by name (log_execution,
 * memory_grow_pre, kiwi_fuel…), and binaryen takes a module's internal names from this section, so
 * a C program with a function of one of those names would collide with them. Bytes that are not
 * well-formed sections come back unchanged (binaryen then says what is wrong).
 */
export function withoutNameSection(bytes: Uint8Array): Uint8Array {
  const kept: Uint8Array[] = [bytes.subarray(0, 8)];
  let pos = 8;
  let dropped = false;
  const u32 = (): number | undefined => {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (pos >= bytes.byteLength) return undefined;
      const b = bytes[pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
    }
    return undefined;
  };
  while (pos < bytes.byteLength) {
    const start = pos;
    const id = bytes[pos++]!;
    const size = u32();
    if (size === undefined || pos + size > bytes.byteLength) return bytes;
    const end = pos + size;
    if (id === 0) {
      const len = u32();
      if (len !== undefined && pos + len <= end && new TextDecoder().decode(bytes.subarray(pos, pos + len)) === "name") {
        dropped = true;
        pos = end;
        continue;
      }
    }
    kept.push(bytes.subarray(start, end));
    pos = end;
  }
  if (!dropped) return bytes;
  const out = new Uint8Array(kept.reduce((n, part) => n + part.byteLength, 0));
  let at = 0;
  for (const part of kept) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
