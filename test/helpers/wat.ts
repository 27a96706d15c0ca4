// WebAssembly test modules from .wat text, built with wabt's wat2wasm (Debian: wabt; .ci/run
// installs it), so each test shows the module it runs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const hasWat2wasm = Bun.which("wat2wasm") !== null;

/**
 * The binary of `text`; throws with wat2wasm's message when the text is wrong. `names` keeps the
 * text's $names in a "name" section, as compilers write one (wat2wasm --debug-names).
 */
export function wat(text: string, options: { names?: boolean } = {}): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "kiwi-wat-"));
  try {
    writeFileSync(join(dir, "m.wat"), text);
    const r = Bun.spawnSync(["wat2wasm", "m.wat", "-o", "m.wasm", ...(options.names ? ["--debug-names"] : [])], { cwd: dir, stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`wat2wasm failed: ${r.stderr.toString()}`);
    return readFileSync(join(dir, "m.wasm"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Test modules, each a WASI command. */
export const MODULES = {
  /** Never ends: only fuel (or the timeout) stops it. */
  spin: `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (loop $forever (br $forever))))`,
  /** Grows its memory 1 MiB at a time until a grow fails, then exits 7. */
  grow: `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $more (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    (call $exit (i32.const 7))))`,
  /** Prints "hello from wasm" and exits 0. */
  hello: `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "hello from wasm\\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 16))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))`,
  /** Runs a loop of exactly 1000 iterations in one call: 1 entry + 1000 loop headers = 1001 fuel. */
  counted: `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $i i32)
    (loop $l
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 1000))))))`,
  /** Opens argv[1] relative to the first preopened directory (fd 3) and copies it to stdout; exits 3 when it cannot. */
  reader: `(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1040) "cannot open it\\n")
  (func $strlen (param $p i32) (result i32) (local $n i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $n))
  (func (export "_start") (local $path i32)
    (drop (call $args_sizes_get (i32.const 0) (i32.const 4)))
    (drop (call $args_get (i32.const 16) (i32.const 256)))
    (local.set $path (i32.load (i32.const 20)))
    (if (call $path_open (i32.const 3) (i32.const 0) (local.get $path) (call $strlen (local.get $path)) (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 8))
      (then
        (i32.store (i32.const 1024) (i32.const 1040)) (i32.store (i32.const 1028) (i32.const 15))
        (drop (call $fd_write (i32.const 2) (i32.const 1024) (i32.const 1) (i32.const 1036)))
        (call $proc_exit (i32.const 3))))
    (i32.store (i32.const 1024) (i32.const 2048)) (i32.store (i32.const 1028) (i32.const 4096))
    (drop (call $fd_read (i32.load (i32.const 8)) (i32.const 1024) (i32.const 1) (i32.const 1036)))
    (i32.store (i32.const 1028) (i32.load (i32.const 1036)))
    (drop (call $fd_write (i32.const 1) (i32.const 1024) (i32.const 1) (i32.const 1036)))))`,
  /** Creates the symbolic link argv[2] -> argv[1] in the first preopened directory (fd 3); exits with path_symlink's errno. */
  linker: `(module
  (import "wasi_snapshot_preview1" "path_symlink" (func $path_symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func $strlen (param $p i32) (result i32) (local $n i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $n))
  (func (export "_start") (local $target i32) (local $link i32)
    (drop (call $args_sizes_get (i32.const 0) (i32.const 4)))
    (drop (call $args_get (i32.const 16) (i32.const 256)))
    (local.set $target (i32.load (i32.const 20)))
    (local.set $link (i32.load (i32.const 24)))
    (call $proc_exit (call $path_symlink (local.get $target) (call $strlen (local.get $target)) (i32.const 3) (local.get $link) (call $strlen (local.get $link))))))`,
  /** Creates written.txt in the first preopened directory (fd 3) and writes "pwned" to it; exits with the first errno, 0 when it wrote. */
  writer: `(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "written.txt")
  (data (i32.const 200) "pwned\\n")
  (func (export "_start") (local $e i32)
    (local.set $e (call $path_open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 11) (i32.const 1) (i64.const 0xfffffff) (i64.const 0) (i32.const 0) (i32.const 8)))
    (if (local.get $e) (then (call $proc_exit (local.get $e))))
    (i32.store (i32.const 16) (i32.const 200)) (i32.store (i32.const 20) (i32.const 6))
    (call $proc_exit (call $fd_write (i32.load (i32.const 8)) (i32.const 16) (i32.const 1) (i32.const 24)))))`,
  /** Imports a function kiwi's host does not provide. */
  foreignImport: `(module
  (import "env" "launch_missiles" (func $x))
  (memory (export "memory") 1)
  (func (export "_start") (call $x)))`,
} as const;
