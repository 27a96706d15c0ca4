// Cold-run hashing on a second core: while the main thread discovers and parses manifests (the
// bulk of a cold lock), a worker walks .ai/tools/ and hashes every regular file. Each result
// carries the stat taken before reading, re-checked with fstat after, and the main thread uses it
// only for a file whose discovery stat is identical, exactly like a stat cache entry.
import { IGNORED_NAMES } from "../integrity/tool-path.ts";

/** One file hashed by the worker, with the identity it had while being read. */
export interface Prehashed {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  sha256: string;
}

/** A running pre-hash; `results()` waits for the worker and never rejects (a failure means "none"). */
export interface PrehashRun {
  results(): Promise<Map<string, Prehashed>>;
  cancel(): void;
}

type FsLike = typeof import("node:fs");
type PostMessage = (data: unknown) => void;

/**
 * The worker's whole program. It is serialised with toString() into a Blob URL, so it must stay
 * self-contained: only its parameters and globals (Bun, Buffer).
 */
function workerMain(fs: FsLike, post: PostMessage, dir: string, ignored: string[]): void {
  const skip = new Set(ignored);
  const out: [string, number, number, number, number, string][] = [];
  const buffer = Buffer.allocUnsafe(1 << 20);
  const walk = (path: string): void => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = fs.readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (skip.has(entry.name)) continue;
      const abs = `${path}/${entry.name}`;
      if (entry.isDirectory()) walk(abs);
      else if (entry.isFile()) {
        let fd = -1;
        try {
          const before = fs.lstatSync(abs);
          fd = fs.openSync(abs, "r");
          const hasher = new Bun.CryptoHasher("sha256");
          // Up to the size the stat gave, and no read past it to see the end (a third of the
          // calls for a small file): a file that grew or changed meanwhile fails the fstat below.
          for (let total = 0; total < before.size; ) {
            const n = fs.readSync(fd, buffer, 0, buffer.length, null);
            if (n <= 0) break;
            hasher.update(buffer.subarray(0, n));
            total += n;
          }
          const after = fs.fstatSync(fd);
          // Changed while being read: leave it to the main thread.
          if (after.size === before.size && after.mtimeMs === before.mtimeMs && after.ctimeMs === before.ctimeMs && after.ino === before.ino) {
            out.push([abs, before.size, before.mtimeMs, before.ctimeMs, before.ino, hasher.digest("hex")]);
          }
        } catch {
          // Unreadable now: the main thread reports it if it is a tool file.
        } finally {
          if (fd !== -1) fs.closeSync(fd);
        }
      }
    }
  };
  walk(dir);
  post(out);
}

/** Starts hashing every regular file under `dir` on a worker thread. */
export function startPrehash(dir: string): PrehashRun {
  const source = `import * as fs from "node:fs";\nself.onmessage = (e) => (${workerMain.toString()})(fs, (d) => postMessage(d), e.data.dir, e.data.ignored);\n`;
  const url = URL.createObjectURL(new Blob([source], { type: "application/javascript" }));
  let worker: Worker | undefined;
  const done = new Promise<Map<string, Prehashed>>((resolve) => {
    try {
      worker = new Worker(url);
    } catch {
      resolve(new Map());
      return;
    }
    worker.onmessage = (event: MessageEvent) => {
      const rows = event.data as [string, number, number, number, number, string][];
      resolve(new Map(rows.map(([abs, size, mtimeMs, ctimeMs, ino, sha256]) => [abs, { size, mtimeMs, ctimeMs, ino, sha256 }])));
      worker?.terminate();
    };
    worker.onerror = () => {
      resolve(new Map());
      worker?.terminate();
    };
    worker.postMessage({ dir, ignored: [...IGNORED_NAMES] });
  });
  return {
    results: () => done.finally(() => URL.revokeObjectURL(url)),
    cancel: () => worker?.terminate(),
  };
}
