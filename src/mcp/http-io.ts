// The HTTP transports (streamable HTTP and legacy SSE) the SDK Client talks through. They are the
// SDK's own transports, given a fetch (the http_client primitive's path) that taps every response:
// JSON bodies and SSE events are bounded in size and fed to the lossless capture for hashing.
import { SSEClientTransport, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { createParser } from "eventsource-parser";
import { KiwiError } from "../errors.ts";
import { type HttpProxy, fetchVia } from "../exec/http.ts";
import { proxyFor } from "../exec/env-proxy.ts";
import type { LosslessCapture } from "./capture.ts";
import { redactUrl } from "./credential.ts";
import { type TransportLimits, describeBytes } from "./server-limits.ts";

export interface HttpSpec {
  url: string;
  headers: Record<string, string>;
  transport: "streamable-http" | "sse";
  /** The http_client primitive's host policy (declared net.outbound, SSRF rule), checked per request. */
  checkUrl?: (url: URL) => Promise<void>;
  /** kiwi's filtering proxy the requests go through, so each connects to an address the policy checked. */
  proxy?: HttpProxy;
}

/** An SDK HTTP transport plus the first fatal problem the tap saw. */
export interface TappedTransport {
  transport: Transport;
  failure(): KiwiError | undefined;
  /** Settles with the first fatal problem (the SDK's SSE start() would otherwise wait forever). */
  whenFailed: Promise<KiwiError>;
}

/** Builds the SDK transport for an HTTP server with a tapping, bounded fetch. */
export function createHttpTransport(spec: HttpSpec, capture: LosslessCapture, limits: TransportLimits, label: string): TappedTransport {
  let failure: KiwiError | undefined;
  let inner: Transport | undefined;
  let signalFailed: (error: KiwiError) => void = () => {};
  const whenFailed = new Promise<KiwiError>((resolve) => (signalFailed = resolve));
  const fail = (error: KiwiError) => {
    if (failure) return;
    failure = error;
    signalFailed(error);
    // Closing rejects the pending request at once instead of letting it wait for its timeout.
    void inner?.close().catch(() => {});
  };
  const tapped = tapFetch(capture, limits, label, fail, spec.checkUrl, spec.proxy);
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    throw new KiwiError("E_MCP", `${label} has an invalid url ${JSON.stringify(redactUrl(spec.url))}`, { hint: "config.url must be an absolute http(s) URL" });
  }
  const requestInit: RequestInit = { headers: spec.headers };
  inner =
    spec.transport === "sse"
      ? new SSEClientTransport(url, { fetch: tapped, requestInit, eventSourceInit: { fetch: tapped } })
      : new StreamableHTTPClientTransport(url, { fetch: tapped, requestInit });
  // Outgoing requests are noted so their results can be taken from the capture by method.
  const transport = inner;
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    capture.noteOutgoing(message);
    return send(message, options);
  };
  return { transport, failure: () => failure, whenFailed };
}

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

