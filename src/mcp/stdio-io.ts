// The stdio transport the SDK Client talks through: kiwi starts the server with Bun.spawn (the
// subprocess primitive's spawning path) in its own process group, frames newline-delimited
// JSON-RPC, bounds every message and the stderr it keeps, and always shuts the group down and
// reaps it on close, on error and on Ctrl-C (reaper-io.ts).
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";
import type { Subprocess } from "bun";
import { KiwiError } from "../errors.ts";
import { closeLaunchFiles, openLaunchFiles } from "../exec/launch-files-io.ts";
import { toPlain } from "../integrity/value.ts";
import type { LosslessCapture } from "./capture.ts";
import { signalGroup, trackGroup, untrackGroup } from "./reaper-io.ts";
import { type TransportLimits, TailBuffer, describeBytes } from "./server-limits.ts";
import { renderVisible } from "./visible.ts";

/** What to start: a resolved argv, working directory and complete environment. */
export interface StdioSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Host files argv's launcher reads from descriptors 3, 4, … (the sandbox's copies: exec/launch-files-io.ts). */
  files?: string[];
}

/** Newline-delimited JSON-RPC over a child's stdin/stdout (the MCP stdio transport). */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** The first fatal problem (crash, oversized or invalid message); preferred over the SDK's error. */
  failure?: KiwiError;
  readonly stderr: TailBuffer;
  /** Lines on stdout that are not JSON at all (banners, logs), skipped as the SDK clients skip them. */
  readonly noise = new NoiseLines();
  private proc?: Subprocess<"pipe", "pipe", "pipe">;
  private closing?: Promise<void>;
  private closed = false;
  exitCode?: number | null;

  constructor(
    private readonly spec: StdioSpec,
    private readonly capture: LosslessCapture,
    private readonly limits: TransportLimits,
    /** Names the server in messages: `MCP server "github_mcp"`. */
    readonly label: string,
  ) {
    this.stderr = new TailBuffer(limits.stderrTailBytes);
  }

  /**
   * The server's pid once started. With `stderr` it marks this transport as stdio to the SDK's
   * version negotiation: a silent `server/discover` probe then means a legacy server, not an outage.
   */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(): Promise<void> {
    const files = openLaunchFiles(this.spec.files, this.label);
    try {
      this.proc = Bun.spawn(this.spec.argv, {
        cwd: this.spec.cwd,
        env: this.spec.env,
        stdio: ["pipe", "pipe", "pipe", ...files],
        // Own process group: Ctrl-C reaches kiwi only, and kiwi kills the server's whole group.
        detached: true,
      }) as Subprocess<"pipe", "pipe", "pipe">;
    } catch (error) {
      throw new KiwiError("E_EXEC_FAILED", `could not start ${this.label}: ${(error as Error).message}`, {
        hint: `check that "${this.spec.argv[0]}" is installed and on PATH`,
        cause: error,
        details: { argv: this.spec.argv },
      });
    } finally {
      closeLaunchFiles(files);
    }
    const proc = this.proc;
    trackGroup(proc.pid);
    void this.readStdout(proc.stdout);
    void this.readStderr(proc.stderr);
    void proc.exited.then((code) => {
      this.exitCode = code;
      // Children the server left behind in its group go with it.
      signalGroup(proc.pid, "SIGKILL");
      untrackGroup(proc.pid);
      if (!this.closing) {
        const how = proc.signalCode ? `was killed by ${proc.signalCode}` : `exited with code ${code}`;
        const after = this.capture.lastSent ? ` (after kiwi sent ${this.capture.lastSent})` : "";
        this.fail(new KiwiError("E_MCP", `${this.label} ${how} before the session ended${after}${this.stderr.summary()}`, {
          hint: "run the server's command by hand to see why it stops",
          details: { exitCode: code, signal: proc.signalCode ?? null, stderr: this.stderr.text() },
        }));
      }
      this.finish();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const proc = this.proc;
    if (!proc || this.closing) throw this.failure ?? new KiwiError("E_MCP", `${this.label} is not running`);
    this.capture.noteOutgoing(message);
    proc.stdin.write(`${JSON.stringify(message)}\n`);
    await proc.stdin.flush();
  }

  /** Ends the session: EOF on stdin, then SIGTERM, then SIGKILL to the group; waits for the reap. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const proc = this.proc;
    if (!proc) {
      this.finish();
      return;
    }
    try {
      proc.stdin.end();
    } catch {
      // The pipe is already gone; the signals below still apply.
    }
    if (!(await exitsWithin(proc, this.limits.shutdownGraceMs))) {
      signalGroup(proc.pid, "SIGTERM");
      if (!(await exitsWithin(proc, this.limits.shutdownGraceMs))) {
        signalGroup(proc.pid, "SIGKILL");
        await proc.exited;
      }
    }
    signalGroup(proc.pid, "SIGKILL");
    untrackGroup(proc.pid);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  private fail(error: KiwiError): void {
    this.failure ??= error;
    this.onerror?.(error);
    void this.close();
  }

  private async readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    try {
      for await (const chunk of stream) {
        let start = 0;
        for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
          const part = chunk.subarray(start, nl);
          if (pendingBytes + part.length > this.limits.maxMessageBytes) return this.tooLarge(pendingBytes + part.length);
          const line = pending.length === 0 ? part : Buffer.concat([...pending, part], pendingBytes + part.length);
          pending = [];
          pendingBytes = 0;
          start = nl + 1;
          if (!this.handleLine(decoder.decode(line))) return;
        }
        if (start < chunk.length) {
          const rest = chunk.subarray(start);
          pending.push(rest);
          pendingBytes += rest.length;
          if (pendingBytes > this.limits.maxMessageBytes) return this.tooLarge(pendingBytes);
        }
      }
    } catch {
      // The stream ends with an error when the process is killed; exit handling reports it.
      return;
    }
    await this.stdoutEnded();
  }

  /**
   * stdout reached its end. A server that is exiting is reported with its exit code (the exit
   * handler); one that closed stdout and lives on can never answer again, so the session fails
   * now instead of waiting out a request timeout whose hint (raise config.timeout) cannot help.
   */
  private async stdoutEnded(): Promise<void> {
    const proc = this.proc;
    if (!proc || this.closing || (await exitsWithin(proc, STDOUT_EOF_GRACE_MS)) || this.closing) return;
    this.fail(new KiwiError("E_MCP", `${this.label} closed its stdout but kept running, so it can no longer answer${this.stderr.summary()}`, {
      hint: "an MCP stdio server must keep stdout open for its JSON-RPC messages; report it to the server's author",
    }));
  }

  private tooLarge(bytes: number): void {
    this.fail(new KiwiError("E_MCP", `${this.label} sent a message larger than ${describeBytes(this.limits.maxMessageBytes)} (${describeBytes(bytes)} so far)`, {
      hint: "a message this large (a listing, a tool result) is refused as hostile or broken; report it to the server's author",
      details: { limit: this.limits.maxMessageBytes },
    }));
  }

  /** Handles one line; returns false once the session has failed. */
  private handleLine(text: string): boolean {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (line.trim() === "") return true;
    // A banner ("Starting Time MCP server...") before or between messages is skipped, as the
    // official SDK clients skip it; a line that opens like JSON must still be a valid message.
    if (!/^\s*[[{]/.test(line)) {
      this.noise.add(line);
      return true;
    }
    let plain: unknown;
    try {
      plain = toPlain(this.capture.noteIncoming(line));
    } catch (error) {
      this.fail(error instanceof KiwiError ? withLabel(error, this.label) : new KiwiError("E_MCP", String(error)));
      return false;
    }
    const parsed = JSONRPCMessageSchema.safeParse(plain);
    if (!parsed.success) {
      this.fail(new KiwiError("E_MCP", `${this.label} sent a message that is not valid JSON-RPC 2.0: ${renderVisible(line.slice(0, 120))}`, {
        hint: "the server does not speak MCP over stdio (or prints logs to stdout); check its command",
      }));
      return false;
    }
    this.onmessage?.(parsed.data);
    return true;
  }

  private async readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      // Always drained (a full pipe would block the server), but only the tail is kept.
      for await (const chunk of stream) this.stderr.push(chunk);
    } catch {
      // Killed; nothing more to read.
    }
  }
}

/** Non-JSON stdout lines: the first few kept (each cut short) for the warning, the rest counted. */
export class NoiseLines {
  static readonly KEEP = 3;
  static readonly WIDTH = 160;
  readonly kept: string[] = [];
  count = 0;

  add(line: string): void {
    this.count++;
    if (this.kept.length < NoiseLines.KEEP) this.kept.push(line.length > NoiseLines.WIDTH ? `${line.slice(0, NoiseLines.WIDTH)}…` : line);
  }

  /** The warning for a session that saw noise, naming the server; undefined when there was none. */
  warning(label: string): string | undefined {
    if (this.count === 0) return undefined;
    const more = this.count > this.kept.length ? ` (and ${this.count - this.kept.length} more)` : "";
    const lines = this.kept.map((l) => renderVisible(JSON.stringify(l))).join(", ");
    return `${label} wrote ${this.count} line${this.count === 1 ? "" : "s"} on stdout that ${this.count === 1 ? "is" : "are"} not JSON-RPC, skipped: ${lines}${more}; MCP stdio servers should log to stderr`;
  }
}

function withLabel(error: KiwiError, label: string): KiwiError {
  return new KiwiError(error.code, `${label}: ${error.message}`, { hint: error.hint, details: error.details });
}

/** How long a server whose stdout ended may take to exit before kiwi says it closed stdout and lives on. */
const STDOUT_EOF_GRACE_MS = 1_000;

async function exitsWithin(proc: Subprocess, ms: number): Promise<boolean> {
  if (proc.exitCode !== null || proc.signalCode !== null) return true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const result = await Promise.race([proc.exited.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}
