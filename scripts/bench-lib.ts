// What every benchmark script shares: flags, the compiled binary, timing one process (wall, CPU
// and peak memory), medians and a printed series. Benchmarks measure; tests never assert on time.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

/** A numeric `--name value` flag, or the fallback. */
export function numberFlag(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  const value = i === -1 ? Number.NaN : Number(args[i + 1]);
  return Number.isFinite(value) ? value : fallback;
}

/**
 * The binary named by `--kiwi <path>` (an older build, to compare), else dist/kiwi, as a fresh copy
 * (freshCopy); exits with the hint to build it when missing.
 */
export function kiwiBinary(args: readonly string[] = process.argv): string {
  const i = args.indexOf("--kiwi");
  const kiwi = i === -1 ? join(import.meta.dir, "..", "dist", "kiwi") : args[i + 1]!;
  if (!existsSync(kiwi)) {
    process.stderr.write(`${kiwi} is missing: run "bun run build" first\n`);
    process.exit(2);
  }
  return freshCopy(kiwi);
}

let copies: string | undefined;

/**
 * A copy of `binary` made now, in a folder removed when the benchmark exits; every binary a
 * benchmark times goes through here. On this machine a binary whose pages have sat in the page
 * cache for a while starts measurably slower than a fresh copy of the same bytes: after ~30
 * minutes, a hello world by 0.4 to 0.7 ms and a warm `kiwi exec` by ~1.5 ms, 50 interleaved runs
 * (dropping the old file's cache and reading it again made it as fast as the copy). So a base
 * binary built an hour before would be timed as slower than it is against a build made just now.
 */
export function freshCopy(binary: string): string {
  if (copies === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "kiwi-bench-bin-"));
    copies = dir;
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  let out = join(copies, basename(binary));
  for (let n = 2; existsSync(out); n++) out = join(copies, `${basename(binary)}-${n}`);
  copyFileSync(binary, out);
  return out;
}

/** The median of some numbers. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface Sample {
  ms: number;
  cpuMs?: number;
  peakKb?: number;
  exitCode: number;
}

/**
 * Runs a command once: wall time, and the CPU time and peak RSS of it and every descendant it
 * waited for, from the rusage wait4 returns (microseconds; GNU time printed them in 10 ms steps,
 * too coarse for calls of a few ms).
 */