function tapFetch(capture: LosslessCapture, limits: TransportLimits, label: string, fail: (e: KiwiError) => void, checkUrl?: (url: URL) => Promise<void>, proxy?: HttpProxy): Fetch {
  return async (url, init) => {
    // Every request (POSTs, the SSE stream, an SSE server's announced endpoint, redirect hops the
    // SDK follows) passes the same host policy as an http_client tool.
    if (checkUrl) {
      try {
        await checkUrl(new URL(String(url)));
      } catch (error) {
        if (error instanceof KiwiError) fail(error);
        throw error;
      }
    }
    let response: Response;
    try {
      // Through kiwi's proxy when the policy is enforced: no second lookup DNS rebinding could answer.
      response = await fetchVia(label, new URL(String(url)), { ...init, redirect: "manual" }, proxy);
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      if (error instanceof KiwiError) {
        fail(error);
        throw error;
      }
      // Without kiwi's proxy (--sandbox=off) fetch goes through the environment's HTTP(S)_PROXY: the
      // connection that failed may have been to that proxy, not to the server.
      const target = new URL(String(url));
      const envProxy = proxy ? undefined : proxyFor(target, process.env);
      const failure = envProxy
        ? new KiwiError("E_MCP", `${label} could not be reached at ${redactUrl(String(url))} through the proxy ${envProxy.url} (${envProxy.variable}): ${(error as Error).message}`, {
            hint: `kiwi's fetch goes through the proxy in ${envProxy.variable} for this address: check that it runs and lets ${target.hostname} through, or name ${target.hostname} in NO_PROXY`,
            cause: error,
          })
        : new KiwiError("E_MCP", `${label} could not be reached at ${redactUrl(String(url))}: ${(error as Error).message}`, {
            hint: "check that the server is running and config.url is right",
            cause: error,
          });
      fail(failure);
      throw failure;
    }
    // Media types are case-insensitive (RFC 9110) and the SDK reads "Application/JSON" as JSON, so
    // the tap must too: a body it let pass would be parsed by the SDK alone, never captured.
    const type = mediaType(response.headers.get("content-type"));
    if (!response.body || [101, 204, 205, 304].includes(response.status)) return response;
    if (type === "application/json") {
      const text = await readBounded(response.body, limits.maxMessageBytes, label, fail);
      try {
        capture.noteIncoming(text);
      } catch (error) {
        if (error instanceof KiwiError) fail(new KiwiError(error.code, `${label}: ${error.message}`, { hint: error.hint }));
      }
      return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    if (type === "text/event-stream") {
      const body = response.body.pipeThrough(captureEvents(capture, limits, label, fail));
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    // Any other body (an error page the SDK reads for its message) is bounded like a message.
    const body = response.body.pipeThrough(boundedBytes(limits.maxMessageBytes, label, fail));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The media type of a Content-Type header, lowercased, without parameters ("" when absent). */
function mediaType(header: string | null): string {
  return (header ?? "").split(";", 1)[0]!.trim().toLowerCase();
}

/** Passes bytes through unchanged until `max`, then fails the session and errors the stream. */
function boundedBytes(max: number, label: string, fail: (e: KiwiError) => void): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.length;
      if (total > max) {
        const error = tooLarge(label, max, total);
        fail(error);
        controller.error(error);
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

async function readBounded(body: ReadableStream<Uint8Array>, max: number, label: string, fail: (e: KiwiError) => void): Promise<string> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > max) {
      const error = tooLarge(label, max, total);
      fail(error);
      await body.cancel().catch(() => {});
      throw error;
    }
    parts.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}

/** Passes an SSE body through unchanged while capturing each event; errors it past the size cap. */
function captureEvents(capture: LosslessCapture, limits: TransportLimits, label: string, fail: (e: KiwiError) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let overflow: KiwiError | undefined;
  const parser = createParser({
    maxBufferSize: limits.maxMessageBytes,
    onEvent: (event) => {
      if (event.event !== undefined && event.event !== "message") return;
      // An event without data carries no message: a resumable server (an SDK server with an event
      // store) opens each stream with one, `id: …` and an empty `data:`, and the SDK skips it too.
      if (event.data === "") return;
      try {
        capture.noteIncoming(event.data);
      } catch (error) {
        if (error instanceof KiwiError) fail(new KiwiError(error.code, `${label}: ${error.message}`, { hint: error.hint }));
      }
    },
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") overflow ??= tooLarge(label, limits.maxMessageBytes, limits.maxMessageBytes);
    },
  });
  return new TransformStream({
    transform(chunk, controller) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (overflow) {
        fail(overflow);
        controller.error(overflow);
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

function tooLarge(label: string, max: number, bytes: number): KiwiError {
  return new KiwiError("E_MCP", `${label} sent a message larger than ${describeBytes(max)} (${describeBytes(bytes)} so far)`, {
    hint: "a message this large (a listing, a tool result) is refused as hostile or broken; report it to the server's author",
    details: { limit: max },
  });
}
