// The versions of the evaluator's Python and numpy, for a run's measurement identity: the same task and program can
// score differently under another numpy (its random generators, its linear algebra), so measurements made under two
// are named as different. Read without running any of the task's code: Python in isolated mode (no PYTHONPATH, no
// user site, no current folder on sys.path) reads numpy's installed metadata, on the task's python_path first.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { HONE_VERSION } from "../measure/identity.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { honeCacheDir } from "../store/cache-dir.ts";
import type { DiscoveryTask } from "./discovery-task.ts";
import { sealed } from "./evaluator.ts";
import { interpreterFile } from "./python-resolve.ts";

export interface EvaluatorRuntime {
  python: string;
  /** numpy's version, or null where the evaluator's Python has none. */
  numpy: string | null;
  /**
   * Whether evaluations run sealed under bubblewrap or with what the host allows (a program that reads the task
   * folder, or the network, is stopped only under bubblewrap): set by `sandboxed`.
   */
  sandbox?: "bubblewrap" | "none";
}

/** The runtime with the sandbox evaluations of `task` run in; the runtime as it is where that cannot be told. */
export function sandboxed(runtime: EvaluatorRuntime | undefined, task: DiscoveryTask): EvaluatorRuntime | undefined {
  if (!runtime) return runtime;
  try {
    return { ...runtime, sandbox: sealed(task) ? "bubblewrap" : "none" };
  } catch {
    return runtime;
  }
}

const PROBE = `
import json, sys
out = {"python": sys.version.split()[0], "numpy": None, "executable": sys.executable, "searched": [], "found": None}
try:
    import importlib.metadata as m
    search = [p for p in sys.argv[1:] + sys.path if p]
    out["searched"] = search
    d = next(iter(m.distributions(name="numpy", path=search)), None)
    if d is not None:
        out["numpy"] = d.version
        found = getattr(d, "_path", None)
        out["found"] = str(found) if found is not None else None
except Exception:
    pass
print(json.dumps(out))
`;

const VERSION = /^[0-9A-Za-z.+_-]{1,64}$/;

/** The probe's output as a runtime, or undefined for anything else. */
export function parseRuntime(text: string): EvaluatorRuntime | undefined {
  return parseProbe(text)?.runtime;
}

/** What the probe found besides the versions: where it looked, and numpy's metadata folder (for the disk cache). */
interface Probed {
  runtime: EvaluatorRuntime;
  executable?: string;
  searched: string[];
  found?: string;
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) && v.length <= 1000 && v.every((x) => typeof x === "string" && x.startsWith("/")) ? (v as string[]) : [];

function parseProbe(text: string): Probed | undefined {
  try {
    const v = JSON.parse(text) as {
      python?: unknown;
      numpy?: unknown;
      executable?: unknown;
      searched?: unknown;
      found?: unknown;
    };
    if (typeof v.python !== "string" || !VERSION.test(v.python)) return undefined;
    const numpy = typeof v.numpy === "string" && VERSION.test(v.numpy) ? v.numpy : null;
    const path = (x: unknown) => (typeof x === "string" && x.startsWith("/") ? x : undefined);
    return {
      runtime: { python: v.python, numpy },
      executable: path(v.executable),
      searched: strings(v.searched),
      found: path(v.found),
    };
  } catch {
    return undefined;
  }
}

// Kept on disk between processes (asking costs a Python start, ~0.2 s before round 0): an entry holds the answer with
// the interpreter file's size and time and the modification time of every folder the probe searched (a numpy
// installed, upgraded or removed in any of them changes its folder's time) and of numpy's metadata file. An entry is
// used only when the interpreter the setting starts is still the one probed (python-resolve.ts, read without running
// it); anything else is probed afresh.

const MAX_ENTRY_BYTES = 256 * 1024;
const probeEnv = () => ({ PATH: process.env.PATH ?? "" });

function entryFile(python: string, path: string[]): string {
  const key = JSON.stringify([python, path, process.env.PATH ?? "", HONE_VERSION]);
  return join(honeCacheDir(), "evaluator-runtime", `${createHash("sha256").update(key).digest("hex").slice(0, 32)}.json`);
}

/** A path's size and modification time, or null where it is not there (absent paths are stamped too). */
function stampOf(path: string): [number, number] | null {
  try {
    const s = statSync(path, { throwIfNoEntry: false });
    return s ? [s.size, s.mtimeMs] : null;
  } catch {
    return null;
  }
}

/** Everything the answer depends on that can change between processes, as the entry keeps it. */
function stamps(p: Probed): Record<string, [number, number] | null> {
  const out: Record<string, [number, number] | null> = {};
  for (const f of [p.executable, ...p.searched, p.found && join(p.found, "METADATA")]) if (f) out[f] = stampOf(f);
  return out;
}

function readEntry(python: string, path: string[]): EvaluatorRuntime | undefined {
  const file = entryFile(python, path);
  try {
    if ((statSync(file, { throwIfNoEntry: false })?.size ?? Number.POSITIVE_INFINITY) > MAX_ENTRY_BYTES) return undefined;
    const entry = JSON.parse(readFileSync(file, "utf8")) as { probe?: unknown; stamps?: unknown };
    const probed = parseProbe(JSON.stringify(entry.probe));
    if (!probed?.executable || interpreterFile(python, probeEnv(), tmpdir()) !== probed.executable) return undefined;
    return JSON.stringify(stamps(probed)) === JSON.stringify(entry.stamps) ? probed.runtime : undefined;
  } catch {
    return undefined;
  }
}

function writeEntry(python: string, path: string[], text: string, probed: Probed): void {
  if (!probed.executable) return;
  try {
    writeJsonAtomic(entryFile(python, path), { probe: JSON.parse(text), stamps: stamps(probed) });
  } catch {
    // read-only home or full disk: every process asks afresh
  }
}

const known = new Map<string, Promise<EvaluatorRuntime | undefined>>();

/**
 * The folders the evaluator's imports search before its Python's own: the task folder and its python_path, unless
 * the task's hone.yaml `env:` sets PYTHONPATH, which then replaces them (evaluator.ts `evaluatorEnv`).
 */
function searchedFirst(task: Pick<DiscoveryTask, "pythonPath" | "dir"> & { env?: DiscoveryTask["env"] }): string[] {
  const own = task.env?.PYTHONPATH;
  if (own === undefined) return [...task.pythonPath, task.dir];
  return own
    .split(":")
    .filter((p) => p !== "")
    .map((p) => resolve(task.dir, p));
}

/**
 * The evaluator's Python and numpy versions, once per interpreter and python_path in a process (and from the disk
 * cache while nothing they depend on changed); undefined when the interpreter cannot be asked (the evaluation itself
 * then says why).
 */
export function evaluatorRuntime(
  task: Pick<DiscoveryTask, "python" | "pythonPath" | "dir"> & { env?: DiscoveryTask["env"] },
): Promise<EvaluatorRuntime | undefined> {
  const path = searchedFirst(task);
  const key = JSON.stringify([task.python, path]);
  let found = known.get(key);
  if (!found) {
    const cached = readEntry(task.python, path);
    found = cached
      ? Promise.resolve(cached)
      : new Promise((resolve) => {
          execFile(
            task.python,
            ["-I", "-c", PROBE, ...path],
            { cwd: tmpdir(), env: probeEnv(), timeout: 20_000, maxBuffer: 256 * 1024 },
            (err, stdout) => {
              const probed = err ? undefined : parseProbe(stdout.trim());
              if (probed) writeEntry(task.python, path, stdout.trim(), probed);
              resolve(probed?.runtime);
            },
          );
        });
    known.set(key, found);
  }
  return found;
}
