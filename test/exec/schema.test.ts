import { describe, expect, test } from "bun:test";
import { checkChildSchemas, compileLockedSchema } from "../../src/exec/schema.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";
import { normalizeManifest } from "../../src/manifest/normalize.ts";

const python = builtinTools().find((t) => t.id === "python_runtime")!;
/** A child tool read from its manifest document as discovery would (no files). */
const child = (doc: Record<string, unknown>) => ({ ...normalizeManifest({ version: "1.0.0", ...doc } as CanonicalValue, "c"), files: [] });

describe("child_schemas of a verified chain", () => {
  test("the first matching entry judges the child's manifest as written", () => {
    expect(checkChildSchemas(python, child({ tool_type: "script", config: { entrypoint: "main.py" } }))).toEqual({ ok: true, entry: 0 });
  });

  test("a child that violates the matching schema is refused, naming the entry and the field", () => {
    const verdict = checkChildSchemas(python, child({ tool_type: "script", config: { entrypoint: "main.rb" } }));
    expect(verdict).toEqual({ ok: false, rule: "child-schema/mismatch", message: expect.stringContaining("c violates validation.child_schemas/0 of python_runtime: /config/entrypoint must match pattern") });
  });

  test("a child no entry matches is refused", () => {
    expect(checkChildSchemas(python, child({ tool_type: "api" }))).toEqual({ ok: false, rule: "child-schema/no-match", message: "no entry of python_runtime's validation.child_schemas matches c (type api)" });
  });

  test("a magray child matches by its type", () => {
    expect(checkChildSchemas(python, child({ name: "c", type: "script", entry_point: "main.py" })).ok).toBe(true);
  });

  test("matches entries exactly as kiwi check does: dotted keys, any key order", () => {
    const parent = {
      id: "rt",
      childSchemas: [
        { match: { "config.entrypoint": "hi.sh" }, schema: { type: "object" } },
        { match: { config: { b: 2, a: 1 } }, schema: { type: "object" } },
      ],
    };
    expect(checkChildSchemas(parent, child({ tool_type: "script", config: { entrypoint: "hi.sh" } }))).toEqual({ ok: true, entry: 0 });
    expect(checkChildSchemas(parent, child({ tool_type: "script", config: { a: 1, b: 2 } }))).toEqual({ ok: true, entry: 1 });
  });

  test("a parent without child_schemas is reported so the caller can warn", () => {
    expect(checkChildSchemas({ id: "p", childSchemas: undefined }, child({ tool_type: "script" }))).toEqual({ ok: false, rule: "child-schema/missing", message: "p declares no validation.child_schemas" });
  });

  test("an unsafe pattern is refused even in a locked schema", () => {
    expect(() => compileLockedSchema({ type: "string", pattern: "^(a+)+$" }, "s")).toThrow(expect.objectContaining({ code: "E_CHECK_FAILED" }));
  });

  test("a remote $ref is never fetched", () => {
    expect(() => compileLockedSchema({ $ref: "https://example.com/schema.json" }, "s")).toThrow(expect.objectContaining({ code: "E_CHECK_FAILED" }));
  });
});
