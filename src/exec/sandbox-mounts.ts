// What a sandboxed tool can see: the run directory, the system paths its runtime needs, the runtime's
// own prefix and the paths it declares. Everything else (home, other projects) is not mounted. Pure.
import { posix } from "node:path";
import { KiwiError } from "../errors.ts";
import type { Capability } from "../manifest/model.ts";
import { expandDeclaredPath, ungrantablePath } from "../manifest/capability-path.ts";

export interface Mount {
  /** A bind mount (ro, rw), a kernel view (proc, dev), a tmpfs, a link, or a host file copied in read-only (file). */
  kind: "ro" | "rw" | "tmpfs" | "proc" | "dev" | "symlink" | "file";
  /** Path inside the sandbox. */
  path: string;
  /** Host path when it differs from `path`. */
  source?: string;
  /** What a symlink points to (kind "symlink"). */
  target?: string;
  /** A copied file's permission bits, as on the host (kind "file"). */
  mode?: number;
  /** tmpfs size cap. */
  sizeBytes?: number;
  /** Skipped when the host path does not exist (bwrap's `-try` forms). */
  optional: boolean;
  /** Why it is there: system, runtime, run directory, declared (with the manifest pointer), private. */
  why: string;
}

/** A system path on this machine: a regular file (its mode and size), a symbolic link (its real path), or something else (a folder). */
export type SystemEntry = { kind: "file"; mode: number; size: number } | { kind: "link"; realPath: string } | { kind: "other" };

/** A symbolic link a command's path goes through: where it is (no link in its folder's path) and its text. */
export interface CommandLink {
  path: string;
  target: string;
}

/** System paths every runtime needs, read-only; missing ones are skipped. */
export const SYSTEM_PATHS = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/localtime",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/hosts",
] as const;

/** Extra /etc entries only when the network is declared: name resolution and TLS roots. */
export const NETWORK_PATHS = ["/etc/resolv.conf", "/etc/gai.conf", "/etc/host.conf", "/etc/services", "/etc/protocols", "/etc/ssl", "/etc/ca-certificates", "/etc/pki"] as const;

/** Folders too broad to mount as a runtime prefix (they hold other people's or projects' files). */
const BROAD = new Set(["/", "/home", "/root", "/opt", "/tmp", "/var", "/srv", "/mnt", "/media", "/run", "/etc", "/work"]);

/** Home folders whose `bin/` holds commands but whose rest holds data or credentials (~/.cargo/credentials.toml). */
const HOME_BROAD = [".local", ".cargo", "go", ".config", ".ssh", ".gnupg"];

interface MountInput {
  argv: readonly string[];
  commandRealPath?: string;
  /** The symbolic links argv[0] goes through on the host (sandbox-io.ts commandLinks). */
  commandLinks?: readonly CommandLink[];
  runDirs: readonly string[];
  capabilities: readonly Capability[];
  home: string;
  projectRoot: string;
  /** What each system path is on this machine (SandboxProbe.systemPaths); undefined: not known. */
  systemPaths?: Readonly<Record<string, SystemEntry>>;
}

/**
 * A system file up to this size is copied into the sandbox rather than bound: bubblewrap spends
 * ~0.13 ms on each bind mount and ~0.04 ms on copying a small file (/etc/passwd, /etc/hosts,
 * /etc/ld.so.cache; measured, bubblewrap 0.8). A larger one (a site's huge /etc/passwd) is bound.
 */
const COPY_MAX_BYTES = 1024 * 1024;

/**
 * The mounts of one sandbox, ordered so a folder is mounted before anything inside it; `extra`
 * (kiwi's own helpers) is placed like the rest.
 */
