import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { renderLosslessJson } from "../../src/integrity/canonical.ts";
import { parseYamlFast } from "../../src/manifest/yaml-fast.ts";
import { parseYamlReference } from "../../src/manifest/yaml.ts";
import { generateTree } from "../../scripts/gen-tree.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const REPO = join(import.meta.dir, "..", "..");

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** The reference value, or undefined when the reference parser rejects the text. */
function reference(text: string): string | undefined {
  try {
    return renderLosslessJson(parseYamlReference(text).value);
  } catch {
    return undefined;
  }
}

describe("the YAML fast path", () => {
  const tree = makeTemp("kiwi-yaml-fast-");
  generateTree({ dir: tree, count: 300, filesPerTool: 0, fileSize: 0, seed: 7 });
  const files = [
    ...yamlFilesUnder(join(REPO, "src")),
    ...yamlFilesUnder(join(REPO, "test", "fixtures")),
    ...yamlFilesUnder(tree),
  ];

  test("gives exactly the reference parser's value wherever it answers", () => {
    let answered = 0;
    const differences: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const fast = parseYamlFast(text);
      if (fast === undefined) continue;
      answered++;
      if (renderLosslessJson(fast) !== reference(text)) differences.push(file);
    }
    expect(differences).toEqual([]);
    // The path must really be taken for ordinary manifests, or it buys nothing.
    expect(answered).toBeGreaterThan(files.length / 2);
  });

  test.each([
    ["a duplicate key", "a: 1\na: 2\n"],
    ["a duplicate key in a flow mapping", "p: { name: x, name: y }\n"],
    ["a duplicate masked by a key-like block scalar line", "a: 1\na: 2\nb: |\n  c: d\n"],
    ["an integral float", "timeout: 1.0\n"],
    ["a trailing-dot float", "timeout: 5.\n"],
    ["an exponent", "n: 1e3\n"],
    ["an anchor and alias", "a: &x 1\nb: *x\n"],
    ["a tag", "a: !!float 3\n"],
    ["a merge key", "base: {a: 1}\nx:\n  <<: {b: 2}\n"],
    ["a complex key", "? [a, b]\n: c\n"],
    ["two documents", "a: 1\n---\nb: 2\n"],
    ["a tab", "a:\t1\n"],
    ["infinity", "a: .inf\n"],
    ["a big integer", "a: 12345678901234567890\n"],
    // Bun reads these otherwise than YAML 1.2's core schema: as a number, and as text.
    ["a signed hex integer", "a: -0x10\n"],
    ["a signed octal integer", "a: +0o17\n"],
    ["a hex integer past 2^53", "a: 0xFFFFFFFFFFFFFFFFFFFF\n"],
    ["malformed YAML", "a: [1, 2\n"],
  ])("leaves %s to the reference parser", (_what, text) => {
    expect(parseYamlFast(text)).toBeUndefined();
  });

  test.each([
    ["version strings and URLs", "version: 1.0.0\nurl: https://h.example/p?a=1&b=2\n"],
    ["flow mappings in a list", "parameters:\n  - { name: city, type: string, required: true }\n  - { name: days, type: integer, default: 3 }\n"],
    ["quoted keys and values with colons", "\"a b\": 'x: y'\nc: \"{name}\"\n"],
    ["block scalars", "description: |\n  line one\n  line two\nfolded: >-\n  a\n  b\n"],
    ["non-integral floats and plain integers", "a: 0.5\nb: -3\nc: 0x1F\nd: 017\n"],
    ["YAML 1.2 words", "a: yes\nb: off\nc: ~\nd: True\n"],
    ["relative paths and dotted patterns", 'requires:\n  - { fs.read: [./data] }\npattern: "\\\\.py$"\n'],
  ])("answers %s exactly like the reference", (_what, text) => {
    const fast = parseYamlFast(text);
    expect(fast).toBeDefined();
    expect(renderLosslessJson(fast!)).toBe(reference(text)!);
  });
});
