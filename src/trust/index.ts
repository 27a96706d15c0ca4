// Trust: ed25519 keys, signatures over tool artifact digests, and .ai/trust.yaml's policy.
// It must not touch the network or the lockfile: registry/ fetches signatures and records verdicts.
export { TRUST_FILE, type TrustPolicy, readPrivateKey, readTrustPolicy } from "./keys-io.ts";
export { type SignatureDocument, type SignatureVerdict, type SignedPayload, type TrustedKey, keyIdOf, signArtifact, verifySignature } from "./signature.ts";
