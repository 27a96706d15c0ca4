// The bridge inside a host-filtered sandbox: `kiwi __net-bridge <host:port> <socket> -- <command…>`.
// The sandbox has its own network namespace with loopback only; this listens on the loopback port
// the proxy variables name, passes every connection to kiwi's proxy through the Unix socket bound
// into the sandbox, and runs the tool. It exits with the tool's status (128+N for signal N, as
// bubblewrap reports it). Bun and node: modules only (and net-relay-io.ts, likewise): a dev checkout
// runs it with bun as is.
import { constants } from "node:os";
import type { TCPSocketListener } from "bun";
import { type Relay, closed, finished, flush, forward, freshRelay, link } from "./net-relay-io.ts";

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
  let server: TCPSocketListener<Relay>;
  try {
    server = Bun.listen<Relay>({
      hostname: m[1]!,
      port: Number(m[2]),
      // Half-open both ways (net-relay-io.ts): a tool that shuts down its sending side after a
      // request still gets the answer.
      allowHalfOpen: true,
      socket: {
        open(client) {
          client.data = freshRelay();
          Bun.connect<Relay>({
            unix: socketPath,
            allowHalfOpen: true,
            data: freshRelay(),
            socket: {
              open(upstream) {
                if (client.data.closed) return void upstream.end();
                if (!link(client, upstream)) client.pause();
              },
              data: forward,
              drain: flush,
              end: finished,
              close: closed,
              error: closed,
              connectError: () => void client.end(),
            },
          }).catch(() => void client.end());
        },
        data: forward,
        drain: flush,
        end: finished,
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
