import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { materializeTool } from "../../src/cache/materialize-io.ts";
import { blobPath, openStore, putBlobFromFile } from "../../src/cache/store-io.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import type { FileEntry } from "../../src/integrity/tool.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

function storeWith(files: Record<string, { content: string; exec?: boolean }>) {
  const store = openStore(join(makeTemp("kiwi-cache-"), "cache"));
  const src = makeTemp();
  const entries: FileEntry[] = [];
  for (const [path, f] of Object.entries(files)) {
    const abs = join(src, path.replaceAll("/", "_"));
    writeFileSync(abs, f.content);
    const hex = sha256Hex(f.content);
    putBlobFromFile(store, abs, hex, path);
    entries.push({ path, sha256: hex, is_executable: f.exec === true });
  }
  return { store, entries };
}

describe("materializing a tool into a run directory", () => {
  test("places every file at its path with its bytes; links plain files, copies executables", () => {
    const { store, entries } = storeWith({ "main.py": { content: "run", exec: true }, "lib/h.py": { content: "X = 1" } });
    const dest = join(makeTemp(), "run");
    const result = materializeTool(store, entries, dest);
    expect(result).toEqual({ dir: dest, linked: 1, copied: 1 });
    expect(readFileSync(join(dest, "lib/h.py"), "utf8")).toBe("X = 1");
    expect(statSync(join(dest, "lib/h.py")).ino).toBe(statSync(blobPath(store, sha256Hex("X = 1"))).ino);
    expect(statSync(join(dest, "main.py")).mode & 0o777).toBe(0o555);
    expect(statSync(join(dest, "lib/h.py")).mode & 0o777).toBe(0o444);
    expect(statSync(dest).mode & 0o777).toBe(0o555);
    expect(statSync(join(dest, "lib")).mode & 0o777).toBe(0o555);
  });

  test("copies everything when links are turned off", () => {
    const { store, entries } = storeWith({ "a.txt": { content: "a" } });
    const dest = join(makeTemp(), "run");
    expect(materializeTool(store, entries, dest, { link: false })).toMatchObject({ linked: 0, copied: 1 });
    expect(statSync(join(dest, "a.txt")).ino).not.toBe(statSync(blobPath(store, sha256Hex("a"))).ino);
  });

  test("refuses a corrupt blob: evicts it and places nothing under that name", () => {
    const { store, entries } = storeWith({ "a.txt": { content: "good" } });
    const blob = blobPath(store, sha256Hex("good"));
    chmodSync(blob, 0o644);
    writeFileSync(blob, "evil");
    const dest = join(makeTemp(), "run");
    expect(() => materializeTool(store, entries, dest, { subject: "pad" })).toThrow(expect.objectContaining({ code: "E_CACHE_CORRUPT", message: expect.stringContaining(`cached blob sha256:${sha256Hex("good").slice(0, 12)} (pad: a.txt) holds bytes`) }));
    expect(() => readFileSync(join(dest, "a.txt"))).toThrow();
  });

  test("a missing blob names the tool and file it holds, and says to run kiwi install", () => {
    const { store } = storeWith({});
    const hex = sha256Hex("nope");
    expect(() => materializeTool(store, [{ path: "node_modules/x/index.js", sha256: hex, is_executable: false }], join(makeTemp(), "run"), { subject: "pad" })).toThrow(
      expect.objectContaining({ code: "E_CACHE_MISSING", message: `the cache holds no blob sha256:${hex.slice(0, 12)} (pad: node_modules/x/index.js)`, hint: 'run "kiwi install"' }),
    );
    // Copying (links off) reaches the same error through another call.
    expect(() => materializeTool(store, [{ path: "x", sha256: hex, is_executable: false }], join(makeTemp(), "run"), { link: false })).toThrow(expect.objectContaining({ message: `the cache holds no blob sha256:${hex.slice(0, 12)} (x)` }));
  });

  test.each(["../escape.txt", "/etc/passwd", "a/../../b"])("refuses the unsafe path %s", (path) => {
    const { store, entries } = storeWith({ "a.txt": { content: "a" } });
    const dest = join(makeTemp(), "run");
    expect(() => materializeTool(store, [{ ...entries[0]!, path }], dest)).toThrow(expect.objectContaining({ code: "E_LOCK_INVALID" }));
  });
});
