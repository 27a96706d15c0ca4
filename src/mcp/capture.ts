// Lossless capture of JSON-RPC results. The SDK parses with JSON.parse, which turns 3.0 into 3;
// hashes must see what the server sent, so every incoming message is also parsed here with the
// lossless parser and each response's `result` kept by request id until the caller takes it. Pure.
import { Float, isMapping } from "../integrity/value.ts";
import { KiwiError } from "../errors.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";

/** Keeps lossless results by JSON-RPC id and the id of the latest request per method. */
export class LosslessCapture {
  private readonly results = new Map<string, CanonicalValue>();
  private readonly lastIdByMethod = new Map<string, string>();
  /** Only results of these methods are kept (everything else is parsed by the SDK alone). */
  constructor(private readonly methods: ReadonlySet<string>) {}

  /** The method of the latest request sent (what a failed handshake was waiting for). */
  lastSent?: string;

  /** Notes an outgoing message: requests for captured methods remember their id. */
  noteOutgoing(message: unknown): void {
    if (!message || typeof message !== "object") return;
    const m = message as { method?: unknown; id?: unknown };
    if (typeof m.method === "string" && m.id !== undefined) this.lastSent = m.method;
    if (typeof m.method === "string" && this.methods.has(m.method) && (typeof m.id === "number" || typeof m.id === "string")) {
      this.lastIdByMethod.set(m.method, keyOf(m.id));
    }
  }

  /** True when a response to a captured request could be in this text (cheap pre-check). */
  wants(): boolean {
    return this.lastIdByMethod.size > 0;
  }

  /**
   * Parses one incoming message text (a JSON-RPC message or batch) losslessly and keeps the result
   * of a captured request. Returns the lossless value so transports need not parse twice.
   */
  noteIncoming(text: string): CanonicalValue {
    let value: CanonicalValue;
    try {
      value = parseJsonLossless(text, { positions: false }).value;
    } catch (error) {
      if (error instanceof ParseProblem) {
        throw new KiwiError("E_MCP", `the server sent a message kiwi cannot parse as JSON: ${error.message} (offset ${error.offset})`, {
          hint: "the server is broken, hostile, or writes logs to stdout (MCP stdio servers must log to stderr)",
          details: { excerpt: text.slice(0, 200) },
        });
      }
      throw error;
    }
    const messages = Array.isArray(value) ? value : [value];
    for (const message of messages) {
      if (!isMapping(message) || message.result === undefined) continue;
      // The lossless parser keeps 1.0 as a Float and big integers as bigints; JSON.parse (the SDK's)
      // reads both as numbers, so they name the request as numbers do.
      const raw = message.id;
      const id = raw instanceof Float ? raw.value : typeof raw === "bigint" ? Number(raw) : raw;
      if (typeof id !== "number" && typeof id !== "string") continue;
      const key = this.responseKey(id);
      // The first answer to a request is the one the SDK settles it with (it ignores any later
      // answer to the same id), so it is the one kept: never a second answer the SDK never saw.
      if (this.results.has(key)) continue;
      for (const wanted of this.lastIdByMethod.values()) if (wanted === key) this.results.set(key, message.result);
    }
    return value;
  }

  /**
   * Which request a response answers, as the SDK decides it: it looks its requests (numbered) up by
   * `Number(response.id)`, so a server that answers request 1 with id "1" has answered it.
   */
  private responseKey(id: number | string): string {
    if (typeof id === "number") return keyOf(id);
    const asString = keyOf(id);
    return [...this.lastIdByMethod.values()].includes(asString) ? asString : keyOf(Number(id));
  }

  /** The lossless result of the latest `method` request if one arrived (left in place). */
  peekResult(method: string): CanonicalValue | undefined {
    const key = this.lastIdByMethod.get(method);
    return key === undefined ? undefined : this.results.get(key);
  }

  /** The lossless result of the latest `method` request; fails closed when it was not captured. */
  takeResult(method: string): CanonicalValue {
    const key = this.lastIdByMethod.get(method);
    const result = key === undefined ? undefined : this.results.get(key);
    if (key === undefined || result === undefined) {
      throw new KiwiError("E_INTERNAL", `no lossless copy of the ${method} result was captured`, {
        hint: "this is a bug in kiwi's MCP transport; report it with the server you used",
      });
    }
    this.results.delete(key);
    this.lastIdByMethod.delete(method);
    return result;
  }
}

function keyOf(id: number | string | bigint): string {
  return `${typeof id === "string" ? "s" : "n"}:${String(id)}`;
}