export function planMounts(req: MountInput, network: boolean, memoryMb: number, extra: readonly Mount[] = []): Mount[] {
  const tmpBytes = Math.floor(memoryMb * 1024 * 1024);
  const declared = declaredMounts(req);
  // A declared folder (/etc, or / itself) already shows the system paths inside it as the host has
  // them; kiwi's own links and copies there would collide with it (bubblewrap cannot make /bin
  // over a bound /, nor copy /etc/passwd into a read-only /etc) and are left out.
  const undeclared = (m: Mount) => !declared.some((d) => isWithin(m.path, d.path));
  const mounts: Mount[] = [
    ...systemMounts(SYSTEM_PATHS, req.systemPaths, "system").filter(undeclared),
    ...(network ? systemMounts(NETWORK_PATHS, req.systemPaths, "network (name resolution, TLS roots)").filter(undeclared) : []),
    { kind: "proc", path: "/proc", optional: false, why: "private (this sandbox's processes only)" },
    { kind: "dev", path: "/dev", optional: false, why: "private (null, zero, random, tty)" },
    // Private scratch space capped at the memory limit: tmpfs pages are RAM that no rlimit sees.
    { kind: "tmpfs", path: "/tmp", sizeBytes: tmpBytes, optional: false, why: "private scratch space" },
    { kind: "tmpfs", path: "/dev/shm", sizeBytes: tmpBytes, optional: false, why: "private shared memory" },
    ...runtimePrefixes(req).map((path): Mount => ({ kind: "ro", path, optional: true, why: "runtime" })),
    ...declared,
    ...req.runDirs.map((d): Mount => ({ kind: "ro", path: posix.normalize(d), optional: false, why: "run directory (verified files)" })),
    ...extra,
  ];
  return orderMounts(withCommandLinks(req.commandLinks ?? [], mounts));
}

/**
 * `mounts` with the links the command's path goes through, made in the sandbox as on the host (a
 * node_modules, a home or a checkout reached through a linked folder), so the path as the tool is
 * started (and sees itself) leads to the runtime mounted at its real path. Each one only names a
 * path: what it leads to is mounted or not on its own. A bound folder whose path goes through one
 * (the run directory or a declared folder under a linked home) is placed where the link leads:
 * bubblewrap sets mounts up before the sandbox's root is its root, where a link's absolute target
 * would lead elsewhere and a relative one to a folder not made yet. A link in a system path, where
 * kiwi mounts something of its own (/tmp), or inside a bound folder (there as the host has it) is
 * not made.
 */
function withCommandLinks(links: readonly CommandLink[], mounts: readonly Mount[]): Mount[] {
  const bind = (m: Mount) => m.kind === "ro" || m.kind === "rw";
  const fixed = mounts.filter((m) => !bind(m));
  const candidates = links.filter((l) => !SYSTEM_PATHS.some((s) => isWithin(l.path, s)) && !fixed.some((m) => m.path === l.path));
  if (candidates.length === 0) return [...mounts];
  const placed = mounts.map((m): Mount => {
    if (!bind(m)) return m;
    const at = throughLinks(m.path, candidates);
    return at === posix.normalize(m.path) ? m : { ...m, path: at, source: m.source ?? m.path };
  });
  const made = candidates.filter((l) => !placed.some((m) => bind(m) && isWithin(l.path, m.path)));
  return [...placed, ...made.map((l): Mount => ({ kind: "symlink", path: l.path, target: l.target, optional: false, why: "runtime (a link its command is reached through)" }))];
}

/** Most links one resolution follows, as Linux's path walk (MAXSYMLINKS). */
const MAX_LINKS = 40;

/**
 * `path` resolved component by component as the kernel resolves it, `linkAt` giving the text of
 * the link at a path (undefined: no link there). Undefined past MAX_LINKS links (a loop). The one
 * walk behind both the command's resolution on disk (sandbox-io.ts resolveCommand) and the mount
 * paths placed through the links it met (throughLinks).
 */
export function walkLinks(path: string, linkAt: (path: string) => string | undefined): string | undefined {
  let pending = path.split("/");
  let at = "";
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      at = at.slice(0, at.lastIndexOf("/"));
      continue;
    }
    const next = `${at}/${part}`;
    const target = linkAt(next);
    if (target === undefined) {
      at = next;
      continue;
    }
    if (++hops > MAX_LINKS) return undefined;
    if (target.startsWith("/")) at = "";
    pending = [...target.split("/"), ...pending];
  }
  return at === "" ? "/" : at;
}

/**
 * `path` with the links in `links` resolved, as the kernel would (the links met resolving argv[0],
 * so exact for argv[0] and its folders). A path through none, or through a loop, is returned normalized.
 */
export function throughLinks(path: string, links: readonly CommandLink[]): string {
  if (links.length === 0) return posix.normalize(path);
  const byPath = new Map(links.map((l) => [l.path, l.target]));
  return walkLinks(path, (at) => byPath.get(at)) ?? posix.normalize(path);
}

/**
 * System paths as this machine has them: one that is absent is left out; a link into /usr (a merged
 * /usr's /bin, /lib64, /etc/localtime) is the same link to its real path inside the sandbox's
 * read-only /usr, where it resolves as on the host; a small regular file is copied in (read-only
 * once the root is remounted so); anything else is bound read-only. Each link or copy spares
 * bubblewrap a bind mount (~0.1 ms). Unknown (no facts): each is bound, if present.
 */
