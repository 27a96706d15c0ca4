// Relaying bytes between two of Bun's sockets, for kiwi's filtering proxy (net-proxy-io.ts) and the
// bridge inside a host-filtered sandbox (net-bridge-io.ts). Bun's sockets do not buffer: `write`
// takes what fits and says how much, so what does not fit is queued here and the socket it came
// from stops reading until the drain (backpressure). Both ends allow half-open connections: a FIN
// from one side is passed to the other once what came before it is written, and the answer keeps
// flowing back until that side is done too. Bun and node: modules only (the bridge runs it as is).
import type { Socket } from "bun";

/** One end of a relayed connection (the `data` of its socket). */
export interface Relay {
  /** The other end, once both exist. */
  peer: Socket<Relay> | null;
  /** Bytes waiting for this socket to drain (its peer is paused meanwhile). */
  queue: Uint8Array[];
  /** Send FIN here once the queue is written (the peer sent FIN, or a reply ends the connection). */
  ending: boolean;
  /** Close this socket outright after its last write (a reply, or a peer that closed) rather than half-close it. */
  closeAfter: boolean;
  /** What this end read before its peer existed (the client while the upstream connects). */
  held: Uint8Array[];
  /** This end sent FIN or closed: nothing more comes from it. */
  done: boolean;
  /** A FIN was sent here: nothing more goes to it. */
  shut: boolean;
  closed: boolean;
}

export const freshRelay = (peer: Socket<Relay> | null = null): Relay => ({ peer, queue: [], ending: false, closeAfter: false, held: [], done: false, shut: false, closed: false });

/** Writes `bytes` to `to` now, or queues what does not fit; false when something had to wait. */
export function send(to: Socket<Relay>, bytes: Uint8Array): boolean {
  if (to.data.closed) return true;
  if (to.data.queue.length === 0) {
    const written = to.write(bytes);
    if (written >= bytes.length) return true;
    bytes = bytes.subarray(Math.max(written, 0));
  }
  to.data.queue.push(new Uint8Array(bytes)); // copied: Bun reuses its read buffer
  return false;
}

/**
 * Sends FIN to `s`. Bun's `end()` closes both ways, so a socket whose other side may still talk is
 * only shut down for writing; one that already sent its FIN (or is to be closed) is ended.
 */
function sendFin(s: Socket<Relay>): void {
  if (s.data.closed || s.data.shut) return;
  s.data.shut = true;
  if (s.data.done || s.data.closeAfter) s.end();
  else s.shutdown();
}

/** Sends FIN to `s` once its queue is written. */
export function finAfterQueue(s: Socket<Relay>): void {
  if (s.data.queue.length === 0) sendFin(s);
  else s.data.ending = true;
}

/** Closes `s` outright once what it is owed is written. */
export function closeAfterQueue(s: Socket<Relay>): void {
  s.data.closeAfter = true;
  s.data.shut = false; // a half-close already sent becomes a full close
  finAfterQueue(s);
}

/** Sends `bytes`, then closes the connection (once they are written). */
export function sendAndClose(to: Socket<Relay>, bytes: Uint8Array): void {
  send(to, bytes);
  closeAfterQueue(to);
}

/** `data` handler: passes what `from` read to its peer (held until there is one); pauses `from` when the peer is full. */
export function forward(from: Socket<Relay>, chunk: Uint8Array): void {
  const to = from.data.peer;
  if (!to) {
    from.data.held.push(new Uint8Array(chunk));
    return;
  }
  if (!send(to, chunk)) from.pause();
}

/** `drain` handler: writes the queue; once empty, the peer reads again and a pending FIN goes out. */
export function flush(socket: Socket<Relay>): void {
  const queue = socket.data.queue;
  while (queue.length > 0) {
    const head = queue[0]!;
    const written = socket.write(head);
    if (written < head.length) {
      queue[0] = head.subarray(Math.max(written, 0));
      return;
    }
    queue.shift();
  }
  socket.data.peer?.resume();
  if (socket.data.ending) sendFin(socket);
}

/** `end` handler (a FIN came): the peer gets FIN once what came before is written; done both ways, this one closes. */
export function finished(socket: Socket<Relay>): void {
  if (socket.data.done) return;
  socket.data.done = true;
  if (socket.data.shut && !socket.data.closed) socket.end();
  const peer = socket.data.peer;
  if (peer && !peer.data.closed) finAfterQueue(peer);
}

/** `close`/`error` handler: the peer gets what it is owed, then is closed; a paused peer reads again (and what it sends is dropped). */
export function closed(socket: Socket<Relay>): void {
  if (socket.data.closed) return;
  socket.data.closed = true;
  socket.data.done = true;
  socket.data.queue.length = 0;
  const peer = socket.data.peer;
  if (peer && !peer.data.closed) {
    closeAfterQueue(peer);
    peer.resume();
  }
}

/**
 * Joins two ends once the second exists: what each read meanwhile is passed on, and a FIN or
 * close that came meanwhile (its handler ran with no peer to tell) is passed on too. Returns false
 * when `a` must stay paused (the peer's buffer is already full).
 */
export function link(a: Socket<Relay>, b: Socket<Relay>): boolean {
  a.data.peer = b;
  b.data.peer = a;
  let fits = true;
  for (const chunk of a.data.held.splice(0)) fits = send(b, chunk) && fits;
  for (const chunk of b.data.held.splice(0)) send(a, chunk);
  for (const [from, to] of [[a, b], [b, a]] as const) {
    if (from.data.closed) closeAfterQueue(to);
    else if (from.data.done) finAfterQueue(to);
  }
  return fits;
}
