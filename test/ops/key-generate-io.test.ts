// kiwi key generate's use case: an ed25519 pair on disk, private half owner-only, never over an existing key.
import { afterAll, describe, expect, test } from "bun:test";
import { createPublicKey } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateKeyPair } from "../../src/ops/key-generate-io.ts";
import { keyIdOf } from "../../src/trust/signature.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("generateKeyPair", () => {
  test("writes the private key 0600 and the public key 0644, and names the public key's id", () => {
    const path = join(makeTemp(), "signing.pem");
    const result = generateKeyPair(path);
    expect(result).toEqual({ privatePath: path, publicPath: `${path}.pub`, keyId: keyIdOf(createPublicKey(readFileSync(`${path}.pub`, "utf8"))) });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}.pub`).mode & 0o777).toBe(0o644);
    expect(readFileSync(path, "utf8")).toContain("BEGIN PRIVATE KEY");
  });

  test("refuses to overwrite either half of an existing key", () => {
    const dir = makeTemp();
    const path = join(dir, "k.pem");
    writeFileSync(`${path}.pub`, "old");
    expect(() => generateKeyPair(path)).toThrow("already exists");
    expect(readFileSync(`${path}.pub`, "utf8")).toBe("old");
  });
});
