import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isolationSupport, PYTHON_DIR, pythonInfo } from "../../python-env.ts";
import { type ProcessResult, runProcess } from "../../python-process.ts";
import { bwrapArgs } from "../../sandbox-layout.ts";

export const CODE_DIR = dirname(fileURLToPath(import.meta.url));
const CHECKER = join(CODE_DIR, "hone_code_checker.py");

/** One program against one benchmark's tests (see hone_code_checker.py for what each part is). */
export interface CodeCheck {
  /** The completion's module text (HumanEval: prompt + completion; MBPP: the completion). */
  program: string;
  /** Trusted code the checker runs before the tests (never sent to the completion's process). */
  setup: string;
  tests: string;
  /** Names under test: the tests call proxies by these names. */
  entries: string[];
  /** Trusted code run after the tests, e.g. `check(candidate_name)`. */
  after?: string;
  /** Seconds of the completion's own running time (HumanEval's official 3.0). */
  timeoutSec?: number;
  memoryMb?: number;
  /** Host folders the completion must not see where bubblewrap is not available (the data folder, say). */
  hide?: string[];
  python?: string;
}

export interface CodeVerdict {
  passed: boolean;
  /** "passed", "timed out" or "failed: <why>", the official harness's words. */
  result: string;
  calls: number;
}

const failed = (why: string): CodeVerdict => ({ passed: false, result: `failed: ${why}`, calls: 0 });

/**
 * Runs one check: a trusted checker process (under bubblewrap where it works: a root of only the system's
 * libraries and the interpreter, no network) that runs the tests and starts the completion contained in a process of
 * its own. Any verdict the checker cannot give is a failure, never a pass.
 */
export async function checkCode(c: CodeCheck): Promise<CodeVerdict> {
  const python = pythonInfo(c.python ?? "python3");
  const bwrap = isolationSupport(c.python ?? "python3").bwrap;
  const budget = c.timeoutSec ?? 3;
  const request = {
    program: c.program,
    setup: c.setup,
    tests: c.tests,
    entries: c.entries,
    after: c.after ?? "",
    timeout: budget,
    limits: {
      memory_mb: c.memoryMb ?? 1024,
      max_processes: 64,
      nobody: true,
      readonly_root: !bwrap,
      hide: bwrap ? [] : (c.hide ?? []),
    },
  };
  const env = { PATH: "/usr/bin:/bin", LANG: process.env.LANG ?? "C.UTF-8", OMP_NUM_THREADS: "1", PYTHONDONTWRITEBYTECODE: "1" };
  const script = [python.executable, "-I", CHECKER, PYTHON_DIR];
  const [cmd, args] = bwrap
    ? ["bwrap", bwrapArgs({ python, readOnly: [PYTHON_DIR, CODE_DIR], env, setuid: true }, script)]
    : [python.executable, script.slice(1)];
  const scratch = mkdtempSync(join(tmpdir(), "hone-code-"));
  try {
    const proc = await runProcess(cmd, args, {
      cwd: scratch,
      env: bwrap ? { PATH: process.env.PATH ?? "/usr/bin:/bin" } : env,
      timeoutMs: (budget * 3 + 30) * 1000,
      input: JSON.stringify(request),
    });
    return verdictOf(proc);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The checker's verdict: its last stdout line, taken only from a checker that ended as it does after writing one (exit
 * 0). A checker that died (a signal, the memory killer) wrote none, and what its stdout ends with is nobody's verdict.
 */
export function verdictOf(proc: Pick<ProcessResult, "code" | "signal" | "stdout" | "stderr" | "timedOut">): CodeVerdict {
  if (proc.timedOut) return { passed: false, result: "timed out", calls: 0 };
  const ended = proc.signal ? `killed by ${proc.signal}` : `exit ${proc.code}`;
  if (proc.code !== 0) return failed(`the checker ended without its verdict (${ended}): ${proc.stderr.slice(-300)}`);
  return readVerdict(proc.stdout) ?? failed(`the checker gave no verdict (${ended}): ${proc.stderr.slice(-300)}`);
}

function readVerdict(stdout: string): CodeVerdict | undefined {
  try {
    const v = JSON.parse(stdout.trim().split("\n").pop() ?? "") as Partial<CodeVerdict>;
    if (typeof v.passed !== "boolean" || typeof v.result !== "string") return undefined;
    return { passed: v.passed && v.result === "passed", result: v.result, calls: Number(v.calls) || 0 };
  } catch {
    return undefined;
  }
}
