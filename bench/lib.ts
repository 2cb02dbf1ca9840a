import { type ChildProcess, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
// @ts-expect-error: bin/bundle.js is plain JavaScript, without declarations.
import { freshBundle } from "../bin/bundle.js";
import { machineTicks } from "./proc-cpu.ts";

const ROOT = join(import.meta.dirname, "..");
let bundleChecked = false;
let nodeLinked = false;

/**
 * The program bin/hone.js runs the `node` found on PATH: the node running the benches is put first there (a folder
 * holding only a link named node, so nothing else on PATH changes, such as which python3 the tasks get).
 */
function nodeFirstOnPath(): void {
  if (nodeLinked) return;
  const dir = mkdtempSync(join(tmpdir(), "hone-bench-node-"));
  symlinkSync(process.execPath, join(dir, "node"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  process.env.PATH = `${dir}:${process.env.PATH ?? ""}`;
  nodeLinked = true;
}

/**
 * The hone CLI as a user starts it, the program bin/hone.js (`hone`, `npx hone`: started through its first lines, which
 * cap V8's young generation for the verbs that run long), for the benches that spawn it. It runs dist/ only while dist/ was
 * built from the sources as they are, and otherwise falls back to tsx, which would time the TypeScript transform
 * and its memory instead of hone. A stale dist/ is rebuilt first, as `npm ci` builds it (HONE_FROM_SOURCE set by
 * the caller keeps the sources, on purpose).
 */
export function honeCli(): string {
  if (!bundleChecked && !process.env.HONE_FROM_SOURCE && !freshBundle("hone")) {
    process.stdout.write("  (dist/ is older than the sources: rebuilt first with node scripts/build-cli.mjs)\n");
    execFileSync(process.execPath, [join(ROOT, "scripts", "build-cli.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
    if (!freshBundle("hone")) throw new Error("dist/ is still older than the sources after node scripts/build-cli.mjs");
  }
  bundleChecked = true;
  nodeFirstOnPath();
  return join(ROOT, "bin", "hone.js");
}

/** Every bench's folder, removed together when the bench process exits (`benchDir`). */
const benchDirs: string[] = [];

/**
 * A fresh folder for one bench, `$TMPDIR/hone-bench-<name>-…` (or in `where`), removed when the whole run ends rather
 * than when the bench does: removing a bench's folder (thousands of files) slows every file created after it on an ext4 without a
 * journal, for a minute or more (`fileCreateMs`), and so the benches after it. Each bench starts on the file system
 * as the run found it; its own removals still count against it.
 */
export function benchDir(name: string, where = tmpdir()): string {
  const dir = mkdtempSync(join(where, `hone-bench-${name}-`));
  if (benchDirs.length === 0)
    process.on("exit", () => {
      for (const d of benchDirs) rmSync(d, { recursive: true, force: true });
    });
  benchDirs.push(dir);
  return dir;
}

/** Small helpers shared by the benchmarks: timing, medians, goals with verdicts, and aligned output. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export async function timeIt(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** A figure's goal: the measured value must be at least (`>=`) or at most (`<=`) `value`, in `unit`. */
export interface Goal {
  figure: string;
  op: ">=" | "<=";
  value: number;
  unit: string;
}

/** One figure measured over repetitions: its median decides the verdict; min and max show the spread. */
export interface Measured {
  goal: Goal;
  samples: number[];
}

const fmt = (x: number, unit: string) => `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)}${unit}`;

/** PASS when the median over the repetitions meets the goal, else MISS: the goal itself, not a softer target. */
export function verdict(m: Measured): { ok: boolean; text: string } {
  const med = median(m.samples);
  const ok = m.goal.op === ">=" ? med >= m.goal.value : med <= m.goal.value;
  const u = m.goal.unit;
  const spread = `min ${fmt(Math.min(...m.samples), u)}, max ${fmt(Math.max(...m.samples), u)} over ${m.samples.length}`;
  return {
    ok,
    text: `${m.goal.figure}: goal ${m.goal.op === ">=" ? "≥" : "≤"} ${fmt(m.goal.value, u)}, measured ${fmt(med, u)} median (${spread})`,
  };
}

/**
 * Prints a bench's figures side by side, then one PASS/MISS line per goal; returns whether every goal was met.
 * (A single `{ ok, text }` is the older form of a verdict, for benches not yet measured over repetitions.)
 */
export function report(title: string, rows: [string, string][], goals: Measured[] | { ok: boolean; text: string } = []): boolean {
  const w = Math.max(...rows.map((r) => r[0].length));
  console.log(`\n## ${title}`);
  // Timings on a shared machine mean little without its load: printed with every bench.
  console.log(`  (load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores at the end of this bench)`);
  for (const [k, v] of rows) console.log(`  ${k.padEnd(w)}  ${v}`);
  if (!Array.isArray(goals)) {
    console.log(`  ${goals.ok ? "PASS" : "MISS"}  ${goals.text} (one run, no spread measured)`);
    return goals.ok;
  }
  let all = true;
  for (const g of goals) {
    const v = verdict(g);
    all &&= v.ok;
    console.log(`  ${v.ok ? "PASS" : "MISS"}  ${v.text}`);
  }
  return all;
}

/** "median (min–max)" of samples in a unit, for the rows. */
export function spread(xs: number[], unit: string, digits = 1): string {
  return `${median(xs).toFixed(digits)}${unit} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
}

export const ms = (x: number) => `${x.toFixed(3)} ms`;

/**
 * Waits until the machine is quiet (busy under `share` of its cores over a 250 ms window), at most `limitMs`, so a
 * timed side does not inherit what the previous one left running: sandboxes being torn down, processes exiting,
 * the kernel's own clean-up of their namespaces. Returns whether it settled.
 */
export async function settle(limitMs = 10_000, share = 0.1): Promise<boolean> {
  const until = performance.now() + limitMs;
  while (performance.now() < until) {
    const a = machineTicks();
    await new Promise((r) => setTimeout(r, 250));
    const b = machineTicks();
    if (b.total > a.total && (b.busy - a.busy) / (b.total - a.total) < share) return true;
  }
  return false;
}

/**
 * Between benches of a whole run: every file written so far is written back (`sync`), and the machine is quiet again.
 * The benches' folders are kept to the end (`benchDir`), so their dirty pages would otherwise be written back by the
 * kernel's flusher ~30 s later, in the middle of the next bench, which the scaling bench counts as the machine's CPU.
 */
export async function quiesce(): Promise<void> {
  execFileSync("sync");
  await settle();
}

/**
 * What creating a file costs in `dir` right now, ms per file: `n` empty files in a folder of their own, left in place
 * (the caller removes `dir`), because removing them would slow the creates that follow on a filesystem that passes
 * over recently freed inodes, as the journal-less ext4 of the machine these figures were taken on does (the kernel's
 * `recently_deleted()`). Printed beside the figures of runs that write many files, not judged.
 */
export function fileCreateMs(dir: string, n = 200): number {
  const probe = mkdtempSync(join(dir, "create-probe-"));
  const t = performance.now();
  for (let i = 0; i < n; i++) writeFileSync(join(probe, String(i)), "");
  return (performance.now() - t) / n;
}

/**
 * What a freshly forked process pays per page on this machine (`peers/page_cost.py`): a copy-on-write write, a
 * first write to fresh memory, a first read of a shared page, and a system call, in microseconds. A sealed program
 * call is a fork of a numpy-loaded interpreter that writes several hundred of its pages, so these set its floor:
 * ~1-2 us a fault on common hardware, 15-20 us on the 2-core VM of the runs up to 2026-12-05, 2-3 us on the one of
 * 2026-12-06. Printed, not judged.
 */
export function pageCostRow(): [string, string] {
  const out = execFileSync("python3", [join(ROOT, "bench", "peers", "page_cost.py")], { encoding: "utf8" });
  const c = JSON.parse(out) as Record<"cow_write_us" | "first_touch_us" | "read_after_fork_us" | "syscall_us", number>;
  const us = (x: number) => `${x.toFixed(1)} us`;
  return [
    "a freshly forked process, per page (not judged)",
    `copy-on-write ${us(c.cow_write_us)}, fresh memory ${us(c.first_touch_us)}, first read ${us(c.read_after_fork_us)}; a system call ${us(c.syscall_us)}`,
  ];
}

/**
 * Passes a hone process's stderr on (spawned with stderr piped), less the one line it prints when the bench stops it
 * with SIGTERM (`hone: SIGTERM: stopping …`): every other line, an error above all, still shows.
 */
export function forwardStderr(child: ChildProcess): void {
  if (!child.stderr) return;
  createInterface({ input: child.stderr }).on("line", (line) => {
    if (!/^hone: SIGTERM: stopping/.test(line)) process.stderr.write(`${line}\n`);
  });
}
