import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import { DEFAULT_PROPOSER_HARNESS } from "../../src/loop/optimize-config.ts";
import { runReceipt } from "../../src/loop/receipt.ts";
import { GreedyMonotonic, Trainer } from "../../src/loop/train.ts";
import { StrictPareto } from "../../src/method/criteria.ts";
import { LLMEstimator } from "../../src/method/estimators.ts";
import type { ChatModel, ChatResponse } from "../../src/model/types.ts";
import { openDb } from "../../src/store/db.ts";
import type { QATask } from "../../src/task/qa/benchmarks.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// A train run's receipt named the proposer model with "0 calls, 0 prompt + 0 completion tokens" however many calls
// the LLM estimator made: its calls were never recorded, so any token or cost total left the proposer out.
// harness-training's estimator runs are part of what an epoch costs; optimize records its proposer calls per round.

describe("hone train records the proposer's model calls", () => {
  it("the receipt counts one proposer call per epoch of the offline LLM estimator", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-proposer-");
    const data = join(ROOT, "test", "fixtures", "datasets");
    write(
      join(cwd, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 2, data_dir: ${data}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\nout: run\n`,
    );
    const r = await hone(["train", "--config", "train.yaml", "--epochs", "2", "--json"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const receipt = runReceipt(join(cwd, "run"));
    const proposer = receipt.models.find((m) => m.role === "proposer");
    expect(proposer?.calls).toBe(2);
    expect(proposer?.prompt_tokens).toBeGreaterThan(0);
    expect(proposer?.completion_tokens).toBeGreaterThan(0);
    const db = openDb(join(cwd, "run", "hone.db"), { readonly: true });
    const rounds = db
      .prepare("SELECT round FROM model_calls WHERE role = 'proposer' ORDER BY round")
      .all()
      .map((x) => (x as { round: number }).round);
    db.close();
    expect(rounds).toEqual([1, 2]);
  });

  it("a proposal that fails (and its repair) still counts both calls, on the skipped epoch", async () => {
    let n = 0;
    // A model endpoint is outside hone: this one answers every request with text that holds no proposal.
    const model: ChatModel = {
      id: "fake-proposer",
      complete: async (): Promise<ChatResponse> => {
        n++;
        return {
          message: { content: "I would rather not propose anything.", tool_calls: [] },
          finish_reason: "stop",
          usage: { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 },
          latency_ms: 3,
          attempts: 1,
          model: "fake-proposer",
        };
      },
    };
    const panel: QATask[] = [{ id: "q1", question: "Ann has 3 apples and buys 4 more. How many?", gold: "7" }];
    const task = {
      kind: "qa" as const,
      id: "gsm8k-panel",
      description: "Answer gsm8k questions",
      metric: "accuracy",
      direction: "maximize" as const,
      measuredBy: "once",
    };
    const estimator = new LLMEstimator(model, loadHarness(DEFAULT_PROPOSER_HARNESS), (d) => loadHarness(d), task);
    const optimizer = new GreedyMonotonic();
    const dir = join(tempDir(), "train");
    const t = new Trainer({
      dir,
      seedHarness: join(ROOT, "harnesses", "qa"),
      panel: { benchmark: "gsm8k", tasks: panel },
      model: { model: "offline" },
      estimator,
      criterion: new StrictPareto(),
      optimizer,
      concurrency: 1,
    });
    const run = async () => {
      for await (const loss of t.epochs(1)) {
        loss.backward();
        optimizer.step();
      }
    };
    await run();
    expect(n).toBe(2);
    const proposer = runReceipt(dir).models.find((m) => m.role === "proposer");
    expect(proposer).toMatchObject({ calls: 2, prompt_tokens: 200, completion_tokens: 14 });
    expect(t.summary().skipped[0]?.reason).toMatch(/invalid_candidate/);
  });
});
