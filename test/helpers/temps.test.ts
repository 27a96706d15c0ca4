// Tests leave no folders behind: every test file that makes temp folders (helpers/tree.ts
// makeTemp, directly or through a helper that does) removes them with cleanupTemps after its tests.
// Without it a full run left ~40 folders in the temp directory, and CI machines and laptops
// collected them run after run.
import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const TEST = join(import.meta.dir, "..");
const files = readdirSync(TEST, { withFileTypes: true, recursive: true })
  .filter((e) => e.isFile() && e.name.endsWith(".ts") && !join(e.parentPath, e.name).includes(`${TEST}/fixtures/`))
  .map((e) => join(e.parentPath, e.name));
const texts = new Map(files.map((f) => [f, readFileSync(f, "utf8")]));
const IMPORT = /(?:import|export)\s[^"']*?from\s+["'](\.[^"']+)["']/g;

const memo = new Map<string, boolean>();
/** Whether loading `file` can make a temp folder: it calls makeTemp or imports a test helper that does. */
function makesTemps(file: string): boolean {
  const known = memo.get(file);
  if (known !== undefined) return known;
  memo.set(file, false);
  const text = texts.get(file) ?? "";
  const helpers = [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), m[1]!)).filter((p) => p.startsWith(TEST) && texts.has(p));
  const result = /\bmakeTemp\(/.test(text.replace(/export function makeTemp\(/, "")) || helpers.some(makesTemps);
  memo.set(file, result);
  return result;
}

describe("temp folders", () => {
  test("every test file that can make one removes them after its tests (cleanupTemps)", () => {
    // Called or handed on (afterAll(cleanupTemps), afterAll(() => { …; cleanupTemps(); }), useRegistry(cleanupTemps)).
    const cleans = (text: string) => /\bcleanupTemps\b/.test(text.replace(/import\s*\{[^}]*\}\s*from\s*["'][^"']+["'];?/g, ""));
    const leaking = files.filter((f) => f.endsWith(".test.ts") && makesTemps(f) && !cleans(texts.get(f)!));
    expect(leaking.map((f) => relative(TEST, f))).toEqual([]);
  });
});
