// The bridge inside a host-filtered sandbox: `kiwi __net-bridge <host:port> <socket> -- <command…>`.
// The sandbox has its own network namespace with loopback only; this listens on the loopback port
// the proxy variables name, passes every connection to kiwi's proxy through the Unix socket bound
// into the sandbox, and runs the tool. It exits with the tool's status (128+N for signal N, as
// bubblewrap reports it). Self-contained (Bun and node: modules only): a dev checkout runs it with bun as is.
import { constants } from "node:os";
import type { Socket, TCPSocketListener } from "bun";

/** One end of a bridged connection: its peer, and what the peer sent that this end has not taken yet. */
interface End {
  peer: Socket<End> | null;
  /** Bytes waiting for this socket to drain (the peer is paused meanwhile). */
  queue: Uint8Array[];
  /** The peer has closed: end this one once its queue is written. */
  ending: boolean;
  /** What the client sent before the upstream connected. */
  held: Uint8Array[];
  closed: boolean;
}

const fresh = (peer: Socket<End> | null = null): End => ({ peer, queue: [], ending: false, held: [], closed: false });

/** Writes what `from` read to its peer; what does not fit waits, and `from` stops reading until it drains. */
function forward(from: Socket<End>, chunk: Uint8Array): void {
  const to = from.data.peer;
  if (!to) {
    // The upstream is still connecting: hold the bytes (copied: Bun reuses its read buffer).
    from.data.held.push(new Uint8Array(chunk));
    return;
  }
  let rest = chunk;
  if (to.data.queue.length === 0) {
    const written = to.write(chunk);
    if (written >= chunk.length) return;
    rest = chunk.subarray(Math.max(written, 0));
  }
  to.data.queue.push(new Uint8Array(rest));
  from.pause();
}

function flush(socket: Socket<End>): void {
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
  if (socket.data.ending) socket.end();
}

function closed(socket: Socket<End>): void {
  socket.data.closed = true;
  const peer = socket.data.peer;
  if (!peer) return;
  if (peer.data.queue.length === 0) peer.end();
  else peer.data.ending = true;
}

/** Runs the bridge; resolves to the exit code. */
export async function runNetBridge(args: readonly string[]): Promise<number> {
  const sep = args.indexOf("--");
  const [listen, socketPath] = args;
  const command = sep === -1 ? [] : args.slice(sep + 1);
  const m = /^([0-9.]+):(\d+)$/.exec(listen ?? "");
  if (!m || !socketPath || sep !== 2 || command.length === 0) {
    process.stderr.write("kiwi __net-bridge: usage: kiwi __net-bridge <ip:port> <proxy socket> -- <command> [args…]\n");
    return 2;
  }
  // Bun's own sockets rather than node:net: the bridge starts on every host-filtered call, and
  // node:net's streams cost it ~2.5 ms of start-up; backpressure is kept by pausing the reader.
  let server: TCPSocketListener<End>;
  try {
    server = Bun.listen<End>({
      hostname: m[1]!,
      port: Number(m[2]),
      socket: {
        open(client) {
          client.data = fresh();
          Bun.connect<End>({
            unix: socketPath,
            socket: {
              open(upstream) {
                upstream.data = fresh(client);
                if (client.data.closed) return void upstream.end();
                client.data.peer = upstream;
                for (const chunk of client.data.held.splice(0)) forward(client, chunk);
              },
              data: forward,
              drain: flush,
              close: closed,
              error: closed,
              connectError: () => void client.end(),
            },
          }).catch(() => void client.end());
        },
        data: forward,
        drain: flush,
        close: closed,
        error: closed,
      },
    });
  } catch (error) {
    process.stderr.write(`kiwi: the network bridge could not listen on ${listen} (${(error as NodeJS.ErrnoException).code ?? String(error)})\n`);
    return 125;
  }
  // kiwi signals every process of the sandbox itself; the bridge only outlives the tool by a moment.
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => {});
  let child: ReturnType<typeof Bun.spawn>;
  try {
    child = Bun.spawn(command, { stdio: ["inherit", "inherit", "inherit"], env: process.env });
  } catch (error) {
    process.stderr.write(`kiwi: cannot start ${command[0]} (${(error as NodeJS.ErrnoException).code ?? String(error)})\n`);
    return 127;
  }
  await child.exited;
  server.stop(true);
  if (child.signalCode) return 128 + ((constants.signals as Record<string, number>)[child.signalCode] ?? 0);
  return child.exitCode ?? 1;
}

if (import.meta.main) process.exit(await runNetBridge(process.argv.slice(2)));
