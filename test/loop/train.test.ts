import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GreedyMonotonic, Trainer } from "../../src/loop/train.ts";
import { StrictPareto } from "../../src/method/criteria.ts";
import { AgentCliEstimator, PatchQueue } from "../../src/method/estimators.ts";
import { HarnessRepo } from "../../src/store/git.ts";
import type { QATask } from "../../src/task/qa/benchmarks.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { eventually, running } from "../helpers/processes.ts";

// Three questions whose answer is the sum of their numbers: the offline solver's "sum" strategy solves them all,
// its default "last" strategy none.
const panel: QATask[] = [
  { id: "q1", question: "Ann has 3 apples and buys 4 more. How many?", gold: "7" },
  { id: "q2", question: "A box holds 10 pens and another 5. How many pens?", gold: "15" },
  { id: "q3", question: "Tom ran 2 km, then 6 km. How far?", gold: "8" },
];
const strategy = (to: string, from = "last") =>
  `diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -2,3 +2,3 @@\n final_answer exactly once with your answer in the requested format.\n \n-hone-hint: qa_strategy=${from}\n+hone-hint: qa_strategy=${to}\n`;

function trainer(patches: string[], extra: Partial<ConstructorParameters<typeof Trainer>[0]> = {}) {
  const optimizer = new GreedyMonotonic();
  const t = new Trainer({
    dir: join(tempDir(), "train"),
    seedHarness: join(ROOT, "harnesses", "qa"),
    panel: { benchmark: "gsm8k", tasks: panel },
    model: { model: "offline" },
    estimator: new PatchQueue(patches),
    criterion: new StrictPareto(),
    optimizer,
    concurrency: 3,
    ...extra,
  });
  return { t, optimizer };
}

describe("Trainer / Loss / Optimizer contracts", () => {
  it("promotes by fast-forward and keeps every rejected candidate in git", async () => {
    const { t, optimizer } = trainer([strategy("sum"), strategy("product", "sum")]);
    const seen: { decision: string; promoted: boolean }[] = [];
    const heads: string[] = [];
    for await (const loss of t.epochs(2)) {
      loss.backward();
      optimizer.step();
      seen.push({ decision: loss.verdict.decision, promoted: loss.promoted });
      heads.push(t.harness.data);
    }
    expect(seen).toEqual([
      { decision: "promote", promoted: true },
      { decision: "reject", promoted: false },
    ]);
    const repo = t.repo;
    expect(repo.resolve("refs/heads/main")).toBe(heads[0]);
    expect(repo.resolve("refs/candidates/epoch-02")).toBeDefined();
    expect(repo.isAncestor(repo.resolve("refs/candidates/epoch-00") as string, heads[0] as string)).toBe(true);
    expect(readFileSync(join(t.headDir(), "prompt.md"), "utf8")).toContain("qa_strategy=sum");
  });

  it("fails loudly when backward() is forgotten", async () => {
    const { t } = trainer([strategy("sum")]);
    const run = async () => {
      for await (const _loss of t.epochs(1)) {
        // neither backward nor step
      }
    };
    await expect(run()).rejects.toThrow(/epoch 1 ended without loss.backward\(\)/);
  });

  it("fails loudly when step() is forgotten", async () => {
    const { t } = trainer([strategy("sum")]);
    const run = async () => {
      for await (const loss of t.epochs(1)) loss.backward();
    };
    await expect(run()).rejects.toThrow(/ended without optimizer.step\(\)/);
  });

  it("refuses backward() twice, step() twice, step() without backward(), and promoted before step()", async () => {
    const { t, optimizer } = trainer([strategy("sum")]);
    for await (const loss of t.epochs(1)) {
      expect(() => optimizer.step()).toThrow(/without loss.backward/);
      expect(() => loss.promoted).toThrow(/only after optimizer.step/);
      loss.backward();
      expect(() => loss.backward()).toThrow(/twice/);
      optimizer.step();
      expect(() => optimizer.step()).toThrow(/without loss.backward|twice/);
    }
  });

  it("refuses a stale verdict", async () => {
    const { t, optimizer } = trainer([strategy("sum"), strategy("product", "sum")]);
    let first: { backward(): void } | undefined;
    const run = async () => {
      for await (const loss of t.epochs(2)) {
        if (!first) {
          first = loss;
          loss.backward();
          optimizer.step();
        } else first.backward();
      }
    };
    await expect(run()).rejects.toThrow(/twice|stale/);
  });

  it("stops with a clear reason after two skipped epochs in a row", async () => {
    const { t, optimizer } = trainer([]);
    const run = async () => {
      for await (const loss of t.epochs(3)) {
        loss.backward();
        optimizer.step();
      }
    };
    await expect(run()).rejects.toThrow(/two epochs in a row were skipped \(last: no_candidate/);
  });

  it("refuses a candidate outside the patch surface", async () => {
    const { t, optimizer } = trainer([strategy("sum"), strategy("sum")], { patchSurface: ["skills/**"] });
    const run = async () => {
      for await (const loss of t.epochs(2)) {
        loss.backward();
        optimizer.step();
      }
    };
    await expect(run()).rejects.toThrow(/outside the patch surface: prompt.md/);
  });

  it("the agent-CLI estimator runs a configured command in the candidate's folder", async () => {
    const agent = join(tempDir(), "agent.sh");
    write(
      agent,
      `#!/bin/sh\nsed -i 's/qa_strategy=last/qa_strategy=sum/' prompt.md\necho "switched to sum at epoch $HONE_EPOCH"\n`,
    );
    const optimizer = new GreedyMonotonic();
    const t = new Trainer({
      dir: join(tempDir(), "train"),
      seedHarness: join(ROOT, "harnesses", "qa"),
      panel: { benchmark: "gsm8k", tasks: panel },
      model: { model: "offline" },
      estimator: new AgentCliEstimator(`sh ${agent}`),
      criterion: new StrictPareto(),
      optimizer,
    });
    for await (const loss of t.epochs(1)) {
      loss.backward();
      optimizer.step();
      expect(loss.promoted).toBe(true);
    }
    expect(new HarnessRepo(join(t.headDir(), "..", "..", "harnesses.git")).show(t.harness.data, "prompt.md")).toContain(
      "qa_strategy=sum",
    );
  });

  it("the agent-CLI estimator kills an agent past its timeout with every process it started", async () => {
    const dir = tempDir();
    const pidFile = join(dir, "helper.pid");
    const estimator = new AgentCliEstimator(`sleep 60 & echo $! > ${pidFile}; sleep 60`, 1);
    const ctx = { epoch: 1, incumbentDir: dir, candidateDir: dir, panelDescription: "4 gsm8k questions" };
    await expect(estimator.propose(ctx)).rejects.toThrow(
      "the agent command ran past its timeout (1 s); it was killed with every process it started",
    );
    const helper = Number(readFileSync(pidFile, "utf8"));
    expect(await eventually(() => !running(helper), 5000)).toBe(true);
  });
});
