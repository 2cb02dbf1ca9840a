import { pairedInterval } from "../measure/compare.ts";
import { signTestP } from "../measure/stats.ts";

/**
 * Criteria compare a candidate's measurement with the baseline's on the same panel and return a verdict.
 * StrictPareto follows harness-training: solved sets, any regression rejects, more solves promotes, exact ties go
 * to ordered secondary metrics, with the infra bracket. MeanWithConfidence promotes only when a paired bootstrap
 * interval of the per-task score difference excludes zero and the exact sign test over the tasks that differ agrees
 * at the same level, so a small panel does not promote noise: the percentile bootstrap alone is too narrow on a few
 * tasks (2 of 2 tasks gained gives [1, 1]; on noise it promoted 6.7% of the time on 2 tasks against the 2.5% meant).
 */
export type TaskStatus = "solved" | "unsolved" | "infra";

export interface TaskMeasurement {
  status: TaskStatus;
  /** Score in [0, 1] (1 for solved, 0 for unsolved, F1 and the like in between); the mean over trials. */
  score: number;
  steps: number;
  tokens: number;
  invalidFirstAttempts?: number;
}

export interface Measurement {
  commit: string;
  tasks: Record<string, TaskMeasurement>;
}

export type Decision = "promote" | "reject" | "unmeasurable";

export interface Verdict {
  decision: Decision;
  /** Negative promotes (GreedyMonotonic); +Infinity for a regression. */
  loss: number;
  reason: string;
  report: Record<string, unknown>;
}

export interface Criterion {
  compare(candidate: Measurement, baseline: Measurement): Verdict;
  describe(): string;
}

export interface SecondaryMetric {
  name: string;
  /**
   * Which tasks it compares: those both runs solved (the default, as harness-training's StepsUsed), or those both
   * runs measured without an infrastructure failure (as its InvalidFirstAttempts: unsolved tasks count too).
   */
  scope?: "solved" | "measured";
  /** Lower is better for all built-ins; undefined when not measured (the metric is then skipped, not a tie-break). */
  value(m: Measurement, tasks: string[]): number | undefined;
}

export const StepsUsed: SecondaryMetric = {
  name: "steps",
  value: (m, tasks) => tasks.reduce((a, t) => a + (m.tasks[t]?.steps ?? 0), 0),
};
export const TokensUsed: SecondaryMetric = {
  name: "tokens",
  value: (m, tasks) => tasks.reduce((a, t) => a + (m.tasks[t]?.tokens ?? 0), 0),
};
/**
 * Model replies that were no valid action at the first attempt, summed over the tasks both runs measured: an
 * absolute count, as harness-training's InvalidFirstAttemptsMetric (src/rollout/metrics.py). Unavailable when no
 * task in scope has it measured.
 */
export const InvalidFirstAttempts: SecondaryMetric = {
  name: "invalid_first_attempts",
  scope: "measured",
  value: (m, tasks) => {
    const counts = tasks.map((t) => m.tasks[t]?.invalidFirstAttempts).filter((n): n is number => n !== undefined);
    return counts.length ? counts.reduce((a, n) => a + n, 0) : undefined;
  },
};

export class StrictPareto implements Criterion {
  constructor(readonly secondary: SecondaryMetric[] = [StepsUsed, TokensUsed]) {}

  describe(): string {
    return `StrictPareto(solved sets; ties by ${this.secondary.map((s) => s.name).join(", ") || "nothing"})`;
  }

  /**
   * The loss with every task that failed for infrastructure reasons counted the worst way for the candidate
   * (`pessimistic`: its own infra tasks unsolved, the baseline's solved) or the best way (the reverse). The secondary
   * metrics compare the tasks both runs really solved, as harness-training's StepsUsed does.
   */
  private lossWith(
    c: Measurement,
    b: Measurement,
    tasks: string[],
    view: "pessimistic" | "optimistic",
  ): { loss: number; regressions: string[]; newSolves: string[]; decidedBy?: string } {
    const infraCounts = (isCandidate: boolean) => (view === "optimistic") === isCandidate;
    const solved = (m: Measurement, t: string, isCandidate: boolean) => {
      const s = m.tasks[t]?.status;
      return s === "solved" || (s === "infra" && infraCounts(isCandidate));
    };
    const regressions = tasks.filter((t) => solved(b, t, false) && !solved(c, t, true));
    const newSolves = tasks.filter((t) => !solved(b, t, false) && solved(c, t, true));
    if (regressions.length > 0) return { loss: Number.POSITIVE_INFINITY, regressions, newSolves };
    if (newSolves.length > 0) return { loss: -newSolves.length, regressions, newSolves };
    let loss = 0;
    let decidedBy: string | undefined;
    const both = tasks.filter((t) => c.tasks[t]?.status === "solved" && b.tasks[t]?.status === "solved");
    const measured = tasks.filter((t) => c.tasks[t]?.status !== "infra" && b.tasks[t]?.status !== "infra");
    this.secondary.forEach((metric, i) => {
      if (loss !== 0) return;
      const scope = metric.scope === "measured" ? measured : both;
      const x = metric.value(c, scope);
      const y = metric.value(b, scope);
      if (x === undefined || y === undefined || x === y) return;
      loss = (x < y ? -1 : 1) * 2 ** -(i + 1);
      decidedBy = `${metric.name} (${x} against ${y})`;
    });
    return { loss, regressions, newSolves, decidedBy };
  }

