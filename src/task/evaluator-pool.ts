import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { HoneError } from "../errors.ts";
import type { DiscoveryTask } from "./discovery-task.ts";
import type { Evaluation } from "./evaluation.ts";
import { cascadeArg, evaluatorEnv, readEvaluation } from "./evaluator.ts";
import { isolationSupport, PYTHON_DIR, resolvePython } from "./python-env.ts";
import { BoundedText } from "./python-process.ts";

type Message = { ready?: boolean; error?: string; id?: number; pid?: number; code?: number | null; signal?: number | null };

/** A long-lived Python process speaking JSON lines on stdin/stdout. */
class LineProcess {
  readonly child: ChildProcess;
  private readonly waiters = new Map<number, (m: Message) => void>();
  private readyWaiter: ((m: Message) => void) | undefined;
  readonly stderr = new BoundedText(8000);
  exited = false;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
    this.child = spawn(command, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr?.setEncoding("utf8").on("data", (c: string) => this.stderr.push(c));
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      let m: Message;
      try {
        m = JSON.parse(line);
      } catch {
        m = { ready: line.trim() === "ready" };
      }
      if (m.ready !== undefined && this.readyWaiter) {
        this.readyWaiter(m);
        this.readyWaiter = undefined;
      } else if (m.id !== undefined) this.waiters.get(m.id)?.(m);
    });
    this.child.on("exit", () => {
      this.exited = true;
      this.readyWaiter?.({ ready: false, error: `exited: ${this.stderr.toString().trim().split("\n").slice(-3).join(" ")}` });
      for (const w of this.waiters.values()) w({ code: null, signal: 9 });
    });
  }

  ready(timeoutMs: number): Promise<Message> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ ready: false, error: `not ready within ${timeoutMs / 1000} s` }), timeoutMs);
      this.readyWaiter = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
    });
  }

  on(id: number, handler: (m: Message) => void): void {
    this.waiters.set(id, handler);
  }
  off(id: number): void {
    this.waiters.delete(id);
  }
  send(value: unknown): void {
    this.child.stdin?.write(`${JSON.stringify(value)}\n`);
  }
  kill(): void {
    if (!this.exited) this.child.kill("SIGKILL");
  }
}

/** The sandboxed program zygote's command line: bubblewrap around it where it works. */
function zygoteCommand(python: string, root: string, sock: string, task: DiscoveryTask): [string, string[]] {
  const args = [join(PYTHON_DIR, "hone_program_zygote.py"), sock, join(root, "programs"), task.programPreload.join(",")];
  if (!isolationSupport().bwrap) return [python, args];
  const keep = ["PATH", "LANG", "OPENBLAS_CORETYPE"]
    .filter((k) => process.env[k])
    .map((k) => ["--setenv", k, process.env[k] as string]);
  const groups: string[][] = [
    ["--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"],
    ["--ro-bind", "/", "/"],
    ["--dev", "/dev"],
    ["--proc", "/proc"],
    ["--tmpfs", "/tmp"],
    ["--tmpfs", task.dir],
    ["--bind", root, root],
    // hone's own Python files stay visible even when hone itself lives under /tmp (a CI clone, say).
    ["--ro-bind", PYTHON_DIR, PYTHON_DIR],
    ["--clearenv"],
    ...keep,
    ["--setenv", "OMP_NUM_THREADS", "1"],
    ["--setenv", "OPENBLAS_NUM_THREADS", "1"],
    [python, ...args],
  ];
  return ["bwrap", groups.flat()];
}

export interface PoolOptions {
  /** Warm evaluator processes (evaluations that may run at once). */
  size?: number;
  startTimeoutMs?: number;
}

/**
 * Warm evaluation for one task: evaluator processes that have already imported the evaluator fork a fresh child
 * per evaluation, and a sandboxed zygote forks each candidate program's process. Same rules as a cold evaluation
 * (timeout with process-group kill, memory limit, scrubbed environment) and the same scores, bit for bit.
 */
export class EvaluatorPool {
  private readonly idle: LineProcess[] = [];
  private readonly all: LineProcess[] = [];
  private readonly queue: ((p: LineProcess) => void)[] = [];
  private zygote: LineProcess | undefined;
  private nextId = 1;
  private closed = false;

  private constructor(
    readonly task: DiscoveryTask,
    private readonly root: string,
    private readonly python: string,
  ) {}

