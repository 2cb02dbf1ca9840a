import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { HoneError } from "../errors.ts";
import type { DiscoveryTask } from "./discovery-task.ts";
import { readCachedNeeds, type ScanAnswer, writeCachedNeeds } from "./needs-cache.ts";
import { COMPAT_DIR, PYTHON_DIR, pythonInfo, pythonInfoAsync } from "./python-env.ts";

/**
 * What a task folder needs that this machine may lack: Python modules its evaluator or seed program import at
 * module level (found with Python's own parser: imports inside functions, `if` blocks, `__main__` guards and
 * `try` blocks that catch ImportError are optional), the modules a manifest names, and an NVIDIA GPU for modules
 * that only run on one (a manifest's own dependencies are checked by registry.ts). Local modules are followed. Nothing of the task is executed: the check
 * parses files and asks importlib where a top-level module would come from.
 */
const SCAN = `
import ast, importlib.util, json, os, sys
req = json.loads(sys.stdin.read())
sys.path[:0] = req["paths"]
roots = [os.path.realpath(p) for p in req["local"]]
OPTIONAL = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
def optional(handlers):
    for h in handlers:
        if h.type is None:
            return True
        names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        if any(isinstance(n, ast.Name) and n.id in OPTIONAL for n in names):
            return True
    return False
def imports(body, out):
    for node in body:
        if isinstance(node, ast.Import):
            out += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module.split(".")[0], node.lineno))
        elif isinstance(node, ast.Try):
            if not optional(node.handlers):
                imports(node.body, out)
            imports(node.orelse, out)
            imports(node.finalbody, out)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            imports(node.body, out)
    return out
def local(origin):
    real = os.path.realpath(origin)
    return any(real.startswith(r + os.sep) for r in roots)
missing, present, queue, seen, spec_of, considered = {}, {}, list(req["files"]), set(), {}, set()
while queue and len(seen) < 200:
    f = queue.pop(0)
    considered.add(f)
    if f in seen or not os.path.isfile(f) or os.path.getsize(f) > 2_000_000:
        continue
    seen.add(f)
    try:
        tree = ast.parse(open(f, encoding="utf-8", errors="replace").read())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        continue
    for name, line in imports(tree.body, []):
        if name in sys.builtin_module_names or name == "__future__":
            continue
        if name not in spec_of:
            try:
                spec_of[name] = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec_of[name] = False
        spec = spec_of[name]
        where = missing if spec is None else present
        where.setdefault(name, []).append([f, line])
        origin = getattr(spec, "origin", None) if spec else None
        if origin and origin.endswith(".py") and local(origin):
            queue.append(origin)
try:
    here = os.getcwd()  # what "" on sys.path searches
except OSError:
    here = ""
path = [p or here for p in sys.path]
print(json.dumps({"missing": missing, "present": sorted(present), "files": sorted(considered), "path": path}))
`;

/** What the check reads of a task: a whole one, or one whose folder could not be loaded yet (folder-refusal.ts). */
export type NeedsSubject = Pick<DiscoveryTask, "id" | "dir" | "evaluatorPath" | "seedPath" | "python" | "pythonPath">;

/** Modules that only run on an NVIDIA GPU. */
const GPU_MODULES = ["triton", "cupy", "pycuda", "tensorrt"];

export interface TaskNeeds {
  /** Modules the interpreter cannot import, each with where it is imported (file:line). */
  missing: { module: string; where: string[] }[];
  /** GPU-only modules the task imports when this machine shows no NVIDIA device. */
  gpu: string[];
}

const cache = new Map<string, TaskNeeds>();

const hasNvidiaGpu = () => existsSync("/dev/nvidiactl") || existsSync("/dev/nvidia0");

interface Scan {
  /** The scan's identity: its code, the interpreter, the request, PATH and the working folder (the disk cache's key). */
  key: string;
  python: string;
  request: { files: string[]; paths: string[]; local: string[] };
}

const SCAN_HASH = createHash("sha256").update(SCAN).digest("hex").slice(0, 16);

function scanOf(task: NeedsSubject, python = pythonInfo(task.python).executable): Scan {
  const evaluatorDir = dirname(task.evaluatorPath);
  const paths = [task.dir, evaluatorDir, ...task.pythonPath, PYTHON_DIR, COMPAT_DIR];
  const request = {
    files: [task.evaluatorPath, task.seedPath].filter((f) => f.endsWith(".py")),
    paths,
    local: [task.dir, ...task.pythonPath],
  };
  // The working folder too: the scan, like any `python -c`, finds modules there.
  return { key: JSON.stringify([SCAN_HASH, python, request, scanEnv().PATH, workingFolder()]), python, request };
}

