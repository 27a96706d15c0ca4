import { describe, expect, test } from "bun:test";
import { thrownBy } from "../helpers/errors.ts";
import { renderCanonicalJson } from "../../src/integrity/canonical.ts";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import { Float } from "../../src/integrity/value.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { ANNOTATIONS, MEDIA, type PublishInput, buildArtifact, checkToolConfig, parseToolManifest, placedFiles } from "../../src/registry/artifact-layout.ts";

const MAIN = "print(1)\n";
const YAML = "tool_id: dp\n";

function input(extra: Partial<PublishInput> = {}): PublishInput {
  const files = [
    { path: "main.py", sha256: sha256Hex(MAIN), is_executable: true },
    { path: "lib/a.py", sha256: sha256Hex("a"), is_executable: false },
  ];
  return {
    toolId: "dp",
    version: "1.0.0",
    type: "script",
    manifestFile: "tool.yaml",
    manifestSha256: sha256Hex(YAML),
    manifest: { tool_id: "dp", version: "1.0.0", config: { timeout: new Float(1) } },
    files,
    sizes: new Map([
      [sha256Hex(MAIN), MAIN.length],
      [sha256Hex("a"), 1],
      [sha256Hex(YAML), YAML.length],
    ]),
    dependencies: [],
    ...extra,
  };
}

function expectInvalid(fn: () => unknown, text: string): void {
  const error = thrownBy(fn);
  expect(error.code).toBe("E_ARTIFACT_INVALID");
  expect(error.message).toContain(text);
}

describe("the kiwi tool artifact", () => {
  test("is an OCI 1.1 image manifest with the kiwi artifactType, annotations and one layer per file", () => {
    const a = buildArtifact(input());
    const m = JSON.parse(new TextDecoder().decode(a.manifest));
    expect(m.artifactType).toBe(MEDIA.artifact);
    expect(m.mediaType).toBe(MEDIA.manifest);
    expect(m.config).toEqual({ mediaType: MEDIA.config, digest: a.configDigest, size: a.config.length });
    expect(m.layers.map((l: { annotations: Record<string, string> }) => l.annotations[ANNOTATIONS.title])).toEqual(["tool.yaml", "lib/a.py", "main.py"]);
    expect(m.layers[2].digest).toBe(formatDigest(sha256Hex(MAIN)));
    expect(m.annotations).toEqual({ [ANNOTATIONS.id]: "dp", [ANNOTATIONS.version]: "1.0.0", [ANNOTATIONS.type]: "script", [ANNOTATIONS.integrity]: a.integrity });
    expect(a.manifestDigest).toBe(formatDigest(sha256Hex(a.manifest)));
  });

  test("is deterministic: the same tool gives the same manifest digest", () => {
    expect(buildArtifact(input()).manifestDigest).toBe(buildArtifact({ ...input(), files: [...input().files].reverse() }).manifestDigest);
  });

  test("round-trips: the config re-derives the integrity, keeping float lexemes", () => {
    const a = buildArtifact(input());
    const m = parseToolManifest(a.manifest, "t");
    const config = checkToolConfig(a.config, m, "t");
    expect(config.integrity).toBe(a.integrity);
    expect(renderCanonicalJson(config.manifest)).toContain('"timeout":1.0');
    expect(placedFiles(config).map((f) => f.path)).toEqual(["lib/a.py", "main.py", "tool.yaml"]);
  });

  test("rejects a config whose file list was tampered with (its integrity no longer matches)", () => {
    const a = buildArtifact(input());
    const value = JSON.parse(new TextDecoder().decode(a.config));
    value.files[1].is_executable = false;
    const tampered = new TextEncoder().encode(renderCanonicalJson(parseJsonLossless(JSON.stringify(value)).value));
    expectInvalid(() => checkToolConfig(tampered, parseToolManifest(a.manifest, "t"), "t"), "the config was tampered with");
  });

  test("rejects an annotation that disagrees with the config", () => {
    const a = buildArtifact(input());
    const m = parseToolManifest(a.manifest, "t");
    m.annotations![ANNOTATIONS.integrity] = formatDigest("0".repeat(64));
    expectInvalid(() => checkToolConfig(a.config, m, "t"), "annotation");
  });

  test.each([
    ["a path that leaves the tool", (v: Record<string, any>) => (v.files[0].path = "../evil"), "has a . or .. segment"],
    ["a tool id that is a path", (v: Record<string, any>) => (v.tool_id = "../x"), "cannot name a folder"],
    ["a file with no layer", (v: Record<string, any>) => (v.files[0].sha256 = "f".repeat(64)), "tampered"],
  ])("rejects a config with %s", (_name, mutate, text) => {
    const a = buildArtifact(input());
    const value = JSON.parse(new TextDecoder().decode(a.config));
    mutate(value);
    expectInvalid(() => checkToolConfig(new TextEncoder().encode(JSON.stringify(value)), parseToolManifest(a.manifest, "t"), "t"), text);
  });

  test.each([
    ["not JSON", "{", "not UTF-8 JSON"],
    ["a Docker v2 schema 1 manifest", JSON.stringify({ schemaVersion: 1 }), "schemaVersion 2"],
    ["an image that is not a kiwi tool", JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.manifest, config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: formatDigest("0".repeat(64)), size: 2 }, layers: [] }), "not a kiwi tool"],
    ["a layer with a foreign media type", JSON.stringify({ schemaVersion: 2, artifactType: MEDIA.artifact, config: { mediaType: MEDIA.config, digest: formatDigest("0".repeat(64)), size: 2 }, layers: [{ mediaType: "application/x-tar", digest: formatDigest("1".repeat(64)), size: 1 }] }), "application/x-tar"],
    ["an oversized config", JSON.stringify({ schemaVersion: 2, artifactType: MEDIA.artifact, config: { mediaType: MEDIA.config, digest: formatDigest("0".repeat(64)), size: 5e6 }, layers: [] }), "limit"],
  ])("rejects %s", (_name, text, why) => {
    expectInvalid(() => parseToolManifest(new TextEncoder().encode(text), "t"), why);
  });
});
