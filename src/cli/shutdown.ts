import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

// How every hone command stops when asked. The first SIGINT or SIGTERM runs what the command registered with
// atStop() (a worker finishes or returns its job, a server closes, a run removes its half-written folder), bounded
// in time; then every process hone started is killed and hone exits. A second signal stops at once.

type Cleanup = () => Promise<void> | void;
const cleanups: Cleanup[] = [];
let graceMs = 10_000;
let exitCode: number | undefined;
let stopping = false;
const waiters: (() => void)[] = [];

/** Registers work to do when the command is asked to stop; returns a function that unregisters it. */
export function atStop(fn: Cleanup): () => void {
  cleanups.push(fn);
  return () => {
    const i = cleanups.indexOf(fn);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

/**
 * Runs `fn` as the process exits: called from a stop's cleanup, after every other step of the stop, when no more of the
 * command's work can run (what removes a folder the command may still be writing into). What it throws is said.
 */
export function atExit(fn: () => void): void {
  process.once("exit", () => {
    try {
      fn();
    } catch (err) {
      process.stderr.write(`hone: while stopping: ${(err as Error).message}\n`);
    }
  });
}

/** Resolves when a stop has been asked for (for services that serve until then). */
export function stopRequested(): Promise<void> {
  return stopping ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
}

/**
 * How long the registered work may take before hone stops anyway, and the exit code of a clean stop (services
 * exit 0 once stopped; a command interrupted before it finished exits 130 for SIGINT, 143 for SIGTERM).
 */
export function stopPolicy(o: { graceMs?: number; exitCode?: number }): void {
  if (o.graceMs !== undefined) graceMs = o.graceMs;
  if (o.exitCode !== undefined) exitCode = o.exitCode;
}

/** Process ids of every descendant of `pid` (children, their children…), read from /proc or ps. */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  try {
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        // Fields after the command (which may hold spaces and parentheses): state, then the parent's pid.
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      } catch {
        // the process ended while we looked
      }
    }
  } catch {
    for (const line of execFileSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8" }).split("\n")) {
      const [p, pp] = line.trim().split(/\s+/).map(Number);
      if (p && pp !== undefined) parent.set(p, pp);
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, pp] of parent) {
      if (pp !== p || out.includes(child)) continue;
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** Whether `pid` still runs: it exists and is not a zombie waiting to be reaped. */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Kills every process this one started, whatever they are doing: those alive now and `known` ones (enumerated
 * before the cleanups ran, whose parent a cleanup may have killed, orphaning them). SIGKILL is not instant (a
 * process tears its memory down first, and one may fork while its parent is being killed), so this kills again
 * whatever still runs or newly appeared until nothing does, for at most two seconds: hone never exits while a
 * process it started is still there.
 */
export function killDescendants(known: number[] = []): void {
  const deadline = Date.now() + 2000;
  let targets = new Set([...known, ...descendants(process.pid)]);
  for (;;) {
    for (const pid of targets) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const left = [...new Set([...targets, ...descendants(process.pid)])].filter(running);
    if (left.length === 0 || Date.now() > deadline) return;
    Atomics.wait(pause, 0, 0, 10);
    targets = new Set(left);
  }
}

let known: number[] = [];

function finish(code: number): never {
  killDescendants(known);
  process.exit(code);
}

async function stop(signal: NodeJS.Signals): Promise<void> {
  const code = exitCode ?? (signal === "SIGINT" ? 130 : signal === "SIGPIPE" ? 141 : 143);
  if (stopping) finish(code);
  stopping = true;
  known = descendants(process.pid);
  process.stderr.write(
    signal === "SIGPIPE"
      ? "hone: the reader of hone's output went away: stopping\n"
      : `hone: ${signal}: stopping (send it again to stop at once)\n`,
  );
  for (const w of waiters.splice(0)) w();
  const bound = setTimeout(() => {
    process.stderr.write(`hone: still stopping after ${Math.round(graceMs / 1000)} s; stopping now\n`);
    finish(code);
  }, graceMs);
  for (const fn of [...cleanups].reverse()) {
    try {
      await fn();
    } catch (err) {
      process.stderr.write(`hone: while stopping: ${(err as Error).message}\n`);
    }
  }
  clearTimeout(bound);
  finish(code);
}

/**
 * The reader of hone's output went away (`hone run … | head -1`: EPIPE). A command with nothing registered to do on a
 * stop (`hone datasets | head`) just ends its output there; one that registered work (a run's half-built folder, an
 * optimize to resume) stops as on a signal, exiting 141 as a process ended by SIGPIPE does, never 0 for work it did
 * not finish. Called again while stopping (the stop's own note to a closed stderr), it does nothing.
 */
export function readerGone(): void {
  if (stopping) return;
  if (cleanups.length === 0) process.exit(process.exitCode ?? 0);
  void stop("SIGPIPE");
}

/** Installs the handlers; main.ts calls this once, before any command runs. */
export function installStopHandlers(): void {
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
