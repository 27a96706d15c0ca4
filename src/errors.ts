// One error type for all of kiwi, and the one table of codes and exit codes.
// Errors are thrown deep and rendered once, by cli.ts through ui/; throwers never print.

/**
 * Every error code kiwi can emit, with the process exit code it maps to and a
 * one-line meaning. This is the table the README's "Exit codes" section documents;
 * `test/errors.test.ts` keeps the two in step.
 */
export const ERROR_CODES = {
  E_USAGE: { exit: 2, meaning: "the command line is malformed (unknown flag, missing argument, or a word the command would ignore)" },
  E_INTERNAL: { exit: 2, meaning: "a bug in kiwi; please report it with the command you ran" },
  E_IO: { exit: 2, meaning: "a file could not be read or written" },
  E_NO_PROJECT: { exit: 2, meaning: "no .ai/tools/ folder in this directory or any parent" },
  E_GIT: { exit: 2, meaning: "git is missing, failed, or the directory is not inside a git repository" },
  E_HOOK_EXISTS: { exit: 2, meaning: "a git pre-commit hook that kiwi did not write is in the way" },
  E_INPUT_INVALID: { exit: 2, meaning: "a file given on the command line could not be parsed" },
  E_CHECK_FAILED: { exit: 1, meaning: "validation found errors" },
  E_TOOL_NOT_FOUND: { exit: 2, meaning: "no tool has the given id or path" },
  E_LOCK_STALE: { exit: 3, meaning: "the tool tree differs from tool.lock.json" },
  E_LOCK_MISSING: { exit: 3, meaning: "tool.lock.json does not exist" },
  E_CACHE_CORRUPT: { exit: 4, meaning: "a cached blob does not match its digest" },
  E_CACHE_MISSING: { exit: 4, meaning: "a file or tool the lockfile needs is not in the cache" },
  E_LOCK_INVALID: { exit: 5, meaning: "tool.lock.json is malformed, hand-edited or from a newer kiwi" },
  E_INTEGRITY_MISMATCH: { exit: 6, meaning: "a tool's files or manifest differ from the locked integrity" },
  E_CHAIN: { exit: 6, meaning: "an executor chain is broken: missing executor, cycle, or too deep" },
  E_PARAMS_INVALID: { exit: 7, meaning: "the call's parameters violate the tool's parameter schema" },
  E_EXEC_FAILED: { exit: 8, meaning: "the primitive could not run the tool (spawn failure, HTTP error, timeout)" },
  E_INTERRUPTED: { exit: 130, meaning: "kiwi was interrupted (SIGINT; 128+N for another signal) and passed the signal on to the running tool" },
  E_MCP: { exit: 9, meaning: "an MCP server misbehaved (no answer, bad JSON-RPC, crash)" },
  E_MCP_DRIFT: { exit: 10, meaning: "an MCP server's interface differs from its pin" },
  E_MCP_UNPINNED: { exit: 10, meaning: "an MCP server has no pin and the mode forbids pinning" },
  E_SANDBOX: { exit: 11, meaning: "the sandbox is required but unavailable, or a permission is undeclared" },
  E_REGISTRY: { exit: 12, meaning: "an OCI registry is unreachable, refused the request, or has no such tag or digest" },
  E_REGISTRY_AUTH: { exit: 12, meaning: "an OCI registry refused the credentials (401/403), or none were found for it" },
  E_ARTIFACT_INVALID: { exit: 6, meaning: "a pulled artifact's bytes, layout or integrity do not match what its digests promise" },
  E_NET_POLICY: { exit: 11, meaning: "a declared net.outbound host is malformed, or admits every host without --allow-any-host" },
  E_WASM_INVALID: { exit: 6, meaning: "a WebAssembly tool's module is not wasm, or needs what kiwi's WASI host does not provide" },
  E_WASM_LIMIT: { exit: 14, meaning: "a WebAssembly tool ran out of fuel or memory" },
  E_TRUST: { exit: 13, meaning: "an artifact is unsigned, wrongly signed or signed by a key .ai/trust.yaml does not trust" },
  E_DEPS: { exit: 15, meaning: "a tool's packages cannot be resolved or installed (no such version, registry down, install script, too large)" },
} as const satisfies Record<string, { exit: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface KiwiErrorOptions {
  /** What the user can do about it, e.g. `run "kiwi lock"`. */
  hint?: string;
  /** Structured facts for --json output (paths, hashes, findings). */
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Overrides the table's exit code (a tool's own exit code, a signal). */
  exitCode?: number;
}

/** The single error type: a stable code, a message naming the subject, and a hint naming the fix. */
export class KiwiError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;
  readonly details?: Record<string, unknown>;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options: KiwiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "KiwiError";
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
    this.exitCode = options.exitCode ?? ERROR_CODES[code].exit;
  }
}

/** Turns anything thrown into a KiwiError, so the edge renders one shape. */
export function toKiwiError(error: unknown): KiwiError {
  if (error instanceof KiwiError) return error;
  const err = error as NodeJS.ErrnoException;
  if (err && typeof err === "object" && typeof err.code === "string" && err.syscall) {
    return new KiwiError("E_IO", `${err.syscall} failed${err.path ? ` for ${err.path}` : ""}: ${err.code}`, {
      hint: ioHint(err.code),
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new KiwiError("E_INTERNAL", message, {
    hint: "this is a bug in kiwi; rerun with KIWI_DEBUG=1 for a stack trace and report it",
    cause: error,
  });
}

function ioHint(code: string): string {
  switch (code) {
    case "ENOSPC":
      return "the disk is full; free some space and run the command again";
    case "EACCES":
    case "EPERM":
      return "check the permissions of the path, or point KIWI_CACHE_DIR at a writable folder";
    case "EROFS":
      return "the file system is read-only; point KIWI_CACHE_DIR at a writable folder";
    case "ENOENT":
      return "check that the path exists";
    default:
      return "check the path and try again";
  }
}
