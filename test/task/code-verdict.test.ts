import { describe, expect, it } from "vitest";
import { verdictOf } from "../../src/task/qa/code/check-code.ts";

// The checker's verdict is its last stdout line. A checker that died before writing it (a signal, the memory killer)
// leaves on stdout whatever came before, which must never stand as a verdict.
describe("verdictOf", () => {
  const pass = `${JSON.stringify({ passed: true, result: "passed", calls: 1 })}\n`;
  const proc = { code: 0 as number | null, signal: null as NodeJS.Signals | null, stdout: pass, stderr: "", timedOut: false };

  it("takes the verdict of a checker that exited 0", () => {
    expect(verdictOf(proc)).toEqual({ passed: true, result: "passed", calls: 1 });
  });

  it("takes no verdict from a checker killed by a signal or ended with an error", () => {
    const killed = verdictOf({ ...proc, code: null, signal: "SIGKILL" });
    expect(killed.passed).toBe(false);
    expect(killed.result).toMatch(/ended without its verdict \(killed by SIGKILL\)/);
    expect(verdictOf({ ...proc, code: 1 }).passed).toBe(false);
    expect(verdictOf({ ...proc, timedOut: true })).toEqual({ passed: false, result: "timed out", calls: 0 });
  });
});