/** This process's working folder, or "" when it was removed under it (the scan then runs without one). */
function workingFolder(): string {
  try {
    return process.cwd();
  } catch {
    return "";
  }
}

const scanArgs = ["-s", "-E", "-c", SCAN];
const scanEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin" });
const scanOptions = () => ({ encoding: "utf8" as const, timeout: 30_000, maxBuffer: 4 << 20, env: scanEnv() });

/** The scan's printed answer, or a refusal naming the interpreter. */
function answerOf(task: NeedsSubject, scan: Scan, run: () => string): ScanAnswer {
  try {
    const raw = JSON.parse(run().trim().split("\n").pop() ?? "{}") as ScanAnswer;
    if (typeof raw.missing !== "object" || raw.missing === null || !Array.isArray(raw.present))
      throw new Error("it printed no answer");
    return raw;
  } catch (err) {
    throw new HoneError(
      "badTask",
      `cannot check what task ${task.id} needs with ${scan.python}: ${(err as Error).message.split("\n")[0]}`,
    );
  }
}

/** The answer in needs, kept for the process. */
function needsOf(task: NeedsSubject, scan: Scan, raw: ScanAnswer): TaskNeeds {
  const where = (refs: [string, number][]) => {
    const files = new Map<string, number>();
    for (const [f, line] of refs) if (!files.has(f)) files.set(f, line);
    return [...files].slice(0, 3).map(([f, line]) => `${relative(task.dir, f) || f}:${line}`);
  };
  const missing = Object.entries(raw.missing).map(([module, refs]) => ({ module, where: where(refs) }));
  const gpu = hasNvidiaGpu() ? [] : raw.present.filter((m) => GPU_MODULES.includes(m));
  const needs = { missing, gpu };
  cache.set(scan.key, needs);
  return needs;
}

/**
 * What this process or the disk cache already knows for this scan. A kept answer that would refuse the task is not
 * trusted: the task is scanned again first (a refusal is rare, and the stamps cannot see everything that decides it).
 */
function known(task: NeedsSubject, scan: Scan): TaskNeeds | undefined {
  const held = cache.get(scan.key);
  if (held) return held;
  const kept = readCachedNeeds(scan.key);
  if (!kept) return undefined;
  const needs = needsOf(task, scan, kept);
  if (needs.missing.length === 0 && needs.gpu.length === 0) return needs;
  cache.delete(scan.key);
  return undefined;
}

/** A scan's answer, kept on disk for the next process, then in needs. */
function scanned(task: NeedsSubject, scan: Scan, startedAt: number, run: () => string): TaskNeeds {
  const answer = answerOf(task, scan, run);
  writeCachedNeeds(scan.key, scan.python, answer, startedAt);
  return needsOf(task, scan, answer);
}

/** Finds what the task needs that is missing here (one Python process, cached per task and interpreter). */
export function taskNeeds(task: NeedsSubject): TaskNeeds {
  const scan = scanOf(task);
  const startedAt = Date.now();
  return (
    known(task, scan) ??
    scanned(task, scan, startedAt, () =>
      execFileSync(scan.python, scanArgs, { ...scanOptions(), input: JSON.stringify(scan.request) }),
    )
  );
}

/** taskNeeds() without blocking this process while Python scans (set-up does other checks meanwhile). */
export async function taskNeedsAsync(task: NeedsSubject): Promise<TaskNeeds> {
  const scan = scanOf(task, (await pythonInfoAsync(task.python)).executable);
  const held = known(task, scan);
  if (held) return held;
  const startedAt = Date.now();
  let out = "";
  let failure: Error | undefined;
  await new Promise<void>((done) => {
    const child = execFile(scan.python, scanArgs, scanOptions(), (err, stdout) => {
      out = stdout;
      failure = err ?? undefined;
      done();
    });
    child.stdin?.end(JSON.stringify(scan.request));
  });
  return scanned(task, scan, startedAt, () => {
    if (failure) throw failure;
    return out;
  });
}

