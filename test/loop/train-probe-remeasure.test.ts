import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GreedyMonotonic, Trainer } from "../../src/loop/train.ts";
import { StrictPareto } from "../../src/method/criteria.ts";
import { PatchQueue } from "../../src/method/estimators.ts";
import { openDb } from "../../src/store/db.ts";
import type { QATask } from "../../src/task/qa/benchmarks.ts";
import { readJson, sendJson, sendWhole } from "../helpers/fake-chat.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { listenLoopback } from "../helpers/loopback.ts";

// A candidate whose measurement lost a task to one endpoint failure (a 500) got an unmeasurable verdict and its
// epoch was skipped (two such in a row stop the run). harness-training's trainer (src/trainer/trainer.py, "Re-measure
// once") measures the candidate again when a verdict is unmeasurable, and skips only when the second is too.

const panel: QATask[] = [
  { id: "q1", question: "Ann has 3 apples and buys 4 more. How many?", gold: "7" },
  { id: "q2", question: "Tom ran 2 km, then 6 km. How far?", gold: "8" },
];

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/**
 * An OpenAI-compatible endpoint: under a system prompt without "Answer well" it gets q2 wrong; with it, it solves
 * both, but its first `failures` requests about q2 get a 500.
 */
async function endpoint(failures: number): Promise<{ url: string; requests: () => number }> {
  let n = 0;
  let failed = 0;
  const server = createServer(async (req, res) => {
    const body = await readJson(req);
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions") || !body)
      return sendJson(res, 404, { error: { message: "not found", type: "invalid_request_error", param: null, code: null } });
    n++;
    const messages = body.messages as { role: string; content: string | null }[];
    const good = (messages.find((m) => m.role === "system")?.content ?? "").includes("Answer well");
    const question = (messages.find((m) => m.role === "user")?.content ?? "").split("\n\n")[0] ?? "";
    if (good && question.startsWith("Tom") && failed < failures) {
      failed++;
      return sendJson(res, 500, { error: { message: "The server had an error", type: "server_error", param: null, code: null } });
    }
    const sum = (question.match(/\d+/g) ?? []).reduce((a, x) => a + Number(x), 0);
    const answer = good || !question.startsWith("Tom") ? sum : sum + 1;
    const id = `chatcmpl-${n}`;
    sendWhole(res, {
      id,
      model: String(body.model),
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: `call_${createHash("sha256").update(id).digest("hex").slice(0, 24)}`,
            type: "function",
            function: { name: "final_answer", arguments: JSON.stringify({ answer: `#### ${answer}` }) },
          },
        ],
      },
      finish_reason: "tool_calls",
      usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
    });
  });
  const l = await listenLoopback(server);
  close = l.close;
  return { url: l.url, requests: () => n };
}

const PATCH = `diff --git a/prompt.md b/prompt.md
--- a/prompt.md
+++ b/prompt.md
@@ -1,2 +1,3 @@
+Answer well.
 You solve one question. Think step by step, use the calculator for every arithmetic step, and finish by calling
 final_answer exactly once with your answer in the requested format.
`;

function trainer(dir: string, baseUrl: string, resume = false) {
  const optimizer = new GreedyMonotonic();
  const t = new Trainer({
    dir,
    seedHarness: join(ROOT, "harnesses", "qa"),
    panel: { benchmark: "gsm8k", tasks: panel },
    model: { model: "some-model", baseUrl, retry: { maxAttempts: 1 } },
    estimator: new PatchQueue([PATCH]),
    criterion: new StrictPareto(),
    optimizer,
    concurrency: 1,
    resume,
  });
  return { t, optimizer };
}

async function train(t: Trainer, optimizer: GreedyMonotonic, epochs: number) {
  const verdicts: string[] = [];
  for await (const loss of t.epochs(epochs)) {
    verdicts.push(`${loss.verdict.decision}: ${loss.verdict.reason}`);
    loss.backward();
    optimizer.step();
  }
  return verdicts;
}

describe("hone train re-measures a candidate once when its verdict is unmeasurable", () => {
  it("a task lost to one endpoint failure is measured again and the candidate judged on it", async () => {
    const e = await endpoint(1);
    const dir = join(tempDir(), "train");
    const { t, optimizer } = trainer(dir, e.url);
    expect(await train(t, optimizer, 1)).toEqual(["promote: solves 1 more task(s)"]);
    const summary = t.summary();
    expect(summary.skipped).toEqual([]);
    expect(summary.epochs).toMatchObject([{ epoch: 1, promoted: true, baseline_solved: 1, candidate_solved: 2 }]);

    // The re-measure is on record: a resumed run reads the same candidate results and runs nothing again.
    const before = e.requests();
    const again = trainer(dir, e.url, true);
    expect(await train(again.t, again.optimizer, 1)).toEqual([]);
    expect(e.requests()).toBe(before);
    expect(again.t.harness.data).toBe(t.harness.data);
    const db = openDb(join(dir, "hone.db"), { readonly: true });
    const ids = db.prepare("SELECT id, tasks, solved, infra FROM measurements ORDER BY id").all();
    db.close();
    expect(ids).toEqual([
      { id: "epoch-00", tasks: 2, solved: 1, infra: 0 },
      { id: "epoch-01", tasks: 2, solved: 1, infra: 1 },
      { id: "epoch-01-retry", tasks: 1, solved: 1, infra: 0 },
    ]);
  });

  it("a second failure skips the epoch, once re-measured, not more", async () => {
    const e = await endpoint(2);
    const dir = join(tempDir(), "train");
    const { t, optimizer } = trainer(dir, e.url);
    expect(await train(t, optimizer, 1)).toEqual([]);
    expect(t.summary().skipped).toMatchObject([{ epoch: 1, reason: expect.stringMatching(/^measurement: 1 task\(s\) failed/) }]);
    const db = openDb(join(dir, "hone.db"), { readonly: true });
    const retry = db.prepare("SELECT tasks, infra, status FROM measurements WHERE id = 'epoch-01-retry'").get();
    db.close();
    expect(retry).toEqual({ tasks: 1, infra: 1, status: "finished" });
  });
});
