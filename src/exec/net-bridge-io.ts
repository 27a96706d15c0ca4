// The bridge inside a host-filtered sandbox: `kiwi __net-bridge <host:port> <socket> -- <command…>`.
// The sandbox has its own network namespace with loopback only; this listens on the loopback port
// the proxy variables name, passes every connection to kiwi's proxy through the Unix socket bound
// into the sandbox, and runs the tool. It exits with the tool's status (128+N for signal N, as
// bubblewrap reports it). Self-contained (node: modules only): a dev checkout runs it with bun as is.
import { type Socket, createConnection, createServer } from "node:net";
import { constants } from "node:os";

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
  const server = createServer((client: Socket) => {
    const upstream = createConnection(socketPath);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", cut);
    upstream.on("error", cut);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  try {
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(Number(m[2]), m[1], done);
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
  server.close();
  if (child.signalCode) return 128 + ((constants.signals as Record<string, number>)[child.signalCode] ?? 0);
  return child.exitCode ?? 1;
}

if (import.meta.main) process.exit(await runNetBridge(process.argv.slice(2)));
