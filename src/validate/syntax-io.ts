// Script syntax checks, the I/O half: python3 parses every .py entry point in ONE process (ast,
// no bytecode written, nothing executed) and `bash -n` parses each .sh file, a few at a time. The
// interpreters get a minimal environment so no rc file, BASH_ENV or .pth hook runs. Verdicts are
// remembered by content digest (and interpreter) in <cache>/check/syntax-v1.json, so unchanged
// scripts are not parsed again: spawning is most of `kiwi check`'s time on a large tree.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { sha256Hex } from "../integrity/digest.ts";
import type { SyntaxLanguage, SyntaxRequest, SyntaxResults, SyntaxVerdict } from "./syntax.ts";

/** Where verdicts are remembered, relative to the cache directory. */
export const SYNTAX_CACHE_FILE = join("check", "syntax-v1.json");
/** Most verdicts remembered; the oldest are dropped first. */
const SYNTAX_CACHE_LIMIT = 20_000;

/** Longest a batch of checks may take before it is killed (a verdict, not a hang). */
const TIMEOUT_MS = 30_000;
/** bash processes running at once. */
const BASH_PARALLEL = 8;

// Reads a JSON list of paths on stdin; prints one JSON verdict per path. compile() with
// PyCF_ONLY_AST parses exactly as ast.parse does and writes no bytecode.
const PYTHON_CHECKER = `
import ast, json, sys
out = []
for path in json.load(sys.stdin):
    try:
        with open(path, "rb") as f:
            source = f.read()
        compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        out.append({"ok": True})
    except SyntaxError as e:
        out.append({"ok": False, "line": e.lineno, "column": e.offset, "message": e.msg})
    except (ValueError, UnicodeDecodeError, OSError, RecursionError, MemoryError) as e:
        out.append({"ok": False, "message": str(e) or type(e).__name__})
json.dump(out, sys.stdout)
`;

export interface SyntaxCheckOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** kiwi's cache directory; without it nothing is remembered. */
  cacheDir?: string;
}

/** Runs every requested check; an absent interpreter is reported in `missing`, never thrown. */
export async function runSyntaxChecks(requests: readonly SyntaxRequest[], options: SyntaxCheckOptions = {}): Promise<SyntaxResults> {
  const results: SyntaxResults = { verdicts: new Map(), missing: new Set() };
  const env = minimalEnv(options.env ?? process.env);
  const cache = options.cacheDir ? loadCache(join(options.cacheDir, SYNTAX_CACHE_FILE)) : undefined;
  const todo: Record<SyntaxLanguage, { abs: string; key?: string }[]> = { python: [], bash: [] };
  const seen = new Set<string>();
  for (const language of ["python", "bash"] as const) {
    const wanted = requests.filter((r) => r.language === language && !seen.has(r.abs));
    if (wanted.length === 0) continue;
    const interpreter = Bun.which(INTERPRETERS[language], { PATH: env.PATH ?? "" });
    if (!interpreter) {
      results.missing.add(language);
      continue;
    }
    const identity = interpreterIdentity(interpreter);
    for (const r of wanted) {
      seen.add(r.abs);
      const key = cache ? contentKey(language, identity, r.abs) : undefined;
      const known = key ? cache?.entries[key] : undefined;
      if (known) results.verdicts.set(r.abs, known);
      else todo[language].push({ abs: r.abs, key });
    }
  }
  await Promise.all([checkPython(todo.python.map((t) => t.abs), env, results), checkBash(todo.bash.map((t) => t.abs), env, results)]);
  if (cache) {
    let added = false;
    for (const t of [...todo.python, ...todo.bash]) {
      const verdict = results.verdicts.get(t.abs);
      // Only real parser verdicts are remembered, never "could not check".
      if (t.key && verdict && (verdict.ok || verdict.line !== undefined)) {
        cache.entries[t.key] = verdict;
        added = true;
      }
    }
    if (added) saveCache(cache);
  }
  return results;
}

const INTERPRETERS: Record<SyntaxLanguage, string> = { python: "python3", bash: "bash" };

/** Which interpreter judged a file: its path, size and mtime (a new interpreter re-checks everything). */
function interpreterIdentity(path: string): string {
  try {
    const st = statSync(path);
    return `${path}:${st.size}:${st.mtimeMs}`;
  } catch {
    return path;
  }
}

function contentKey(language: SyntaxLanguage, identity: string, abs: string): string | undefined {
  try {
    return sha256Hex(`${language}\0${identity}\0`).slice(0, 16) + sha256Hex(readFileSync(abs));
  } catch {
    return undefined;
  }
}

