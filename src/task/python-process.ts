import { spawn } from "node:child_process";

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  seconds: number;
  /** What the process wrote on file descriptor 3 (its result channel), when one was asked for. */
  result?: string;
}

export interface ProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Keep at most this many characters of each stream (head and tail). */
  maxOutputChars?: number;
  /** Written to the process's stdin, which is then closed. */
  input?: string;
  /** Open file descriptor 3 as a pipe and keep what arrives on it, up to this many bytes (more: no result). */
  resultBytes?: number;
  /**
   * For commands that may run long: the process group is ended when this process ends, however it ends (SIGKILL and
   * the OOM killer included; see `withLifeline`). With a `graceSec` (a trainer, an agent), that end and the timeout's
   * are SIGTERM first and SIGKILL `graceSec` later; without one (a program hone does not trust), SIGKILL at once.
   */
  lifeline?: { graceSec: number };
}

/**
 * How long a trainer or an agent has after SIGTERM to end what it started before its group is killed: torchrun, for
 * one, ends its workers on SIGTERM, and they run in sessions of their own, outside its group.
 */
export const LIFELINE_GRACE_SEC = 10;

/**
 * The command run beside a watcher in its process group. The watcher blocks reading a socket whose other end only this
 * process holds (node opens it close-on-exec), so the read ends when this process does, however it ends; then it ends
 * the group (SIGTERM and, `graceSec` later, SIGKILL; or SIGKILL at once). It is orphaned (so a stop, which kills this
 * process's descendants, leaves it to do its work once this process has exited, and the command never has it as a
 * child to wait for), ignores the signals a command may send its own group, and holds none of the command's streams.
 * The command replaces the shell (its exit status is the leader's) and does not get the socket. Killing the group at
 * the command's end (as runProcess does) ends the watcher.
 */
function withLifeline(command: string, args: string[], fd: number, graceSec: number): [string, string[]] {
  const end = graceSec > 0 ? `kill -TERM 0; sleep ${graceSec}; kill -KILL 0` : "kill -KILL 0";
  const watcher = `trap '' TERM INT HUP; read _ <&${fd}; ${end}`;
  const script = `( (${watcher}) </dev/null >/dev/null 2>&1 & ); exec "$@" ${fd}<&-`;
  return ["sh", ["-c", script, "hone-lifeline", command, ...args]];
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
    const stdio: ("ignore" | "pipe")[] = [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"];
    if (opts.resultBytes) stdio.push("pipe");
    if (opts.lifeline) stdio.push("pipe");
    const grace = opts.lifeline?.graceSec ?? 0;
    const [file, argv] = opts.lifeline ? withLifeline(command, args, stdio.length - 1, grace) : [command, args];
    const child = spawn(file, argv, { cwd: opts.cwd, env: opts.env, detached: true, stdio });
    const result = opts.resultBytes ? collectBytes(child.stdio[3] as NodeJS.ReadableStream, opts.resultBytes) : undefined;
    if (opts.input !== undefined) child.stdin?.on("error", () => {}).end(opts.input);
    const limit = opts.maxOutputChars ?? 20_000;
    const stdout = new BoundedText(limit);
    const stderr = new BoundedText(limit);
    child.stdout?.setEncoding("utf8").on("data", (c: string) => stdout.push(c));
    child.stderr?.setEncoding("utf8").on("data", (c: string) => stderr.push(c));
    let timedOut = false;
    const killGroup = (signal: NodeJS.Signals = "SIGKILL") => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    let hard: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      if (grace <= 0) return killGroup();
      killGroup("SIGTERM");
      hard = setTimeout(killGroup, grace * 1000);
    }, opts.timeoutMs);
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(hard);
      // Reap anything the program left behind in its group.
      killGroup();
      for (const s of child.stdio) s?.destroy();
      resolve({
        code,
        signal,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        timedOut,
        seconds: (performance.now() - started) / 1000,
        result: result?.text(),
      });
    };
    child.on("error", (err) => {
      stderr.push(String(err));
      finish(null, null);
    });
    child.on("close", finish);
    // A process that left its session may hold the pipes open after the child exits: stop waiting after a grace.
    child.on("exit", (code, signal) => {
      killGroup();
      setTimeout(() => finish(code, signal), 2000).unref();
    });
  });
}

/** Gathers a stream's bytes up to a cap; past it, the text is undefined (a result that large is refused). */
function collectBytes(stream: NodeJS.ReadableStream, cap: number): { text: () => string | undefined } {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on("data", (c: Buffer) => {
    size += c.length;
    if (size <= cap) chunks.push(c);
  });
  stream.on("error", () => {});
  return { text: () => (size <= cap ? Buffer.concat(chunks).toString("utf8") : undefined) };
}
