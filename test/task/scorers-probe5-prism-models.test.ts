import { describe, expect, it } from "vitest";
import { BUILTIN_TASKS_DIR } from "../../src/task/builtin.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";

// SkyDiscover's PRISM programs place the model objects they are given ({gpu: [Model, ...]}; its evaluator checks
// that the placed objects are exactly the input ones). hone hands the models over as dicts, so the same program,
// ported, places the dicts: hone refused every such placement ("GPU 0 holds {...}, which is not one of the case's
// models") although each model is placed once, unchanged. A placed dict is now that model when it equals it field
// for field; an altered one (a smaller size, say) is still refused, and the score comes from the case's own models.
const task = () => loadTaskFolder(`${BUILTIN_TASKS_DIR}/prism`, { id: "prism" });
const program = (place: string) =>
  `GPU_MEMORY = 80\n\n# EVOLVE-BLOCK-START\ndef compute_model_placement(gpu_num, models):\n    p = {g: [] for g in range(gpu_num)}\n    for i, m in enumerate(models):\n        p[i % gpu_num].append(${place})\n    return p\n# EVOLVE-BLOCK-END\n`;

describe("PRISM: a placement may hold the model dicts it was given", () => {
  it("scores the models placed as given exactly as the same placement by name", async () => {
    const byName = await evaluateProgram(task(), program("m['name']"));
    const asGiven = await evaluateProgram(task(), program("m"));
    expect(asGiven.valid, JSON.stringify(asGiven.metrics)).toBe(true);
    // SkyDiscover's evaluator on this round-robin placement: 17.171284925135126.
    expect(asGiven.score).toBe(17.171284925135126);
    expect(asGiven.score).toBe(byName.score);
  });
  it("refuses a placed model whose fields were changed (a smaller size)", async () => {
    const e = await evaluateProgram(task(), program("dict(m, size=1)"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/not one of the case's models as given \(name 'm0'/);
  });
  it("refuses a dict naming no model of the case", async () => {
    const e = await evaluateProgram(task(), program("{'name': 'ghost'}"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/name 'ghost'/);
  });
});
