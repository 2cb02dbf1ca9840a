import { spawn } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import type { DiscoveryTask } from "./discovery-task.ts";
import { programLimits, sealed } from "./evaluator.ts";
import { PYTHON_DIR, pythonInfo } from "./python-env.ts";
import { bwrapArgs } from "./sandbox-layout.ts";

/** One call of a generated Python tool (`custom_tools/<name>.py`), as hone_tool_runner.py reads it. */
export interface PythonToolCall {
  code: string;
  args: Record<string, unknown>;
  /** Wall-clock seconds of the tool's own running time (time the host spends answering ctx calls is not counted). */
  timeoutSec: number;
  cpuSeconds: number;
  /** Address space the call may add to what the warm process already maps. */
  memoryMb: number;
}

export type PythonToolDone = { ok: true; value: unknown } | { ok: false; kind: string; error: string };

/** Answers one ctx call of the tool (`get_program`, `evaluate`, …); a throw goes back as the call's error. */
export type CtxHandler = (method: string, args: unknown[]) => Promise<unknown>;

const MAX_LINE = 1 << 20;

/** Where a tool call's process comes from: the warm pool's zygote socket, or a fresh contained interpreter. */
export interface ToolChannelSource {
  open(): { input: Readable; output: Writable; close: () => void };
}

/** A channel to the warm pool's program zygote (hone reaches its socket through the pool's private folder). */
export const zygoteChannel = (socketPath: string): ToolChannelSource => ({
  open() {
    const s = connect(socketPath);
    s.on("error", () => {});
    return { input: s, output: s, close: () => s.destroy() };
  },
});

/** A channel to a fresh interpreter running hone_tool_runner.py under the program sandbox (no pool needed). */
export const coldToolChannel = (task: DiscoveryTask): ToolChannelSource => ({
  open() {
    const python = pythonInfo(task.python);
    const script = [join(PYTHON_DIR, "hone_tool_runner.py")];
    const env = {
      PATH: "/usr/bin:/bin",
      LANG: process.env.LANG,
      OMP_NUM_THREADS: "1",
      OPENBLAS_NUM_THREADS: "1",
      HONE_PROGRAM_LIMITS: JSON.stringify(programLimits(task)),
    };
    const [cmd, args] = sealed(task)
      ? ["bwrap", bwrapArgs({ python, readOnly: [PYTHON_DIR], env, setuid: true }, [python.executable, ...script])]
      : [python.executable, script];
    const child = spawn(cmd, args, { env, stdio: ["pipe", "pipe", "ignore"] });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    return { input: child.stdout, output: child.stdin, close: () => child.kill("SIGKILL") };
  },
});

const CANCELLED: PythonToolDone = { ok: false, kind: "cancelled", error: "the rollout's time ran out during the call" };
/** How deep a tool's result may nest (hone_tool_runner writes at most 21 levels; deeper was not written by it). */
const MAX_DONE_DEPTH = 64;
const MALFORMED: PythonToolDone = { ok: false, kind: "protocol", error: "the tool's process sent a malformed result" };

/** Whether a parsed JSON value nests deeper than `limit` (walked with a stack of its own: no recursion). */
function nestsDeeper(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [v, depth] = item;
    if (v === null || typeof v !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The tool's final result as hone_tool_runner writes it: {ok: true, value} or {ok: false, kind, error} with strings.
 * The line comes from the tool's own process, which could write any "done" line on its descriptor: anything else
 * (a missing value, a non-string error, a value nested past MAX_DONE_DEPTH, which printing it would overflow the
 * stack on) is a protocol failure, never handed on.
 */
function doneOf(done: unknown): PythonToolDone {
  if (!done || typeof done !== "object" || Array.isArray(done)) return MALFORMED;
  const d = done as Record<string, unknown>;
  if (d.ok === true && "value" in d && !nestsDeeper(d.value, MAX_DONE_DEPTH)) return { ok: true, value: d.value };
  if (d.ok === false && typeof d.kind === "string" && typeof d.error === "string")
    return { ok: false, kind: d.kind.slice(0, 40), error: d.error.slice(0, 2000) };
  return MALFORMED;
}

/**
 * Runs one Python tool call: sends the request, answers each ctx message with `onCtx`, and resolves with the
 * tool's final result. Every line the tool side sends is parsed with a size cap; a channel that ends without a
 * result is a crashed call, never a hang. `signal` (the rollout's deadline) ends the call at once: the channel is
 * closed, which ends the tool's process, and no ctx call of it is answered after.
 */
export function runPythonTool(
  source: ToolChannelSource,
  call: PythonToolCall,
  onCtx: CtxHandler,
  signal?: AbortSignal,
): Promise<PythonToolDone> {
  if (signal?.aborted) return Promise.resolve(CANCELLED);
  const { input, output, close } = source.open();
  const request = {
    kind: "tool",
    code: call.code,
    args: call.args,
    timeout: call.timeoutSec,
    cpu_seconds: call.cpuSeconds,
    memory_mb: call.memoryMb,
  };
  return new Promise<PythonToolDone>((resolve) => {
    let buffer = "";
    let settled = false;
    const cancel = () => finish(CANCELLED);
    const finish = (done: PythonToolDone) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", cancel);
      close();
      resolve(done);
    };
    signal?.addEventListener("abort", cancel, { once: true });
    const answer = async (method: string, args: unknown[]) => {
      let reply: Record<string, unknown>;
      try {
        reply = { value: await onCtx(method, args) };
      } catch (err) {
        reply = { error: (err as Error).message };
      }
      if (!settled) output.write(`${JSON.stringify(reply)}\n`);
    };
    const line = (text: string) => {
      let msg: { done?: unknown; ctx?: string; args?: unknown[] };
      try {
        msg = JSON.parse(text);
      } catch {
        return finish({ ok: false, kind: "protocol", error: "the tool's process sent something that is not JSON" });
      }
      if (!msg || typeof msg !== "object")
        return finish({ ok: false, kind: "protocol", error: "the tool's process sent an unknown message" });
      if ("done" in msg) return finish(doneOf(msg.done));
      if (typeof msg.ctx === "string" && Array.isArray(msg.args)) void answer(msg.ctx, msg.args);
      else finish({ ok: false, kind: "protocol", error: "the tool's process sent an unknown message" });
    };
    input.setEncoding("utf8");
    input.on("data", (chunk: string) => {
      buffer += chunk;
      for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
        const text = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        line(text);
      }
      if (buffer.length > MAX_LINE) finish({ ok: false, kind: "protocol", error: "the tool's message is too large" });
    });
    input.on("close", () => finish({ ok: false, kind: "crashed", error: "the tool's process ended without a result" }));
    output.write(`${JSON.stringify(request)}\n`);
  });
}
