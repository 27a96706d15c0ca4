// Where a path a capability declares (fs.read / fs.write `paths`) points on this machine: the one
// reading the sandbox's mounts (exec/sandbox-mounts.ts) and the WASI host's preopens (wasm/) share. Pure.
import { posix } from "node:path";

/** `~` and `~/x` are the home folder, relative paths the project root; the result is normalised. */
export function expandDeclaredPath(raw: string, home: string, projectRoot: string): string {
  const p = raw.trim();
  if (p === "~") return posix.normalize(home);
  if (p.startsWith("~/")) return posix.normalize(posix.join(home, p.slice(2)));
  const abs = posix.isAbsolute(p) ? p : posix.join(projectRoot, p);
  const norm = posix.normalize(abs);
  return norm.length > 1 && norm.endsWith("/") ? norm.slice(0, -1) : norm;
}
