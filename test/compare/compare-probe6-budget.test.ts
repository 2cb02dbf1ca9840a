import { describe, expect, it } from "vitest";
import { buildReport } from "../../src/compare/report.ts";
import { reportText } from "../../src/compare/text.ts";
import { cellRecord, identity } from "./records.ts";

// A budget of seconds (or tokens) is checked between rounds, so one seed can run past it; averaged with a seed that
// spent little, the cell's mean stays within the budget and the report said nothing of the seed that overran.
const seconds = identity((id) => {
  id.budget = { unit: "seconds", size: 20 };
});

describe("a seed past the budget, hidden by the cell's mean", () => {
  const report = buildReport([
    cellRecord({ method: "random", seed: 0, final: [0.5], identity: seconds, cost: { seconds: 10 } }),
    cellRecord({ method: "random", seed: 1, final: [0.5], identity: seconds, cost: { seconds: 12 } }),
    cellRecord({ method: "agent", seed: 0, final: [0.9], identity: seconds, cost: { seconds: 34.5 } }),
    cellRecord({ method: "agent", seed: 1, final: [0.8], identity: seconds, cost: { seconds: 2 } }),
  ]);

  it("lists the seed and what it spent in the cell's summary", () => {
    const agent = report.cells.find((c) => c.method === "agent");
    expect(agent?.cost.seconds).toBeCloseTo(18.25);
    expect(agent?.over_budget).toEqual([{ seed: 0, spent: 34.5 }]);
    expect(report.cells.find((c) => c.method === "random")?.over_budget).toEqual([]);
  });

  it("names it in the notes", () => {
    const text = reportText(report);
    expect(text).toContain(
      "gsm8k-slice+qa+agent: seed 0 (34.5) spent more seconds than the budget of 20: its rounds were not held to the budget",
    );
    expect(text.match(/than the budget of/g)).toHaveLength(1);
  });
});
