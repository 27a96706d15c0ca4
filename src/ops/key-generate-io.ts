// `kiwi key generate <file>`: an ed25519 key pair for signing published tools, written atomically
// with the private half readable by its owner only; an existing key is never overwritten.
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { KiwiError } from "../errors.ts";
import { keyIdOf } from "../trust/signature.ts";

/** Writes `<path>` (private) and `<path>.pub`; refuses to overwrite an existing key. */
export function generateKeyPair(path: string): { privatePath: string; publicPath: string; keyId: string } {
  const pubPath = `${path}.pub`;
  for (const p of [path, pubPath]) {
    if (existsSync(p)) throw new KiwiError("E_USAGE", `${p} already exists; kiwi never overwrites a key`, { hint: "choose another file name, or delete the old key first" });
  }
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  writeFileAtomic(path, privateKey.export({ type: "pkcs8", format: "pem" }) as string, { mode: 0o600 });
  writeFileAtomic(pubPath, publicKey.export({ type: "spki", format: "pem" }) as string, { mode: 0o644 });
  return { privatePath: path, publicPath: pubPath, keyId: keyIdOf(publicKey) };
}
