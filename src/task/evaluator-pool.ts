import { rmSync } from "node:fs";
import { join } from "node:path";
import { HoneError } from "../errors.ts";
import type { DiscoveryTask } from "./discovery-task.ts";
import type { Evaluation } from "./evaluation.ts";
import {
  cascadeArg,
  type EvaluatorExit,
  evaluationRequest,
  evaluatorCommand,
  evaluatorEnv,
  judgeExit,
  programLimits,
  sealed,
  signalName,
} from "./evaluator.ts";
import { LineProcess } from "./line-process.ts";
import { makePoolDir } from "./pool-dir.ts";
import { knownPythonInfo, PYTHON_DIR, pythonInfo, pythonInfoAsync } from "./python-env.ts";
import { bwrapArgs, SOCKET_DIR_INSIDE } from "./sandbox-layout.ts";
import { type ToolChannelSource, zygoteChannel } from "./tool-channel.ts";
import { zygoteAnswers } from "./zygote-ping.ts";

/** When the pool's other evaluators start at the latest, after it is ready (ms). */
const REST_AFTER_MS = 500;
/** How long past an evaluation's own timeout the host waits before it kills the evaluator process itself. */
const BACKSTOP_MS = 10_000;
/** The most of the seed program the zygote's calls compile to rehearse, cut at a line's end. */
const MAX_SAMPLE_CHARS = 32 << 10;
const rehearsalSample = (seed: string) =>
  seed.length <= MAX_SAMPLE_CHARS ? seed : seed.slice(0, seed.lastIndexOf("\n", MAX_SAMPLE_CHARS) + 1);

/** A process that forks must have one thread: numerical libraries start none of their own with these. */
const ONE_THREAD = { OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };
/** The line hone_runtime writes to the evaluator's stderr when the program zygote does not answer. */
const SANDBOX_GONE = "hone-runtime: the program sandbox is not answering";
/** An evaluation whose evaluator printed that line while the zygote answers: its own result is not trusted. */
const SAID_GONE = "the evaluator reported that the program sandbox did not answer, but it answers; this evaluation is not scored";

export interface PoolOptions {
  /** Warm evaluator processes (evaluations that may run at once). */
  size?: number;
  startTimeoutMs?: number;
  /** Told once when the pool changes how it evaluates (a kept evaluator that runs programs in its own process). */
  onNotice?: (text: string) => void;
  /**
   * How many programs may be sent for evaluation at once (a round's rollouts): the program sandbox makes that many
   * calls ahead while none runs, so a burst of evaluations does not make them. Default: one per evaluator, and one.
   */
  ahead?: number;
}

const failed = (reason: string, seconds: number): Evaluation => ({ valid: false, reason, metrics: {}, artifacts: {}, seconds });

/**
 * Warm evaluation for one task. Evaluator processes (each in its own bubblewrap sandbox where it works) have
 * imported the evaluator and fork a fresh child per evaluation; a separate sandboxed zygote forks each candidate
 * program's process into namespaces of its own. Programs and results travel over pipes and a socket only hone's
 * processes hold; the pool's folder holds nothing but that socket. Same rules and the same scores, bit for bit,
 * as a cold run. A dead zygote or evaluator is replaced, and the evaluation it cost is recorded as failed.
 */
export class EvaluatorPool {
  private readonly idle: LineProcess[] = [];
  private readonly all = new Set<LineProcess>();
  /** Evaluator processes and the program zygote still loading (close() kills them too). */
  private readonly loading = new Set<LineProcess>();
  private readonly queue: ((p: LineProcess) => void)[] = [];
  private zygote: LineProcess | undefined;
  private zygoteStarting: Promise<LineProcess> | undefined;
  /** The check of whether a zygote answers (`answers`) in flight, shared by the evaluations that asked for it. */
  private zygoteCheck: { zygote: LineProcess; answers: Promise<boolean> } | undefined;
  private nextId = 1;
  private closed = false;
  private starting = 0;
  /**
   * Evaluators not started yet: they load beside the first evaluation, once it is sent or one has to wait, and at
   * the latest REST_AFTER_MS after the pool is ready (spawning one costs this process tens of milliseconds, which
   * set-up need not wait for); one that fails to start leaves the pool smaller (the next acquire starts one when none
   * is left).
   */
  private unstarted = 0;
  /** Set when a kept evaluator ran a program in its own process: every evaluator is fresh from then on. */
  private keptRefused = false;

