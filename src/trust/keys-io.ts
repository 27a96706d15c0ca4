// Key files and the project's trust policy: the ed25519 private key `kiwi publish` signs with
// (PKCS#8; ops/key-generate-io.ts writes the pair), and .ai/trust.yaml, which names the trusted keys.
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { parse as parseYamlText } from "yaml";
import { KiwiError } from "../errors.ts";
import { isRecord } from "../integrity/value.ts";
import { type TrustedKey, keyIdOf, parsePrivateKey, parsePublicKey } from "./signature.ts";

/** The project's trust file, relative to the project root. */
export const TRUST_FILE = join(".ai", "trust.yaml");

/** The policy read from .ai/trust.yaml. */
export interface TrustPolicy {
  /** True: add and install refuse a remote tool without a valid signature by a trusted key. */
  requireSignature: boolean;
  keys: TrustedKey[];
  /** Project-relative path of the file, or undefined when there is none (nothing required). */
  file?: string;
}

/** Reads a private key file for signing. */
export function readPrivateKey(path: string) {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (error) {
    throw new KiwiError("E_IO", `cannot read the signing key ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`, { hint: 'make one with "kiwi key generate <file>"' });
  }
  return parsePrivateKey(pem, `the signing key ${path}`);
}

/**
 * Reads .ai/trust.yaml: `require_signature: true|false` and `keys: [{ name, public_key | file }]`
 * (`file` relative to .ai/). No file: nothing is required and nothing is trusted.
 */
export function readTrustPolicy(root: string): TrustPolicy {
  const abs = join(root, TRUST_FILE);
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { requireSignature: false, keys: [] };
    throw new KiwiError("E_IO", `cannot read ${TRUST_FILE}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  const bad = (why: string) => new KiwiError("E_TRUST", `${TRUST_FILE}: ${why}`, { hint: "see README \"Signing and trust\" for the file's shape" });
  let value: unknown;
  try {
    value = parseYamlText(text);
  } catch (error) {
    // The library's first line, without the colon that introduces its excerpt of the text.
    throw bad(`invalid YAML: ${(error as Error).message.split("\n")[0]!.replace(/:$/, "")}`);
  }
  if (value === null || value === undefined) value = {};
  if (!isRecord(value)) throw bad("the top level is not a mapping");
  for (const k of Object.keys(value)) if (k !== "require_signature" && k !== "keys") throw bad(`unknown field "${k}" (expected require_signature, keys)`);
  if (value.require_signature !== undefined && typeof value.require_signature !== "boolean") throw bad("require_signature must be true or false");
  const list = value.keys ?? [];
  if (!Array.isArray(list)) throw bad("keys must be a list");
  const keys = list.map((entry, i): TrustedKey => {
    if (!isRecord(entry) || typeof entry.name !== "string" || entry.name === "") throw bad(`keys[${i}] needs a name`);
    let pem: string;
    if (typeof entry.public_key === "string") pem = entry.public_key;
    else if (typeof entry.file === "string") {
      const keyPath = isAbsolute(entry.file) ? entry.file : resolve(dirname(abs), entry.file);
      try {
        pem = readFileSync(keyPath, "utf8");
      } catch (error) {
        // Say where it looked: a path written from the project root (".ai/keys/x.pub") is read below .ai/.
        const where = isAbsolute(entry.file) ? "" : ` (${relative(root, keyPath)}: a key file is relative to .ai/)`;
        throw bad(`keys[${i}] ("${entry.name}"): cannot read ${entry.file}${where}: ${(error as NodeJS.ErrnoException).code ?? error}`);
      }
    } else throw bad(`keys[${i}] ("${entry.name}") needs public_key (PEM text) or file`);
    const key = parsePublicKey(pem, `${TRUST_FILE} key "${entry.name}"`);
    return { name: entry.name, key, id: keyIdOf(key) };
  });
  const requireSignature = value.require_signature === true;
  if (requireSignature && keys.length === 0) throw bad("require_signature is true but no keys are listed");
  return { requireSignature, keys, file: TRUST_FILE };
}
