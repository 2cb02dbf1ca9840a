// StrictPareto's infra bracket against harness-training's rule (src/trainer/loss.py, StrictPareto.__call__): a
// verdict is unmeasurable only when counting the infrastructure failures solved or unsolved changes whether the
// candidate is promoted (`(pessimistic < 0) != (optimistic < 0)`), and infrastructure failures are never named as
// regressions. hone brackets the baseline's infrastructure failures too, so an outage while HEAD was measured does
// not promote the next candidate that answers those tasks.
import { describe, expect, it } from "vitest";
import { type Measurement, StrictPareto, type TaskStatus } from "../../src/method/criteria.ts";

const m = (statuses: TaskStatus[], steps = 1, tokens = 10): Measurement => ({
  commit: "x",
  tasks: Object.fromEntries(statuses.map((s, i) => [`t${i}`, { status: s, score: s === "solved" ? 1 : 0, steps, tokens }])),
});

describe("StrictPareto's infra bracket", () => {
  const c = new StrictPareto();

  it("rejects, not skips, a candidate that promotes neither way (harness-training: promotion decides)", () => {
    // Counted unsolved, the infra task is a regression (+inf); counted solved, an exact tie (0): no promotion either
    // way, so the verdict is a reject, and the epoch is not skipped toward the two-skip stop.
    const v = c.compare(m(["infra", "solved", "unsolved"]), m(["solved", "solved", "unsolved"]));
    expect(v.decision).toBe("reject");
    expect(v.report.regressions).toEqual([]);
    expect(v.reason).not.toMatch(/regressed on t0/);
    expect(v.reason).toMatch(/infrastructure/);
  });

  it("names only measured tasks as regressions when it rejects", () => {
    const v = c.compare(m(["infra", "unsolved", "solved"]), m(["solved", "solved", "solved"]));
    expect(v.decision).toBe("reject");
    expect(v.report.regressions).toEqual(["t1"]);
    expect(v.reason).toBe("regressed on t1");
  });

  it("does not promote on tasks the baseline lost to infrastructure", () => {
    // HEAD's measurement of t0 crashed; the candidate answers it and ties elsewhere. Counted solved at HEAD, nothing
    // is gained; counted unsolved, one more solve: the verdict depends on the failure.
    const v = c.compare(m(["solved", "solved", "unsolved"]), m(["infra", "solved", "unsolved"]));
    expect(v.decision).toBe("unmeasurable");
    expect(v.report.infra).toEqual(["t0"]);
  });

  it("promotes when the gain holds however the baseline's failures count", () => {
    const v = c.compare(m(["solved", "solved", "solved"]), m(["infra", "unsolved", "unsolved"]));
    expect(v.decision).toBe("promote");
    expect(v.loss).toBe(-2);
  });

  it("rejects a real regression whatever the baseline's failures", () => {
    const v = c.compare(m(["solved", "unsolved"]), m(["infra", "solved"]));
    expect(v.decision).toBe("reject");
    expect(v.reason).toBe("regressed on t1");
  });

  it("breaks ties on tasks both runs really solved, not on the steps of a run that crashed", () => {
    // The candidate's t0 crashed after 1 step (HEAD solved it in 10). Counted solved, a crash is no cheaper a
    // solution: the tie on t1 (5 steps each) stands, so the candidate promotes neither way and is rejected.
    const task = (status: TaskStatus, steps: number) => ({ status, score: status === "solved" ? 1 : 0, steps, tokens: 10 });
    const cand: Measurement = { commit: "c", tasks: { t0: task("infra", 1), t1: task("solved", 5) } };
    const base: Measurement = { commit: "b", tasks: { t0: task("solved", 10), t1: task("solved", 5) } };
    const v = c.compare(cand, base);
    expect(v.decision).toBe("reject");
  });
});