  private constructor(
    readonly task: DiscoveryTask,
    private readonly root: string,
    private readonly startTimeoutMs: number,
    private readonly size: number,
    /** Told once when the pool changes how it evaluates (see PoolOptions.onNotice); may be set after start. */
    public onNotice?: (text: string) => void,
    private readonly ahead = 0,
  ) {}

  static async start(task: DiscoveryTask, opts: PoolOptions = {}): Promise<EvaluatorPool> {
    // Probed beside, never blocking this process (a worker renews its jobs' locks meanwhile); when it is known
    // already, the processes are spawned before anything else runs.
    if (!knownPythonInfo(task.python)) await pythonInfoAsync(task.python);
    const size = Math.max(1, opts.size ?? 2);
    const pool = new EvaluatorPool(task, makePoolDir(), opts.startTimeoutMs ?? 60_000, size, opts.onNotice, opts.ahead);
    try {
      await Promise.all([pool.ensureZygote(), pool.startEvaluator()]);
    } catch (err) {
      pool.close();
      throw err;
    }
    pool.unstarted = size - 1;
    // Where the first evaluation waits on something else (a worker's job begins with a model turn), not that long.
    setTimeout(() => pool.startRest(), REST_AFTER_MS).unref();
    return pool;
  }

  private get socketDir(): string {
    return join(this.root, "sock");
  }

  private zygoteCommand(): [string, string[]] {
    const python = pythonInfo(this.task.python);
    const inside = sealed(this.task) ? SOCKET_DIR_INSIDE : this.socketDir;
    const config = {
      socket: join(inside, "zygote.sock"),
      preload: this.task.programPreload,
      limits: programLimits(this.task, this.socketDir),
      // One sandbox made ahead per evaluator process, so that evaluations at once each find one ready.
      slots: this.size,
      ahead: this.ahead,
      // What each call made ahead compiles (never runs) to rehearse: a program the size of the task's (its first
      // lines: the whole configuration is one argument of a command line, which the kernel caps at 128 KB).
      sample: rehearsalSample(this.task.seedProgram),
      // Started directly (no bubblewrap), its parent is this process: one that died before the zygote's
      // PDEATHSIG was set would otherwise leave it serving forever.
      parent: sealed(this.task) ? undefined : process.pid,
    };
    const script = [join(PYTHON_DIR, "hone_program_zygote.py"), JSON.stringify(config)];
    if (!sealed(this.task)) return [python.executable, script];
    const env = { PATH: "/usr/bin:/bin", LANG: process.env.LANG, ...ONE_THREAD };
    const spec = {
      python,
      readOnly: [PYTHON_DIR],
      binds: [[this.socketDir, SOCKET_DIR_INSIDE, true]] as [string, string, boolean][],
      env,
      setuid: true,
      devices: this.task.devices,
    };
    return ["bwrap", bwrapArgs(spec, [python.executable, ...script])];
  }

