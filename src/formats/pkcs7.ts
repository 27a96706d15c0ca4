// A detached PKCS#7 / CMS SignedData signature (RFC 5652), as the mcpb CLI appends to a bundle:
// just enough DER to find the signer's certificate, check the messageDigest attribute against the
// content and the signature over the signed attributes, and classify the certificate chain.
// Pure: bytes and certificates in, a verdict out (node:crypto does the arithmetic, in memory).
import { X509Certificate, createHash, verify } from "node:crypto";

interface Tlv {
  tag: number;
  /** The whole element (tag, length, content). */
  raw: Uint8Array;
  content: Uint8Array;
}

export class Pkcs7Error extends Error {}

function readTlv(buf: Uint8Array, offset: number): Tlv & { end: number } {
  if (offset + 2 > buf.length) throw new Pkcs7Error("truncated DER");
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new Pkcs7Error("multi-byte DER tags are not used by PKCS#7");
  let len = buf[offset + 1]!;
  let header = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || offset + 2 + n > buf.length) throw new Pkcs7Error("bad DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[offset + 2 + i]!;
    header += n;
  }
  const end = offset + header + len;
  if (end > buf.length) throw new Pkcs7Error("DER element runs past its parent");
  return { tag, raw: buf.subarray(offset, end), content: buf.subarray(offset + header, end), end };
}

function children(tlv: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = 0; offset < tlv.content.length; ) {
    const child = readTlv(tlv.content, offset);
    out.push(child);
    offset = child.end;
  }
  return out;
}

