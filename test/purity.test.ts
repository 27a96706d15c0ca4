// Pure modules never touch disk, processes or network (shared/STYLE.md, "Pure by default").
// I/O lives in files whose names say so (`*-io.ts`, `fs.ts`), which this scan skips.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const SRC = join(import.meta.dir, "..", "src");
const PURE_DIRS = ["integrity", "schema", "resolve", "validate", "manifest", "registry", "trust"];
const FORBIDDEN = [
  { what: "node:fs", re: /from\s+["'](node:)?fs(\/promises)?["']/ },
  { what: "child_process", re: /from\s+["'](node:)?child_process["']/ },
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

const isIoFile = (path: string) => /(-io|\/fs)\.ts$/.test(path);
const pureFiles = [
  ...PURE_DIRS.flatMap((d) => listTs(join(SRC, d))),
  ...listTs(SRC).filter((p) => /(^|\/|-)plan\.ts$/.test(p)),
].filter((p) => !isIoFile(p));

describe("pure modules", () => {
  test("there are pure modules to check", () => {
    expect(pureFiles.length).toBeGreaterThan(5);
  });

  test.each(pureFiles.map((p) => [p.slice(SRC.length + 1), p]))("%s does no I/O", (_name, path) => {
    const text = readFileSync(path, "utf8");
    const hits = FORBIDDEN.filter((f) => f.re.test(text)).map((f) => f.what);
    expect(hits).toEqual([]);
  });

  test("no module outside the entry points (cli.ts, bin.ts) calls process.exit", () => {
    const offenders = listTs(SRC).filter((p) => !p.endsWith("/cli.ts") && !p.endsWith("/bin.ts") && /process\.exit\s*\(/.test(readFileSync(p, "utf8")));
    expect(offenders).toEqual([]);
  });
});