  /** The running zygote, started (again) if it is not running. */
  private ensureZygote(): Promise<LineProcess> {
    if (this.zygote && !this.zygote.exited) return Promise.resolve(this.zygote);
    this.zygoteStarting ??= (async () => {
      const [cmd, args] = this.zygoteCommand();
      const z = new LineProcess(cmd, args, { PATH: process.env.PATH ?? "/usr/bin:/bin", ...ONE_THREAD }, this.root);
      // Killed by close() while it starts (the evaluator failed to load), not left to start for up to a minute.
      this.loading.add(z);
      const m = await z.ready(this.startTimeoutMs).finally(() => this.loading.delete(z));
      if (this.closed) {
        z.kill(); // closed while it was starting: nothing may outlive the pool
        throw new Error("the evaluator pool is closed");
      }
      if (!m.ready) {
        z.kill();
        throw new HoneError("evaluatorFailed", `the program sandbox for ${this.task.id} did not start: ${m.error}`);
      }
      this.zygote = z;
      return z;
    })().finally(() => {
      this.zygoteStarting = undefined;
    });
    return this.zygoteStarting;
  }

  private async startEvaluator(): Promise<LineProcess> {
    this.starting++;
    try {
      return await this.spawnEvaluator();
    } finally {
      this.starting--;
    }
  }

  private async spawnEvaluator(): Promise<LineProcess> {
    const inside = sealed(this.task) ? "/tmp" : join(this.root, "work");
    const socket = join(sealed(this.task) ? SOCKET_DIR_INSIDE : this.socketDir, "zygote.sock");
    const env = { ...evaluatorEnv(this.task, inside), HONE_PROGRAM_SOCKET: socket };
    // A kept evaluator only in its own sandbox, where what an evaluation leaves is killed and removed after it.
    const kept = this.task.evaluatorState === "kept" && sealed(this.task) && !this.keptRefused;
    const options = JSON.stringify({
      own_pid_namespace: sealed(this.task),
      parent: sealed(this.task) ? undefined : process.pid,
      kept,
    });
    const script = [join(PYTHON_DIR, "hone_pool.py"), this.task.evaluatorPath, cascadeArg(this.task), options];
    const [cmd, args] = evaluatorCommand(this.task, script, env, this.socketDir);
    const p = new LineProcess(cmd, args, env, this.root);
    p.kept = kept;
    this.loading.add(p);
    const m = await p.ready(this.startTimeoutMs).finally(() => this.loading.delete(p));
    if (this.closed) {
      p.kill(); // closed while it was loading
      throw new Error("the evaluator pool is closed");
    }
    if (!m.ready) {
      p.kill();
      throw new HoneError("evaluatorFailed", `the evaluator ${this.task.evaluatorPath} failed to load: ${m.error}`);
    }
    this.all.add(p);
    p.onExit.push(() => this.all.delete(p));
    this.release(p);
    return p;
  }

  private release(p: LineProcess): void {
    if (p.exited || this.closed) return;
    if (p.kept && this.keptRefused) {
      p.kill(); // a kept evaluator is not used once one ran a program in its own process
      this.replaceLater();
      return;
    }
    const next = this.queue.shift();
    if (next) next(p);
    else this.idle.push(p);
  }

  /** Starts the evaluators not started yet (once). */
  private startRest(): void {
    for (; this.unstarted > 0; this.unstarted--) this.replaceLater();
  }

  private async acquire(): Promise<LineProcess> {
    for (let p = this.idle.pop(); p; p = this.idle.pop()) if (!p.exited) return p;
    this.startRest(); // an evaluation waits: the pool grows to its size now
    // Every evaluator of a full pool may have died: keep the pool at its size.
    if (this.all.size + this.starting === 0) await this.startEvaluator();
    const p = this.idle.pop();
    return p ?? new Promise((resolve) => this.queue.push(resolve));
  }

