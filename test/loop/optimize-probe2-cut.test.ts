import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import { SPEC_LIMITS } from "../../src/harness/spec.ts";
import { describeHarness, extractProposals, proposerTaskOf, proposeSample } from "../../src/method/proposer.ts";
import type { ChatModel, ChatRequest } from "../../src/model/types.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, copyOf, INITIAL_HARNESS, ROOT } from "../helpers/fixtures.ts";

// A real proposer that writes a long spec (a whole system prompt and a tool's code) meets its max_tokens (8192 in
// harnesses/proposer) and the endpoint ends the answer with finish_reason "length", its JSON unclosed. The repair
// request said only "the JSON does not parse: Unexpected end of JSON input" (as if the proposer had written bad JSON),
// so the repair wrote the same long spec and was cut again; the records did not say why either.

/** A proposer endpoint's answers in order, each with its finish_reason. */
function answers(replies: { content: string; finish: string }[]): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    id: "scripted-finish",
    requests,
    async complete(r) {
      requests.push(structuredClone(r));
      const reply = replies[Math.min(requests.length - 1, replies.length - 1)] ?? { content: "", finish: "stop" };
      return {
        message: { content: reply.content, tool_calls: [] },
        finish_reason: reply.finish,
        usage: { prompt_tokens: 1, completion_tokens: 8192, total_tokens: 8193 },
        latency_ms: 1,
        attempts: 1,
        model: "scripted-finish",
      };
    },
  };
}

const context = () => {
  const task = loadTaskFolder(CIRCLE_PACKING);
  return {
    task: proposerTaskOf(task),
    incumbent: { harness: loadHarness(INITIAL_HARNESS), program: task.seedProgram, score: 0.96 },
    digest: "No experience yet.",
    round: 1,
  };
};
const CUT = `I will rewrite the prompt.\n\`\`\`json\n[{"system_prompt": "${"Place the circles on a hexagonal lattice, then relax. ".repeat(40)}`;
const lastUser = (r: ChatRequest) => String(r.messages[r.messages.length - 1]?.content ?? "");

describe("a proposer answer cut at max_tokens", () => {
  it("is said to be cut, with the limit, in the repair request and in the slot's problems", async () => {
    const model = answers([
      { content: CUT, finish: "length" },
      { content: CUT, finish: "length" },
    ]);
    const proposer = loadHarness(`${ROOT}/harnesses/proposer`);
    const sample = await proposeSample(model, proposer, context(), async () => [], { seed: 1, trial: 0 });
    expect(model.requests).toHaveLength(2);
    const limit = proposer.sampling.max_tokens;
    expect(limit).toBe(8192);
    expect(lastUser(model.requests[1] as ChatRequest)).toMatch(
      /^Your proposal was rejected: the answer was cut at its max_tokens \(8192\) before it ended: write a shorter spec; the JSON does not parse: /,
    );
    expect(sample.spec).toBeUndefined();
    expect(sample.problems[0]).toMatch(/^the answer was cut at its max_tokens \(8192\)/);
    expect(sample.problems).toContain(
      "repair: the answer was cut at its max_tokens (8192) before it ended: write a shorter spec",
    );
  });

  it("an answer that ended by itself with bad JSON is not said to be cut", async () => {
    const model = answers([
      { content: '```json\n[{"system_prompt": ]\n```', finish: "stop" },
      { content: "no", finish: "stop" },
    ]);
    const sample = await proposeSample(model, loadHarness(`${ROOT}/harnesses/proposer`), context(), async () => [], {
      seed: 1,
      trial: 0,
    });
    expect(sample.problems.join("\n")).not.toMatch(/cut at/);
    expect(lastUser(model.requests[1] as ChatRequest)).toMatch(/^Your proposal was rejected: the JSON does not parse/);
  });
});

// A model that stops after its JSON leaves the ```json block unclosed; CommonMark reads such a block to the end of the
// answer. The fence reader drops it, and the fallback took the outermost [...] of the whole answer, which began in
// the code example written before it: the proposal was refused as bad JSON.
describe("a ```json block the answer never closes", () => {
  it("is read to the end of the answer, after a code example", () => {
    const spec = { sampling: { temperature: 0.4 } };
    const answer = `The executor could write:\n\`\`\`python\nxs = [0.1, 0.2]\n\`\`\`\nMy proposal:\n\`\`\`json\n${JSON.stringify([spec])}\n`;
    expect(extractProposals(answer)).toEqual([spec]);
    expect(extractProposals(answer.trimEnd())).toEqual([spec]);
  });

  it("with prose after its JSON, gives the JSON (the review's case)", () => {
    expect(extractProposals('```json\n[{"system_prompt": "Be careful."}]\nThis should help.')).toEqual([
      { system_prompt: "Be careful." },
    ]);
  });

  it("a closed block is still taken as it was", () => {
    expect(extractProposals('```python\nxs = [1]\n```\n```json\n[{"a": 2}]\n```\nDone.')).toEqual([{ a: 2 }]);
    expect(extractProposals("no proposal here")).toMatch(/no JSON array/);
  });
});

// A spec's system_prompt replaces the whole prompt, and may be up to SPEC_LIMITS.systemPrompt (8000) characters; the
// proposer was shown the incumbent's prompt cut at 4000, so a prompt a spec wrote at 6000 characters came back with
// "[... 2000 characters cut]", and any edit of it next round dropped its end.
describe("the incumbent's system prompt as the proposer sees it", () => {
  it("is whole up to what a spec may write", () => {
    const dir = copyOf(INITIAL_HARNESS);
    const prompt = Array.from({ length: 120 }, (_, i) => `Rule ${i}: keep every circle inside the unit square.`).join("\n");
    expect(prompt.length).toBeGreaterThan(4000);
    expect(prompt.length).toBeLessThanOrEqual(SPEC_LIMITS.systemPrompt);
    writeFileSync(join(dir, "prompt.md"), `${prompt}\n`);
    const shown = describeHarness(loadHarness(dir));
    expect(shown).toContain(`### system prompt\n${prompt}`);
    expect(shown).not.toMatch(/characters cut\]/);
  });
});

describe("an unclosed ```json block in a hostile answer", () => {
  it("is read in linear time (long runs of spaces, backticks and openings)", () => {
    expect(extractProposals(`\`\`\`json\n[${" ".repeat(2_000_000)}x`)).toMatch(/does not parse/);
    // the JSON before a long tail of junk is taken, as prose after it is
    expect(extractProposals(`\`\`\`json\n[{"a": 1}]\n${" \u0060".repeat(500_000)}`)).toEqual([{ a: 1 }]);
    expect(extractProposals(`\`\`\`json\n[{"a": 1}]\n\`\``)).toEqual([{ a: 1 }]);
    expect(extractProposals("```json\n".repeat(200_000))).toMatch(/no JSON array|does not parse/);
  });
});
