import { describe, expect, it } from "vitest";
import { type GroupSlot, groupAdvantages, REWARD_MIN, softCapReward } from "../../src/method/reward.ts";

// --paired: a valid proposal whose candidate rollout gave no score is charged −1 but is not "credited": SAH's paired
// rule (`compute_task_group_paired`, gray311/Self_Adapt_Harness d76caa7) keys the range, the tie collapse and the
// zero-signal test on `attribution_valid`, not on proposal validity. Every expected number below came from running
// SAH's own compute_task_group_paired over scratch rollout/control folders holding these scores (control 1 for
// every slot unless noted, ceiling 2), outside the repository.
type Case = { status: "valid" | "repaired" | "invalid"; score: number | null; control?: number };
const group = (cases: Case[], withMeasured = true) =>
  groupAdvantages(
    cases.map((c): GroupSlot => {
      const valid = c.status !== "invalid";
      const reward = valid ? softCapReward(c.score ?? undefined, c.control ?? 1, 2, "maximize") : REWARD_MIN;
      return { reward, valid, repaired: c.status === "repaired", ...(withMeasured ? { measured: c.score !== null } : {}) };
    }),
  );
const close = (actual: number[], expected: number[]) => {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((x, i) => {
    expect(x).toBeCloseTo(expected[i] as number, 12);
  });
};

describe("HarnessTTT paired advantages: an unmeasured rollout does not enter the range", () => {
  it("a failed candidate rollout does not flatten the sharpening toward the best (τ from the measured 1.5, 1.6)", () => {
    const g = group([
      { status: "valid", score: 1.5 },
      { status: "valid", score: 1.6 },
      { status: "valid", score: null },
    ]);
    close(g.rewards, [0.4954212387738881, 0.5921259606747122, -1.0]);
    close(g.advantages, [0.3949466438941998, 0.7856948759128103, -1.1806415198070102]);
    expect(g.tau).toBeCloseTo((0.5921259606747122 - 0.4954212387738881) / 4, 12);
    // Unpaired (measured not given), SAH's v2 rule stands: the failed rollout's −1 counts in the range.
    const unpaired = group(
      [
        { status: "valid", score: 1.5 },
        { status: "valid", score: 1.6 },
        { status: "valid", score: null },
      ],
      false,
    );
    expect(unpaired.tau).toBeCloseTo((0.5921259606747122 + 1) / 4, 12);
  });
  it("measured rewards within 1e-3 collapse to their mean although a failed rollout widens the raw range", () => {
    const g = group([
      { status: "valid", score: 1.5 },
      { status: "valid", score: 1.5004 },
      { status: "valid", score: null },
    ]);
    close(g.rewards, [0.49561578021798514, 0.49561578021798514, -1.0]);
    close(g.advantages, [0.5734655230762948, 0.5734655230762948, -1.1469310461525897]);
  });
  it("with a slot that matched its own control (control 1.9, reward 0), and with repaired and invalid slots", () => {
    const g = group([
      { status: "valid", score: 1.5 },
      { status: "valid", score: 1.5004 },
      { status: "valid", score: null },
      { status: "valid", score: 1.9, control: 1.9 },
    ]);
    close(g.rewards, [0.4954212387738881, 0.49581032166208217, -1.0, 0.0]);
    close(g.advantages, [0.537842095807584, 0.5386718035388462, -1.006286509205951, -0.0702273901404794]);
    const mixed = group([
      { status: "valid", score: 1.5 },
      { status: "repaired", score: 1.9 },
      { status: "valid", score: null },
      { status: "invalid", score: null },
    ]);
    close(mixed.rewards, [0.4954212387738881, -1.0, -1.0, -1.0]);
    close(mixed.advantages, [1.2561693652899761, -0.4187231217633254, -0.4187231217633254, -0.4187231217633254]);
  });
});

describe("optimize's paired round passes whether each slot's rollout gave a score (slotRewards)", () => {
  it("a failed candidate rollout is charged and left out of the range", async () => {
    const { slotRewards } = await import("../../src/loop/optimize-rewards.ts");
    const slots = [
      { status: "valid", score: 1.5, baseline: 1, measured: true },
      { status: "valid", score: 1.6, baseline: 1, measured: true },
      { status: "valid", score: undefined, baseline: 1, measured: false },
    ];
    const credit = slotRewards(slots, 2, "maximize");
    close(credit.advantages as number[], [0.3949466438941998, 0.7856948759128103, -1.1806415198070102]);
  });
});
