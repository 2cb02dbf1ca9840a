import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applySpec } from "../../src/harness/compile.ts";
import { loadHarness } from "../../src/harness/package.ts";
import type { HarnessSpec } from "../../src/harness/spec.ts";
import { describeHarness, extractProposals, proposerTaskOf, proposeSample } from "../../src/method/proposer.ts";
import type { ChatModel, ChatRequest } from "../../src/model/types.ts";
import { gateGeneratedCode } from "../../src/sandbox/check.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, INITIAL_HARNESS, ROOT, tempDir } from "../helpers/fixtures.ts";

// A proposer's ```json block whose texts hold fences of their own: a skill body with a code example, a system prompt
// that shows the executor a SEARCH/REPLACE block. JSON strings escape their line breaks, so such a fence never begins
// a line; the block ends at the fence that does.

const SKILL = {
  name: "vectorize",
  description: "Vectorized placement moves.",
  body: "Move every circle at once:\n```python\ncenters += step * grad\n```\nThen evaluate.",
};
const spec = { new_skills: [SKILL] };
/** An in-process proposer answering with scripted texts, in order. */
function scriptedText(replies: string[]): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    id: "scripted-text",
    requests,
    async complete(r) {
      requests.push(r);
      return {
        message: { content: replies[requests.length - 1] ?? "", tool_calls: [] },
        finish_reason: "stop",
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        latency_ms: 1,
        attempts: 1,
        model: "scripted-text",
      };
    },
  };
}

const fenced = (json: string) => `Here is my proposal.\n\`\`\`json\n${json}\n\`\`\`\n`;

describe("proposals whose texts hold code fences", () => {
  it("parse whole, pretty-printed or on one line", () => {
    expect(extractProposals(fenced(JSON.stringify([spec], null, 2)))).toEqual([spec]);
    expect(extractProposals(fenced(JSON.stringify([spec])))).toEqual([spec]);
    const prompt = { system_prompt: "Edit with:\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```" };
    expect(extractProposals(`\`\`\`json\n${JSON.stringify([prompt])}\n\`\`\``)).toEqual([prompt]);
  });

  it("still take the last block, and close a one-line block at its own fence", () => {
    const two = `${fenced("[1]")}and then\n${fenced(JSON.stringify([spec]))}`;
    expect(extractProposals(two)).toEqual([spec]);
    expect(extractProposals('```json\n[{"a": 1}]```')).toEqual([{ a: 1 }]);
    expect(extractProposals('```json\n[{"a": 1}]```\nThe tool would run:\n```python\nx = 1\n```')).toEqual([{ a: 1 }]);
    expect(extractProposals("```json\n[1,\n```")).toMatch(/does not parse/);
    // A block closed on its own line, then a later block: the later one is the last (the first did not swallow it).
    expect(extractProposals('```json\n[{"a": 1}]```\nor rather\n```json\n[{"a": 2}]\n```')).toEqual([{ a: 2 }]);
    // A code example before the block: its closing fence opens nothing (the block after it was lost).
    expect(extractProposals('Example:\n```python\nprint(1)\n```\n\n```json\n[{"a": 3}]\n```')).toEqual([{ a: 3 }]);
  });

  it("find the blocks in one pass over a hostile answer (fences that never begin a line)", () => {
    // 400,000 openings whose only closing fence is the next opening: each looked for a line-beginning fence to the end
    // of the text, 0.8 s at 160 KB and growing with the square of the length.
    expect(extractProposals("x```\n".repeat(400_000))).toMatch(/does not parse|no JSON array/);
  });

  it("are accepted on the first answer, no repair, and compile into a skill with its code example", async () => {
    const task = loadTaskFolder(CIRCLE_PACKING);
    const context = {
      task: proposerTaskOf(task),
      incumbent: { harness: loadHarness(INITIAL_HARNESS), program: task.seedProgram, score: 0.96 },
      digest: "No experience yet.",
      round: 1,
    };
    const out = join(tempDir(), "cand");
    const check = async (s: HarnessSpec) => {
      applySpec(INITIAL_HARNESS, s, out);
      return [];
    };
    const model = scriptedText([fenced(JSON.stringify([spec], null, 2))]);
    const sample = await proposeSample(model, loadHarness(`${ROOT}/harnesses/proposer`), context, check, { seed: 1, trial: 0 });
    expect(sample.problems).toEqual([]);
    expect(sample.repaired).toBe(false);
    expect(model.requests).toHaveLength(1);
    expect(readFileSync(join(out, "skills", "vectorize", "SKILL.md"), "utf8")).toContain(
      "```python\ncenters += step * grad\n```",
    );
  });
});

describe("what the proposer is shown of the incumbent harness", () => {
  it("a generated middleware's code, as a generated tool's (it runs on every step and only a new spec can fix it)", () => {
    const dir = join(ROOT, "harnesses", "examples", "generated-code");
    const shown = describeHarness(loadHarness(dir, { generatedCode: gateGeneratedCode }));
    const source = readFileSync(join(dir, "middlewares", "halfway_note.js"), "utf8");
    expect(shown).toContain(`### middlewares/halfway_note.js\n${source.trim()}`);
    expect(shown).toContain(`### custom_tools/evaluate_block.js`);
  });
});
