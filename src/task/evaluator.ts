import { mkdtemp, rm } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { printableText } from "../printable.ts";
import type { DiscoveryTask } from "./discovery-task.ts";
import { type Evaluation, judgeMetrics } from "./evaluation.ts";
import { hiddenPathHint } from "./hidden-path-hint.ts";
import { COMPAT_DIR, isolationSupport, PYTHON_DIR, pythonInfo } from "./python-env.ts";
import { runProcess } from "./python-process.ts";
import { readOnlyHint } from "./read-only-hint.ts";
import { bwrapArgs, type SandboxSpec, SOCKET_DIR_INSIDE, tmpFullHint } from "./sandbox-layout.ts";

const RUNNER = join(PYTHON_DIR, "hone_eval_runner.py");
/** The largest result an evaluator may hand back (its runner caps metrics and artifacts well below this). */
export const MAX_RESULT_BYTES = 9 << 20;

/** Variables a Python evaluator may see; everything else (API keys above all) stays out of its environment. */
const PASSED_ENV = ["PATH", "LANG", "LC_ALL", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYENV_ROOT", "PYENV_VERSION"];

/** Whether evaluations of this task run sealed under bubblewrap. */
export const sealed = (task: DiscoveryTask) => isolationSupport(task.python).bwrap;

/** What hone_sandbox.py applies to every program of this task (the zygote's and the cold path's settings). */
export function programLimits(task: DiscoveryTask, socketDir?: string): Record<string, unknown> {
  const bwrap = sealed(task);
  const hide = [
    task.dir,
    ...task.pythonPath,
    ...(task.evaluatorReadOnly ?? []),
    ...(socketDir ? [bwrap ? SOCKET_DIR_INSIDE : socketDir] : []),
  ];
  const tmp = task.tmpMb === undefined ? {} : { tmp_mb: task.tmpMb };
  return { hide, readonly_root: !bwrap, nobody: true, max_processes: task.maxProcesses, ...tmp };
}

export function evaluatorEnv(task: DiscoveryTask, scratch: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { HOME: scratch, TMPDIR: scratch, PYTHONDONTWRITEBYTECODE: "1", PYTHONHASHSEED: "0" };
  for (const k of PASSED_ENV) if (base[k] !== undefined) env[k] = base[k];
  for (const k of ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]) env[k] = "1";
  env.PYTHONPATH = [task.dir, ...task.pythonPath, PYTHON_DIR, COMPAT_DIR].join(":");
  return { ...env, ...task.env };
}

/** The evaluator's sandbox: the interpreter, hone's Python files, the task folder and its python_path, read-only. */
export function evaluatorSandbox(task: DiscoveryTask, env: NodeJS.ProcessEnv, socketDir?: string): SandboxSpec {
  return {
    python: pythonInfo(task.python),
    readOnly: [PYTHON_DIR, task.dir, ...task.pythonPath, ...(task.evaluatorReadOnly ?? [])],
    binds: socketDir ? [[socketDir, SOCKET_DIR_INSIDE, false]] : [],
    env,
    devices: task.devices,
    tmpMb: task.tmpMb,
    // Without a zygote the evaluator starts each program's process itself, which drops to an unprivileged user.
    setuid: !socketDir,
  };
}

/** The command that starts a Python evaluator process: under bubblewrap where it works, else directly. */
export function evaluatorCommand(
  task: DiscoveryTask,
  script: string[],
  env: NodeJS.ProcessEnv,
  socketDir?: string,
): [string, string[]] {
  const python = pythonInfo(task.python).executable;
  if (!sealed(task)) return [python, script];
  return ["bwrap", bwrapArgs(evaluatorSandbox(task, env, socketDir), [python, ...script])];
}

export const cascadeArg = (task: DiscoveryTask) =>
  JSON.stringify({ enabled: task.cascade.enabled, thresholds: task.cascade.thresholds });

/** How one evaluator process ended, as the cold path and the warm pool both report it. */
export interface EvaluatorExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The text the evaluator handed back on its result pipe (never a file it or the program could write). */
  result?: string;
  stdout: string;
  stderr: string;
  seconds: number;
}

const invalid = (reason: string, exit: EvaluatorExit, extra: Partial<Evaluation> = {}): Evaluation => ({
  valid: false,
  reason,
  metrics: {},
  artifacts: { stderr: exit.stderr || undefined, stdout: exit.stdout || undefined },
  seconds: exit.seconds,
  ...extra,
});

function parseResult(
  text: string | undefined,
): { metrics?: Record<string, unknown>; artifacts?: Record<string, unknown>; error?: string; stage?: string } | undefined {
  if (!text) return undefined;
  try {
    const raw = JSON.parse(text);
    return raw && typeof raw === "object" && !Array.isArray(raw) ? raw : undefined;
  } catch {
    return undefined;
  }
}

const lastLine = (text: string) => text.trim().split("\n").slice(-1)[0];
const withHint = (hint: string | undefined) => (hint ? `; ${hint}` : "");
/** What to do about an error the sandbox caused: a write to a read-only folder, a file outside the task folder. */
const hintFor = (task: DiscoveryTask, error: string) =>
  withHint(readOnlyHint(task, error) ?? hiddenPathHint(task, error) ?? tmpHint(task, error));
/** An evaluator (or a program or compiler it ran) out of room in its capped /tmp or /dev/shm. */
const tmpHint = (task: DiscoveryTask, error: string) => (sealed(task) ? tmpFullHint(task, error) : undefined);

