// The bubblewrap probe's verdict, remembered across kiwi processes. Running `bwrap … true` costs a
// fork, namespace set-up and an exec (~4 ms, a tenth of a warm sandboxed call), and its answer only
// changes when bwrap or the kernel's namespace settings do. So the verdict is stored in exec's memo
// under a key made of everything it depends on: the probe's argv (bwrap's path, the namespaces,
// the uid mapping), bwrap's file identity (a reinstalled or setuid-changed bwrap is a new file),
// the kernel release, the boot, the namespaces kiwi itself runs in (another container is another
// key) and every sysctl that gates unprivileged user namespaces. When any of them changes the key
// does, and the probe runs again. Only a working sandbox is remembered: a failed probe may be
// transient (a loaded machine, a full process table), so it is asked again next time.
import { readFileSync, readlinkSync, statSync } from "node:fs";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";

export interface ProbeVerdict {
  usable: boolean;
  reason?: string;
}

/** The kernel settings that decide whether unprivileged sandboxes work (absent ones read as "-"). */
const KERNEL_FILES = [
  "/proc/sys/kernel/osrelease",
  "/proc/sys/kernel/random/boot_id",
  "/proc/sys/kernel/unprivileged_userns_clone",
  "/proc/sys/user/max_user_namespaces",
  "/proc/sys/user/max_pid_namespaces",
  "/proc/sys/user/max_net_namespaces",
  "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
];

/** The memo key of a probe, or undefined when bwrap cannot be identified (then nothing is remembered). */
function probeKey(argv: readonly string[]): string | undefined {
  let identity: string;
  try {
    const st = statSync(argv[0]!);
    identity = [st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs, st.mode, st.uid].join(":");
  } catch {
    return undefined;
  }
  const kernel = KERNEL_FILES.map((file) => {
    try {
      return readFileSync(file, "utf8").trim();
    } catch {
      return "-";
    }
  });
  const namespaces = ["user", "pid", "net", "mnt"].map((ns) => {
    try {
      return readlinkSync(`/proc/self/ns/${ns}`);
    } catch {
      return "-";
    }
  });
  return memoKey("probes", argv.join("\0"), identity, ...kernel, ...namespaces);
}

/** The verdict a previous process reached under exactly these conditions, if any. */
export function rememberedProbe(cacheDir: string, argv: readonly string[]): { verdict: ProbeVerdict } | undefined {
  const key = probeKey(argv);
  const text = key === undefined ? undefined : readMemo(cacheDir, "probes", key);
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== "object" || value === null || typeof (value as ProbeVerdict).usable !== "boolean") return undefined;
    const { usable, reason } = value as ProbeVerdict;
    return { verdict: typeof reason === "string" ? { usable, reason } : { usable } };
  } catch {
    return undefined;
  }
}

/** Stores a fresh probe's verdict for the processes that follow (a working sandbox only). */
export function rememberProbe(cacheDir: string, argv: readonly string[], verdict: ProbeVerdict): void {
  if (!verdict.usable) return;
  const key = probeKey(argv);
  if (key !== undefined) writeMemo(cacheDir, "probes", key, JSON.stringify(verdict));
}
