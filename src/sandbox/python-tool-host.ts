import type { ToolSpec } from "../harness/types.ts";
import type { DiscoveryEnvironment } from "../runtime/discovery-env.ts";
import type { ToolOutcome } from "../runtime/environment.ts";
import type { TrajectoryEvent, TrajectorySink } from "../store/trajectory.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { EditError } from "../task/evolve-block.ts";
import {
  type CtxHandler,
  coldToolChannel,
  type PythonToolCall,
  runPythonTool,
  type ToolChannelSource,
} from "../task/tool-channel.ts";
import type { SandboxLimits } from "./isolate.ts";
import { listTaskInputs, readInputSample } from "./python-task-inputs.ts";
import { MAX_STAGED_EVENTS } from "./tool-host.ts";

// A generated Python tool (custom_tools/<name>.py, `def run(ctx, args)`) in a discovery rollout: each call runs
// contained in the program sandbox (task/tool-channel.ts) and its ctx is answered here, under HarnessTTT's names,
// from the rollout's discovery environment. Budgeted work is counted before it starts.

/** What HarnessTTT's dispatcher does with a result: text cut to 8,000 characters, anything else as JSON, cut. */
export const MAX_PYTHON_OUTPUT = 8000;
const MAX_SCRATCH_FILE = 8 * 1024 * 1024;
const MAX_SCRATCH_TOTAL = 32 * 1024 * 1024;
const MAX_SCRATCH_FILES = 64;

export function pythonToolOutput(value: unknown): string {
  return (typeof value === "string" ? value : JSON.stringify(value)).slice(0, MAX_PYTHON_OUTPUT);
}

/** The limits of one Python tool call, from the JavaScript tools' (time and CPU as they are; Python needs more memory). */
export function pythonCallLimits(limits: SandboxLimits): Pick<PythonToolCall, "timeoutSec" | "cpuSeconds" | "memoryMb"> {
  return { timeoutSec: limits.wallMs / 1000, cpuSeconds: Math.max(1, Math.ceil(limits.cpuMs / 1000)), memoryMb: 256 };
}

/**
 * The most `tool_log` lines a rollout records one by one: each ctx.log() is a line of the trajectory, and a tool may
 * log a thousand times a call, every call (as staged edits: MAX_STAGED_EVENTS, the JavaScript tools' cap).
 */
export const MAX_TOOL_LOG_EVENTS = 200;

/**
 * What the Python tools of one rollout share: the probe count, evaluations in flight, the scratch files, and how
 * many staged edits and log lines were recorded.
 */
export interface PythonRolloutState {
  probes: number;
  inFlight: number;
  scratch: Map<string, string>;
  inputs?: string[];
  staged: number;
  logs: number;
}

export const newPythonState = (): PythonRolloutState => ({ probes: 0, inFlight: 0, scratch: new Map(), staged: 0, logs: 0 });

/**
 * Writes the `count`th line of a kind a rollout records (1-based): the first `cap` as they are, the next with a note
 * that later ones are not recorded one by one, none after.
 */
function writeCapped(trajectory: TrajectorySink, count: number, cap: number, event: TrajectoryEvent, what: string): void {
  if (count <= cap) trajectory.write(event);
  else if (count === cap + 1)
    trajectory.write({ ...event, note: `more than ${cap} ${what} in this rollout: later ones are not recorded one by one` });
}

const str = (v: unknown, what: string): string => {
  if (typeof v !== "string") throw new Error(`${what} must be a string`);
  return v;
};

/** A scratch name: its last path component only, as HarnessTTT's basename; never empty, `.` or `..`. */
const scratchName = (v: unknown) => {
  const base = str(v, "the scratch name").split("/").pop() ?? "";
  return base === "" || base === "." || base === ".." ? undefined : base.slice(0, 200);
};

export interface PythonCtxOptions {
  env: DiscoveryEnvironment;
  task: Pick<DiscoveryTask, "dir" | "secrets">;
  trajectory: TrajectorySink;
  tool: string;
  maxProbes: number;
  state: PythonRolloutState;
}

