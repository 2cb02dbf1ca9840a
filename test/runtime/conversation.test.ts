import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import { solveTask } from "../../src/loop/qa-task.ts";
import { ResponseStore, withCache } from "../../src/model/cache.ts";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.ts";
import type { ChatModel } from "../../src/model/types.ts";
import { MemoryTrajectory, type TrajectoryEvent } from "../../src/store/trajectory.ts";
import { loadSplit, type QATask } from "../../src/task/qa/benchmarks.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

const FIXTURES = join(ROOT, "test", "fixtures", "datasets");
const TOOL_AGENT = join(ROOT, "harnesses", "tool-agent");
let offline: ResolvedModel;
let task: QATask;

beforeAll(async () => {
  offline = await resolveModel({ model: "offline" });
  task = (await loadSplit("tau-bench-retail", "test", { dir: FIXTURES }))[0]!;
});
afterAll(() => offline.close());

/** The events that say what happened, without the clock (latency, cache flags differ between a run and its replay). */
const story = (events: TrajectoryEvent[]) => events.map(({ latency_ms: _l, cached: _c, attempts: _a, ...e }) => e);

async function converse(model: ChatModel, userModel: ChatModel) {
  const trajectory = new MemoryTrajectory();
  const result = await solveTask(loadHarness(TOOL_AGENT), model, "tau-bench-retail", task, 3, trajectory, userModel);
  return { result, events: trajectory.events };
}

describe("a τ-bench retail task as a conversation on the offline model", () => {
  it("runs turn by turn between the tool agent and the simulated user, and is scored by τ-bench's reward", async () => {
    const { result, events } = await converse(offline.model, offline.model);
    expect(result.status).toBe("completed");
    const userTurns = events.filter((e) => e.type === "message" && e.source === "user");
    const userCalls = events.filter((e) => e.type === "model_call" && e.role === "user");
    const toolResults = events.filter((e) => e.type === "tool_result");
    expect(userTurns.length).toBeGreaterThanOrEqual(2);
    expect(userCalls.length).toBe(userTurns.length + 2); // the opening, each reply, and the stop token
    expect(toolResults.map((e) => e.name)).toEqual(expect.arrayContaining(["find_user_id_by_name_zip", "get_order_details"]));
    expect(toolResults.every((e) => e.error === false)).toBe(true);
    // The user ended it, so the reward is τ-bench's: the database compared with the gold actions' (never changed here).
    const reward = JSON.parse(result.answer ?? "{}");
    expect(reward).toMatchObject({ reward: 0, r_actions: false });
    expect(reward.gt_data_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(result.modelCalls).toBe(events.filter((e) => e.type === "model_call").length);
  });

  it("replays exactly from its records: every model call of agent and user answered by the cache alone", async () => {
    const store = new ResponseStore(join(tempDir(), "requests.db"));
    const record = (m: ChatModel) => withCache(m, { mode: "read-write", read: [store], write: [store] });
    const first = await converse(record(offline.model), record(offline.model));
    const refusing: ChatModel = {
      id: offline.model.id,
      wireBody: offline.model.wireBody?.bind(offline.model),
      complete: () => Promise.reject(new Error("a replay must not reach the endpoint")),
    };
    const replay = (m: ChatModel) => withCache(m, { mode: "replay", read: [store], write: [] });
    const again = await converse(replay(refusing), replay(refusing));
    store.close();
    expect(again.result.status).toBe("completed");
    expect(story(again.events)).toEqual(story(first.events));
    expect(again.result.answer).toBe(first.result.answer);
    expect(again.events.filter((e) => e.type === "model_call").every((e) => e.cached === true)).toBe(true);
  });

  it("runs only the first tool call of a reply, as τ-bench does, and passes arguments as written", async () => {
    const agent = scriptedModel([
      [
        { name: "get_order_details", arguments: '{"order_id": "#W2378156"}' },
        { name: "cancel_pending_order", arguments: '{"order_id": "#W2378156", "reason": "no longer needed"}' },
      ],
      [{ name: "transfer_to_human_agents", arguments: '{"summary": "done"}' }],
    ]);
    const { result, events } = await converse(agent, offline.model);
    const results = events.filter((e) => e.type === "tool_result");
    expect(results[0]?.output).toMatch(/^\{"order_id": "#W2378156"/);
    expect(results[1]?.output).toMatch(/one tool call per reply/);
    expect(results[2]?.output).toBe("Transfer successful");
    // The transfer ends the conversation (a terminating tool) and τ-bench's reward is computed.
    expect(JSON.parse(result.answer ?? "{}")).toHaveProperty("gt_data_hash");
  });
});

describe("hone eval on τ-bench (CLI)", () => {
  it("runs the tool agent with the offline model as the simulated user", async () => {
    const r = await hone([
      ...["eval", "--harness", "harnesses/tool-agent", "--benchmark", "tau-bench-retail", "--data-dir", FIXTURES],
      ...["--model", "offline", "--user-model", "offline", "--limit", "2"],
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/tool-agent on tau-bench-retail\/test: reward \d+\.\d% .* over 2 completed of 2/);
  });
});