/** The requirements file an upstream folder ships beside its evaluator or seed, for the hint in the message. */
function requirementsHint(task: NeedsSubject): string {
  for (const dir of [dirname(task.evaluatorPath), task.dir]) {
    const file = join(dir, "requirements.txt");
    if (!existsSync(file)) continue;
    const names = readFileSync(file, "utf8")
      .split("\n")
      .map((l) => l.replace(/#.*/, "").trim())
      .filter(Boolean)
      .slice(0, 12);
    if (names.length > 0) return ` (${relative(task.dir, file)} lists: ${names.join(", ")})`;
  }
  return "";
}

/** How many folders above the task folder a module the evaluator imports is looked for (SkyDiscover's gpu_mode: one). */
const ABOVE = 3;

/**
 * Where a module the interpreter cannot import lies in a folder above the task's, as SkyDiscover's gpu_mode evaluators
 * find `../shared_eval.py` by putting their parent folder on sys.path themselves: not a module to install, but a
 * folder the sandbox (the task folder and its python_path) does not show. The folder relative to the task's.
 */
function besideFolder(task: NeedsSubject, module: string): { folder: string; file: string } | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(module)) return undefined;
  let dir = dirname(task.dir);
  for (let up = 0; up < ABOVE && dir !== dirname(dir); up++, dir = dirname(dir)) {
    for (const file of [`${module}.py`, join(module, "__init__.py")])
      if (existsSync(join(dir, file))) return { folder: relative(task.dir, dir), file: relative(task.dir, join(dir, file)) };
  }
  return undefined;
}

function where(task: NeedsSubject, m: { module: string; where: string[] }): string {
  const beside = besideFolder(task, m.module);
  const found = beside === undefined ? "" : `; it is ${beside.file}, outside the task folder`;
  return `${m.module} (${m.where.join(", ")}${found})`;
}

/** The needs in words: which modules or device, where they are used. */
export function describeNeeds(task: NeedsSubject, needs: TaskNeeds): string[] {
  const lines: string[] = [];
  if (needs.missing.length > 0) {
    const modules = needs.missing.map((m) => where(task, m)).join(", ");
    lines.push(`Python modules that ${pythonInfo(task.python).executable} cannot import: ${modules}`);
  }
  for (const m of needs.gpu) lines.push(`an NVIDIA GPU for ${m}, and this machine shows none (no /dev/nvidiactl)`);
  return lines;
}

/** Refuses, with exit 4, a task that cannot run here; says exactly what is missing and what to do. */
export function checkTaskNeeds(task: NeedsSubject): void {
  refuseMissing(task, taskNeeds(task));
}

/** checkTaskNeeds() without blocking this process while Python scans. */
export async function checkTaskNeedsAsync(task: NeedsSubject): Promise<void> {
  refuseMissing(task, await taskNeedsAsync(task));
}

function refuseMissing(task: NeedsSubject, needs: TaskNeeds): void {
  const refusal = needsRefusal(task, needs);
  if (refusal) throw refusal;
}

/** What to do about the missing modules: install them, or show the folders above that hold some to the sandbox. */
function missingTodo(task: NeedsSubject, needs: TaskNeeds): string {
  const install = needs.missing.filter((m) => besideFolder(task, m.module) === undefined).map((m) => m.module);
  const folders = [...new Set(needs.missing.flatMap((m) => besideFolder(task, m.module)?.folder ?? []))];
  const todo: string[] = [];
  if (folders.length > 0)
    todo.push(
      `add ${folders.map((d) => JSON.stringify(d)).join(", ")} to python_path: in the task folder's hone.yaml ` +
        "(relative to the task folder; a tasks.yaml entry's python_path is relative to the tasks.yaml's folder instead) " +
        "(the evaluator finds those modules in a folder above its own, which hone's sandbox shows only when named there)",
    );
  if (install.length > 0)
    todo.push(
      `install ${install.join(", ")} for that interpreter${requirementsHint(task)}, or name one that has them with python: in hone.yaml or in the task's manifest entry`,
    );
  return todo.join("; and ");
}

/** The refusal of a task that cannot run here, saying what is missing and what to do; undefined when it can. */
export function needsRefusal(task: NeedsSubject, needs: TaskNeeds): HoneError | undefined {
  if (needs.missing.length === 0 && needs.gpu.length === 0) return undefined;
  const todo = needs.missing.length > 0 ? missingTodo(task, needs) : "run it on a machine with an NVIDIA GPU and its driver";
  return new HoneError("badTask", `task ${task.id} needs ${describeNeeds(task, needs).join("; and ")}. To run it: ${todo}.`, {
    file: task.evaluatorPath,
  });
}
