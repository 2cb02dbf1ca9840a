import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DiscoveryTask } from "./discovery-task.ts";
import { type Evaluation, judgeMetrics } from "./evaluation.ts";
import { COMPAT_DIR, isolationSupport, PYTHON_DIR, resolvePython } from "./python-env.ts";
import { type ProcessResult, runProcess } from "./python-process.ts";

const RUNNER = join(PYTHON_DIR, "hone_eval_runner.py");

/** Variables a Python evaluator may see; everything else (API keys above all) stays out of its environment. */
const PASSED_ENV = ["PATH", "LANG", "LC_ALL", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYENV_ROOT", "PYENV_VERSION"];

export function evaluatorEnv(task: DiscoveryTask, scratch: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { HOME: scratch, TMPDIR: scratch, PYTHONDONTWRITEBYTECODE: "1", PYTHONHASHSEED: "0" };
  for (const k of PASSED_ENV) if (base[k] !== undefined) env[k] = base[k];
  for (const k of ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]) env[k] = "1";
  env.PYTHONPATH = [task.dir, ...task.pythonPath, PYTHON_DIR, COMPAT_DIR].join(":");
  if (isolationSupport().bwrap) {
    env.HONE_BWRAP = "1";
    env.HONE_HIDE_DIRS = task.dir;
  }
  return { ...env, ...task.env };
}

export const cascadeArg = (task: DiscoveryTask) =>
  JSON.stringify({ enabled: task.cascade.enabled, thresholds: task.cascade.thresholds });

/** Reads the runner's result file and judges it; shared by the cold path and the warm pool. */
export async function readEvaluation(
  task: DiscoveryTask,
  resultPath: string,
  proc: Pick<ProcessResult, "code" | "signal" | "stdout" | "stderr" | "seconds" | "timedOut">,
  timeoutSec: number,
): Promise<Evaluation> {
  const artifacts = { stderr: proc.stderr || undefined, stdout: proc.stdout || undefined };
  if (proc.timedOut) {
    return {
      valid: false,
      reason: `the evaluator did not finish within ${timeoutSec} s and was killed`,
      metrics: {},
      artifacts,
      seconds: proc.seconds,
      timedOut: true,
    };
  }
  let raw: { metrics?: Record<string, unknown>; artifacts?: Record<string, unknown>; error?: string };
  try {
    raw = JSON.parse(await readFile(resultPath, "utf8"));
  } catch {
    const how = proc.signal ? `was killed by ${proc.signal}` : `exited with code ${proc.code}`;
    return {
      valid: false,
      reason: `the evaluator ${how} without a result${proc.stderr ? `; stderr ends: ${proc.stderr.slice(-300)}` : ""}`,
      metrics: {},
      artifacts,
      seconds: proc.seconds,
    };
  }
  if (raw.error)
    return {
      valid: false,
      reason: `the evaluator raised: ${raw.error.trim().split("\n").slice(-1)[0]}`,
      metrics: {},
      artifacts: { ...artifacts, traceback: raw.error },
      seconds: proc.seconds,
    };
  const metrics = raw.metrics ?? {};
  const verdict = judgeMetrics(metrics, task.metric);
  return { ...verdict, metrics, artifacts: { ...artifacts, ...(raw.artifacts ?? {}) }, seconds: proc.seconds };
}

export interface EvaluateOptions {
  timeoutSec?: number;
  memoryMb?: number;
}

/** One evaluator call on one program text, in a fresh Python process with a scratch directory of its own. */
export async function evaluateProgram(task: DiscoveryTask, program: string, opts: EvaluateOptions = {}): Promise<Evaluation> {
  const scratch = await mkdtemp(join(tmpdir(), "hone-eval-"));
  try {
    const programPath = join(scratch, `program${task.programExtension}`);
    const resultPath = join(scratch, "hone_result.json");
    await writeFile(programPath, program);
    const timeoutSec = opts.timeoutSec ?? task.timeoutSec;
    const proc = await runProcess(
      resolvePython(task.python),
      [RUNNER, task.evaluatorPath, programPath, resultPath, String(opts.memoryMb ?? task.memoryMb), cascadeArg(task)],
      {
        cwd: scratch,
        env: evaluatorEnv(task, scratch),
        timeoutMs: timeoutSec * 1000,
      },
    );
    return await readEvaluation(task, resultPath, proc, timeoutSec);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
