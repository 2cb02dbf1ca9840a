import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { invalidFirstAttemptsOf } from "../../src/loop/qa-measure.ts";
import { GreedyMonotonic, Trainer } from "../../src/loop/train.ts";
import { InvalidFirstAttempts, type Measurement, StrictPareto } from "../../src/method/criteria.ts";
import { PatchQueue } from "../../src/method/estimators.ts";
import type { QATask } from "../../src/task/qa/benchmarks.ts";
import { readJson, sendJson, sendWhole } from "../helpers/fake-chat.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { listenLoopback } from "../helpers/loopback.ts";

// `criterion.secondary: [invalid_first_attempts]` was accepted by train.yaml and StrictPareto, but nothing measured
// it: every task counted 0 on both sides, so the metric always tied and never decided an exact tie.
// harness-training (src/rollout/telemetry.py, metrics.py) counts, per rollout, the model replies that were no valid
// action at their first attempt (first_attempt_total − first_attempt_valid), over the tasks both runs measured
// without a crash, and calls the metric unavailable when it was not published.

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
 * An OpenAI-compatible endpoint that solves each question (the sum of its numbers). Under a system prompt without
 * "Answer at once", its first reply is a calculator call whose arguments are cut-off JSON (refused by the agent
 * loop: an invalid first attempt), then it answers; with it, it answers at the first reply.
 */
async function endpoint(): Promise<string> {
  let n = 0;
  const server = createServer(async (req, res) => {
    const body = await readJson(req);
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions") || !body)
      return sendJson(res, 404, { error: { message: "not found", type: "invalid_request_error", param: null, code: null } });
    const messages = body.messages as { role: string; content: string | null }[];
    const system = messages.find((m) => m.role === "system")?.content ?? "";
    const question = (messages.find((m) => m.role === "user")?.content ?? "").split("\n\n")[0] ?? "";
    const sum = (question.match(/\d+/g) ?? []).reduce((a, x) => a + Number(x), 0);
    const stumble = !system.includes("Answer at once") && !messages.some((m) => m.role === "tool");
    const call = stumble
      ? { name: "calculator", arguments: '{"expression": "1 +' }
      : { name: "final_answer", arguments: JSON.stringify({ answer: `#### ${sum}` }) };
    const id = `chatcmpl-${++n}`;
    sendWhole(res, {
      id,
      model: String(body.model),
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: `call_${createHash("sha256").update(id).digest("hex").slice(0, 24)}`, type: "function", function: call },
        ],
      },
      finish_reason: "tool_calls",
      usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
    });
  });
  const l = await listenLoopback(server);
  close = l.close;
  return l.url;
}

const PATCH = `diff --git a/prompt.md b/prompt.md
--- a/prompt.md
+++ b/prompt.md
@@ -1,2 +1,3 @@
+Answer at once.
 You solve one question. Think step by step, use the calculator for every arithmetic step, and finish by calling
 final_answer exactly once with your answer in the requested format.
`;

describe("invalid first attempts, measured", () => {
  it("counts refused tool calls and replies without one; a tool's own error is a valid action", () => {
    const ev = (type: string, iteration: number, extra: Record<string, unknown> = {}) => ({ type, iteration, ...extra });
    const events = [
      ev("model_call", 1),
      ev("assistant", 1, { tool_calls: [{ function: { name: "calculator" } }] }),
      ev("tool_result", 1, { error: true, refused: true }),
      ev("model_call", 2),
      ev("assistant", 2, { tool_calls: [{ function: { name: "calculator" } }] }),
      ev("tool_result", 2, { error: true }), // the calculator's own error
      ev("model_call", 3),
      ev("assistant", 3, { tool_calls: [] }),
      ev("model_call", 4),
      ev("assistant", 4, { tool_calls: [{}, {}] }),
      ev("tool_result", 4, { refused: true }),
      ev("tool_result", 4, { refused: true }),
    ];
    expect(invalidFirstAttemptsOf(events, false)).toBe(3);
    expect(invalidFirstAttemptsOf(events, true)).toBe(2); // a conversation: a text reply is an action
    expect(invalidFirstAttemptsOf([ev("message", 0)], false)).toBeUndefined();
  });

  it("is unavailable, not a tie at 0, when a side has none measured; unsolved tasks count", () => {
    const m = (commit: string, counts: (number | undefined)[], status: "solved" | "unsolved" = "unsolved"): Measurement => ({
      commit,
      tasks: Object.fromEntries(
        counts.map((n, i) => [
          `t${i}`,
          { status, score: 0, steps: 1, tokens: 1, ...(n === undefined ? {} : { invalidFirstAttempts: n }) },
        ]),
      ),
    });
    expect(InvalidFirstAttempts.value(m("a", [undefined, undefined]), ["t0", "t1"])).toBeUndefined();
    const v = new StrictPareto([InvalidFirstAttempts]).compare(m("c", [0, 0]), m("b", [2, 1]));
    expect(v.decision).toBe("promote");
  });

  it("hone train promotes a candidate that ties on solves and makes fewer invalid first attempts", async () => {
    const baseUrl = await endpoint();
    const optimizer = new GreedyMonotonic();
    const t = new Trainer({
      dir: join(tempDir(), "train"),
      seedHarness: join(ROOT, "harnesses", "qa"),
      panel: { benchmark: "gsm8k", tasks: panel },
      model: { model: "some-model", baseUrl, retry: { maxAttempts: 1 } },
      heldOut: { split: "test", tasks: [{ id: "h1", question: "Sam had 5 pens and got 9 more. How many?", gold: "14" }] },
      estimator: new PatchQueue([PATCH]),
      criterion: new StrictPareto([InvalidFirstAttempts]),
      optimizer,
      concurrency: 2,
    });
    const seen: { decision: string; reason: string; base: (number | undefined)[]; cand: (number | undefined)[] }[] = [];
    for await (const loss of t.epochs(1)) {
      seen.push({
        decision: loss.verdict.decision,
        reason: loss.verdict.reason,
        base: Object.values(loss.baseline.tasks).map((x) => x.invalidFirstAttempts),
        cand: Object.values(loss.measured.tasks).map((x) => x.invalidFirstAttempts),
      });
      loss.backward();
      optimizer.step();
    }
    // The promoted HEAD and the seed are each measured once on the held-out question.
    const held = t.summary().held_out;
    expect(held?.head?.commit).toBe(t.harness.data);
    expect(held?.seed.commit).not.toBe(t.harness.data);
    expect([held?.seed.solved, held?.head?.solved]).toEqual([1, 1]);
    expect(seen).toEqual([
      {
        decision: "promote",
        reason: "ties on solves and wins on invalid_first_attempts (0 against 2)",
        base: [1, 1],
        cand: [0, 0],
      },
    ]);
  });
});