  static async start(task: DiscoveryTask, opts: PoolOptions = {}): Promise<EvaluatorPool> {
    const root = mkdtempSync(join(tmpdir(), "hone-pool-"));
    mkdirSync(join(root, "programs"));
    mkdirSync(join(root, "evals"));
    const pool = new EvaluatorPool(task, root, resolvePython(task.python));
    try {
      await pool.startZygote(opts.startTimeoutMs ?? 60_000);
      const size = Math.max(1, opts.size ?? 2);
      await Promise.all(Array.from({ length: size }, () => pool.startEvaluator(opts.startTimeoutMs ?? 60_000)));
    } catch (err) {
      pool.close();
      throw err;
    }
    return pool;
  }

  private get socket(): string {
    return join(this.root, "zygote.sock");
  }

  private async startZygote(timeoutMs: number): Promise<void> {
    const [cmd, args] = zygoteCommand(this.python, this.root, this.socket, this.task);
    this.zygote = new LineProcess(cmd, args, { PATH: process.env.PATH ?? "/usr/bin:/bin" }, this.root);
    const m = await this.zygote.ready(timeoutMs);
    if (!m.ready) throw new HoneError("evaluatorFailed", `the program sandbox for ${this.task.id} did not start: ${m.error}`);
  }

  private async startEvaluator(timeoutMs: number): Promise<LineProcess> {
    const env = { ...evaluatorEnv(this.task, this.root), HONE_PROGRAM_SOCKET: this.socket };
    const p = new LineProcess(
      this.python,
      [join(PYTHON_DIR, "hone_pool.py"), this.task.evaluatorPath, cascadeArg(this.task)],
      env,
      this.root,
    );
    const m = await p.ready(timeoutMs);
    if (!m.ready) {
      p.kill();
      throw new HoneError("evaluatorFailed", `the evaluator ${this.task.evaluatorPath} failed to load: ${m.error}`);
    }
    this.all.push(p);
    this.release(p);
    return p;
  }

  private release(p: LineProcess): void {
    const next = this.queue.shift();
    if (next) next(p);
    else this.idle.push(p);
  }

  private acquire(): Promise<LineProcess> {
    const p = this.idle.pop();
    return p ? Promise.resolve(p) : new Promise((resolve) => this.queue.push(resolve));
  }

  async evaluate(program: string, opts: { timeoutSec?: number; memoryMb?: number } = {}): Promise<Evaluation> {
    if (this.closed) throw new Error("the evaluator pool is closed");
    let worker = await this.acquire();
    if (worker.exited) {
      this.all.splice(this.all.indexOf(worker), 1);
      worker = await this.startEvaluator(60_000).then(() => this.acquire());
    }
    const id = this.nextId++;
    const dir = join(this.root, "evals", String(id));
    mkdirSync(dir);
    const programPath = join(dir, `program${this.task.programExtension}`);
    const resultPath = join(dir, "hone_result.json");
    writeFileSync(programPath, program);
    const timeoutSec = opts.timeoutSec ?? this.task.timeoutSec;
    const started = performance.now();
    try {
      const { code, signal, timedOut } = await new Promise<{ code: number | null; signal: number | null; timedOut: boolean }>(
        (resolve) => {
          let timer: NodeJS.Timeout | undefined;
          let timedOut = false;
          worker.on(id, (m) => {
            if (m.pid !== undefined) {
              const pid = m.pid;
              timer = setTimeout(() => {
                timedOut = true;
                try {
                  process.kill(-pid, "SIGKILL");
                } catch {
                  // already gone
                }
              }, timeoutSec * 1000);
            } else {
              clearTimeout(timer);
              resolve({ code: m.code ?? null, signal: m.signal ?? null, timedOut });
            }
          });
          worker.send({
            id,
            program: programPath,
            result: resultPath,
            memory_mb: opts.memoryMb ?? this.task.memoryMb,
            stdout: join(dir, "stdout.txt"),
            stderr: join(dir, "stderr.txt"),
          });
        },
      );
      worker.off(id);
      const read = (name: string) => {
        try {
          const text = readFileSync(join(dir, name), "utf8");
          const b = new BoundedText(20_000);
          b.push(text);
          return b.toString();
        } catch {
          return "";
        }
      };
      return await readEvaluation(
        this.task,
        resultPath,
        {
          code,
          signal: signal ? (`SIG${signal === 9 ? "KILL" : signal}` as NodeJS.Signals) : null,
          stdout: read("stdout.txt"),
          stderr: read("stderr.txt"),
          seconds: (performance.now() - started) / 1000,
          timedOut,
        },
        timeoutSec,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
      this.release(worker);
    }
  }

  close(): void {
    this.closed = true;
    for (const p of this.all) p.kill();
    this.zygote?.kill();
    rmSync(this.root, { recursive: true, force: true });
  }
}
