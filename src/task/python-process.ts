import { spawn } from "node:child_process";

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  seconds: number;
}

export interface ProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Keep at most this many characters of each stream (head and tail). */
  maxOutputChars?: number;
}

/** Keeps the head and the tail of a stream that may flood, so a chatty program cannot exhaust memory. */
export class BoundedText {
  private head = "";
  private tail = "";
  private dropped = 0;
  constructor(private readonly limit: number) {}
  push(chunk: string): void {
    const half = Math.floor(this.limit / 2);
    if (this.head.length < half) {
      const take = chunk.slice(0, half - this.head.length);
      this.head += take;
      chunk = chunk.slice(take.length);
    }
    if (chunk.length === 0) return;
    this.tail += chunk;
    if (this.tail.length > half) {
      this.dropped += this.tail.length - half;
      this.tail = this.tail.slice(this.tail.length - half);
    }
  }
  toString(): string {
    return this.dropped > 0 ? `${this.head}\n[... ${this.dropped} characters cut ...]\n${this.tail}` : this.head + this.tail;
  }
}

/**
 * Runs a command in its own process group. On timeout the whole group is killed with SIGKILL, so children the
 * program started cannot outlive the call.
 */
export function runProcess(command: string, args: string[], opts: ProcessOptions): Promise<ProcessResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const limit = opts.maxOutputChars ?? 20_000;
    const stdout = new BoundedText(limit);
    const stderr = new BoundedText(limit);
    child.stdout.setEncoding("utf8").on("data", (c: string) => stdout.push(c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => stderr.push(c));
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      // Reap anything the program left behind in its group.
      killGroup();
      resolve({
        code,
        signal,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        timedOut,
        seconds: (performance.now() - started) / 1000,
      });
    };
    child.on("error", (err) => {
      stderr.push(String(err));
      finish(null, null);
    });
    child.on("close", finish);
  });
}
