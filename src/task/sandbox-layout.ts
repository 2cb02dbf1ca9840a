import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { PythonInfo } from "./python-env.ts";

/** Top-level folders that are the system's programs and libraries (symbolic links on merged-/usr systems). */
const SYSTEM_TOP = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** The few files of /etc that the dynamic loader and Python read; nothing else of /etc is visible. */
const SYSTEM_ETC = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives"];

/**
 * The size of a sandbox's private /tmp and of its /dev/shm, each (MB), unless a task's hone.yaml sets `tmp_mb`: a
 * tmpfs is the host's memory, so an evaluator or harness program writing without end would otherwise exhaust it.
 */
export const DEFAULT_TMP_MB = 256;

/** Where the program zygote's socket folder appears inside every sandbox. */
export const SOCKET_DIR_INSIDE = "/run/hone";

export interface SandboxSpec {
  python: PythonInfo;
  /** Host folders visible read-only at the same path. */
  readOnly: string[];
  /** Host folders bound at another path inside: [host, inside, writable]. */
  binds?: [string, string, boolean][];
  env: NodeJS.ProcessEnv;
  /** Keep CAP_SETUID/CAP_SETGID (root only) so the zygote can run each program as an unprivileged user. */
  setuid?: boolean;
  /** Device globs (`/dev/nvidia*`) bound in, for tasks that need a GPU. */
  devices?: string[];
  /** The folder the command starts in (bubblewrap keeps only its last --chdir, warning on stderr): /tmp unless given. */
  cwd?: string;
  /** The size of the private /tmp and of /dev/shm, each, in MB (DEFAULT_TMP_MB unless given), where bwrap can cap them. */
  tmpMb?: number;
}

let sizeSupport: boolean | undefined;

/** Whether a bubblewrap's `--help` text offers `--size BYTES` (for the next --tmpfs; bubblewrap 0.7 and later). */
export const helpOffersSize = (help: string): boolean => /^\s*--size\s/m.test(help);

/**
 * Whether the bwrap on PATH can cap the size of a tmpfs (checked once per process, from its help: no namespace is
 * made). An older one (hone supports 0.5 and later) gets no --size, and its sandboxes' /tmp and /dev/shm are bounded
 * only by the host's memory: `hone doctor` says so.
 */
export function bwrapCapsTmpfs(): boolean {
  if (sizeSupport !== undefined) return sizeSupport;
  try {
    sizeSupport = helpOffersSize(execFileSync("bwrap", ["--help"], { encoding: "utf8", stdio: "pipe", timeout: 10_000 }));
  } catch (err) {
    // An old bwrap may print its help and exit non-zero: what it printed still says.
    const e = err as { stdout?: string; stderr?: string };
    sizeSupport = helpOffersSize(`${e.stdout ?? ""}\n${e.stderr ?? ""}`);
  }
  return sizeSupport;
}

/** `--tmpfs <path>`, capped at `mb` where the bwrap can (bubblewrap applies --size to the next --tmpfs only). */
const cappedTmpfs = (path: string, mb: number): string[] =>
  bwrapCapsTmpfs() ? ["--size", String(Math.floor(mb) * 1024 * 1024), "--tmpfs", path] : ["--tmpfs", path];

/** The device files a glob names (only `*` in the last part), those that exist. */
export function expandDevices(globs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const g of globs) {
    const dir = dirname(g);
    const re = new RegExp(
      `^${basename(g)
        .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")}$`,
    );
    try {
      for (const name of readdirSync(dir)) if (re.test(name)) out.add(join(dir, name));
    } catch {
      // no such folder: nothing to bind
    }
  }
  return [...out].sort();
}

const isRoot = () => process.getuid?.() === 0;

function systemMounts(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const top of SYSTEM_TOP) {
    try {
      const st = lstatSync(top);
      if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(top), top);
      else if (st.isDirectory()) args.push("--ro-bind", top, top);
    } catch {
      // not on this system
    }
  }
  for (const file of SYSTEM_ETC) args.push("--ro-bind-try", file, file);
  return args;
}

/** bubblewrap makes missing parent folders 0700; an unprivileged program must be able to walk through them. */
function parents(paths: string[]): string[] {
  const dirs = new Set<string>();
  for (const p of paths) for (let d = dirname(p); d !== "/" && d !== "."; d = dirname(d)) dirs.add(d);
  return [...dirs].sort((a, b) => a.split("/").length - b.split("/").length).flatMap((d) => ["--perms", "0755", "--dir", d]);
}

/**
 * As root, the sandbox's processes are uid 0 of the host's user namespace (without capabilities), and the kernel lets
 * uid 0 write /proc/sys by its file modes alone: kernel.core_pattern or kernel.modprobe set from inside would run a
 * command as root on the host. bubblewrap covers these only when its own capability check lets it (not under
 * --cap-drop ALL), so hone binds them read-only itself. Not as another user: bubblewrap's user namespace already
 * makes them read-only, and a cover would refuse each program its own /proc.
 */
const kernelSettingsReadOnly = (): string[] =>
  isRoot() ? [...procSysCover(), "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"] : [];

let procSysArgs: string[] | undefined;

/**
 * The binds that make /proc/sys read-only, worked out once per process from the host's mounts. A host without a
 * /proc/sys to bind (a chroot without /proc) gets an empty read-only folder in its place.
 */
function procSysCover(): string[] {
  if (procSysArgs) return procSysArgs;
  if (!existsSync("/proc/sys")) {
    procSysArgs = ["--tmpfs", "/proc/sys", "--remount-ro", "/proc/sys"];
    return procSysArgs;
  }
  let mountinfo = "";
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    // no mount table to read: /proc/sys is bound whole
  }
  procSysArgs = procSysBinds(automountsUnder("/proc/sys", mountinfo), (dir) => readdirSync(dir));
  return procSysArgs;
}

