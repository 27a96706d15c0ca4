// The manifest shape checks kiwi check runs are generated at build time (scripts/gen-schemas.ts):
// the committed module is what TypeBox's compiler builds from today's schemas, and it gives the
// verdict TypeCompiler.Compile gives, on every manifest of the fixture tree and on broken ones.
import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { renderManifestChecks } from "../../scripts/gen-schemas.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { toPlain } from "../../src/integrity/value.ts";
import { parseYaml } from "../../src/manifest/yaml.ts";
import { manifestSchemaOf } from "../../src/schema/manifest.ts";
import { kiwiManifestCheck, magrayManifestCheck } from "../../src/validate/meta/manifest-check.generated.ts";

const ROOT = join(import.meta.dir, "..", "..");
const generated = { kiwi: kiwiManifestCheck, magray: magrayManifestCheck };
const compiled = { kiwi: TypeCompiler.Compile(manifestSchemaOf("kiwi")), magray: TypeCompiler.Compile(manifestSchemaOf("magray")) };

/** Every YAML and tool.json manifest of the fixture tree, as plain documents. */
function fixtureDocs(): { dialect: "kiwi" | "magray"; name: string; doc: unknown }[] {
  const dir = join(ROOT, "test", "fixtures", "trees", "every-form", ".ai", "tools");
  const out: { dialect: "kiwi" | "magray"; name: string; doc: unknown }[] = [];
  for (const rel of readdirSync(dir, { recursive: true }) as string[]) {
    const text = () => readFileSync(join(dir, rel), "utf8");
    if (rel.endsWith(".yaml") || rel.endsWith(".yml")) out.push({ dialect: "kiwi", name: rel, doc: toPlain(parseYaml(text()).value) });
    else if (rel.endsWith("tool.json")) out.push({ dialect: "magray", name: rel, doc: toPlain(parseJsonLossless(text()).value) });
  }
  return out;
}

describe("generated manifest shape checks", () => {
  test('src/validate/meta/manifest-check.generated.ts is what TypeBox compiles from the schemas (run "bun run schemas" after changing them)', () => {
    const { path, text } = renderManifestChecks();
    expect(readFileSync(join(ROOT, path), "utf8")).toBe(text);
  });

  test("agree with TypeCompiler.Compile on the fixture tree's manifests and on broken copies of them", () => {
    const docs = fixtureDocs();
    expect(new Set(docs.map((d) => d.dialect))).toEqual(new Set(["kiwi", "magray"]));
    const broken = (doc: unknown): unknown[] => {
      if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return [];
      const d = doc as Record<string, unknown>;
      return [
        { ...d, version: 1 },
        { ...d, version: "1.0" },
        { ...d, tool_type: "nope", type: "nope" },
        { ...d, unknown_field: true },
        { ...d, config: "not a mapping" },
        { ...d, executor: 12 },
        { ...d, parameters: { a: 1 } },
        Object.fromEntries(Object.entries(d).filter(([k]) => k !== "version")),
      ];
    };
    let judged = 0;
    for (const { dialect, name, doc } of docs) {
      for (const value of [doc, ...broken(doc)]) {
        expect([name, generated[dialect](value)]).toEqual([name, compiled[dialect].Check(value)]);
        judged++;
      }
    }
    for (const value of [null, [], "x", 1, {}]) for (const dialect of ["kiwi", "magray"] as const) expect(generated[dialect](value)).toBe(compiled[dialect].Check(value));
    expect(judged).toBeGreaterThan(50);
  });
});
