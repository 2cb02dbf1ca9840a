import { execFile, execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { HoneError } from "../errors.ts";
import { dropCachedProbe, type ProbeOutput, probeCacheFile, readCachedEntry, writeCachedProbe } from "./python-probe-cache.ts";
import { interpreterFile } from "./python-resolve.ts";
import { bwrapArgs } from "./sandbox-layout.ts";

const execFileAsync = promisify(execFile);

export const PYTHON_DIR = join(dirname(fileURLToPath(import.meta.url)), "python");
export const COMPAT_DIR = join(PYTHON_DIR, "compat");

/** What hone learns once about an interpreter: its real path, the folders it loads code from, and what the
 * per-program containment (hone_sandbox.py) can do here. */
export interface PythonInfo {
  executable: string;
  /** Absolute folders holding the interpreter's standard library and packages (read-only in the sandbox). */
  roots: string[];
  namespaces: boolean;
  /** Whether a contained program can run as an unprivileged user (always, unless hone runs as root and the
   * interpreter lives under a folder closed to other users, such as a 0700 /root, outside bubblewrap). */
  unprivileged: boolean;
  /** Whether the host's filesystem can be made read-only for a program without bubblewrap. */
  readonlyRoot: boolean;
  reason?: string;
}

const PROBE = `
import json, os, sys
sys.path.insert(0, sys.argv[1])
import hone_sandbox
roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
roots += [p for p in sys.path[1:] if os.path.isabs(p)]
facts = json.loads(hone_sandbox.probe({"readonly_root": True}))
print(json.dumps({"executable": sys.executable, "roots": roots, "isolation": facts}))
`;

const infos = new Map<string, PythonInfo>();
/** Interpreters whose info came from the disk cache: the fresh probe that confirms it, or rejects loudly. */
const checks = new Map<string, Promise<void>>();

/** Keeps existing folders (a zip on sys.path gives its folder), drops nested ones and those under /usr. */
function bindRoots(paths: string[]): string[] {
  const dirs = [...new Set(paths.map((p) => (p.endsWith(".zip") ? dirname(p) : p)))].filter(
    (p) => p.startsWith("/") && p !== "/usr" && !p.startsWith("/usr/"),
  );
  const within = (p: string, q: string) => p === q || p.startsWith(`${q}/`);
  return dirs.filter((p) => !dirs.some((q) => q !== p && within(p, q))).sort();
}

function infoOf(raw: ProbeOutput): PythonInfo {
  const iso = raw.isolation;
  return {
    executable: raw.executable,
    roots: bindRoots(raw.roots),
    namespaces: iso.namespaces === true,
    unprivileged: iso.unprivileged_user === true,
    readonlyRoot: iso.readonly_root === true,
    reason: typeof iso.reason === "string" ? iso.reason : undefined,
  };
}

// With a clean environment, so only the installation's own folders count.
const probeEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" });
const probeArgs = (): [string[], { encoding: "utf8"; timeout: number; env: NodeJS.ProcessEnv }] => [
  ["-c", PROBE, PYTHON_DIR],
  { encoding: "utf8", timeout: 30_000, env: probeEnv() },
];
const parseProbe = (out: string): ProbeOutput => JSON.parse(out.trim().split("\n").pop() ?? "");
const cannotStart = (python: string) =>
  new HoneError(
    "badTask",
    `cannot start the task's Python interpreter "${python}"; install python3 (with numpy for the built-in tasks) or set python: in hone.yaml`,
  );

function probeNow(python: string): ProbeOutput {
  try {
    return parseProbe(execFileSync(python, ...probeArgs()));
  } catch {
    throw cannotStart(python);
  }
}

/** probeNow() without blocking this process. */
async function probeBeside(python: string): Promise<ProbeOutput> {
  try {
    return parseProbe((await execFileAsync(python, ...probeArgs())).stdout);
  } catch {
    throw cannotStart(python);
  }
}

/**
 * The real interpreter behind a `python` setting (pyenv shims and the like resolve to a path), so sandboxed
 * processes that see no PATH or HOME still start the same Python with the same packages. Probed once per process
 * (after primePython(), taken from the disk cache while a fresh probe confirms it).
 */
export function pythonInfo(python: string): PythonInfo {
  const known = infos.get(python);
  if (known) return known;
  const raw = probeNow(python);
  writeCachedProbe(python, raw);
  const info = infoOf(raw);
  infos.set(python, info);
  return info;
}

/** Probes running now, by interpreter name (pythonInfoAsync). */
const probing = new Map<string, Promise<PythonInfo>>();

/** What pythonInfo(python) answers now without probing: undefined when nothing is known yet. */
export const knownPythonInfo = (python: string): PythonInfo | undefined => infos.get(python);

/**
 * pythonInfo without blocking this process's event loop: from memory, else a fresh probe run beside (one for all
 * callers at once). A `hone worker` holds its jobs' locks by timers, and a probe through a shim (pyenv: a chain of
 * shells) can take seconds on a busy machine.
 */
export function pythonInfoAsync(python: string): Promise<PythonInfo> {
  const known = infos.get(python);
  if (known) return Promise.resolve(known);
  let probe = probing.get(python);
  if (!probe) {
    probe = (async () => {
      const raw = await probeBeside(python);
      writeCachedProbe(python, raw);
      const info = infos.get(python) ?? infoOf(raw); // one probed meanwhile by pythonInfo stays
      infos.set(python, info);
      return info;
    })().finally(() => probing.delete(python));
    probing.set(python, probe);
  }
  return probe;
}

/** A fresh probe compared with the cached one: the same, or a loud refusal (the cache corrected for the next run). */
async function confirm(python: string, cached: ProbeOutput): Promise<void> {
  const fresh = await probeBeside(python).catch((err) => {
    dropCachedProbe(python);
    throw err;
  });
  if (JSON.stringify(infoOf(fresh)) === JSON.stringify(infoOf(cached))) {
    writeCachedProbe(python, fresh); // the same interpreter: its entry's stamps made current, for the next run
    return;
  }
  writeCachedProbe(python, fresh);
  infos.set(python, infoOf(fresh));
  throw new HoneError(
    "badTask",
    `"${python}" is no longer the interpreter hone probed before (it was ${cached.executable}, it is now ${fresh.executable}${fresh.executable === cached.executable ? ", with other folders or isolation" : ""}); nothing was evaluated with it. The cached probe (${probeCacheFile(python)}) is corrected: run the command again`,
  );
}

/**
 * Makes pythonInfo(python) answer at once from the disk cache when it holds this interpreter. The cache's key holds
 * the name, PATH and HOME, its entry the executable's size and time; what they cannot see is which interpreter the
 * name starts now (a pyenv shim switched to another version). An entry whose folders changed is not used (pythonInfo
 * then probes afresh). When which interpreter the name starts can be read without running it (python-resolve.ts) and
 * is the cached one, the entry holds; otherwise a fresh probe runs beside, and the promise settles when it agrees.
 * A caller must await it before anything runs with the interpreter's answer counts.
 */
export function primePython(python: string): Promise<void> {
  const check = checks.get(python);
  if (check) return check;
  if (infos.has(python)) return Promise.resolve();
  const entry = readCachedEntry(python);
  // A folder of the interpreter changed since (a package installed or removed): probed afresh when first asked for,
  // as without an entry, rather than started on the old folders and refused once the probe beside disagreed.
  if (!entry?.foldersHold) return Promise.resolve();
  const cached = entry.probe;
  infos.set(python, infoOf(cached));
  if (interpreterFile(python, probeEnv()) === cached.executable) return Promise.resolve();
  const confirmed = confirm(python, cached);
  confirmed.catch(() => {}); // awaited by the caller; never an unhandled rejection when it stops first
  checks.set(python, confirmed);
  return confirmed;
}

export const resolvePython = (python: string): string => pythonInfo(python).executable;

export interface IsolationSupport {
  bwrap: boolean;
  /** What evaluated programs can still do when bubblewrap is not available. */
  gaps: string[];
  reason?: string;
}

let bwrapChecked: { ok: boolean; reason?: string } | undefined;

/** Whether bubblewrap can create its namespaces here (checked once per process). */
function bwrapWorks(): { ok: boolean; reason?: string } {
  if (bwrapChecked) return bwrapChecked;
  if (process.env.HONE_NO_BWRAP === "1") {
    bwrapChecked = { ok: false, reason: "HONE_NO_BWRAP=1" };
    return bwrapChecked;
  }
  // The sandbox's own layout (hone's Python folder read-only, as every evaluator's sandbox has it): an older bubblewrap
  // without an option it uses (--perms and --clearenv came in 0.5) or a host whose mounts it cannot cover is found
  // here, once, not in every evaluation. Where the layout holds no `true` to run (NixOS), bubblewrap got as far as
  // running it: that is a layout that works.
  const info: PythonInfo = { executable: "true", roots: [], namespaces: true, unprivileged: true, readonlyRoot: true };
  const args = bwrapArgs({ python: info, readOnly: [PYTHON_DIR], env: { PATH: "/usr/bin:/bin" } }, ["true"]);
  try {
    execFileSync("bwrap", args, { stdio: "pipe", timeout: 10_000 });
    bwrapChecked = { ok: true };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    const first =
      String(e.stderr ?? e.message)
        .trim()
        .split("\n")[0] ?? "";
    bwrapChecked = /^bwrap: execvp /.test(first) ? { ok: true } : { ok: false, reason: bwrapRefusal(e.code, first) };
  }
  return bwrapChecked;
}

/** Why bubblewrap cannot be used here, in words for the user (`hone doctor` adds advice for the namespace case). */
function bwrapRefusal(code: string | undefined, first: string): string {
  if (code === "ENOENT") return "bubblewrap (bwrap) is not installed";
  if (/unknown option|unrecognized option/i.test(first))
    return `this bwrap is too old for hone's sandbox (${first}): bubblewrap 0.5 or later is needed`;
  if (/^bwrap: Can't (find source path|mount|create|remount|bind)/i.test(first))
    return `bwrap cannot set up hone's sandbox layout here (${first}): check the folder it names`;
  return `bwrap cannot create its namespaces here: ${first}`;
}

/** What the sandbox enforces for programs of this interpreter, and what it does not (in words for the user). */
export function isolationSupport(python = "python3"): IsolationSupport {
  const bwrap = bwrapWorks();
  if (bwrap.ok) return withinBwrap(python);
  const gaps = [
    "reading files your user can read (your home, other checkouts, hone's caches)",
    "running with your user's rights inside an evaluator that imports them (as many upstream evaluators do)",
  ];
  let info: PythonInfo | undefined;
  try {
    info = pythonInfo(python);
  } catch {
    // the task's own loading reports a missing interpreter
  }
  if (!info?.namespaces) {
    gaps.push("network access", "writing files your user can write", "leaving processes behind that detach from their session");
  } else {
    // A network namespace holds no filesystem socket: connect() needs only the socket file's write permission, which
    // a read-only mount does not take away.
    gaps.push("connecting to Unix sockets on the filesystem that your user can reach (a Docker or D-Bus socket, say)");
    if (!info.readonlyRoot) gaps.push("writing files your user can write");
  }
  if (!info?.namespaces || (process.getuid?.() === 0 && !info.unprivileged))
    gaps.push("a process limit (fork bombs are stopped only by the timeout)");
  return { bwrap: false, gaps, reason: bwrap.reason };
}

/**
 * Under bubblewrap, each program still needs namespaces of its own (hone_sandbox.py), made inside the sandbox with
 * an unprivileged user namespace. Where the kernel refuses those (user namespaces switched off, an AppArmor rule
 * that grants them to bwrap alone, a setuid bwrap), programs share the sandbox of their zygote or evaluator: one program
 * killed the program evaluated beside it with kill(-1). Said, as the gaps without bubblewrap are.
 */
function withinBwrap(python: string): IsolationSupport {
  let info: PythonInfo | undefined;
  try {
    info = pythonInfo(python);
  } catch {
    return { bwrap: true, gaps: [] }; // the task's own loading reports a missing interpreter
  }
  if (info.namespaces) return { bwrap: true, gaps: [] };
  const gaps = [
    "killing or stopping the programs evaluated beside them and the warm pool's zygote (they share one PID namespace)",
    "reading and writing the scratch folders of the programs evaluated beside them (they share one /tmp)",
    "leaving processes behind that detach from their session, until the run ends",
  ];
  if (process.getuid?.() === 0 && !info.unprivileged) gaps.push("a process limit (fork bombs are stopped only by the timeout)");
  const reason = `bubblewrap works, but a program cannot have namespaces of its own inside it: ${info.reason ?? "refused"}`;
  return { bwrap: true, gaps, reason };
}

/** One line for the user, once per run, saying plainly what is not isolated. */
export function isolationNotice(python = "python3"): string | undefined {
  const s = isolationSupport(python);
  if (s.gaps.length === 0) return undefined;
  const close = s.bwrap
    ? "Allow unprivileged user namespaces (for python3 too) to close this."
    : "Install bubblewrap to close this.";
  return `note: evaluated programs are not fully isolated (${s.reason}): they run in their own process with no secrets in their environment, but are not prevented from ${s.gaps.join("; ")}. ${close}`;
}
