import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import type { HarnessSpec } from "../../src/harness/spec.ts";
import { extractProposals, proposerTaskOf, proposeSample } from "../../src/method/proposer.ts";
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

describe("proposeSample: one independent sample, fail-closed with one repair", () => {
  const context = { task: proposerTaskOf(task), incumbent, digest: "No experience yet.", round: 1 };
  const sample = { seed: 7, trial: 2 };

  it("accepts a valid spec without a repair call, and keeps exactly what was sent and answered", async () => {
    const answer = fenced([{ sampling: { temperature: 0.5 } }]);
    const model = textModel([answer]);
    const out = await proposeSample(model, proposer, context, accept, sample);
    expect(out.spec).toEqual({ sampling: { temperature: 0.5 } });
    expect(out.repaired).toBe(false);
    expect(model.requests).toHaveLength(1);
    expect(out.completion).toBe(answer);
    expect(out.messages).toEqual(model.requests[0]?.messages);
    expect(model.requests[0]).toMatchObject({ trial: 2, sampling: { seed: 7 } });
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/Write exactly 1 HarnessSpec for round 1/);
  });

  it("feeds the problems back once; a fixed sample is marked repaired, its first completion kept", async () => {
    const first = fenced([{ sampling: { temperature: 9 } }]);
    const model = textModel([first, fenced([{ sampling: { temperature: 0.9 } }])]);
    const out = await proposeSample(model, proposer, context, accept, sample);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(/rejected: sampling.temperature/);
    expect(out).toMatchObject({ repaired: true, spec: { sampling: { temperature: 0.9 } }, completion: first });
    expect(out.repairCompletion).toMatch(/0\.9/);
  });

  it("a still-broken repair leaves the sample without a spec, never the incumbent", async () => {
    const model = textModel([fenced([{ colour: "red" }]), fenced([{ colour: "blue" }])]);
    const out = await proposeSample(model, proposer, context, accept, sample);
    expect(out.spec).toBeUndefined();
    expect(out.problems.join(" ")).toMatch(/repair: .*colour/);
  });

  it("a gate refusal and an empty array are problems of the sample", async () => {
    const model = textModel([fenced([{ sampling: { temperature: 0.5 } }]), fenced([])]);
    const refuseHot = async (spec: HarnessSpec) => (spec.sampling?.temperature === 0.5 ? ["[gate] refused for the test"] : []);
    const out = await proposeSample(model, proposer, context, refuseHot, sample);
    expect(out.spec).toBeUndefined();
    expect(out.problems[0]).toMatch(/refused for the test/);
    expect(out.problems.join(" ")).toMatch(/repair: the array holds no proposal/);
  });

  it("appends a slot's diversity note to its own message only", async () => {
    const model = textModel([fenced([{ sampling: { temperature: 0.5 } }])]);
    await proposeSample(model, proposer, { ...context, slotNote: "## Exploration role: X" }, accept, sample);
    expect(model.requests[0]?.messages.at(-1)?.content).toMatch(/Exploration role: X$/);
  });

  it("never shows the evaluator's source, the reference value or the task's secrets to the proposer", async () => {
    const model = textModel([fenced([{ sampling: { temperature: 0.5 } }])]);
    await proposeSample(model, proposer, context, accept, sample);
    const seen = JSON.stringify(model.requests[0]?.messages);
    expect(seen).not.toContain("def evaluate(program_path");
    expect(seen).not.toContain("Best known value");
    expect(seen).toContain("Incumbent program");
    expect(task.reference?.value).toBeDefined();
    expect(seen).not.toContain(String(task.reference?.value));
  });

  it("tells the reference value only when the task allows it", async () => {
    const model = textModel([fenced([{ sampling: { temperature: 0.5 } }])]);
    const shown = proposerTaskOf({ ...task, showReference: true });
    await proposeSample(model, proposer, { ...context, task: shown }, accept, sample);
    expect(JSON.stringify(model.requests[0]?.messages)).toContain(`Best known value: ${task.reference?.value}`);
  });
});