export async function measureProcess(argv: string[], env: Record<string, string>, cwd: string): Promise<Sample> {
  const started = performance.now();
  const proc = Bun.spawn(argv, { cwd, env, stdout: "ignore", stderr: "pipe" });
  const [, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  const ms = performance.now() - started;
  const usage = proc.resourceUsage();
  if (!usage) return { ms, exitCode };
  return { ms, cpuMs: Number(usage.cpuTime.total) / 1000, peakKb: Math.round(usage.maxRSS / 1024), exitCode };
}

export interface SeriesRow {
  name: string;
  median: number;
  min: number;
  cpu?: number;
  peakMb?: number;
  exitCodes: number[];
}

/** Runs a command `times` times, prints one line (median, min, CPU, peak memory, exit codes). */
export async function runSeries(name: string, times: number, argv: string[], env: () => Record<string, string>, cwd: string): Promise<SeriesRow> {
  const samples: Sample[] = [];
  for (let i = 0; i < times; i++) samples.push(await measureProcess(argv, env(), cwd));
  return printRow(name, samples);
}

/**
 * Runs several commands `times` times each, interleaved round by round (one untimed warm-up each),
 * so a change in the machine's load hits all alike; prints one line per command, in order.
 */
export async function runInterleaved(cases: { name: string; argv: string[]; env?: Record<string, string> }[], times: number, env: () => Record<string, string>, cwd: string): Promise<SeriesRow[]> {
  for (const c of cases) await measureProcess(c.argv, c.env ?? env(), cwd);
  const samples = cases.map(() => [] as Sample[]);
  for (let i = 0; i < times; i++) for (const [j, c] of cases.entries()) samples[j]!.push(await measureProcess(c.argv, c.env ?? env(), cwd));
  return cases.map((c, j) => printRow(c.name, samples[j]!));
}

function printRow(name: string, samples: Sample[]): SeriesRow {
  const row: SeriesRow = {
    name,
    median: median(samples.map((s) => s.ms)),
    min: Math.min(...samples.map((s) => s.ms)),
    cpu: samples.every((s) => s.cpuMs !== undefined) ? median(samples.map((s) => s.cpuMs!)) : undefined,
    peakMb: samples.every((s) => s.peakKb !== undefined) ? Math.max(...samples.map((s) => s.peakKb!)) / 1024 : undefined,
    exitCodes: [...new Set(samples.map((s) => s.exitCode))],
  };
  const cpu = row.cpu === undefined ? "" : `  cpu ${row.cpu.toFixed(1).padStart(6)} ms`;
  const peak = row.peakMb === undefined ? "" : `  peak ${row.peakMb.toFixed(1)} MB`;
  process.stdout.write(`${name.padEnd(46)} median ${row.median.toFixed(1).padStart(6)} ms  min ${row.min.toFixed(1).padStart(6)} ms${cpu}${peak}  exit ${row.exitCodes.join(",")}\n`);
  return row;
}

/**
 * A hello-world program compiled the way kiwi is (scripts/build.ts): the floor of any compiled Bun
 * CLI, which every per-call benchmark reports its ratio against. Written into `dir`.
 */
export function helloWorldBinary(dir: string): string {
  const source = join(dir, "hello.ts");
  const out = join(dir, "hello");
  writeFileSync(source, 'console.log("hi");\n');
  const build = Bun.spawnSync([process.execPath, "build", "--compile", "--minify", "--bytecode", "--format=esm", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", source, "--outfile", out], { stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`compiling the hello-world binary failed: ${build.stderr.toString()}`);
  return out;
}

/**
 * A compiled Bun binary (kiwi's build flags) that does nothing but run its arguments as a child the
 * way kiwi runs a tool: stdin passed on, stdout and stderr piped and forwarded, its own session,
 * its exit code returned. The least any Bun-built wrapper pays to run a tool.
 */
export function spawnerBinary(dir: string): string {
  return compileBinary(dir, "spawner", ['const p = Bun.spawn(process.argv.slice(2), { stdin: "inherit", stdout: "pipe", stderr: "pipe", detached: true });', ...PUMP_AND_EXIT]);
}

/**
 * A compiled Bun binary (kiwi's build flags) that does the least a verifying launcher can do before
 * the spawner's work: read a memo (a JSON file naming paths with their size and mtime, as a warm
 * `kiwi exec` reads its chain memo), prove each path unchanged by one stat, read and parse the
 * call's JSON parameters from stdin, and run the command after `--` with them on its stdin, output
 * piped and forwarded. What kiwi's warm exec would cost with every check but the stats removed.
 *   verifier <memo.json> -- command args…
 */
export function verifierBinary(dir: string): string {
  return compileBinary(dir, "verifier", [
    'import { readFileSync, statSync } from "node:fs";',
    "const args = process.argv.slice(2);",
    'const memo = JSON.parse(readFileSync(args[0]!, "utf8")) as { watch: [string, number, number][] };',
    "for (const [path, size, mtimeMs] of memo.watch) {",
    "  const st = statSync(path);",
    "  if (st.size !== size || st.mtimeMs !== mtimeMs) { console.error(`${path} changed`); process.exit(3); }",
    "}",
    "const params = JSON.parse(await Bun.stdin.text()) as unknown;",
    'const p = Bun.spawn(args.slice(args.indexOf("--") + 1), { stdin: new TextEncoder().encode(JSON.stringify(params)), stdout: "pipe", stderr: "pipe", detached: true });',
    ...PUMP_AND_EXIT,
  ]);
}

/**
 * The verifier with every check a warm `kiwi exec` replay makes (exec/launch-memo-io.ts), each
 * written as plainly as it can be: the memo found by a key over the binary's own stat identity,
 * the working folder, the tool, the sandbox mode and the whole environment, and its sha256 line
 * checked; the project root found again from the working folder; every input's full stat identity
 * (size, mtime, ctime, inode); the PATH lookups; the run directory's marker, its files' stats, modes
 * and count; the program a regular, executable file; the parameters validated against the memo's
 * JSON Schema (type, required, properties, additionalProperties, items); then, while the tool runs,
 * its timeout, the signals passed on to its group, the output cap and the group's clean-up. What
 * kiwi's own replay costs above it is code, not checking. With `--files`, it opens those files
 * (comma-separated) and hands them to the command as descriptors 3, 4, …, as kiwi hands a sandboxed
 * launch the files bubblewrap copies in: so it can run kiwi's planned sandbox launch too.
 *   strict-verifier <memo folder> <tool> [--files a,b,…] -- command args…
 * The memo, `<memo folder>/<key>`, is written by strictVerifierMemo.
 */
export function strictVerifierBinary(dir: string): string {
  return compileBinary(dir, "strict-verifier", [
    'import { accessSync, closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readdirSync, statSync } from "node:fs";',
    "const args = process.argv.slice(2);",
    "const [memoDir, tool] = args as [string, string];",
    "const dash = args.indexOf(\"--\");",
    "const command = args.slice(dash + 1);",
    'const filesAt = args.indexOf("--files");',
    'const handed = filesAt !== -1 && filesAt < dash ? args[filesAt + 1]!.split(",") : [];',
    "const fail = (why: string): never => { console.error(why); process.exit(3); };",
    "const self = statSync(process.execPath);",
    "const names = Object.keys(process.env).sort();",
    'let env = "";',
    'for (const n of names) env += `${n}=${process.env[n]}\\0`;',
    'const key = new Bun.CryptoHasher("sha256").update(`${process.execPath} ${self.size} ${self.mtimeMs} ${self.ctimeMs} ${self.ino}\\0${process.cwd()}\\0${tool}\\0off\\0${env}`).digest("hex");',
    'const text = readFileSync(`${memoDir}/${key}`, "utf8");',
    "const nl = text.indexOf(\"\\n\");",
    'if (new Bun.CryptoHasher("sha256").update(text.slice(nl + 1)).digest("hex") !== text.slice(0, nl)) fail("memo damaged");',
    "type Schema = { type?: string; required?: string[]; properties?: Record<string, Schema>; additionalProperties?: boolean; items?: Schema };",
    "const memo = JSON.parse(text.slice(nl + 1)) as { root: string; watch: [string, number, number, number, number][]; lookups: [string, string, string][]; runDirs: { dir: string; files: { path: string; is_executable?: boolean }[] }[]; program: string; schema: Schema };",
    'let root = process.cwd();',
    'for (;;) { try { if (statSync(`${root}/.ai/tools`).isDirectory()) break; } catch {} const up = root.slice(0, root.lastIndexOf("/")) || "/"; if (up === root) fail("no project"); root = up; }',
    'if (root !== memo.root) fail("another project");',
    "for (const [path, size, mtimeMs, ctimeMs, ino] of memo.watch) {",
    "  const st = lstatSync(path);",
    "  if (st.size !== size || st.mtimeMs !== mtimeMs || st.ctimeMs !== ctimeMs || st.ino !== ino) fail(`${path} changed`);",
    "}",
    "for (const [command, path, found] of memo.lookups) if (Bun.which(command, { PATH: path }) !== found) fail(`${command} moved`);",
    "const count = (dir: string): number => { let n = 0; for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? count(`${dir}/${e.name}`) : 1; return n; };",
    "for (const run of memo.runDirs) {",
    '  const marker = JSON.parse(readFileSync(`${run.dir}/marker.json`, "utf8")) as { files: [string, number, number, number, number][] };',
    '  if ((statSync(run.dir).mode & 0o222) !== 0 || marker.files.length !== run.files.length) fail("run directory changed");',
    "  for (let i = 0; i < run.files.length; i++) {",
    "    const [path, ino, size, mtimeMs, ctimeMs] = marker.files[i]!;",
    "    const st = lstatSync(`${run.dir}/files/${path}`);",
    '    if (path !== run.files[i]!.path || !st.isFile() || st.ino !== ino || st.size !== size || st.mtimeMs !== mtimeMs || st.ctimeMs !== ctimeMs || (st.mode & 0o222) !== 0 || ((st.mode & 0o100) !== 0) !== (run.files[i]!.is_executable === true)) fail("run directory changed");',
    "  }",
    '  if (count(`${run.dir}/files`) !== run.files.length) fail("run directory changed");',
    "}",
    'if (!statSync(memo.program).isFile()) fail("no program");',
    "accessSync(memo.program, constants.X_OK);",
    "const st0 = fstatSync(0);",
    'const params = JSON.parse(st0.isFIFO() || st0.isFile() ? readFileSync(0, "utf8") : "{}") as unknown;',
    "const valid = (v: unknown, s: Schema): boolean => {",
    '  if (s.type === "object") {',
    '    if (typeof v !== "object" || v === null || Array.isArray(v)) return false;',
    "    const o = v as Record<string, unknown>;",
    "    if (s.required?.some((k) => !(k in o))) return false;",
    "    for (const [k, x] of Object.entries(o)) { const p = s.properties?.[k]; if (p ? !valid(x, p) : s.additionalProperties === false) return false; }",
    "    return true;",
    "  }",
    '  if (s.type === "array") return Array.isArray(v) && (s.items === undefined || v.every((x) => valid(x, s.items!)));',
    '  if (s.type === "string" || s.type === "number" || s.type === "boolean") return typeof v === s.type;',
    '  if (s.type === "integer") return Number.isInteger(v);',
    "  return true;",
    "};",
    'if (!valid(params, memo.schema)) fail("parameters invalid");',
    'const fds = handed.map((f) => openSync(f, "r"));',
    'const p = Bun.spawn(command, { stdio: [new TextEncoder().encode(`${JSON.stringify(params)}\\n`), "pipe", "pipe", ...fds], detached: true });',
    "for (const fd of fds) closeSync(fd);",
    ...ENFORCED_PUMP_AND_EXIT,
  ]);
}

/**
 * Writes the strict verifier's memo for a call of `tool` from `cwd` with `env` into `memoDir`, from
 * kiwi's own launch memo of that tool (`launch`: its JSON body), so both check the very same paths.
 */
export function strictVerifierMemo(verifier: string, memoDir: string, tool: string, cwd: string, env: Record<string, string>, launch: { root: string; watch: unknown[]; lookups: unknown[]; runDirs: { name: string; files: unknown[] }[]; schema: unknown }, cacheDir: string, program: string): void {
  const self = statSync(verifier);
  let text = "";
  for (const n of Object.keys(env).sort()) text += `${n}=${env[n]}\0`;
  const key = new Bun.CryptoHasher("sha256").update(`${verifier} ${self.size} ${self.mtimeMs} ${self.ctimeMs} ${self.ino}\0${cwd}\0${tool}\0off\0${text}`).digest("hex");
  const body = JSON.stringify({ root: launch.root, watch: launch.watch, lookups: launch.lookups, runDirs: launch.runDirs.map((r) => ({ dir: join(cacheDir, "runs", r.name), files: r.files })), program, schema: launch.schema });
  mkdirSync(memoDir, { recursive: true });
  writeFileSync(join(memoDir, key), `${new Bun.CryptoHasher("sha256").update(body).digest("hex")}\n${body}`);
}

/**
 * A compiled Bun binary (kiwi's build flags) that does the least a staged check that proves the
 * tree can do, and nothing of the checking itself: ask git what is staged (`git diff --cached
 * --name-only`), meanwhile prove the entries a verdict depends on unchanged (one lstat each of the
 * NUL-separated paths in `list`, relative to `base`: the tool folders and manifests, as kiwi's staged
 * memo names them) and the lockfile's bytes (read and sha256), then print how many paths are staged.
 * No validation, no comparison with HEAD, no memo: what is left of the target's budget for those.
 *   staged-prover <list> <base> <lockfile>
 */
export function stagedProverBinary(dir: string): string {
  return compileBinary(dir, "staged-prover", [
    'import { lstatSync, readFileSync } from "node:fs";',
    "const [list, base, lockfile] = process.argv.slice(2) as [string, string, string];",
    'const git = Bun.spawn(["git", "diff", "--cached", "--name-only", "-z"], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });',
    "let identity = 0;",
    'for (const name of readFileSync(list, "utf8").split("\0")) {',
    "  if (name === \"\") continue;",
    "  const st = lstatSync(`${base}/${name}`);",
    "  identity += st.size + st.mtimeMs + st.ctimeMs + st.ino;",
    "}",
    'const digest = new Bun.CryptoHasher("sha256").update(readFileSync(lockfile)).digest("hex");',
    "const [staged, code] = await Promise.all([new Response(git.stdout).text(), git.exited]);",
    'console.log(staged.split("\0").filter(Boolean).length, digest.slice(0, 12), identity > 0);',
    "process.exit(code);",
  ]);
}

/** The child's output forwarded as kiwi forwards a tool's, then its exit code as the binary's. */
const PUMP_AND_EXIT = [
  "const pump = async (s: ReadableStream<Uint8Array>, to: typeof Bun.stdout) => { for await (const c of s) await Bun.write(to, c); };",
  "await Promise.all([pump(p.stdout, Bun.stdout), pump(p.stderr, Bun.stderr), p.exited]);",
  "process.exit(p.exitCode ?? 1);",
];

/**
 * PUMP_AND_EXIT with what kiwi enforces while a tool runs: its timeout, the signals it passes on to
 * the tool's group, the output cap, and no process of the group left behind.
 */
const ENFORCED_PUMP_AND_EXIT = [
  "const kill = (sig: string) => { try { process.kill(-p.pid, sig); } catch {} };",
  'const timer = setTimeout(() => kill("SIGTERM"), 300_000);',
  'const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((sig) => { const h = () => kill(sig); process.on(sig, h); return [sig, h] as const; });',
  "let sent = 0;",
  'const pump = async (s: ReadableStream<Uint8Array>, to: typeof Bun.stdout) => { for await (const c of s) { sent += c.byteLength; if (sent > 10_485_760) kill("SIGTERM"); else await Bun.write(to, c); } };',
  "await Promise.all([pump(p.stdout, Bun.stdout), pump(p.stderr, Bun.stderr), p.exited]);",
  "clearTimeout(timer);",
  "for (const [sig, h] of handlers) process.off(sig, h);",
  'try { process.kill(-p.pid, 0); kill("SIGKILL"); } catch {}',
  "process.exit(p.exitCode ?? 1);",
];

/** Compiles `lines` with kiwi's build flags into `dir`/`name`. */
function compileBinary(dir: string, name: string, lines: string[]): string {
  const source = join(dir, `${name}.ts`);
  const out = join(dir, name);
  writeFileSync(source, `${lines.join("\n")}\n`);
  const build = Bun.spawnSync([process.execPath, "build", "--compile", "--minify", "--bytecode", "--format=esm", "--compile-jit-policy=10", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", source, "--outfile", out], { stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`compiling the ${name} binary failed: ${build.stderr.toString()}`);
  return out;
}

/** Runs a command to completion and returns its wall time in ms; a failing run stops the benchmark. */
export async function timeCommand(cmd: string[], opts: { cwd: string; env: Record<string, string>; stdin?: string }): Promise<number> {
  const started = performance.now();
  const p = Bun.spawn(cmd, { cwd: opts.cwd, env: opts.env, stdin: opts.stdin ? new TextEncoder().encode(opts.stdin) : "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${out}${err}`);
  return ms;
}

/**
 * Times a baseline and the cases against it, alternating them run by run so drift in machine load
 * hits all alike (one warm-up each), and prints each median with its difference and ratio.
 */
export async function compareAlternating(title: string, runs: number, baseline: [string, () => Promise<number>], cases: [string, () => Promise<number>][]): Promise<Record<string, number>> {
  const all = [baseline, ...cases];
  for (const [, run] of all) await run();
  const times = all.map(() => [] as number[]);
  for (let i = 0; i < runs; i++) for (const [j, [, run]] of all.entries()) times[j]!.push(await run());
  const medians = times.map(median);
  const base = medians[0]!;
  console.log(`${title}: ${runs} runs each, medians`);
  const width = Math.max(...all.map(([name]) => name.length));
  for (const [j, [name]] of all.entries()) {
    const m = medians[j]!;
    const delta = j === 0 ? "(baseline)" : `${m - base >= 0 ? "+" : ""}${(m - base).toFixed(1)} ms  x${(m / base).toFixed(2)}`;
    console.log(`  ${name.padEnd(width)}  ${m.toFixed(1).padStart(8)} ms  ${delta}`);
  }
  return Object.fromEntries(all.map(([name], j) => [name, medians[j]!]));
}
