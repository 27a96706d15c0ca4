// The names exec and kiwi's WASI host share: the command a runtime names to run a module, and the
// exit statuses the host reports a limit with. Apart from module-info.ts so a warm `kiwi exec` of
// any tool (which only compares against these) does not load the module reader. Pure.

/** The command a runtime names to run its entry point as a WASI module on kiwi's own host. */
export const WASI_COMMAND = "kiwi:wasi";

/** How kiwi's WASI host reports a limit (exit status), read back by exec/subprocess.ts. */
export const WASM_EXIT = { fuel: 250, memory: 251 } as const;

/** kiwi's status when a module traps: wasmtime's (128 + SIGABRT), as its host exits. */
export const WASM_TRAP_EXIT = 134;

/**
 * The variable naming the descriptor kiwi's WASI host writes `fuel` or `memory` to when that limit
 * ended the run. A module may exit 250 or 251 itself (proc_exit), so the status alone cannot say
 * which it was; exec opens the descriptor (verdict-io.ts) and believes only what it finds there.
 */
export const WASM_VERDICT_FD_ENV = "KIWI_WASI_VERDICT_FD";
