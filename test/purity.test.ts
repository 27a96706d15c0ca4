// Pure modules never touch disk, processes or network (shared/STYLE.md, "Pure by default"), and
// neither does anything they load: this test resolves the import graph of src/ (static imports,
// re-exports, `import()` and `require()`; type-only imports load nothing) and follows every chain
// from each pure module. I/O lives in files whose names say so (`*-io.ts`, `fs.ts`). A folder's
// `index.ts` is its header and nothing else: no barrels (see "no barrels" below).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const SRC = join(import.meta.dir, "..", "src");
const PURE_DIRS = ["findings", "integrity", "schema", "resolve", "validate", "manifest", "registry", "trust", "deps", "formats"];
/** Node modules that reach the disk, processes or the network. */
const IO_MODULES = /^(node:)?(fs|fs\/promises|child_process|net|http|https|http2|dgram|dns|tls|worker_threads)$/;
/** What a pure module must not do in its own text, whatever it imports. */
const FORBIDDEN = [
  { what: "Bun.spawn", re: /Bun\.spawn/ },
  { what: "fetch", re: /(^|[^.\w])fetch\s*\(/ },
  { what: "Bun.file/Bun.write", re: /Bun\.(file|write)\s*\(/ },
  { what: "process.exit", re: /process\.exit\s*\(/ },
  { what: "console output", re: /console\.(log|error|warn|info)\s*\(|process\.(stdout|stderr)\.write/ },
];

function listTs(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => join(e.parentPath, e.name));
}

/**
 * Source text without comments: what runs. One pass, so whichever comment opens first wins: a line
 * comment that mentions `schemas/*.json` must not open a block comment that hides the imports below.
 */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|(^|[^:"'`])\/\/.*$/gm, (_m, before: string | undefined) => before ?? "");

const SPECIFIER = /(?:^|[^\w.$])(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|(?:^|[^\w.$])(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g;

/** The modules a source text loads at run time (or, with `types`, names at all): relative ones resolved against `file`. */
export function runtimeImports(file: string, text: string, types = false): string[] {
  const out: string[] = [];
  for (const m of code(text).matchAll(SPECIFIER)) {
    if (m[1] && !types) continue; // `import type` / `export type`: erased before run time
    const spec = m[2] ?? m[3];
    if (spec) out.push(spec.startsWith(".") ? resolve(dirname(file), spec) : spec);
  }
  return out;
}

/** Calls that reach the disk, processes or the network without importing a node module. */
const IO_CALLS = /Bun\.(spawn|spawnSync|file|write|connect|listen|serve|udpSocket|\$)\b|(^|[^.\w])fetch\s*\(/;


const files = listTs(SRC);
const texts = new Map(files.map((f) => [f, readFileSync(f, "utf8")]));
const graph = new Map(files.map((f) => [f, runtimeImports(f, texts.get(f)!)]));
/** I/O by name (`*-io.ts`, `fs.ts`) or by what the file calls (exec/http.ts fetches, exec/subprocess.ts spawns). */
const isIoFile = (path: string) => /(-io|\/fs)\.ts$/.test(path) || IO_CALLS.test(code(texts.get(path) ?? ""));
const isPure = (path: string) =>
  !isIoFile(path) && !path.endsWith("/index.ts") && (PURE_DIRS.some((d) => path.startsWith(join(SRC, d) + "/")) || /(^|\/|-)plan(-render)?\.ts$/.test(path));
const pureFiles = files.filter(isPure);

/** The first chain from `start` to an I/O module or file, or undefined. */
function ioChain(start: string): string[] | undefined {
  const from = new Map<string, string>([[start, ""]]);
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const next of graph.get(current) ?? []) {
      if (from.has(next)) continue;
      from.set(next, current);
      if (IO_MODULES.test(next) || isIoFile(next)) {
        const chain = [next];
        for (let at = current; at !== ""; at = from.get(at)!) chain.push(at);
        return chain.reverse().map((p) => p.replace(`${SRC}/`, ""));
      }
      if (existsSync(next) && next.endsWith(".ts")) queue.push(next);
    }
  }
  return undefined;
}

describe("the import graph", () => {
  test("sees static imports, re-exports, import() and require(), and skips type-only imports", () => {
    const text = [
      'import { a } from "./a.ts";',
      'export { b } from "./b.ts";',
      'import type { C } from "./c.ts";',
      'const d = await import("./d.ts");',
      'const fs = require("node:fs").readFileSync;',
      '// require("node:child_process") in a comment loads nothing',
    ].join("\n");
    expect(runtimeImports("/src/x/y.ts", text)).toEqual(["/src/x/a.ts", "/src/x/b.ts", "/src/x/d.ts", "node:fs"]);
    // A line comment naming a glob such as schemas/*.json opens no block comment.
    expect(runtimeImports("/src/x/y.ts", '// writes schemas/*.schema.json\nimport { e } from "./e.ts";\n/** doc */')).toEqual(["/src/x/e.ts"]);
  });

  test("there are pure modules to check", () => {
    expect(pureFiles.length).toBeGreaterThan(5);
  });

  test("every require() and import() in src/ names its module as a string, so the graph sees it", () => {
    // A computed specifier would load a module this test cannot follow. The exceptions name their
    // module all the same: a file embedded with `import x from "m" with { type: "file" }` (its
    // static import is in the graph) and loaded later as `import(x as unknown as string)`; and a
    // build define (`declare const X: string | undefined`, a string literal once scripts/build.ts
    // defines it) naming a bundle of a module the same file imports by name when X is undefined
    // (bin.ts's replay).
    const embeddedFile = (text: string, name: string) =>
      new RegExp(`^import ${name} from "[^"]+" with \\{ type: "file" \\};$`, "m").test(text) ||
      new RegExp(`^declare const ${name}: string \\| undefined;$`, "m").test(text);
    const hidden = files
      .filter((f) => {
        const text = code(texts.get(f)!);
        return [...text.matchAll(/(^|[^\w.$])(require|import)\(\s*([^"'\s)][\w$]*)/gm)].some((m) => !(m[2] === "import" && embeddedFile(text, m[3]!)));
      })
      .map((f) => f.slice(SRC.length + 1));
    expect(hidden).toEqual([]);
  });

  test("a file that fetches or spawns is an I/O file whatever its name", () => {
    expect(isIoFile(join(SRC, "exec", "http.ts"))).toBe(true);
    expect(isIoFile(join(SRC, "exec", "subprocess.ts"))).toBe(true);
    expect(isIoFile(join(SRC, "integrity", "digest.ts"))).toBe(false);
  });

  test.each(pureFiles.map((p) => [p.slice(SRC.length + 1), p]))("%s reaches no disk, process or network module", (_name, path) => {
    expect(ioChain(path)).toBeUndefined();
  });

  test.each(pureFiles.map((p) => [p.slice(SRC.length + 1), p]))("%s does no I/O itself", (_name, path) => {
    const text = readFileSync(path, "utf8");
    expect(FORBIDDEN.filter((f) => f.re.test(text)).map((f) => f.what)).toEqual([]);
  });
});

describe("no import circles", () => {
  // Type-only imports count here: a circle of types still means two modules each need the other.
  const named = new Map(files.map((f) => [f, runtimeImports(f, readFileSync(f, "utf8"), true).filter((t) => graph.has(t))]));

  test("no two modules of src/ import each other, however indirectly", () => {
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const next of named.get(f) ?? []) {
        if (state.get(next) === "open") circles.push([...stack.slice(stack.indexOf(next)), next].map((p) => p.replace(`${SRC}/`, "")).join(" -> "));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(circles).toEqual([]);
  });
});

describe("the folder graph", () => {
  // Who may import whom, one row per folder of src/ (a top-level file is its own row). Drawn in
  // README "Developing kiwi". Layers, top down:
  //   entry (cli, bin) -> commands -> ops -> domain folders -> base (context, self, integrity, errors) -> findings
  // with ui/ beside ops/: commands hand ops/ results to ui/, so ui/ may name ops/ types but never
  // loads ops/. Domain folders never reach ops/, ui/ or commands/. A row lists every folder the
  // folder may import, type-only imports included (a type is still a dependency); an edge the
  // table lacks fails below, naming the file. Add a row entry only when the new edge keeps the layers.
  // findings/ (the Finding type, the rule table, finding builders) is the very bottom: every folder
  // may import it, so no row needs to name it, and it imports nothing.
  const BASE = ["context", "self", "findings", "integrity", "errors"];
  const ALLOWED: Record<string, string[]> = {
    bin: ["cli", "commands", "exec", "wasm"],
    cli: ["commands", "ui", "resolve", ...BASE],
    commands: ["ops", "ui", "completion", "exec", "init", "lockfile", "mcp", "schema", ...BASE],
    ops: ["cache", "deps", "exec", "formats", "hook", "init", "lockfile", "manifest", "mcp", "registry", "resolve", "schema", "trust", "validate", ...BASE],
    ui: ["exec", "formats", "lockfile", "mcp", ...BASE],
    // domain
    cache: ["integrity", "errors"],
    completion: [],
    deps: ["cache", "manifest", "schema", "context", "integrity", "errors"],
    exec: ["cache", "deps", "lockfile", "manifest", "resolve", "schema", "validate", "wasm", ...BASE],
    formats: ["deps", "manifest", "schema", "integrity", "errors"],
    hook: ["lockfile", "manifest", "errors"],
    init: ["manifest"],
    lockfile: ["cache", "manifest", "resolve", "schema", "validate", "integrity", "errors"],
    manifest: ["cache", "schema", "integrity", "errors"],
    // exec/: a stdio server starts as the subprocess primitive starts a tool (launch-files-io.ts).
    mcp: ["exec", "lockfile", "manifest", "resolve", "context", "integrity", "errors"],
    registry: ["cache", "exec", "manifest", "schema", "trust", "integrity", "errors"],
    resolve: ["manifest", "schema"],
    schema: [],
    trust: ["integrity", "errors"],
    validate: ["cache", "deps", "manifest", "resolve", "schema", "integrity"],
    wasm: ["cache", "manifest", "self", "integrity", "errors"],
    // base
    context: [],
    self: [],
    findings: [],
    integrity: ["errors"],
    errors: [],
  };
  /** Folders whose types another folder may name without loading them. */
  const TYPES_ONLY: Record<string, string[]> = { ui: ["ops"] };
  const DOMAIN = ["cache", "completion", "deps", "exec", "formats", "hook", "init", "lockfile", "manifest", "mcp", "registry", "resolve", "schema", "trust", "validate", "wasm"];

  const folderOf = (path: string) => {
    const rel = path.slice(SRC.length + 1);
    return rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : rel.replace(/\.ts$/, "");
  };
  const typeOnly = new Map(files.map((f) => [f, new Set(runtimeImports(f, texts.get(f)!, true))]));
  /** Every import crossing a folder boundary: [file, target, type-only?]. */
  const crossings = files.flatMap((f) => {
    const runtime = new Set(graph.get(f));
    return [...typeOnly.get(f)!]
      .filter((t) => t.startsWith(`${SRC}/`) && folderOf(t) !== folderOf(f))
      .map((t) => [f, t, !runtime.has(t)] as const);
  });
  /** Why an import from folder `from` to folder `to` is not allowed, or undefined. */
  function wrongEdge(from: string, to: string, types: boolean): string | undefined {
    if (!(from in ALLOWED)) return `${from}/ has no row in the folder table`;
    if (to === "findings") return undefined;
    if (ALLOWED[from]!.includes(to)) return undefined;
    if (types && TYPES_ONLY[from]?.includes(to)) return undefined;
    if (TYPES_ONLY[from]?.includes(to)) return `${from} -> ${to} loads ${to}/ at run time; ${from}/ may only name its types`;
    return `${from} -> ${to} is not an edge of the folder graph`;
  }

  test("the table keeps the layers: no domain or base folder reaches ops/, ui/, commands/ or the entry points", () => {
    const upward = ["ops", "ui", "commands", "cli", "bin"];
    const bad = [...DOMAIN, ...BASE].flatMap((f) => (ALLOWED[f] ?? []).filter((to) => upward.includes(to)).map((to) => `${f} -> ${to}`));
    expect(bad).toEqual([]);
    expect(ALLOWED.ops!.filter((to) => ["ui", "commands", "cli", "bin"].includes(to))).toEqual([]);
    expect(ALLOWED.ui!.filter((to) => ["ops", "commands", "cli", "bin"].includes(to))).toEqual([]);
    expect(BASE.flatMap((b) => ALLOWED[b]!.filter((to) => !BASE.includes(to)))).toEqual([]);
  });

  test("a wrong edge is caught: domain -> ops, ui loading ops, an unknown folder", () => {
    expect(wrongEdge("lockfile", "ops", false)).toBe("lockfile -> ops is not an edge of the folder graph");
    expect(wrongEdge("lockfile", "ops", true)).toBe("lockfile -> ops is not an edge of the folder graph");
    expect(wrongEdge("ui", "ops", true)).toBeUndefined();
    expect(wrongEdge("ui", "ops", false)).toContain("may only name its types");
    expect(wrongEdge("newfolder", "errors", false)).toContain("no row");
    expect(wrongEdge("commands", "ops", false)).toBeUndefined();
    expect(wrongEdge("cache", "findings", false)).toBeUndefined();
    expect(wrongEdge("findings", "errors", false)).toBe("findings -> errors is not an edge of the folder graph");
  });

  test("every use case in ops/ is named as the I/O it does (*-io.ts), so the purity rules read the same there", () => {
    const ops = files.filter((f) => f.startsWith(join(SRC, "ops") + "/") && !f.endsWith("/index.ts"));
    expect(ops.length).toBeGreaterThan(10);
    expect(ops.filter((f) => !f.endsWith("-io.ts")).map((f) => f.slice(SRC.length + 1))).toEqual([]);
  });

  test("no two modules of src/ share a file name (index.ts aside): one name, one meaning", () => {
    const seen = new Map<string, string[]>();
    for (const f of files) {
      const name = f.slice(f.lastIndexOf("/") + 1);
      if (name !== "index.ts") seen.set(name, [...(seen.get(name) ?? []), f.slice(SRC.length + 1)]);
    }
    expect([...seen.values()].filter((paths) => paths.length > 1)).toEqual([]);
  });

  test("every folder of src/ has a row", () => {
    // Declaration files (env.d.ts) load nothing and import nothing.
    expect([...new Set(files.filter((f) => !f.endsWith(".d.ts")).map(folderOf))].filter((f) => !(f in ALLOWED)).sort()).toEqual([]);
  });

  /** The first folder cycle in `edges` as a chain `a -> b -> ... -> a`, or undefined. */
  function folderCycle(edges: Record<string, readonly string[]>): string | undefined {
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string): string | undefined => {
      state.set(f, "open");
      stack.push(f);
      for (const next of edges[f] ?? []) {
        if (state.get(next) === "open") return [...stack.slice(stack.indexOf(next)), next].join(" -> ");
        if (!state.has(next)) {
          const found = visit(next);
          if (found) return found;
        }
      }
      stack.pop();
      state.set(f, "done");
      return undefined;
    };
    for (const f of Object.keys(edges).sort()) {
      if (state.has(f)) continue;
      const found = visit(f);
      if (found) return found;
    }
    return undefined;
  }
  /** The folder edges the code has, type-only imports included: from -> [to, one importing file]. */
  const used = new Map<string, Map<string, string>>();
  for (const [f, t] of crossings) {
    const row = used.get(folderOf(f)) ?? new Map<string, string>();
    if (!row.has(folderOf(t))) row.set(folderOf(t), f.slice(SRC.length + 1));
    used.set(folderOf(f), row);
  }

  test("a folder cycle is found and printed as a chain", () => {
    expect(folderCycle({ a: ["b"], b: ["c"], c: ["a"], d: [] })).toBe("a -> b -> c -> a");
    expect(folderCycle({ cache: ["manifest"], manifest: ["cache"] })).toBe("cache -> manifest -> cache");
    expect(folderCycle({ a: ["b", "c"], b: ["c"], c: [] })).toBeUndefined();
  });

  test("the folder graph has no cycle: two folders never need each other, however indirectly", () => {
    // Module cycles are caught above; this is the coarser rule that keeps the folders in layers
    // (cache <-> manifest, exec <-> wasm and manifest <-> schema once were such cycles).
    const actual = Object.fromEntries([...used].map(([from, row]) => [from, [...row.keys()]]));
    const chain = folderCycle(actual)?.split(" -> ") ?? [];
    // Each step of the chain with one file that makes it, so the failure says where to cut.
    expect(chain.slice(1).map((to, i) => `${chain[i]} -> ${to} (${used.get(chain[i]!)!.get(to)})`)).toEqual([]);
    expect(folderCycle({ ...ALLOWED, ui: [...ALLOWED.ui!, ...(TYPES_ONLY.ui ?? [])] })).toBeUndefined();
  });

  test("every edge of the table between non-base folders is one the code has, so the table (and the README's graph) is the real graph", () => {
    // Rows spread BASE for brevity; any folder may use the base, so only the other entries must be real.
    const unused = Object.entries(ALLOWED).flatMap(([from, tos]) => tos.filter((to) => !BASE.includes(to) && !used.get(from)?.has(to)).map((to) => `${from} -> ${to}`));
    expect(unused).toEqual([]);
  });

  test("every import across folders is an edge of the table", () => {
    const wrong = crossings.flatMap(([f, t, types]) => {
      const why = wrongEdge(folderOf(f), folderOf(t), types);
      return why ? [`${f.slice(SRC.length + 1)} imports ${t.slice(SRC.length + 1)}: ${why}`] : [];
    });
    expect(wrong).toEqual([]);
  });
});

describe("no barrels", () => {
  // A barrel loads every module of its folder for whoever imports one name from it, which costs
  // start-up time on every call (issue 14), and a second entry point lets two importers see a
  // folder differently. So each folder's index.ts only says, in its opening comment, what the
  // folder owns and must not touch; importers name the module file itself.
  const ROOT = join(SRC, "..");
  const folders = readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);

  test("every folder of src/ has an index.ts that opens with at least two comment lines", () => {
    const bad = folders.filter((d) => {
      const text = texts.get(join(SRC, d, "index.ts"));
      return text === undefined || !/^\/\/ \S.*\n\/\/ \S/.test(text);
    });
    expect(bad).toEqual([]);
  });

  test("no index.ts exports, imports or declares anything: it is comments only", () => {
    const barrels = files.filter((f) => f.endsWith("/index.ts") && code(texts.get(f)!).trim() !== "").map((f) => f.slice(SRC.length + 1));
    expect(barrels).toEqual([]);
  });

  test("nothing in src/, test/ or scripts/ imports an index.ts", () => {
    const importers = ["src", "test", "scripts"].flatMap((d) => listTs(join(ROOT, d)));
    const wrong = importers.flatMap((f) =>
      runtimeImports(f, readFileSync(f, "utf8"), true)
        .filter((spec) => /(^|\/)index(\.ts)?$/.test(spec) || existsSync(join(spec, "index.ts")))
        .map((spec) => `${f.slice(ROOT.length + 1)} imports ${spec.replace(`${ROOT}/`, "")}`),
    );
    expect(wrong).toEqual([]);
  });
});

describe("error classes", () => {
  test("one exported class per kind of error: KiwiError, ParseProblem for every text kiwi parses, and two engine verdicts", () => {
    // manifest/'s ManifestProblem and integrity/'s JsonSyntaxError were two classes for one concept
    // (issue 18); a new parse error is a ParseProblem with a rule id, not a new class. Classes a
    // module keeps to itself (control flow that never leaves it) are not counted.
    const classes = files.flatMap((f) => [...code(texts.get(f)!).matchAll(/\bexport\s+class\s+(\w+)\s+extends\s+(?:\w+\.)?(\w*Error)\b/g)].map((m) => `${f.slice(SRC.length + 1)}: ${m[1]}`));
    expect(classes.sort()).toEqual(["errors.ts: KiwiError", "formats/pkcs7.ts: Pkcs7Error", "integrity/parse-problem.ts: ParseProblem", "validate/linear-regex.ts: UnsupportedPattern"]);
  });
});

describe("severities", () => {
  test("a finding's severity comes from the rule table (findings/rules.ts), not from a literal where it is made", () => {
    // Discovery once wrote severity: "error" beside the rule id (issue 18). The exceptions: the
    // one finding deliberately milder than its rule (an unknown SKILL.md field) and interface
    // diffs, whose severity grades a change, not a finding.
    const literal = /\bseverity:\s*"(error|warning|info)"/;
    const found = files
      .filter((f) => !f.endsWith("/findings/rules.ts") && !f.includes("/validate/meta/"))
      .flatMap((f) => code(texts.get(f)!).split("\n").flatMap((line, i) => (literal.test(line) ? [`${f.slice(SRC.length + 1)}:${i + 1}`] : [])));
    expect(found.map((at) => at.replace(/:\d+$/, ""))).toEqual(["manifest/skill.ts", "mcp/interface-diff.ts"]);
  });
});

describe("dependencies", () => {
  test("every runtime dependency in package.json is loaded by some module of src/ (consola was declared and never used)", () => {
    const pkg = JSON.parse(readFileSync(join(SRC, "..", "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const loaded = new Set([...graph.values()].flat().filter((spec) => !spec.startsWith("/") && !spec.startsWith("node:")));
    const used = (name: string) => [...loaded].some((spec) => spec === name || spec.startsWith(`${name}/`));
    expect(Object.keys(pkg.dependencies).filter((name) => !used(name))).toEqual([]);
  });
});

describe("entry points", () => {
  test("no module outside the entry points (cli.ts, bin.ts, programs kiwi runs in a sandbox from a checkout) calls process.exit", () => {
    // A sandbox helper (exec/net-bridge-io.ts) is its own entry point when a checkout runs it with
    // bun; it may exit only under `import.meta.main`.
    const standalone = (text: string) => /^if \(import\.meta\.main\) process\.exit\(/m.test(text) && text.match(/process\.exit\s*\(/g)!.length === 1;
    const offenders = files.filter((p) => {
      const text = readFileSync(p, "utf8");
      return !p.endsWith("/cli.ts") && !p.endsWith("/bin.ts") && /process\.exit\s*\(/.test(text) && !standalone(text);
    });
    expect(offenders).toEqual([]);
  });
});