function oid(tlv: Tlv): string {
  if (tlv.tag !== 0x06) throw new Pkcs7Error("expected an OBJECT IDENTIFIER");
  const b = tlv.content;
  const parts = [Math.floor(b[0]! / 40), b[0]! % 40];
  let value = 0;
  for (let i = 1; i < b.length; i++) {
    value = value * 128 + (b[i]! & 0x7f);
    if (!(b[i]! & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join(".");
}

const SIGNED_DATA = "1.2.840.113549.1.7.2";
const MESSAGE_DIGEST = "1.2.840.113549.1.9.4";
const DIGESTS: Record<string, string> = { "2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384", "2.16.840.1.101.3.4.2.3": "sha512" };
/** Signature algorithms node:crypto verifies with the digest named by the signer (RSA PKCS#1 v1.5, ECDSA). */
const SIGNATURES = new Set(["1.2.840.113549.1.1.1", "1.2.840.113549.1.1.11", "1.2.840.113549.1.1.12", "1.2.840.113549.1.1.13", "1.2.840.10045.4.3.2", "1.2.840.10045.4.3.3", "1.2.840.10045.4.3.4", "1.2.840.10045.2.1"]);

export interface SignatureVerdict {
  /** The signer's certificate (the first whose serial matches the signer info). */
  signer: X509Certificate;
  /** Every certificate the signature carries (signer and intermediates). */
  certificates: X509Certificate[];
}

/**
 * Verifies a detached SignedData over `content`. Throws Pkcs7Error saying what does not hold:
 * malformed DER, an unsupported algorithm, a digest or a signature that does not match.
 */
export function verifyDetachedSignature(der: Uint8Array, content: Uint8Array): SignatureVerdict {
  try {
    return verifySignedData(der, content);
  } catch (error) {
    if (error instanceof Pkcs7Error) throw error;
    // A structure that parses as DER but not as SignedData (a missing field, a bad certificate).
    throw new Pkcs7Error(`malformed SignedData (${(error as Error).message})`);
  }
}

function verifySignedData(der: Uint8Array, content: Uint8Array): SignatureVerdict {
  const info = readTlv(der, 0);
  const [type, explicit] = children(info);
  if (!type || oid(type) !== SIGNED_DATA || !explicit || explicit.tag !== 0xa0) throw new Pkcs7Error("the signature is not PKCS#7 SignedData");
  const signedData = children(children(explicit)[0]!);
  const certsTlv = signedData.find((t) => t.tag === 0xa0);
  const signerInfos = signedData[signedData.length - 1]!;
  if (signerInfos.tag !== 0x31) throw new Pkcs7Error("SignedData has no signerInfos");
  const encap = children(signedData[2]!);
  if (encap.length > 1) throw new Pkcs7Error("the signature embeds its content; the mcpb signature is detached");
  const certificates = certsTlv ? children(certsTlv).map((c) => new X509Certificate(c.raw)) : [];
  const infos = children(signerInfos);
  if (infos.length !== 1) throw new Pkcs7Error(`expected one signer, found ${infos.length}`);
  const fields = children(infos[0]!);
  const sid = fields[1]!;
  const digestName = DIGESTS[oid(children(fields[2]!)[0]!)];
  if (!digestName) throw new Pkcs7Error("the digest algorithm is not SHA-256, SHA-384 or SHA-512");
  let i = 3;
  const signedAttrs = fields[i]?.tag === 0xa0 ? fields[i++] : undefined;
  const signatureAlgorithm = oid(children(fields[i++]!)[0]!);
  const signature = fields[i]!;
  if (signature.tag !== 0x04) throw new Pkcs7Error("the signer info has no signature");
  if (!SIGNATURES.has(signatureAlgorithm)) throw new Pkcs7Error(`signature algorithm ${signatureAlgorithm} is not RSA PKCS#1 v1.5 or ECDSA`);
  const signer = findSigner(sid, certificates);
  const digest = createHash(digestName).update(content).digest();
  let signedBytes: Uint8Array = content;
  if (signedAttrs) {
    const md = children(signedAttrs).find((a) => oid(children(a)[0]!) === MESSAGE_DIGEST);
    if (!md) throw new Pkcs7Error("the signed attributes have no messageDigest");
    const value = children(children(md)[1]!)[0]!.content;
    if (Buffer.compare(Buffer.from(value), digest) !== 0) throw new Pkcs7Error("the bundle's digest differs from the one that was signed: the bundle was changed after signing");
    // RFC 5652 §5.4: the signature covers the attributes encoded as a SET OF, not as [0].
    signedBytes = new Uint8Array(signedAttrs.raw);
    signedBytes[0] = 0x31;
  }
  if (!verify(digestName, signedBytes, signer.publicKey, signature.content)) throw new Pkcs7Error(`the signature does not verify with the key of ${signer.subject.replace(/\n/g, ", ")}`);
  return { signer, certificates };
}

function findSigner(sid: Tlv, certificates: X509Certificate[]): X509Certificate {
  if (certificates.length === 0) throw new Pkcs7Error("the signature carries no certificate");
  if (sid.tag === 0x30) {
    const serial = children(sid)[1]!.content;
    const hex = Buffer.from(serial).toString("hex").replace(/^(00)+/, "").toUpperCase();
    const found = certificates.find((c) => c.serialNumber.replace(/^0+/, "").toUpperCase() === hex.replace(/^0+/, ""));
    if (found) return found;
  }
  if (certificates.length === 1) return certificates[0]!;
  throw new Pkcs7Error("no certificate of the signature matches its signer");
}

export type SignatureStatus = "signed" | "self-signed" | "untrusted";

/**
 * Classifies a verified signer: `signed` when its chain (through the certificates the signature
 * carries) ends at one of `roots`, `self-signed` when it issued itself, `untrusted` otherwise.
 */
export function classifySigner(verdict: SignatureVerdict, roots: readonly X509Certificate[]): SignatureStatus {
  let current = verdict.signer;
  const seen = new Set<string>();
  for (let depth = 0; depth < 8 && !seen.has(current.fingerprint256); depth++) {
    seen.add(current.fingerprint256);
    if (roots.some((r) => issued(r, current))) return "signed";
    if (issued(current, current)) return depth === 0 ? "self-signed" : "untrusted";
    const next = verdict.certificates.find((c) => c !== current && issued(c, current));
    if (!next) break;
    current = next;
  }
  return "untrusted";
}

function issued(issuer: X509Certificate, subject: X509Certificate): boolean {
  try {
    return subject.checkIssued(issuer) && subject.verify(issuer.publicKey);
  } catch {
    return false;
  }
}
