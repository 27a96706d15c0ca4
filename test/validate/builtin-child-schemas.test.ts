// The built-ins' child_schemas are compiled at build time (scripts/gen-schemas.ts): the committed
// module is what ajv builds from today's built-in manifests, it covers every entry, and each
// validator reports exactly the errors a run-time compile with the same options reports, on the
// link documents of every tool of the fixture tree and on broken copies of them.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { renderBuiltinChildSchemaChecks } from "../../scripts/gen-schemas.ts";
import { BUILTIN_IDS, builtinTool } from "../../src/manifest/builtins.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { compileTrustedSchema, trustedAjvOptions } from "../../src/validate/json-schema.ts";
import { linkDocument } from "../../src/validate/link-document.ts";
import { BY_KEY } from "../../src/validate/meta/builtin-child-schemas.generated.ts";
import { scanSchema } from "../../src/validate/schema-scan.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** Every built-in child_schemas entry's schema, named. */
function builtinEntries(): { name: string; schema: unknown }[] {
  return BUILTIN_IDS.flatMap((id) => {
    const list = builtinTool(id)!.childSchemas;
    return Array.isArray(list) ? list.map((entry: { schema?: unknown }, i) => ({ name: `${id}/${i}`, schema: entry.schema })) : [];
  });
}

/** Link documents of the fixture tree's tools, and copies broken where the built-ins' schemas look. */
function documents(): unknown[] {
  const project = readProject(join(ROOT, "test", "fixtures", "trees", "every-form"));
  const docs = project.tools.map((t) => linkDocument(t) as Record<string, unknown>);
  expect(docs.length).toBeGreaterThan(10);
  const broken = (d: Record<string, unknown>): unknown[] => {
    const config = (d.config ?? {}) as Record<string, unknown>;
    return [
      { ...d, config: { ...config, entrypoint: "main.rb", args: [1, "x"], env: { A: 1 } } },
      { ...d, config: { ...config, command: "", package: "gem:x", transport: "smoke", url: 3 } },
      { ...d, config: "not a mapping", entry_point: 5 },
      Object.fromEntries(Object.entries(d).filter(([k]) => k !== "config")),
      [],
      null,
    ];
  };
  return [...docs, ...docs.flatMap(broken)];
}

describe("generated validators of the built-ins' child_schemas", () => {
  test('the committed module is what ajv builds from the built-in manifests (run "bun run schemas" after changing them)', () => {
    const { path, text } = renderBuiltinChildSchemaChecks();
    expect(readFileSync(join(ROOT, path), "utf8")).toBe(text);
  });

  test("every entry has one, under the key compileTrustedSchema looks up", () => {
    const entries = builtinEntries();
    expect(entries.length).toBeGreaterThanOrEqual(7);
    for (const { name, schema } of entries) {
      const scan = scanSchema(schema, false);
      expect([name, scan.ok && BY_KEY.has(scan.key)]).toEqual([name, true]);
    }
  });

  test("report the errors a run-time compile with the same options reports, in the same order", () => {
    const ajv = new Ajv2020(trustedAjvOptions());
    addFormats(ajv);
    let judged = 0;
    let failing = 0;
    for (const { name, schema } of builtinEntries()) {
      const fresh = ajv.compile(schema as object);
      const served = compileTrustedSchema(schema);
      if (!served.ok) throw new Error(`${name} did not compile`);
      for (const doc of documents()) {
        const expected = fresh(doc) ? [] : (fresh.errors ?? []).map((e) => ({ instancePath: e.instancePath, schemaPath: e.schemaPath, keyword: e.keyword, message: e.message ?? e.keyword, params: e.params }));
        expect([name, served.validate(doc)]).toEqual([name, expected]);
        judged++;
        if (expected.length > 0) failing++;
      }
    }
    expect(judged).toBeGreaterThan(100);
    expect(failing).toBeGreaterThan(judged / 4);
  });
});
