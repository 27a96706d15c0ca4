import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { PUBLISHED_SCHEMAS, renderPublishedSchema } from "../../src/schema/published.ts";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

const DIR = join(import.meta.dir, "..", "..", "schemas");

describe("schemas/*.schema.json", () => {
  test.each(PUBLISHED_SCHEMAS.map((s) => [s.file, s]))("%s matches its TypeBox source (run \"bun run schemas\" after a change)", (file, entry) => {
    expect(readFileSync(join(DIR, file), "utf8")).toBe(renderPublishedSchema(entry));
  });

  test("every committed schema file comes from the table", () => {
    expect(readdirSync(DIR).sort()).toEqual(PUBLISHED_SCHEMAS.map((s) => s.file).sort());
  });

  test("rendering is stable: 2-space indent, trailing newline, $schema first", () => {
    const text = renderPublishedSchema(PUBLISHED_SCHEMAS[0]!);
    expect(text.endsWith("}\n")).toBe(true);
    expect(text.split("\n")[1]).toBe('  "$schema": "https://json-schema.org/draft/2020-12/schema",');
    expect(renderPublishedSchema(PUBLISHED_SCHEMAS[0]!)).toBe(text);
  });

  test.each([
    ["tool.schema.json", { tool_id: "fetch", tool_type: "api", version: "1.0.0", executor: "http_client", config: { url: "https://x.test" } }, { tool_type: "api", version: "1.0" }],
    ["magray-tool.schema.json", { name: "mg", version: "1.0.0", type: "wasm", entry_point: "m.wasm", capabilities: ["filesystem"], permissions: { filesystem: ["read"] } }, { name: "mg", version: "1.0.0", type: "java", entry_point: "x" }],
  ])("%s accepts a good manifest and rejects a bad one in an editor's validator", (file, good, bad) => {
    const schema = JSON.parse(readFileSync(join(DIR, file), "utf8"));
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    expect(validate(good)).toBe(true);
    expect(validate(bad)).toBe(false);
  });
});

describe("generated meta-schema validators", () => {
  test("src/validate/meta/*.generated.ts match ajv's output (run \"bun run schemas\" after upgrading ajv)", async () => {
    const { renderMetaValidators } = await import("../../scripts/gen-schemas.ts");
    const root = join(import.meta.dir, "..", "..");
    for (const { path, text } of renderMetaValidators()) expect(readFileSync(join(root, path), "utf8")).toBe(text);
  });
});