  async evaluate(program: string, opts: { timeoutSec?: number; memoryMb?: number } = {}): Promise<Evaluation> {
    if (this.closed) throw new Error("the evaluator pool is closed");
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const zygote = await this.ensureZygote();
    const worker = await this.acquire();
    const timeoutSec = opts.timeoutSec ?? this.task.timeoutSec;
    const id = this.nextId++;
    const request = { id, timeout: timeoutSec, ...evaluationRequest(this.task, program, opts.memoryMb ?? this.task.memoryMb) };
    // A fresh evaluator's process times its evaluation out itself (and lives on); a kept one is the evaluation's
    // process, so it is killed at the timeout (and replaced), which ends whatever the evaluation started.
    const replied = worker.kept
      ? worker.request(id, request, timeoutSec * 1000, { id, code: null, timed_out: true, exiting: true })
      : worker.request(id, request, timeoutSec * 1000 + BACKSTOP_MS);
    this.startRest();
    const reply = await replied;
    if (reply?.kept_refused === true) this.refuseKept();
    // A kept evaluator ends itself after an evaluation that it cannot be trusted to come back from.
    if (worker.exited || reply?.exiting === true) {
      worker.kill();
      this.replaceLater();
    } else this.release(worker);
    // Stopped before the program's code ran in the evaluator's process: evaluated again by a fresh evaluator.
    if (reply?.kept_refused === true) return this.evaluate(program, opts);
    if (!reply) return failed("the evaluator process died during this evaluation; it is not scored", seconds());
    const lostSandbox = typeof reply.stderr === "string" && reply.stderr.includes(SANDBOX_GONE);
    if (zygote.exited || zygote !== this.zygote || (lostSandbox && !(await this.answers(zygote)))) {
      if (!zygote.exited) zygote.kill(); // it stopped answering: start afresh
      if (this.zygote === zygote) this.zygote = undefined; // not used while it is still on its way out
      return failed("the program sandbox stopped during this evaluation; it is not scored", seconds());
    }
    if (lostSandbox) return failed(SAID_GONE, seconds());
    const exit: EvaluatorExit = {
      code: typeof reply.code === "number" ? reply.code : null,
      signal: typeof reply.signal === "number" ? signalName(reply.signal) : null,
      timedOut: reply.timed_out === true,
      result: typeof reply.result === "string" ? reply.result : undefined,
      stdout: typeof reply.stdout === "string" ? reply.stdout : "",
      stderr: typeof reply.stderr === "string" ? reply.stderr : "",
      seconds: seconds(),
    };
    return judgeExit(this.task, exit, timeoutSec);
  }

  /**
   * Whether the zygote still answers a call. The line hone_runtime writes when it does not is only a claim: a
   * program's error text that the evaluator prints can hold it, and killing the shared zygote on its word would
   * fail every other evaluation in flight. Evaluations that make the claim together share one check.
   */
  private answers(zygote: LineProcess): Promise<boolean> {
    if (this.zygoteCheck?.zygote === zygote) return this.zygoteCheck.answers;
    const answers = zygoteAnswers(join(this.socketDir, "zygote.sock"));
    this.zygoteCheck = { zygote, answers };
    void answers.then(() => {
      if (this.zygoteCheck?.answers === answers) this.zygoteCheck = undefined; // the next claim is checked anew
    });
    return answers;
  }

  private refuseKept(): void {
    if (this.keptRefused) return;
    this.keptRefused = true;
    for (const p of this.idle.splice(0)) this.release(p);
    this.onNotice?.(
      `note: ${this.task.id} declares evaluator_state: kept, but its evaluator ran the program in its own process; each evaluation now gets a fresh evaluator (remove evaluator_state: kept from its hone.yaml)`,
    );
  }

  /** Generated Python tools' calls run in the same program zygote as evaluated programs. */
  toolChannel(): ToolChannelSource {
    return zygoteChannel(join(this.socketDir, "zygote.sock"));
  }

  /** A replacement for an evaluator that died, started in the background (the next acquire also starts one). */
  private replaceLater(): void {
    if (!this.closed) this.startEvaluator().catch(() => {});
  }

  close(): void {
    this.closed = true;
    for (const p of [...this.all, ...this.loading]) p.kill();
    this.zygote?.kill();
    rmSync(this.root, { recursive: true, force: true });
  }
}
