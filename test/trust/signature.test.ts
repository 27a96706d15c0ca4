import { describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { keyIdOf, parsePrivateKey, signArtifact, verifySignature } from "../../src/trust/signature.ts";
import { thrownBy } from "../helpers/errors.ts";

const ARTIFACT = `sha256:${"a".repeat(64)}`;
const pair = () => generateKeyPairSync("ed25519");
const payload = (artifact = ARTIFACT) => ({ kiwi_signature: 1 as const, artifact, tool_id: "dp", version: "1.0.0", integrity: `sha256:${"b".repeat(64)}` });

describe("ed25519 artifact signatures", () => {
  const alice = pair();
  const trusted = [{ name: "alice", key: alice.publicKey, id: keyIdOf(alice.publicKey) }];

  test("a signature by a trusted key over the artifact digest verifies, naming the key", () => {
    const { bytes } = signArtifact(payload(), alice.privateKey);
    const verdict = verifySignature(bytes, ARTIFACT, trusted);
    expect(verdict).toMatchObject({ ok: true, key: { name: "alice" } });
  });

  test("a signing key encrypted with a passphrase is named as encrypted, not as something that is no PEM key", () => {
    const pem = alice.privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "secret" }) as string;
    expect(pem).toStartWith("-----BEGIN ENCRYPTED PRIVATE KEY-----");
    const e = thrownBy(() => parsePrivateKey(pem, "the signing key release.key"));
    expect([e.code, e.message]).toEqual(["E_TRUST", "the signing key release.key is encrypted with a passphrase, which kiwi does not ask for"]);
    expect(e.hint).toContain("openssl pkey -in <key> -out <copy>");
    expect(thrownBy(() => parsePrivateKey("hello", "the signing key k")).message).toBe("the signing key k is not a PEM private key");
  });

  test("a valid signature by an untrusted key is refused, naming that key", () => {
    const mallory = pair();
    const { bytes } = signArtifact(payload(), mallory.privateKey);
    const verdict = verifySignature(bytes, ARTIFACT, trusted);
    expect(verdict).toEqual({ ok: false, reason: `it is signed by the key ${keyIdOf(mallory.publicKey)}, which .ai/trust.yaml does not trust` });
  });

  test("a signature for another artifact is refused", () => {
    const { bytes } = signArtifact(payload(`sha256:${"c".repeat(64)}`), alice.privateKey);
    expect(verifySignature(bytes, ARTIFACT, trusted)).toMatchObject({ ok: false, reason: expect.stringContaining("not sha256:aaaa") });
  });

  test("an altered payload does not verify under the trusted key", () => {
    const { document } = signArtifact(payload(), alice.privateKey);
    const altered = { ...document, payload: { ...document.payload, version: "6.6.6" } };
    const verdict = verifySignature(new TextEncoder().encode(JSON.stringify(altered)), ARTIFACT, trusted);
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringContaining('does not verify under the trusted key "alice"') });
  });

  test("the key id is the sha256 of the public key's SPKI bytes", () => {
    expect(keyIdOf(alice.publicKey)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(keyIdOf(alice.publicKey)).not.toBe(keyIdOf(pair().publicKey));
  });
});
