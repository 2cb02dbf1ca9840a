// A long-lived process speaking JSON lines on stdin and stdout: the warm pool's evaluators and program zygote. It
// runs in a process group of its own, and kill() ends the group and lets go of the pipes, so nothing it started can
// keep hone running.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { BoundedText } from "./python-process.ts";

export type Message = Record<string, unknown> & { ready?: boolean; error?: string; id?: number };

/** The longest control line a pool process may send (a reply holds a result of at most ~9 MB plus output). */
const MAX_LINE = 24 << 20;

/** How long a process's pipes stay open after it exited, for whatever it left holding them. */
const LEFT_OUTPUT_MS = 2000;

/** A long-lived process speaking JSON lines on stdin/stdout. */
export class LineProcess {
  readonly child: ChildProcess;
  private readonly waiters = new Map<number, (m: Message | undefined) => void>();
  private readyWaiter: ((m: Message) => void) | undefined;
  readonly stderr = new BoundedText(8000);
  /** Whether its process has exited (its last lines may still be unread). */
  exited = false;
  /** Whether its end was said: its lines all read, or given up on, and its waiters answered. */
  private ended = false;
  /** Whether it evaluates in its own process (a kept evaluator) rather than in a fresh fork per evaluation. */
  kept = false;
  readonly onExit: (() => void)[] = [];

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
    // A process group of its own, so that kill() reaches what it started before it could arrange its own end.
    this.child = spawn(command, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.child.on("error", (err) => {
      this.stderr.push(String(err));
      if (this.child.pid === undefined) {
        this.exited = true; // it never started: no exit will come
        this.ended = true;
        this.gone();
      }
    });
    this.child.stdin?.on("error", () => {});
    this.child.stderr?.setEncoding("utf8").on("data", (c: string) => this.stderr.push(c));
    const lines = createInterface({ input: this.child.stdout as NodeJS.ReadableStream, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (line) => this.receive(line));
    this.child.on("exit", () => {
      this.exited = true;
      this.killGroup(); // what it left in its group
      this.afterExit();
    });
  }

  /**
   * Its last lines may still be in its pipes when its exit is seen (a reply, a refusal): it is gone once its stdout
   * and stderr have ended, every line read. What it left elsewhere holding them never keeps hone waiting: they are
   * let go LEFT_OUTPUT_MS after the exit.
   */
  private afterExit(): void {
    const open = [this.child.stdout, this.child.stderr].filter((s) => s && !s.destroyed && !s.readableEnded);
    let left = open.length;
    const end = () => {
      if (this.ended) return;
      this.ended = true;
      this.closeStdio();
      this.gone();
    };
    if (left === 0) {
      end();
      return;
    }
    for (const s of open)
      s?.once("close", () => {
        if (--left === 0) end();
      });
    setTimeout(end, LEFT_OUTPUT_MS).unref();
  }

  private receive(line: string): void {
    if (line.length > MAX_LINE) {
      this.kill();
      return;
    }
    let m: Message;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m.ready !== undefined && this.readyWaiter) {
      this.readyWaiter(m);
      this.readyWaiter = undefined;
    } else if (typeof m.id === "number") this.waiters.get(m.id)?.(m);
  }

  /** Why it is not ready: it exited, and the last lines of its stderr. */
  private exitMessage(): Message {
    return { ready: false, error: `exited: ${this.stderr.toString().trim().split("\n").slice(-3).join(" ")}` };
  }

  private gone(): void {
    this.readyWaiter?.(this.exitMessage());
    for (const w of this.waiters.values()) w(undefined);
    for (const f of this.onExit) f();
  }

  ready(timeoutMs: number): Promise<Message> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ ready: false, error: `not ready within ${timeoutMs / 1000} s` }), timeoutMs);
      this.readyWaiter = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
      if (this.ended) this.readyWaiter(this.exitMessage());
    });
  }

  /**
   * Sends one request and waits for its reply; undefined when the process died, or `late` (undefined unless given)
   * when the process is killed because `limitMs` passed first.
   */
  request(id: number, value: unknown, limitMs: number, late?: Message): Promise<Message | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        this.kill();
        resolve(late);
      }, limitMs);
      this.waiters.set(id, (m) => {
        clearTimeout(timer);
        this.waiters.delete(id);
        resolve(m);
      });
      if (this.exited) this.waiters.get(id)?.(undefined);
      else this.child.stdin?.write(`${JSON.stringify(value)}\n`);
    });
  }

  /**
   * Kills the process and its process group, and lets go of its pipes: bubblewrap killed as it starts leaves its
   * sandbox's first process waiting forever on a parent that is gone, holding the pipes (seen: a run whose first
   * evaluation failed while the pool's other evaluators were starting never exited).
   */
  kill(): void {
    if (!this.exited && !this.killGroup()) this.child.kill("SIGKILL");
    this.closeStdio();
  }

  /** SIGKILL to its process group (which keeps its pid while any member lives); false when there was none. */
  private killGroup(): boolean {
    try {
      process.kill(-(this.child.pid as number), "SIGKILL");
      return true;
    } catch {
      return false;
    }
  }

  private closeStdio(): void {
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) s?.destroy();
  }
}