/**
 * The automount points (autofs) strictly under `root` in a mountinfo table: its fifth field, with \\ooo escapes, the
 * type after the ` - ` separator. Other mounts below are carried by a recursive bind and remounted read-only with it.
 */
export function automountsUnder(root: string, mountinfo: string): string[] {
  const points: string[] = [];
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const field = fields[4];
    const type = fields[fields.indexOf("-", 5) + 1];
    if (!field || type !== "autofs") continue;
    const point = field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
    if (point.startsWith(`${root}/`)) points.push(point);
  }
  return points;
}

/**
 * bubblewrap's arguments binding /proc/sys read-only over itself. An automount below it (systemd's binfmt_misc under
 * /proc/sys/fs) would be carried in by the recursive bind, whose read-only remount fails on it (bubblewrap dies:
 * containers/bubblewrap#541): a folder holding one is bound entry by entry instead (`-try`: an entry may go meanwhile),
 * and the automount itself left out (the sandbox's own /proc holds an empty folder there). /proc/sys/net is always
 * bound whole: what it lists depends on the network namespace, so its entries cannot be named from outside.
 */
export function procSysBinds(automounts: readonly string[], list: (dir: string) => string[]): string[] {
  const holds = (path: string) => automounts.some((m) => m.startsWith(`${path}/`));
  if (!holds("/proc/sys")) return ["--ro-bind", "/proc/sys", "/proc/sys"];
  const cover = (path: string): string[] => {
    if (automounts.includes(path)) return [];
    if (path === "/proc/sys/net" || !holds(path)) return ["--ro-bind-try", path, path];
    let names: string[] = [];
    try {
      names = list(path).sort();
    } catch {
      // gone meanwhile: nothing to cover
    }
    return names.flatMap((name) => cover(`${path}/${name}`));
  };
  return cover("/proc/sys");
}

/**
 * The bubblewrap command line for a sealed process: a root made of nothing but the system's libraries, the
 * interpreter's folders and what the spec names; new PID, network, IPC and UTS namespaces; a private /tmp, /dev
 * and /proc; an empty environment but the spec's; no capabilities (when hone runs as root, only the two the zygote
 * needs to drop to an unprivileged user). No socket of the host, no home folder, no /var, /run or /etc/shadow.
 * Nothing but /tmp, /dev/shm and the spec's writable binds can be written: /tmp and /dev/shm are capped at
 * `tmpMb` each (where the bwrap can), and the root bubblewrap builds (itself a tmpfs, as are the folders it makes
 * for the binds) is remounted read-only, since as the sandbox's owner a program could fill it without bound.
 */
export function bwrapArgs(spec: SandboxSpec, command: string[]): string[] {
  const readOnly = [...new Set([...spec.python.roots, ...spec.readOnly])];
  const binds = spec.binds ?? [];
  const devices = expandDevices(spec.devices ?? []);
  const caps = isRoot()
    ? ["--cap-drop", "ALL", ...(spec.setuid ? ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"] : [])]
    : [];
  const env = Object.entries(spec.env).flatMap(([k, v]) => (v === undefined ? [] : ["--setenv", k, v]));
  const tmpMb = spec.tmpMb ?? DEFAULT_TMP_MB;
  return [
    ...["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"],
    ...["--die-with-parent", "--new-session", ...caps],
    // The private /tmp first: folders bound below may live under the host's /tmp (a clone there, a task folder).
    // /dev/shm a tmpfs of its own, so /dev itself can be made read-only once every device is bound (see the end).
    ...["--dev", "/dev", ...cappedTmpfs("/dev/shm", tmpMb), "--proc", "/proc", ...kernelSettingsReadOnly()],
    ...cappedTmpfs("/tmp", tmpMb),
    ...systemMounts(),
    ...parents([...readOnly, ...binds.map((b) => b[1])]),
    ...readOnly.flatMap((p) => ["--ro-bind", p, p]),
    ...binds.flatMap(([host, inside, rw]) => [rw ? "--bind" : "--ro-bind", host, inside]),
    // A device in a folder of its own (/dev/dri/card0, /dev/nvidia-caps/…): the folder walkable by an unprivileged program.
    ...parents(devices.filter((d) => dirname(d) !== "/dev")),
    ...devices.flatMap((d) => ["--dev-bind", d, d]),
    // A file left in /dev (writable by the sandbox's owner) would outlive the evaluation: the warm pool wipes only
    // /tmp and /dev/shm between evaluations, and /dev would keep what one left for the next.
    ...["--remount-ro", "/dev"],
    // The root last, once every folder in it is made: a remount covers that mount alone, not those below it.
    ...["--remount-ro", "/"],
    ...["--chdir", spec.cwd ?? "/tmp", "--clearenv", ...env],
    ...command,
  ];
}

/**
 * What to tell someone whose evaluator ran out of room (`[Errno 28] No space left on device`) in its capped /tmp or
 * /dev/shm under bubblewrap (the caller knows whether it ran there); undefined for any other error, or where this bwrap
 * cannot cap them (the room that ran out is another's).
 */
export function tmpFullHint(task: { tmpMb?: number }, error: string): string | undefined {
  if (!/No space left on device/.test(error) || !bwrapCapsTmpfs()) return undefined;
  const mb = task.tmpMb ?? DEFAULT_TMP_MB;
  return `a sandbox's /tmp (the evaluator's working directory, and each program's own) and its /dev/shm hold at most ${mb} MB each (they are kept in the host's memory): write less there, or raise tmp_mb in the task's hone.yaml (default ${DEFAULT_TMP_MB})`;
}