// An evaluation's texts carry what a program chose (its exception's message, values the evaluator echoes, its
// output): they are printed by `hone evaluate`, `hone run` and `hone log`, and must never drive the user's terminal
// (printableText: every control character but tab and newline escaped, carriage return included).
const MAX_SHOWN_DEPTH = 64;

/** A JSON value with every string (keys too) written printable; nesting past MAX_SHOWN_DEPTH is cut. */
function printableValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return printableText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_SHOWN_DEPTH) return "[nested too deeply]";
  if (Array.isArray(value)) return value.map((v) => printableValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[printableText(k)] = printableValue(v, depth + 1);
  return out;
}

/** The evaluation with its reason, metrics and artifacts holding no raw control character. */
function printableEvaluation(e: Evaluation): Evaluation {
  return {
    ...e,
    ...(e.reason === undefined ? {} : { reason: printableText(e.reason) }),
    metrics: printableValue(e.metrics) as Evaluation["metrics"],
    artifacts: printableValue(e.artifacts) as Evaluation["artifacts"],
  };
}

/**
 * Judges how an evaluator ended. Metrics are accepted only from an evaluator that exited cleanly (code 0). Every text
 * of the verdict is printable (control characters written as \\uXXXX).
 */
export function judgeExit(task: DiscoveryTask, exit: EvaluatorExit, timeoutSec: number): Evaluation {
  return printableEvaluation(judgeRawExit(task, exit, timeoutSec));
}

function judgeRawExit(task: DiscoveryTask, exit: EvaluatorExit, timeoutSec: number): Evaluation {
  if (exit.timedOut)
    return invalid(`the evaluator did not finish within ${timeoutSec} s and was killed`, exit, { timedOut: true });
  const raw = parseResult(exit.result);
  if (raw?.error && exit.code === 1 && raw.stage === "load")
    return invalid(`the evaluator failed to load: ${lastLine(raw.error)}${hintFor(task, raw.error)}`, exit, {
      evaluatorFailed: true,
      artifacts: { stderr: exit.stderr || undefined, traceback: raw.error },
    });
  if (raw?.error && exit.code === 1) {
    return invalid(`the evaluator raised: ${lastLine(raw.error)}${hintFor(task, raw.error)}`, exit, {
      artifacts: { stderr: exit.stderr || undefined, traceback: raw.error },
    });
  }
  if (exit.code !== 0 || !raw?.metrics || typeof raw.metrics !== "object") {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const tail = exit.stderr ? `; stderr ends: ${exit.stderr.slice(-300)}` : "";
    return invalid(`the evaluator ${how} without a result${tail}${withHint(tmpHint(task, exit.stderr))}`, exit);
  }
  const artifacts = { stderr: exit.stderr || undefined, stdout: exit.stdout || undefined, ...(raw.artifacts ?? {}) };
  const verdict = judgeMetrics(raw.metrics, task.metric, task.metricFallback);
  if (verdict.reason) verdict.reason += withHint(hiddenPathHint(task, verdict.reason) ?? tmpHint(task, verdict.reason));
  return {
    ...verdict,
    metrics: raw.metrics,
    artifacts,
    seconds: exit.seconds,
  };
}

/** A signal's name from its number, as node reports a child's (SIGSEGV, not SIG11); SIG<n> for one it has no name for. */
export const signalName = (n: number): NodeJS.Signals =>
  ((Object.entries(constants.signals) as [NodeJS.Signals, number][]).find(([, v]) => v === n)?.[0] ??
    `SIG${n}`) as NodeJS.Signals;

/**
 * bubblewrap exits with 128 + the signal that killed the process it ran: the evaluator's death by a signal, said as
 * the warm pool and an unsealed run say it (an evaluator that itself exits with such a code reads the same).
 */
function throughBwrap(proc: EvaluatorExit): EvaluatorExit {
  if (proc.signal || proc.code === null || proc.code <= 128 || proc.code >= 128 + 65) return proc;
  const name = signalName(proc.code - 128);
  return /^SIG\d+$/.test(name) ? proc : { ...proc, code: null, signal: name };
}

export interface EvaluateOptions {
  timeoutSec?: number;
  memoryMb?: number;
}

/** The request an evaluator process reads: the program's text, never a path into a folder others can write. */
export const evaluationRequest = (task: DiscoveryTask, program: string, memoryMb: number) => ({
  program,
  ext: task.programExtension,
  memory_mb: memoryMb,
});

/** One evaluator call on one program text, in a fresh (sandboxed) Python process; the result comes back on a pipe. */
export async function evaluateProgram(task: DiscoveryTask, program: string, opts: EvaluateOptions = {}): Promise<Evaluation> {
  const scratch = await mkdtemp(join(tmpdir(), "hone-eval-"));
  try {
    const inside = sealed(task) ? "/tmp" : scratch;
    const env = { ...evaluatorEnv(task, inside), HONE_PROGRAM_LIMITS: JSON.stringify(programLimits(task)) };
    const [cmd, args] = evaluatorCommand(task, [RUNNER, task.evaluatorPath, cascadeArg(task)], env);
    const timeoutSec = opts.timeoutSec ?? task.timeoutSec;
    const input = JSON.stringify(evaluationRequest(task, program, opts.memoryMb ?? task.memoryMb));
    const proc = await runProcess(cmd, args, {
      cwd: scratch,
      env,
      timeoutMs: timeoutSec * 1000,
      input,
      resultBytes: MAX_RESULT_BYTES,
      // bubblewrap's --die-with-parent ends a sealed evaluator with hone; without it, its lifeline does, at once.
      ...(sealed(task) ? {} : { lifeline: { graceSec: 0 } }),
    });
    return judgeExit(task, sealed(task) ? throughBwrap(proc) : proc, timeoutSec);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