/** The ctx of a Python tool in a rollout, answering HarnessTTT's method names. */
export function pythonCtx(o: PythonCtxOptions): CtxHandler {
  const { env, state } = o;
  const methods: Record<string, (args: unknown[]) => unknown | Promise<unknown>> = {
    get_program: () => env.program,
    get_best_program: () => env.best?.program ?? env.program,
    best_score: () => env.best?.score ?? null,
    stage_edit: ([code]) => {
      try {
        const next = env.applyEdit({ code: str(code, "stage_edit's code") });
        env.program = next;
        state.staged++;
        const event = { type: "staged_edit", tool: o.tool, lines: next.split("\n").length };
        writeCapped(o.trajectory, state.staged, MAX_STAGED_EVENTS, event, "staged edits");
        return `edit staged: the program now has ${next.split("\n").length} lines`;
      } catch (err) {
        if (err instanceof EditError) return `ERROR: ${err.message}`;
        throw err;
      }
    },
    // hone's probe runs the full evaluator, so it reports validity only: a score would be a free evaluation.
    probe: async () => {
      if (state.probes >= o.maxProbes) return { error: "probe budget exhausted" };
      state.probes++;
      const e = await env.probe();
      o.trajectory.write({ type: "probe", tool: o.tool, valid: e.valid, reason: e.reason });
      return { combined_score: null, validity: e.valid ? 1.0 : 0.0, error: e.valid ? null : (e.reason ?? "invalid") };
    },
    // HarnessTTT's three fields first, then the summary evaluate_program returns (valid, score, evaluations_left, …).
    evaluate: async () => {
      if (env.left - state.inFlight <= 0) return { error: "evaluation budget exhausted" };
      state.inFlight++;
      try {
        const done = await env.evaluateCurrent();
        if (!done) return { error: "evaluation budget exhausted" };
        const e = done.record.evaluation;
        const valid = e.valid && e.score !== undefined;
        const error = valid ? null : (e.reason ?? "invalid");
        return { combined_score: valid ? e.score : null, validity: valid ? 1.0 : 0.0, error, ...done.summary };
      } finally {
        state.inFlight--;
      }
    },
    budget_left: () => ({ evaluations: Math.max(0, env.left - state.inFlight), probes: Math.max(0, o.maxProbes - state.probes) }),
    list_task_inputs: () => inputs(),
    read_input_sample: ([name, nrows]) => readInputSample(o.task.dir, inputs(), name, nrows, o.task.secrets),
    scratch_write: ([name, text]) => {
      const base = scratchName(name);
      const body = str(text, "scratch_write's text");
      if (!base) return "ERROR: not a file name";
      if (body.length > MAX_SCRATCH_FILE) return "ERROR: too large";
      const total = [...state.scratch].reduce((n, [k, v]) => n + (k === base ? 0 : v.length), 0);
      if (total + body.length > MAX_SCRATCH_TOTAL || (!state.scratch.has(base) && state.scratch.size >= MAX_SCRATCH_FILES))
        return "ERROR: the scratch space is full";
      state.scratch.set(base, body);
      return `scratch/${base}`;
    },
    scratch_read: ([name]) => {
      const base = scratchName(name);
      return (base && state.scratch.get(base)) ?? "ERROR: no such file";
    },
    log: ([message]) => {
      state.logs++;
      const event = { type: "tool_log", tool: o.tool, message: String(message).slice(0, 400) };
      writeCapped(o.trajectory, state.logs, MAX_TOOL_LOG_EVENTS, event, "ctx.log() lines");
      return null;
    },
  };
  const inputs = () => {
    state.inputs ??= listTaskInputs(o.task.dir);
    return state.inputs;
  };
  return async (method, args) => {
    const fn = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!fn) throw new Error(`ctx has no method ${method}`);
    return fn(args);
  };
}

export interface PythonRollout {
  /** Where tool calls run: the warm pool's program zygote, or a fresh contained interpreter per call. */
  channel?: ToolChannelSource;
  task: DiscoveryTask;
}

/** One Python tool of a rollout as the agent loop calls it; a failure becomes a tool error the executor sees. */
export function pythonTool(
  t: ToolSpec,
  o: Omit<PythonCtxOptions, "tool" | "task"> & { python: PythonRollout; limits: SandboxLimits },
): (args: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolOutcome> {
  const channel = o.python.channel ?? coldToolChannel(o.python.task);
  const ctx = pythonCtx({ ...o, task: o.python.task, tool: t.name });
  return async (args, signal) => {
    const call = { code: t.source ?? "", args, ...pythonCallLimits(o.limits) };
    // The rollout's deadline ends the call, however long the host has spent answering its ctx.
    const answer: CtxHandler = (method, a) =>
      signal?.aborted ? Promise.reject(new Error("the rollout's time ran out")) : ctx(method, a);
    const r = await runPythonTool(channel, call, answer, signal);
    if (r.ok) return { output: pythonToolOutput(r.value) };
    o.trajectory.write({ type: "sandbox_failure", tool: t.name, kind: r.kind, error: r.error });
    return { output: `Error: the tool ${t.name} failed (${r.kind}): ${r.error}`, error: true };
  };
}

/** The Python tools among `tools`, ready for a rollout; without `python` each says why it cannot run. */
export function pythonTools(
  tools: readonly ToolSpec[],
  o: { env: DiscoveryEnvironment; trajectory: TrajectorySink; limits: SandboxLimits; maxProbes: number; python?: PythonRollout },
): Map<string, (args: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolOutcome>> {
  const out = new Map<string, (args: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolOutcome>>();
  const state = newPythonState();
  for (const t of tools) {
    if (t.kind !== "custom" || t.language !== "python") continue;
    const python = o.python;
    out.set(
      t.name,
      python
        ? pythonTool(t, { ...o, python, state })
        : async () => ({ output: `Error: the tool ${t.name} is Python and this rollout has no Python sandbox`, error: true }),
    );
  }
  return out;
}
