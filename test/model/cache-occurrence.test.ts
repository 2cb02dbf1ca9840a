import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { forScope, MemoryResponses, ResponseStore, withCache } from "../../src/model/cache.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { EvaluationRecords, evaluateIn, MemoryEvaluations, recordingEvaluator } from "../../src/task/recorded-evaluations.ts";
import { tempDir } from "../helpers/fixtures.ts";

const request: ChatRequest = { messages: [{ role: "user", content: "hi" }], sampling: { temperature: 1 } };

/** A model that answers the same request differently every time (a sampled model without a seed). */
function sampling(): ChatModel & { calls: number } {
  let n = 0;
  const wire = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, {});
  return {
    id: "m",
    get calls() {
      return n;
    },
    wireBody: (r) => wire.wireBody(r),
    async complete(): Promise<ChatResponse> {
      n++;
      return {
        message: { content: `draw ${n}`, tool_calls: [] },
        finish_reason: "stop",
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        latency_ms: 5,
        attempts: 1,
        model: "m",
      };
    },
  };
}

const text = async (m: ChatModel) => (await m.complete(request)).message.content;

describe("records keyed by content and occurrence", () => {
  it("the n-th identical request of a scope replays the n-th response, in each scope independently", async () => {
    const dir = tempDir();
    const own = new ResponseStore(join(dir, "run.db"));
    const live = withCache(sampling(), { mode: "off", read: [], write: [], record: own });
    const a = live.scoped("rollout-a");
    const b = live.scoped("rollout-b");
    const recorded = [await text(a), await text(b), await text(a), await text(a)];
    expect(recorded).toEqual(["draw 1", "draw 2", "draw 3", "draw 4"]);

    const replayStore = new ResponseStore(join(dir, "replay.db"));
    const inner = sampling();
    const replay = withCache(inner, { mode: "replay", read: [], write: [], record: replayStore, replayFrom: [own] });
    // Scopes replayed in another interleaving still get their own sequence.
    const ra = replay.scoped("rollout-a");
    const rb = replay.scoped("rollout-b");
    expect([await text(ra), await text(ra), await text(ra), await text(rb)]).toEqual(["draw 1", "draw 3", "draw 4", "draw 2"]);
    expect(inner.calls).toBe(0);
    await expect(ra.complete(request)).rejects.toThrow(/replay: this request was never recorded .*occurrence 3 in rollout-a/);
  });

  it("read-write mode on resume reuses the run's own responses by occurrence, and the shared cache by request", async () => {
    const dir = tempDir();
    const own = new MemoryResponses();
    const shared = new ResponseStore(join(dir, "shared.db"));
    const first = withCache(sampling(), { mode: "read-write", read: [shared], write: [shared], record: own }).scoped("s");
    expect([await text(first), await text(first)]).toEqual(["draw 1", "draw 1"]); // the shared cache answers the repeat
    expect(own.entries()).toHaveLength(2);
    const inner = sampling();
    const resumed = withCache(inner, { mode: "read-write", read: [], write: [], record: own }).scoped("s");
    expect([await text(resumed), await text(resumed)]).toEqual(["draw 1", "draw 1"]);
    expect(inner.calls).toBe(0);
  });

  it("forScope leaves a model without scopes as it is", () => {
    const m = sampling();
    expect(forScope(m, "x")).toBe(m);
  });
});

describe("recorded evaluations keyed by occurrence", () => {
  const noisy = () => {
    let n = 0;
    return async (): Promise<Evaluation> => ({ valid: true, score: ++n / 10, metrics: {}, artifacts: {}, seconds: 0 });
  };

  it("the n-th evaluation of a program in a scope replays the n-th result; a miss is an error, never a live call", async () => {
    const dir = tempDir();
    const own = new EvaluationRecords(join(dir, "run.db"));
    const live = recordingEvaluator(noisy(), "task", own);
    const r1 = live.scoped("r01-k0");
    const scores = [
      (await r1("p")).score,
      (await r1("p")).score,
      (await live.scoped("r01-k1")("p")).score,
      (await r1("q")).score,
    ];
    expect(scores).toEqual([0.1, 0.2, 0.3, 0.4]);

    let calls = 0;
    const replay = recordingEvaluator(
      async () => {
        calls++;
        return { valid: false, metrics: {}, artifacts: {}, seconds: 0 };
      },
      "task",
      new MemoryEvaluations(),
      [own],
    );
    const k1 = evaluateIn(replay, "r01-k1");
    const k0 = evaluateIn(replay, "r01-k0");
    expect([(await k1("p")).score, (await k0("q")).score, (await k0("p")).score, (await k0("p")).score]).toEqual([
      0.3, 0.4, 0.1, 0.2,
    ]);
    await expect(k0("p")).rejects.toThrow(/replay: this evaluation was never recorded \(evaluation 2 of a program in r01-k0\)/);
    expect(calls).toBe(0);
    own.close();
  });

  it("a re-run of a scope (after a kill) replaces what the killed attempt recorded", async () => {
    const own = new MemoryEvaluations();
    const first = recordingEvaluator(noisy(), "task", own);
    await first.scoped("r01-k0")("p");
    const second = recordingEvaluator(
      async () => ({ valid: true, score: 9, metrics: {}, artifacts: {}, seconds: 0 }),
      "task",
      own,
    );
    await second.scoped("r01-k0")("p");
    const replay = recordingEvaluator(noisy(), "task", new MemoryEvaluations(), [own]);
    expect((await replay.scoped("r01-k0")("p")).score).toBe(9);
  });
});
