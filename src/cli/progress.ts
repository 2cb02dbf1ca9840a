import type { OptimizeEvent } from "../loop/optimize.ts";
import { describeNoise } from "../measure/noise.ts";
import { formatScore } from "./output.ts";

/** What the status line shows of the round in progress; updated by every rollout event as it happens. */
interface RoundState {
  round: number;
  /** Rollouts this round will run (known once the proposals are in; 1 in round 0). */
  planned: number | null;
  running: Set<string>;
  done: number;
  evals: number;
}

/**
 * Live view of an optimize run. On a terminal one status line redrawn in place as evaluations finish: the round,
 * rollouts running and done, evaluations used of the round's budget, the best score so far and how many executor
 * calls came from the cache; finished rollouts and rounds are printed above it. Elsewhere plain lines only.
 */
export class OptimizeProgress {
  private state: RoundState = { round: 0, planned: null, running: new Set(), done: 0, evals: 0 };
  private paired = false;
  private maxEvals = 0;
  private direction: "maximize" | "minimize" = "maximize";
  private best: number | null = null;
  private calls = 0;
  private cached = 0;
  private lastLine = "";
  private toldCache = false;
  /**
   * `cache` names the shared request cache when the run reads from it: the first call it answers is said once, so
   * a run served by what other runs recorded is never mistaken for fresh calls.
   */
  constructor(
    private readonly tty: boolean,
    private readonly o: { cache?: string; out?: NodeJS.WritableStream } = {},
  ) {}

  private get out(): NodeJS.WritableStream {
    return this.o.out ?? process.stdout;
  }

  /** The status line, e.g. `round 2 · rollouts 3 running, 1 done of 4 · evaluations 17/40 · best 1.06 · …`. */
  status(): string {
    const s = this.state;
    const of = s.planned === null ? "" : ` of ${s.planned}`;
    const budget = s.planned === null || this.maxEvals === 0 ? "" : `/${s.planned * this.maxEvals}`;
    const cache = this.cached > 0 ? ` · ${this.cached} of ${this.calls} executor calls from the cache` : "";
    return `round ${s.round} · rollouts ${s.running.size} running, ${s.done} done${of} · evaluations ${s.evals}${budget} · best ${formatScore(this.best)}${cache}`;
  }

  /** The status line cut to the terminal's width: a wrapped line could not be redrawn in place. */
  private fitted(): string {
    const width = (this.out as NodeJS.WriteStream).columns ?? 0;
    const s = this.status();
    return width > 1 && s.length >= width ? `${s.slice(0, width - 2)}…` : s;
  }

  private print(line: string): void {
    if (this.tty) this.out.write(`\r\x1b[2K${line}\n${this.fitted()}`);
    else this.out.write(`${line}\n`);
    this.lastLine = this.fitted();
  }

  private refresh(): void {
    if (!this.tty) return;
    const s = this.fitted();
    if (s !== this.lastLine) this.out.write(`\r\x1b[2K${s}`);
    this.lastLine = s;
  }

  private better(score: number): boolean {
    return this.best === null || (this.direction === "maximize" ? score > this.best : score < this.best);
  }

  private rolloutEvent(job: string, e: Record<string, unknown>): void {
    if (e.type === "rollout_start") {
      this.state.running.add(job);
      if ((e.task as { direction?: string } | undefined)?.direction === "minimize") this.direction = "minimize";
    } else if (e.type === "evaluation") {
      this.state.evals++;
      // A paired parent's rollout measures the parent, never a candidate: it does not move the best.
      if (!job.endsWith("-parent") && e.valid && typeof e.score === "number" && this.better(e.score)) this.best = e.score;
    } else if (e.type === "model_call") {
      this.calls++;
      if (e.cached) this.cached++;
      if (e.cached && this.o.cache && !this.toldCache) {
        this.toldCache = true;
        this.print(
          `  note: model calls are being answered from the request cache ${this.o.cache}, where earlier runs recorded the same requests (--cache off calls the model afresh)`,
        );
        return;
      }
    }
    this.refresh();
  }

  on(e: OptimizeEvent): void {
    switch (e.type) {
      case "start":
        this.paired = e.paired;
        this.maxEvals = e.maxEvals;
        this.print(
          `${e.resumed ? "resuming" : "optimizing"} ${e.task} for ${e.rounds} round(s) in ${e.runDir}${e.setupSeconds === undefined ? "" : ` (set up in ${e.setupSeconds.toFixed(2)} s)`}`,
        );
        break;
      case "notice":
        this.print(e.text);
        break;
      case "round_start":
        this.state = { round: e.round, planned: e.round === 0 ? 1 : null, running: new Set(), done: 0, evals: 0 };
        if (e.incumbentScore !== null && this.best === null) this.best = e.incumbentScore;
        this.print(
          `round ${e.round}: incumbent ${formatScore(e.incumbentScore)}${e.round === 0 ? " (seed program; rolling out the seed harness)" : ""}`,
        );
        break;
      case "noise":
        this.print(`  noise: ${describeNoise(e.noise)}`);
        break;
      case "proposals":
        this.state.planned = (e.valid + e.repaired) * (this.paired ? 2 : 1);
        this.print(`  proposals: ${e.valid} valid, ${e.repaired} repaired, ${e.invalid} invalid`);
        break;
      case "rollout_event":
        this.rolloutEvent(e.job, e.event);
        break;
      case "rollout_done":
        this.state.running.delete(e.job);
        this.state.done++;
        if (!e.job.endsWith("-parent") && e.score !== null && this.better(e.score)) this.best = e.score;
        this.print(`  ${e.job}: ${e.error ? `failed: ${e.error}` : `best ${formatScore(e.score)}`}`);
        break;
      case "round_end":
        if (e.incumbentScore !== null && this.better(e.incumbentScore)) this.best = e.incumbentScore;
        this.print(
          `round ${e.round} done: incumbent ${formatScore(e.incumbentScore)}${e.moved ? " (moved)" : ""}${e.rewards.length ? `; rewards ${e.rewards.map((r) => (r === null ? "-" : r.toFixed(2))).join(" ")}` : ""}`,
        );
        break;
    }
  }

  end(): void {
    if (this.tty) this.out.write("\r\x1b[2K");
  }
}

/** After a run: how many model calls each role made and how many of them came from the cache, with a plain note
 * when every one did (a run on a shared cache that other runs filled measures nothing new). */
export function modelCallSummary(
  models: { role: string; calls: number; cache_hits: number }[],
  cache: { mode: string; path: string },
): string[] {
  const total = models.reduce((a, m) => a + m.calls, 0);
  const hits = models.reduce((a, m) => a + m.cache_hits, 0);
  const lines = [`  model calls  ${models.map((m) => `${m.role} ${m.calls} (${m.cache_hits} from the cache)`).join(", ")}`];
  if (cache.mode === "read-write" && total > 0 && hits === total)
    lines.push(
      `  note: every model call of this run was answered from the request cache ${cache.path}, which earlier runs filled; no model was asked anything. Run with --cache off to call the models afresh.`,
    );
  return lines;
}
