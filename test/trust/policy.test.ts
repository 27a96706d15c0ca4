import { afterAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { thrownBy } from "../helpers/errors.ts";
import { keyIdOf } from "../../src/trust/signature.ts";
import { readTrustPolicy } from "../../src/trust/keys-io.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const { publicKey } = generateKeyPairSync("ed25519");
const PEM = publicKey.export({ type: "spki", format: "pem" }) as string;
const indented = PEM.trimEnd().split("\n").map((l) => `      ${l}`).join("\n");

describe(".ai/trust.yaml", () => {
  test("no file: nothing is required and nothing is trusted", () => {
    expect(readTrustPolicy(makeProject({ ".ai/tools/.keep": "" }))).toEqual({ requireSignature: false, keys: [] });
  });

  test("keys come inline or from a file relative to .ai/, with their ids", () => {
    const root = makeProject({
      ".ai/keys/b.pub": PEM,
      ".ai/trust.yaml": `require_signature: true\nkeys:\n  - name: a\n    public_key: |\n${indented}\n  - name: b\n    file: keys/b.pub\n`,
    });
    const policy = readTrustPolicy(root);
    expect(policy.requireSignature).toBe(true);
    expect(policy.keys.map((k) => [k.name, k.id])).toEqual([
      ["a", keyIdOf(publicKey)],
      ["b", keyIdOf(publicKey)],
    ]);
  });

  test.each([
    ["an unknown field", "require_signatures: true\n", 'unknown field "require_signatures"'],
    ["a required signature with no keys", "require_signature: true\n", "no keys are listed"],
    ["a key without a name", "keys:\n  - file: k.pub\n", "keys[0] needs a name"],
    ["a missing key file", "keys:\n  - name: x\n    file: nope.pub\n", "cannot read nope.pub"],
    ["a key that is not PEM", "keys:\n  - name: x\n    public_key: hello\n", 'key "x" is not a PEM public key'],
    ["an RSA key", `keys:\n  - name: rsa\n    public_key: |\n${(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" }) as string).trimEnd().split("\n").map((l) => `      ${l}`).join("\n")}\n`, "is a rsa key; kiwi signs and verifies ed25519 only"],
    ["invalid YAML", "keys: [\n", "invalid YAML"],
  ])("refuses %s with E_TRUST naming the problem", (_name, text, message) => {
    const error = thrownBy(() => readTrustPolicy(makeProject({ ".ai/trust.yaml": text })));
    expect(error.code).toBe("E_TRUST");
    expect(error.message).toContain(message);
  });

  test("a key file that cannot be read is named with where it was looked for: relative to .ai/, not to the project root", () => {
    const error = thrownBy(() => readTrustPolicy(makeProject({ ".ai/trust.yaml": "keys:\n  - name: release\n    file: .ai/keys/release.pub\n" })));
    expect([error.code, error.message]).toEqual(["E_TRUST", '.ai/trust.yaml: keys[0] ("release"): cannot read .ai/keys/release.pub (.ai/.ai/keys/release.pub: a key file is relative to .ai/): ENOENT']);
  });

  test("invalid YAML is named at its line and column, without the colon the YAML library puts before its excerpt", () => {
    const error = thrownBy(() => readTrustPolicy(makeProject({ ".ai/trust.yaml": "require_signature: [\n" })));
    expect(error.message).toMatch(/^\.ai\/trust\.yaml: invalid YAML: .* at line 2, column 1$/);
  });
});
