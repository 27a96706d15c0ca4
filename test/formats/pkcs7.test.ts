// Detached PKCS#7 signatures made by the real openssl (RSA and ECDSA), verified and classified by
// kiwi's in-process reader; every way a signature can fail is a Pkcs7Error saying which.
import { afterAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Pkcs7Error, classifySigner, verifyDetachedSignature } from "../../src/formats/pkcs7.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);
const dir = makeTemp("kiwi-pkcs7-");
const openssl = (...args: string[]) => {
  const r = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
};
openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "rsa.key", "-out", "rsa.pem", "-days", "2", "-subj", "/CN=RSA Signer");
openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ec.key", "-out", "ec.pem", "-days", "2", "-subj", "/CN=EC Signer");
const content = new TextEncoder().encode("PK\u0003\u0004 the bundle's bytes");
writeFileSync(join(dir, "content.bin"), content);
const sign = (who: string, md = "sha256") => {
  openssl("cms", "-sign", "-binary", "-in", "content.bin", "-signer", `${who}.pem`, "-inkey", `${who}.key`, "-outform", "DER", "-out", `${who}-${md}.p7`, "-md", md);
  return new Uint8Array(readFileSync(join(dir, `${who}-${md}.p7`)));
};

describe("verifies", () => {
  test.each([["rsa", "sha256"], ["rsa", "sha512"], ["ec", "sha256"]])("a %s signature with %s, and classifies the self-signed signer", (who, md) => {
    const verdict = verifyDetachedSignature(sign(who, md), content);
    expect(verdict.signer.subject).toBe(`CN=${who === "rsa" ? "RSA" : "EC"} Signer`);
    expect(classifySigner(verdict, [])).toBe("self-signed");
    expect(classifySigner(verdict, [new X509Certificate(readFileSync(join(dir, `${who}.pem`)))])).toBe("signed");
  });
});

describe("refuses", () => {
  test("other content than was signed", () => {
    expect(() => verifyDetachedSignature(sign("rsa"), new TextEncoder().encode("other bytes"))).toThrow("the bundle's digest differs from the one that was signed");
  });

  test("a signature whose bytes were changed", () => {
    const der = sign("rsa");
    der[der.length - 5] = der[der.length - 5]! ^ 0xff;
    expect(() => verifyDetachedSignature(der, content)).toThrow(Pkcs7Error);
  });

  test("DER that is not SignedData, and truncated DER", () => {
    expect(() => verifyDetachedSignature(new Uint8Array([0x30, 0x03, 0x06, 0x01, 0x00]), content)).toThrow("not PKCS#7 SignedData");
    expect(() => verifyDetachedSignature(sign("ec").subarray(0, 40), content)).toThrow(Pkcs7Error);
  });
});

test("SignedData with a field missing is a Pkcs7Error, not a crash", () => {
  // ContentInfo { signedData, [0] { SEQUENCE { INTEGER 1 } } }: no digestAlgorithms, no signerInfos.
  const oid = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];
  const inner = [0x30, 0x03, 0x02, 0x01, 0x01];
  const explicit = [0xa0, inner.length, ...inner];
  const der = new Uint8Array([0x30, oid.length + explicit.length, ...oid, ...explicit]);
  expect(() => verifyDetachedSignature(der, content)).toThrow(Pkcs7Error);
});
