import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import type { HarnessSpec } from "../../src/harness/spec.ts";
import { extractProposals, propose } from "../../src/method/proposer.ts";
import type { ChatModel, ChatRequest } from "../../src/model/types.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, INITIAL_HARNESS, ROOT } from "../helpers/fixtures.ts";

const proposer = loadHarness(`${ROOT}/harnesses/proposer`);
const task = loadTaskFolder(CIRCLE_PACKING);
const incumbent = { harness: loadHarness(INITIAL_HARNESS), program: task.seedProgram, score: 0.96 };
const fenced = (v: unknown) => `Here you go.\n\`\`\`json\n${JSON.stringify(v)}\n\`\`\``;

function textModel(replies: string[]): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    id: "text",
    requests,
    async complete(r) {
      requests.push(r);
      const content = replies[requests.length - 1] ?? "";
      return {
        message: { content, tool_calls: [] },
        finish_reason: "stop",
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        latency_ms: 1,
        attempts: 1,
        model: "text",
      };
    },
  };
}
const accept = async (_spec: HarnessSpec) => [] as string[];

describe("proposal parsing", () => {
  it("takes the last ```json block, a bare array, or {proposals: [...]}", () => {
    expect(extractProposals('```json\n[1]\n```\nand\n```json\n[{"a":1}]\n```')).toEqual([{ a: 1 }]);
    expect(extractProposals('text [ {"b": 2} ] more')).toEqual([{ b: 2 }]);
    expect(extractProposals('```json\n{"proposals": [{"c": 3}]}\n```')).toEqual([{ c: 3 }]);
    expect(extractProposals("no json")).toMatch(/no JSON array/);
    expect(extractProposals("```json\n[1,\n```")).toMatch(/does not parse/);
  });
});

describe("propose: fail-closed with one repair", () => {
  const context = { task, incumbent, digest: "No experience yet.", round: 1, k: 3 };

  it("accepts valid specs without a repair call", async () => {
    const model = textModel([
      fenced([{ sampling: { temperature: 0.5 } }, { agent: { max_iterations: 30 } }, { system_prompt: "x" }]),
    ]);
    const out = await propose(model, proposer, context, accept, 1);
    expect(out.slots.map((s) => Boolean(s.spec))).toEqual([true, true, true]);
    expect(model.requests).toHaveLength(1);
    expect(out.slots.every((s) => !s.repaired)).toBe(true);
  });

  it("feeds every problem back once; a fixed slot is marked repaired, a still-broken one stays invalid", async () => {
    const model = textModel([
      fenced([{ sampling: { temperature: 9 } }, { agent: { max_iterations: 30 } }, { colour: "red" }]),
      fenced([{ sampling: { temperature: 0.9 } }, { colour: "blue" }]),
    ]);
    const out = await propose(model, proposer, context, accept, 1);
    expect(model.requests).toHaveLength(2);
    const repairPrompt = model.requests[1]?.messages.at(-1)?.content as string;
    expect(repairPrompt).toMatch(/proposal 1: sampling.temperature/);
    expect(repairPrompt).toMatch(/proposal 3: .*colour/);
    expect(out.slots[0]).toMatchObject({ repaired: true, spec: { sampling: { temperature: 0.9 } } });
    expect(out.slots[1]).toMatchObject({ repaired: false });
    expect(out.slots[2]?.spec).toBeUndefined();
    expect(out.slots[2]?.problems.join(" ")).toMatch(/repair: .*colour/);
  });

  it("treats missing slots and compile failures as invalid, never as the incumbent", async () => {
    const model = textModel([fenced([{ sampling: { temperature: 0.5 } }]), fenced([])]);
    const refuseHot = async (spec: HarnessSpec) => (spec.sampling?.temperature === 0.5 ? ["[gate] refused for the test"] : []);
    const out = await propose(model, proposer, context, refuseHot, 1);
    expect(out.slots.map((s) => s.spec)).toEqual([undefined, undefined, undefined]);
    expect(out.slots[0]?.problems[0]).toMatch(/refused for the test/);
    expect(out.slots[1]?.problems[0]).toMatch(/fewer proposals than asked/);
  });

  it("never shows the evaluator's source or the task's secrets to the proposer", async () => {
    const model = textModel([
      fenced([{ sampling: { temperature: 0.5 } }, { sampling: { temperature: 0.6 } }, { sampling: { temperature: 0.8 } }]),
    ]);
    await propose(model, proposer, context, accept, 1);
    const seen = JSON.stringify(model.requests[0]?.messages);
    expect(seen).not.toContain("def evaluate(program_path");
    expect(seen).toContain("Incumbent program");
  });
});
