// What host filtering costs a call: the same sandboxed bash tool with no network, declaring one
// host (kiwi starts its filtering proxy and the in-sandbox bridge), and declaring it and fetching
// from it once with curl through the proxy. Median of N runs each, alternated, in one process.
//   bun run build && bun run scripts/bench-net-filter.ts [--runs 15]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probeSandbox } from "../src/exec/sandbox-io.ts";
import { writeTree } from "../test/helpers/tree.ts";
import { compareAlternating, kiwiBinary, numberFlag, timeCommand } from "./bench-lib.ts";

const runs = numberFlag(process.argv, "--runs", 15);
const kiwi = kiwiBinary();
const probe = probeSandbox(process.env);
if (!probe.usable) {
  process.stderr.write(`host filtering needs the sandbox: ${probe.reason}\n`);
  process.exit(2);
}

const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok\n") });
const host = `127.0.0.1:${server.port}`;
const tool = (id: string, hosts: string[] | undefined, body: string) => ({
  [`.ai/tools/${id}.sh`]: `#!/bin/bash\n# ---\n# tool_id: ${id}\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n${hosts ? `# requires:\n#   - net.outbound: ${JSON.stringify(hosts)}\n` : ""}# ---\n${body}\n`,
});

const dir = mkdtempSync(join(tmpdir(), "kiwi-bench-net-"));
try {
  const project = writeTree(join(dir, "project"), {
    ...tool("offline", undefined, "exit 0"),
    ...tool("declared", [host], "exit 0"),
    ...tool("fetches", [host], `curl -sS -o /dev/null http://${host}/`),
  });
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", NO_COLOR: "1", KIWI_CACHE_DIR: join(dir, "cache") };
  await timeCommand([kiwi, "lock"], { cwd: project, env });
  const exec = (id: string) => () => timeCommand([kiwi, "exec", id, "--sandbox=require"], { cwd: project, env });
  await compareAlternating("kiwi exec of a sandboxed bash tool", runs, ["no network", exec("offline")], [
    ["one declared host (proxy + bridge)", exec("declared")],
    ["declared host, one curl request", exec("fetches")],
  ]);
} finally {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
}
