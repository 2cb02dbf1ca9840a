import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU seconds of process trees, read from /proc (Linux): each process's own time plus that of the children it has
 * reaped (utime + stime + cutime + cstime), so the per-evaluation forks of the warm pool, reaped by its processes,
 * are counted in their parent. USER_HZ is 100 on every Linux architecture Node runs on.
 */
const USER_HZ = 100;

/** A process's own CPU seconds (utime + stime), those of the children it reaped (cutime + cstime), its parent. */
export interface ProcessCpu {
  own: number;
  reaped: number;
  parent: number;
}

function procStat(pid: number): ProcessCpu | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields start after the last ")".
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return {
      own: (Number(f[11]) + Number(f[12])) / USER_HZ,
      reaped: (Number(f[13]) + Number(f[14])) / USER_HZ,
      parent: Number(f[1]),
    };
  } catch {
    return undefined; // it ended between the listing and the read
  }
}

function stat(pid: number): { ppid: number; cpu: number } | undefined {
  const s = procStat(pid);
  return s && { ppid: s.parent, cpu: s.own + s.reaped };
}

/** Every live process's CPU, by pid. */
export function processTable(): Map<number, ProcessCpu> {
  const table = new Map<number, ProcessCpu>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    const s = Number.isInteger(pid) ? procStat(pid) : undefined;
    if (s) table.set(pid, s);
  }
  return table;
}

/** CPU seconds so far of every live descendant of `root`, keyed by pid (root itself excluded). */
export function descendantsCpu(root: number): Map<number, number> {
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (!s) continue;
    parent.set(pid, s.ppid);
    cpu.set(pid, s.cpu);
  }
  const out = new Map<number, number>();
  for (const [pid, seconds] of cpu) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        out.set(pid, seconds);
        break;
      }
    }
  }
  return out;
}

/** CPU seconds the trees spent between two snapshots (a process new in `after` counts whole). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>, exclude: Set<number> = new Set()): number {
  let sum = 0;
  for (const [pid, seconds] of after) if (!exclude.has(pid)) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}

/** CPU seconds so far of one process and the children it reaped. */
export const processCpu = (pid: number): number => stat(pid)?.cpu ?? 0;

/** The machine's busy and total CPU time so far, in USER_HZ ticks (the first line of /proc/stat). */
export function machineTicks(): { busy: number; total: number } {
  const f = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
}