function systemMounts(paths: readonly string[], facts: Readonly<Record<string, SystemEntry>> | undefined, why: string): Mount[] {
  const out: Mount[] = [];
  for (const path of paths) {
    const entry = facts === undefined ? { kind: "other" as const } : facts[path];
    if (entry === undefined) continue;
    if (entry.kind === "link" && isWithin(entry.realPath, "/usr")) out.push({ kind: "symlink", path, target: entry.realPath, optional: false, why });
    else if (entry.kind === "file" && entry.size <= COPY_MAX_BYTES) out.push({ kind: "file", path, mode: entry.mode & 0o7777, optional: false, why });
    else out.push({ kind: "ro", path, optional: true, why });
  }
  return out;
}

/** Declared fs.read paths become read-only mounts and fs.write paths writable ones. */
function declaredMounts(req: MountInput): Mount[] {
  const out: Mount[] = [];
  for (const cap of req.capabilities) {
    if (cap.name !== "fs.read" && cap.name !== "fs.write") continue;
    for (const raw of cap.paths ?? []) {
      const path = expandDeclaredPath(raw, req.home, req.projectRoot);
      const refused = ungrantablePath(path);
      if (refused) {
        throw new KiwiError("E_SANDBOX", `${cap.name} path "${raw}" (${cap.pointer}) cannot be granted: ${refused.why}`, {
          hint: `${refused.hint} (${cap.name}: "${raw}")`,
          details: { pointer: cap.pointer, path: raw },
        });
      }
      out.push({ kind: cap.name === "fs.write" ? "rw" : "ro", path, optional: true, why: `declared ${cap.name} (${cap.pointer})` });
    }
  }
  return out;
}

/**
 * The folder a runtime lives in, from its command path and real path: `<prefix>/bin/x` or
 * `<prefix>/shims/x` gives `<prefix>` (a pyenv, a venv, a node_modules package); other places give
 * the command's own folder. System paths need nothing; home, the project and other broad folders are
 * never mounted whole (the command file alone is).
 */
export function runtimePrefixes(req: Pick<MountInput, "argv" | "commandRealPath" | "commandLinks" | "home" | "projectRoot">): string[] {
  const out = new Set<string>();
  const links = req.commandLinks ?? [];
  const broad = (dir: string) =>
    BROAD.has(dir) || isWithin(req.home, dir) || isWithin(req.projectRoot, dir) || HOME_BROAD.some((d) => dir === posix.join(req.home, d));
  // A folder reached through a link is mounted at its real path (the sandbox makes the link, see
  // commandLinkMounts); it is too broad when either path is.
  const real = (dir: string) => throughLinks(dir, links);
  const tooBroad = (dir: string) => broad(dir) || broad(real(dir));
  for (const cmd of [req.argv[0], req.commandRealPath]) {
    if (!cmd || !posix.isAbsolute(cmd)) continue;
    const file = posix.normalize(cmd);
    if (SYSTEM_PATHS.some((s) => isWithin(file, s))) continue;
    if (isWithin(real(file), "/nix/store")) {
      out.add("/nix/store");
      continue;
    }
    const dir = posix.dirname(file);
    const base = posix.basename(dir);
    const prefix = base === "bin" || base === "sbin" || base === "shims" ? posix.dirname(dir) : dir;
    out.add(real(!tooBroad(prefix) ? prefix : !tooBroad(dir) ? dir : file));
  }
  return [...out];
}

/** True when `path` is `dir` or inside it. */
export function isWithin(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/** Parents before children; on the same path a writable declaration wins over a read-only one. */
function orderMounts(mounts: Mount[]): Mount[] {
  const byPath = new Map<string, Mount>();
  for (const m of mounts) {
    const prev = byPath.get(m.path);
    if (!prev || rank(m) >= rank(prev)) byPath.set(m.path, m);
  }
  const depth = (p: string) => (p === "/" ? 0 : p.split("/").length - 1);
  return [...byPath.values()].sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Which of two mounts of one path to keep: the run directory, then declarations (writable first), then kiwi's own. */
function rank(m: Mount): number {
  if (m.why.startsWith("run directory") || m.kind === "proc" || m.kind === "dev") return 4;
  if (m.why.startsWith("declared")) return m.kind === "rw" ? 3 : 2;
  return 1;
}
