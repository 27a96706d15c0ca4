// The shared integrity vectors, byte for byte: canonical text and digest of every input, parsed
// losslessly from the vector file itself (test/fixtures/vectors/README.md says where it is from).
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { hashReferenceIntegrity, hashToolIntegrity, hashToolIntegrityAround, type IntegrityInput } from "../../src/integrity/tool.ts";
import { hashCanonical } from "../../src/integrity/digest.ts";
import { type CanonicalValue, Float } from "../../src/integrity/value.ts";
import { checkIntegrityInput } from "../../src/lockfile/hash-inputs.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";

const FIXTURE = join(import.meta.dir, "..", "fixtures", "vectors", "integrity.json");
const SHARED = join(import.meta.dir, "..", "..", "..", "shared", "vectors", "integrity.json");

type Vector = { name: string; input: CanonicalValue; canonical: string; integrity: string };
const doc = parseJsonLossless(readFileSync(FIXTURE, "utf8")).value as unknown as { vectors: Vector[] };

describe("tool integrity vectors (shared/vectors/integrity.json)", () => {
  test("the fixture is a byte-exact copy of the shared vectors", () => {
    if (!existsSync(SHARED)) return; // a checkout without ../shared still runs the vectors below
    expect(readFileSync(FIXTURE)).toEqual(readFileSync(SHARED));
  });

  test("there are vectors, including one with floats", () => {
    expect(doc.vectors.length).toBeGreaterThanOrEqual(5);
    expect(JSON.stringify(doc.vectors.map((v) => v.name))).toContain("float");
  });

  test.each(doc.vectors.map((v) => [v.name, v] as const))("%s: canonical text and integrity match", (_name, v) => {
    const { canonical, hex } = hashToolIntegrity(v.input as unknown as IntegrityInput);
    expect(canonical).toBe(v.canonical);
    expect(hex).toBe(v.integrity);
  });

  test.each(doc.vectors.map((v) => [v.name, v] as const))("%s: joined around the manifest's own canonical text, the bytes are the same", (_name, v) => {
    const input = v.input as unknown as IntegrityInput;
    const { canonical, hex } = hashToolIntegrityAround(hashCanonical(input.manifest).canonical, input);
    expect(canonical).toBe(v.canonical);
    expect(hex).toBe(v.integrity);
  });

  test.each(doc.vectors.map((v) => [v.name, v] as const))("%s: the checked CLI input shape hashes the same", (_name, v) => {
    const { hex } = hashReferenceIntegrity(checkIntegrityInput(v.input, v.name));
    expect(hex).toBe(v.integrity);
  });

  test("joining around the manifest's text equals rendering the whole, for keys that sort around the members", () => {
    const manifests: CanonicalValue[] = [{}, { files: 1, tool_id: "x", version: [], "\u00e9": new Float(2.5), a: { b: null } }, { z: "\u2028", "": true }];
    for (const manifest of manifests) {
      const input = { tool_id: "t\u00fc", version: "1.0.0-\u00e9", manifest, files: [{ path: "b", sha256: "00", is_executable: true }, { path: "a/\u00e9", sha256: "ff", is_executable: false }, { path: 'q"\\\u0001\u2028\ud83d\ude00', sha256: "ab", is_executable: false }] };
      expect(hashToolIntegrityAround(hashCanonical(manifest).canonical, input)).toEqual(hashToolIntegrity(input));
    }
    expect(hashToolIntegrityAround("{}", { tool_id: "t", version: "1", files: null })).toEqual(hashToolIntegrity({ tool_id: "t", version: "1", manifest: {}, files: null }));
  });

  test("an integral float in a manifest stays a float (1.0 is not 1)", () => {
    const asFloat = hashToolIntegrity({ tool_id: "t", version: "1", manifest: { x: new Float(1) }, files: [] });
    const asInt = hashToolIntegrity({ tool_id: "t", version: "1", manifest: { x: 1 }, files: [] });
    expect(asFloat.canonical).toContain('"x":1.0');
    expect(asFloat.hex).not.toBe(asInt.hex);
  });
});
