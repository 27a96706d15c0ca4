// The whole suite while other processes keep every core busy: a green run here shows no test leans
// on a timing margin a loaded machine cannot meet (issue: "a green test command on a slow machine").
//   bun run scripts/test-under-load.ts [bun test args…]
// The load is stress-ng (Debian's stress-ng; .ci/run installs it) or, without it, one busy node
// process per core. It is stopped however the suite ends.
import { availableParallelism } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const cores = availableParallelism();
const stressNg = Bun.which("stress-ng");
const load = stressNg
  ? [Bun.spawn([stressNg, "--cpu", String(cores), "--quiet"], { stdout: "ignore", stderr: "ignore" })]
  : Array.from({ length: cores }, () => Bun.spawn(["node", "-e", "for (;;) {}"], { stdout: "ignore", stderr: "ignore" }));
const stop = () => {
  for (const p of load) p.kill("SIGKILL");
};
process.on("SIGINT", () => {
  stop();
  process.exit(130);
});
process.stderr.write(`== load: ${stressNg ? `stress-ng --cpu ${cores}` : `${cores} busy node processes`} while the suite runs\n`);
const suite = Bun.spawn([process.execPath, "run", join(root, "scripts/test.ts"), ...process.argv.slice(2)], { cwd: root, stdout: "inherit", stderr: "inherit", env: process.env });
const code = await suite.exited;
stop();
process.exit(code);
