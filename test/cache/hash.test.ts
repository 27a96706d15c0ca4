// Files are hashed through a small first buffer, then a large one once a file fills it
// (cache/hash-io.ts): every size on either side of both gives the SHA-256 of the whole file.
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CHUNK_BYTES, hashFileHex } from "../../src/cache/hash-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const bytesOf = (size: number, seed: number) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed * 7 + (i >> 11)) & 0xff);

describe("hashing files", () => {
  test("gives each file's SHA-256, small files before and after large ones", () => {
    const dir = makeTemp("kiwi-hash-");
    const sizes = [0, 1, 10240, 65535, 65536, 65537, 131072, 3, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 65537, 2 * CHUNK_BYTES + 5, 10240, 0, 65536];
    sizes.forEach((size, i) => {
      const bytes = bytesOf(size, i);
      const path = join(dir, `f${i}`);
      writeFileSync(path, bytes);
      expect({ size, hash: hashFileHex(path) }).toEqual({ size, hash: sha256(bytes) });
    });
  });
});
