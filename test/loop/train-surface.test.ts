import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GreedyMonotonic, Trainer } from "../../src/loop/train.ts";
import { StrictPareto } from "../../src/method/criteria.ts";
import { PatchQueue } from "../../src/method/estimators.ts";
import type { QATask } from "../../src/task/qa/benchmarks.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// patch_surface globs: `?` is one character of a name, as in a shell. It went into the regular expression as a
// quantifier, so `prompt?md` allowed "prompmd" and "promptmd" but refused the prompt.md it names.

const panel: QATask[] = [{ id: "q1", question: "Ann has 3 apples and buys 4 more. How many?", gold: "7" }];
const toSum =
  "diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -2,3 +2,3 @@\n final_answer exactly once with your answer in the requested format.\n \n-hone-hint: qa_strategy=last\n+hone-hint: qa_strategy=sum\n";

async function firstEpoch(patchSurface: string[]): Promise<string[]> {
  const optimizer = new GreedyMonotonic();
  const skips: string[] = [];
  const t = new Trainer({
    dir: join(tempDir(), "train"),
    seedHarness: join(ROOT, "harnesses", "qa"),
    panel: { benchmark: "gsm8k", tasks: panel },
    model: { model: "offline" },
    estimator: new PatchQueue([toSum]),
    criterion: new StrictPareto(),
    optimizer,
    patchSurface,
    onEvent: (e) => {
      if (e.type === "skip") skips.push(String(e.reason));
    },
  });
  for await (const loss of t.epochs(1)) {
    loss.backward();
    optimizer.step();
  }
  return skips;
}

describe("the patch surface's globs", () => {
  it("reads ? as one character of a name", async () => {
    expect(await firstEpoch(["prompt?md"])).toEqual([]);
  });
  it("still refuses a file no pattern names", async () => {
    expect(await firstEpoch(["prompt?"])).toEqual(["invalid_candidate: changes files outside the patch surface: prompt.md"]);
  });
});
