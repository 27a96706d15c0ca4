// ed25519 signatures over a tool artifact's manifest digest: the signed payload, the signature
// document kiwi attaches as an OCI referrer, and its verification against trusted keys. No disk,
// no network: keys and bytes come in, verdicts go out (node:crypto does the arithmetic).
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { KiwiError } from "../errors.ts";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import { formatDigest, sha256Hex } from "../integrity/digest.ts";
import { isRecord } from "../integrity/value.ts";

/** What a signature covers: the artifact's manifest digest, and for the reader the tool it names. */
export interface SignedPayload {
  kiwi_signature: 1;
  /** `sha256:` of the image manifest bytes: covers config, every file and the annotations. */
  artifact: string;
  tool_id: string;
  version: string;
  integrity: string;
}

/** The signature layer's JSON document. */
export interface SignatureDocument {
  payload: SignedPayload;
  key_id: string;
  /** base64 of the 64-byte ed25519 signature over the payload's canonical JSON. */
  signature: string;
}

/** A trusted public key. */
export interface TrustedKey {
  name: string;
  key: KeyObject;
  id: string;
}

/** `sha256:<hex>` of the key's SubjectPublicKeyInfo DER: stable, printable, unambiguous. */
export function keyIdOf(publicKey: KeyObject): string {
  return formatDigest(sha256Hex(new Uint8Array(publicKey.export({ type: "spki", format: "der" }))));
}

/** Parses a PEM public key and insists on ed25519. */
export function parsePublicKey(pem: string, subject: string): KeyObject {
  return parseKey(pem, subject, "public");
}

/** Parses a PEM private key and insists on ed25519. */
export function parsePrivateKey(pem: string, subject: string): KeyObject {
  return parseKey(pem, subject, "private");
}

function parseKey(pem: string, subject: string, kind: "public" | "private"): KeyObject {
  let key: KeyObject;
  try {
    key = kind === "public" ? createPublicKey(pem) : createPrivateKey(pem);
  } catch {
    if (kind === "private" && pem.includes("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
      // kiwi runs in CI and hooks, where nothing can ask for the passphrase.
      throw new KiwiError("E_TRUST", `${subject} is encrypted with a passphrase, which kiwi does not ask for`, {
        hint: 'sign with an unencrypted copy kept where only you (or CI\'s secret store) can read it ("openssl pkey -in <key> -out <copy>"), or make a key with "kiwi key generate"',
      });
    }
    throw new KiwiError("E_TRUST", `${subject} is not a PEM ${kind} key`, { hint: kind === "public" ? 'use the .pub file "kiwi key generate" wrote' : 'use the key file "kiwi key generate" wrote' });
  }
  if (key.asymmetricKeyType !== "ed25519") throw new KiwiError("E_TRUST", `${subject} is a ${key.asymmetricKeyType} key; kiwi signs and verifies ed25519 only`, { hint: 'make one with "kiwi key generate"' });
  return key;
}

/** Signs the payload; the document's bytes are what gets pushed as the signature layer. */
export function signArtifact(payload: SignedPayload, privateKey: KeyObject): { document: SignatureDocument; bytes: Uint8Array } {
  const signature = sign(null, new TextEncoder().encode(renderCanonicalJson(payload as never)), privateKey).toString("base64");
  const document: SignatureDocument = { payload, key_id: keyIdOf(createPublicKey(privateKey)), signature };
  return { document, bytes: new TextEncoder().encode(renderCanonicalJson(document as never)) };
}

export type SignatureVerdict = { ok: true; key: TrustedKey } | { ok: false; reason: string };

/**
 * Checks one signature document (bytes already checked against their digest) for `artifact`:
 * the payload must name that digest and the signature must verify under a trusted key with the
 * document's key id. A valid signature by an untrusted key is refused, and says whose it is.
 */
export function verifySignature(bytes: Uint8Array, artifact: string, trusted: readonly TrustedKey[]): SignatureVerdict {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return { ok: false, reason: "the signature document is not JSON" };
  }
  if (!isRecord(doc) || !isRecord(doc.payload) || typeof doc.key_id !== "string" || typeof doc.signature !== "string") return { ok: false, reason: "the signature document is malformed" };
  const payload = doc.payload;
  if (payload.kiwi_signature !== 1 || payload.artifact !== artifact) return { ok: false, reason: `the signature is for ${String(payload.artifact)}, not ${artifact}` };
  const key = trusted.find((k) => k.id === doc.key_id);
  if (!key) return { ok: false, reason: `it is signed by the key ${doc.key_id}, which .ai/trust.yaml does not trust` };
  const good = verify(null, new TextEncoder().encode(renderCanonicalJson(payload as never)), key.key, Buffer.from(doc.signature, "base64"));
  return good ? { ok: true, key } : { ok: false, reason: `the signature does not verify under the trusted key "${key.name}" (${key.id}): the artifact or signature was altered` };
}