  /**
   * The infra bracket, after harness-training's StrictPareto: a task that failed for infrastructure reasons on
   * either side is counted both ways, and when that decides whether the candidate is promoted the verdict is
   * unmeasurable. When it does not, the pessimistic view stands, and only measured tasks are named as regressions.
   */
  compare(candidate: Measurement, baseline: Measurement): Verdict {
    const tasks = Object.keys(candidate.tasks).filter((t) => t in baseline.tasks);
    const isInfra = (t: string) => candidate.tasks[t]?.status === "infra" || baseline.tasks[t]?.status === "infra";
    const infra = tasks.filter(isInfra);
    const pessimistic = this.lossWith(candidate, baseline, tasks, "pessimistic");
    const optimistic = this.lossWith(candidate, baseline, tasks, "optimistic");
    const regressions = pessimistic.regressions.filter((t) => !isInfra(t));
    const report = { tasks: tasks.length, infra, regressions, new_solves: pessimistic.newSolves };
    const promotesAtWorst = pessimistic.loss < 0;
    const promotesAtBest = optimistic.loss < 0;
    if (infra.length > 0 && promotesAtWorst !== promotesAtBest) {
      return {
        decision: "unmeasurable",
        loss: Number.NaN,
        reason: `${infra.length} task(s) failed for infrastructure reasons and the verdict depends on them`,
        report: { ...report, new_solves: optimistic.newSolves },
      };
    }
    const loss = pessimistic.loss;
    if (loss === Number.POSITIVE_INFINITY)
      return {
        decision: "reject",
        loss,
        reason: regressions.length
          ? `regressed on ${regressions.join(", ")}`
          : `not promoted whichever way its ${infra.length} task(s) failed for infrastructure reasons count`,
        report,
      };
    if (loss < 0) {
      const why = pessimistic.newSolves.length
        ? `solves ${pessimistic.newSolves.length} more task(s)`
        : `ties on solves and wins on ${pessimistic.decidedBy}`;
      return { decision: "promote", loss, reason: why, report };
    }
    return {
      decision: "reject",
      loss,
      reason: loss === 0 ? "an exact tie" : `ties on solves and loses on ${pessimistic.decidedBy}`,
      report,
    };
  }
}

export class MeanWithConfidence implements Criterion {
  constructor(readonly opts: { confidence?: number; resamples?: number; seed?: number } = {}) {}

  describe(): string {
    return `MeanWithConfidence(paired bootstrap over tasks, ${((this.opts.confidence ?? 0.95) * 100).toFixed(0)}% interval must exclude 0, and the sign test agree)`;
  }

  /** The paired bootstrap interval of the mean per-task difference (candidate − baseline). */
  interval(diffs: number[]): [number, number] {
    return pairedInterval(diffs, this.opts);
  }

  compare(candidate: Measurement, baseline: Measurement): Verdict {
    const tasks = Object.keys(candidate.tasks).filter((t) => t in baseline.tasks);
    const infra = tasks.filter((t) => candidate.tasks[t]?.status === "infra" || baseline.tasks[t]?.status === "infra");
    const used = tasks.filter((t) => !infra.includes(t));
    if (used.length < 2)
      return {
        decision: "unmeasurable",
        loss: Number.NaN,
        reason: `only ${used.length} task(s) measured on both sides`,
        report: { tasks: tasks.length, infra },
      };
    const diffs = used.map((t) => (candidate.tasks[t]?.score ?? 0) - (baseline.tasks[t]?.score ?? 0));
    const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
    const [lo, hi] = this.interval(diffs);
    const gained = diffs.filter((d) => d > 0).length;
    const differ = diffs.filter((d) => d !== 0).length;
    const p = signTestP(gained, differ);
    const report = { tasks: used.length, infra, mean_difference: mean, interval: [lo, hi], sign_test_p: p };
    const level = 1 - (this.opts.confidence ?? 0.95);
    // The two-sided test agrees only when it is significant towards gains: more tasks lost than gained (a few large
    // gains over many small losses) is significant too, but against the candidate.
    if (lo > 0 && 2 * gained <= differ)
      return {
        decision: "reject",
        loss: -mean,
        reason: `the sign test disagrees: only ${gained} of ${differ} differing task(s) gained (p = ${p.toPrecision(3)}), though the mean rose`,
        report,
      };
    if (lo > 0 && p >= level)
      return {
        decision: "reject",
        loss: -mean,
        reason: `not significant: ${gained} of ${differ} differing task(s) gained, sign test p = ${p.toPrecision(3)} ≥ ${level.toPrecision(2)}`,
        report,
      };
    if (lo > 0)
      return {
        decision: "promote",
        loss: -mean,
        reason: `mean gain ${mean.toFixed(3)} with interval [${lo.toFixed(3)}, ${hi.toFixed(3)}] above 0`,
        report,
      };
    return {
      decision: "reject",
      loss: -mean,
      reason:
        hi < 0
          ? `worse: interval [${lo.toFixed(3)}, ${hi.toFixed(3)}] below 0`
          : `not significant: interval [${lo.toFixed(3)}, ${hi.toFixed(3)}] includes 0`,
      report,
    };
  }
}