interface SyntaxCache {
  path: string;
  entries: Record<string, SyntaxVerdict>;
}

function loadCache(path: string): SyntaxCache {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { entries?: unknown };
    if (parsed && typeof parsed.entries === "object" && parsed.entries !== null && !Array.isArray(parsed.entries)) {
      return { path, entries: Object.assign(Object.create(null), parsed.entries) as Record<string, SyntaxVerdict> };
    }
  } catch {
    // A missing or unreadable cache is an empty one.
  }
  return { path, entries: Object.create(null) as Record<string, SyntaxVerdict> };
}

/** Writes the cache atomically (temp file + rename); failure only costs the next run time. */
function saveCache(cache: SyntaxCache): void {
  const keys = Object.keys(cache.entries);
  const kept = keys.length > SYNTAX_CACHE_LIMIT ? keys.slice(keys.length - SYNTAX_CACHE_LIMIT) : keys;
  const entries: Record<string, SyntaxVerdict> = {};
  for (const k of kept) entries[k] = cache.entries[k]!;
  try {
    writeFileAtomic(cache.path, `${JSON.stringify({ version: 1, entries })}\n`);
  } catch {
    // Read-only or full cache directory: checking still worked.
  }
}

function minimalEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = { LANG: "C.UTF-8", PYTHONDONTWRITEBYTECODE: "1" };
  if (env.PATH) out.PATH = env.PATH;
  // pyenv and similar shims find the interpreter through HOME.
  if (env.HOME) out.HOME = env.HOME;
  if (env.PYENV_ROOT) out.PYENV_ROOT = env.PYENV_ROOT;
  if (env.PYENV_VERSION) out.PYENV_VERSION = env.PYENV_VERSION;
  return out;
}

async function checkPython(paths: string[], env: Record<string, string>, results: SyntaxResults): Promise<void> {
  if (paths.length === 0) return;
  const python = Bun.which("python3", { PATH: env.PATH ?? "" })!;
  // -I isolates from the user's environment and site-packages, -S skips site (.pth hooks), -B writes no bytecode.
  const output = await run([python, "-I", "-S", "-B", "-c", PYTHON_CHECKER], env, JSON.stringify(paths));
  let verdicts: SyntaxVerdict[] | undefined;
  try {
    verdicts = JSON.parse(output.stdout) as SyntaxVerdict[];
  } catch {
    verdicts = undefined;
  }
  for (const [i, path] of paths.entries()) {
    const v = verdicts?.[i];
    results.verdicts.set(path, v ?? { ok: false, message: `python3 could not check the file (${output.stderr.trim().split("\n").pop() || `exit ${output.exitCode}`})` });
  }
}

async function checkBash(paths: string[], env: Record<string, string>, results: SyntaxResults): Promise<void> {
  if (paths.length === 0) return;
  const bash = Bun.which("bash", { PATH: env.PATH ?? "" })!;
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const output = await run([bash, "--noprofile", "--norc", "-n", path], env);
      results.verdicts.set(path, output.exitCode === 0 ? { ok: true } : withLineEnds(path, parseBashError(path, output.stderr, output.exitCode)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(BASH_PARALLEL, paths.length) }, worker));
}

/**
 * A failed verdict on a script saved with CRLF line ends says so: bash reads each CR as part of
 * the line (`then\r` is no keyword), so its own message ("unexpected end of file") hides the cause.
 */
function withLineEnds(path: string, verdict: SyntaxVerdict): SyntaxVerdict {
  if (verdict.ok) return verdict;
  try {
    if (readFileSync(path, "latin1").includes("\r\n")) return { ...verdict, crlf: true };
  } catch {
    // Unreadable now: the verdict stands as bash gave it.
  }
  return verdict;
}

/** `path: line 3: syntax error near unexpected token `fi'` -> line 3 and the message. */
export function parseBashError(path: string, stderr: string, exitCode: number): SyntaxVerdict {
  const first = stderr.split("\n").find((l) => l.trim() !== "") ?? "";
  const m = /: line (\d+): (.*)$/.exec(first.startsWith(path) ? first.slice(path.length) : first);
  if (m) return { ok: false, line: Number(m[1]), message: m[2]! };
  return { ok: false, message: first.trim() || `bash -n exited with ${exitCode}` };
}

async function run(argv: string[], env: Record<string, string>, stdin?: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(argv, {
    env,
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), TIMEOUT_MS);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}
