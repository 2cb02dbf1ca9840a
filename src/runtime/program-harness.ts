import {
  closeSync,
  constants as fsc,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProgramHarness } from "../harness/program.ts";
import { startModelProxy } from "../model/proxy.ts";
import { addUsage, type ChatModel, zeroUsage } from "../model/types.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { runSealed } from "../task/sealed-command.ts";

/** What a harness program is told about its task: never a gold answer, a reference or the evaluator. */
export type ProgramTask =
  | { kind: "qa"; id: string; question: string; answer_format?: string }
  | { kind: "discovery"; id: string; description: string; program_file: string; metric: string; direction: string };

export interface ProgramRun {
  status: "completed" | "failed";
  /** answer.txt (QA) or the program file (discovery), as the program left it. */
  output?: string;
  error?: string;
  exitCode: number | null;
  modelCalls: number;
  tokens: number;
  seconds: number;
}

const MAX_OUTPUT = 1 << 20;

/** Reads a file the program wrote without trusting it: no symbolic link, a regular file, at most `cap` bytes. */
export function readUntrusted(path: string, cap = MAX_OUTPUT): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > cap) return undefined;
    const buf = Buffer.alloc(st.size);
    const n = readSync(fd, buf, 0, st.size, 0);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs a harness program on one task: `ENTRY --task task.json --workdir DIR`, sealed (runSealed: the harness
 * folder read-only, DIR writable, no network but hone's model proxy, no secret: OPENAI_API_KEY is the proxy's
 * one-run token), within the harness's time limit. Every model call goes through `model` (cached, recorded,
 * counted) and into the trajectory. For a discovery task DIR starts with the program file and hone evaluates
 * what the program left there; for QA hone scores DIR/answer.txt.
 */
export async function runProgramHarness(
  harness: ProgramHarness,
  task: ProgramTask,
  start: { program?: string },
  model: ChatModel,
  modelId: string,
  trajectory: TrajectorySink,
): Promise<ProgramRun> {
  const base = mkdtempSync(join(tmpdir(), "hone-harness-"));
  const work = join(base, "work");
  const taskFile = join(base, "task.json");
  const usage = zeroUsage();
  let calls = 0;
  const proxy = await startModelProxy(model, modelId, (request, response) => {
    calls++;
    addUsage(usage, response.usage);
    trajectory.write({
      type: "model_call",
      source: "harness_program",
      messages: request.messages.length,
      usage: response.usage,
      cached: response.cached ?? false,
    });
  });
  const started = performance.now();
  try {
    mkdirSync(work, { mode: 0o700 });
    writeFileSync(taskFile, JSON.stringify(task));
    const outputFile = join(work, task.kind === "qa" ? "answer.txt" : task.program_file);
    if (task.kind === "discovery") writeFileSync(outputFile, start.program ?? "");
    trajectory.write({ type: "harness_program", harness: harness.name, version: harness.version, task: task.id });
    const proc = await runSealed({
      argv: [...harness.entrypoint, "--task", taskFile, "--workdir", work],
      readOnly: [harness.dir, taskFile],
      writable: [work],
      cwd: harness.dir,
      env: { HONE_MODEL: modelId, OPENAI_API_KEY: proxy.token, HOME: work, TMPDIR: work },
      timeoutMs: harness.timeoutSec * 1000,
      modelSocketDir: proxy.socketDir,
    });
    trajectory.write({
      type: "harness_program_exit",
      code: proc.code,
      timed_out: proc.timedOut,
      stdout: proc.stdout.slice(-4000),
      stderr: proc.stderr.slice(-4000),
    });
    const output = readUntrusted(outputFile);
    const seconds = (performance.now() - started) / 1000;
    const common = { exitCode: proc.code, modelCalls: calls, tokens: usage.total_tokens, seconds };
    if (proc.timedOut)
      return { ...common, status: "failed", error: `the harness program did not finish within ${harness.timeoutSec} s` };
    if (proc.code !== 0)
      return {
        ...common,
        status: "failed",
        error: `the harness program exited with code ${proc.code}: ${proc.stderr.trim().split("\n").slice(-1)[0] ?? ""}`,
      };
    if (output === undefined)
      return {
        ...common,
        status: "failed",
        error: `the harness program left no ${task.kind === "qa" ? "answer.txt" : task.program_file} (a regular file of at most 1 MiB)`,
      };
    return { ...common, status: "completed", output };
  } finally {
    await proxy.close();
    rmSync(base, { recursive: true, force: true });
  }
}
