// Third attacker's probe (issue 12): texts a program chooses never reach the user's terminal raw. A program's
// exception message travels through the evaluator's metrics and the verdict's reason, which `hone evaluate`,
// `hone run` and `hone log` print: ESC sequences there cleared the screen and wrote a fake "VALID score" line.
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { judgeExit } from "../../src/task/evaluator.ts";
import { makeTask } from "../helpers/fixtures.ts";
import { warmAndCold } from "../helpers/sealed-probe.ts";

const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const HOSTILE = `def run():
    raise ValueError("\\x1b[2J\\x1b[H\\x1b[32mVALID score 2.99\\x1b[0m\\rX\\x07\\x9b")
`;

describe("a program's own text in an evaluation", () => {
  const evaluate = warmAndCold(512);

  it.each(["warm", "cold"])("[%s] its exception message is kept, with every control character written out", async (mode) => {
    const e = await evaluate(mode, HOSTILE);
    expect(e.valid).toBe(false);
    const error = String(e.metrics.error);
    expect(error).toContain("\\u001b[2J\\u001b[H\\u001b[32mVALID score 2.99\\u001b[0m\\u000dX\\u0007\\u009b");
    expect(error).not.toMatch(RAW_CONTROL);
    expect(e.reason).toContain("VALID score 2.99");
    expect(e.reason).not.toMatch(RAW_CONTROL);
  });
});

describe("judgeExit", () => {
  const task = loadTaskFolder(makeTask("def evaluate(p):\n    return {'combined_score': 1.0}\n"));
  const base = { code: 0, signal: null, timedOut: false, stdout: "out\x1b]0;title\x07", stderr: "err\x1b[31m", seconds: 1 };

  it("writes out control characters in metrics (keys and nested values), artifacts and the reason", () => {
    const result = JSON.stringify({
      metrics: { combined_score: 0.5, "k\x1b": { deep: ["v\x1b[1m", 2] }, note: "tab\tand\nline" },
      artifacts: { feedback: "f\x9b2J" },
    });
    const e = judgeExit(task, { ...base, result }, 10);
    expect(e.valid).toBe(true);
    expect(e.score).toBe(0.5);
    expect(e.metrics).toEqual({ combined_score: 0.5, "k\\u001b": { deep: ["v\\u001b[1m", 2] }, note: "tab\tand\nline" });
    expect(e.artifacts).toEqual({ stdout: "out\\u001b]0;title\\u0007", stderr: "err\\u001b[31m", feedback: "f\\u009b2J" });
  });

  it("writes them out in a raising evaluator's reason and traceback", () => {
    const result = JSON.stringify({ error: "Traceback\nProgramError: \x1b[2Jgone\rX" });
    const e = judgeExit(task, { ...base, code: 1, result }, 10);
    expect(e.valid).toBe(false);
    expect(e.reason).toBe("the evaluator raised: ProgramError: \\u001b[2Jgone\\u000dX");
    expect(e.artifacts.traceback).toBe("Traceback\nProgramError: \\u001b[2Jgone\\u000dX");
  });

  it("keeps non-finite markers and numbers as they are, and cuts nesting past 64 levels", () => {
    let deep: unknown = "end";
    for (let i = 0; i < 200; i++) deep = [deep];
    const result = JSON.stringify({ metrics: { combined_score: { __nonfinite__: "nan" }, deep }, artifacts: {} });
    const e = judgeExit(task, { ...base, result }, 10);
    expect(e.valid).toBe(false);
    expect(e.metrics.combined_score).toEqual({ __nonfinite__: "nan" });
    expect(JSON.stringify(e.metrics.deep)).toContain("[nested too deeply]");
  });
});
