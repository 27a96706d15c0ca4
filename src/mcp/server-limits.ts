// Every bound kiwi puts on an MCP server, in one table, so a hostile or broken server (a 50 MB
// description, 10,000 tools, a cursor loop, a stderr flood, silence) ends in a clear error. Pure.

export interface TransportLimits {
  /** Largest single JSON-RPC message (one stdio line, one HTTP body or SSE event). */
  maxMessageBytes: number;
  /** How much of the server's stderr is kept for error messages (the rest is drained and dropped). */
  stderrTailBytes: number;
  /** How long a server gets to exit after EOF, and again after SIGTERM, before SIGKILL. */
  shutdownGraceMs: number;
}

export interface ListingLimits {
  /** Pages followed per list call (tools/list, prompts/list, …). */
  maxPages: number;
  /** Items accepted per list kind. */
  maxItems: number;
  /** Per request, initialize included. */
  requestTimeoutMs: number;
  /** Start and initialize, when the server declares its own (`config.startup_timeout`, seconds). */
  startTimeoutMs?: number;
  /** The whole session: start, initialize, every page, and a tool call. */
  sessionTimeoutMs: number;
}

export const DEFAULT_TRANSPORT_LIMITS: TransportLimits = {
  maxMessageBytes: 16 * 1024 * 1024,
  stderrTailBytes: 8 * 1024,
  shutdownGraceMs: 2_000,
};

export const DEFAULT_LISTING_LIMITS: ListingLimits = {
  maxPages: 1_000,
  maxItems: 10_000,
  requestTimeoutMs: 30_000,
  sessionTimeoutMs: 120_000,
};

/** Keeps the last `capacity` bytes written to it (a server's stderr), decoding on demand. */
export class TailBuffer {
  private chunks: Uint8Array[] = [];
  private size = 0;
  /** Every byte ever pushed, kept or not. */
  total = 0;

  constructor(private readonly capacity: number) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    const piece = chunk.length > this.capacity ? chunk.subarray(chunk.length - this.capacity) : chunk;
    this.chunks.push(piece.slice());
    this.size += piece.length;
    while (this.size - this.chunks[0]!.length >= this.capacity) this.size -= this.chunks.shift()!.length;
  }

  /** The kept tail as text (a leading partial character is dropped by the decoder's replacement). */
  text(): string {
    const all = new Uint8Array(this.size);
    let offset = 0;
    for (const c of this.chunks) {
      all.set(c, offset);
      offset += c.length;
    }
    const start = Math.max(0, all.length - this.capacity);
    return new TextDecoder().decode(all.subarray(start));
  }

  /** `; its stderr ends with: …` for error messages, or "" when the server said nothing. */
  summary(): string {
    const text = this.text().trim();
    if (!text) return "";
    const lines = text.split("\n").slice(-5).join("\n    ");
    return `; its stderr ends with:\n    ${lines.length > 600 ? `…${lines.slice(-600)}` : lines}`;
  }
}

/** `16 MiB`, `512 KiB`, `12 bytes`. */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KiB`;
  return `${bytes} bytes`;
}
