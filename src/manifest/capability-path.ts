// Where a path a capability declares (fs.read / fs.write `paths`) points on this machine: the one
// reading the sandbox's mounts (exec/sandbox-mounts.ts) and the WASI host's preopens (wasm/) share,
// and which paths the sandbox can never grant (kiwi check reports them as exec refuses them). Pure.
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

/** The sandbox's own kernel views: a declaration can neither replace nor reach them. */
export const KERNEL_PATHS = ["/proc", "/sys", "/dev"] as const;

/**
 * Why the sandbox cannot grant a declared path (expanded and normalised), or undefined: the whole
 * file system (it would show home folders and keys, and leave kiwi no place for its own mounts), or
 * a path in the sandbox's private /proc, /sys or /dev.
 */
export function ungrantablePath(path: string): { why: string; hint: string } | undefined {
  if (path === "/") return { why: "it is the whole file system", hint: "declare the folders the tool needs (e.g. ./data); a tool that must see everything runs only with --sandbox=off" };
  const kernel = KERNEL_PATHS.find((k) => path === k || path.startsWith(`${k}/`));
  return kernel ? { why: `the sandbox has its own ${kernel}`, hint: `tools see a private ${kernel}; remove the path` } : undefined;
}
