import { describe, expect, it } from "vitest";
import { buildReport } from "../../src/compare/report.ts";
import { reportText } from "../../src/compare/text.ts";
import { cellRecord, identity } from "../compare/records.ts";

// A method given as a program (or an agent) asks its proposer as often as it likes within a round: with a budget of
// proposer tokens, `hone compare` checks the budget only between rounds, so such a cell spent 106,500 tokens of a
// 3,000 budget and was reported beside the others as if held to it. The report now says so.
const tokens = identity((id) => {
  id.budget = { unit: "proposer_tokens", size: 3000 };
});

describe("a cell that spent more than the budget", () => {
  it("is named in the notes with what it spent", () => {
    const report = buildReport([
      cellRecord({ method: "random", seed: 0, final: [0.5], identity: tokens, cost: { proposer_tokens: 0 } }),
      cellRecord({ method: "spender", seed: 0, final: [0.5], identity: tokens, cost: { proposer_tokens: 106_500 } }),
      cellRecord({ method: "tweak", seed: 0, final: [0.5], identity: tokens, cost: { proposer_tokens: 2944 } }),
    ]);
    const text = reportText(report);
    expect(text).toContain(
      "spent 106500 proposer_tokens a seed on average, more than the budget of 3000: its rounds were not held to the budget",
    );
    expect(text.match(/more than the budget of/g)).toHaveLength(1);
  });
});
