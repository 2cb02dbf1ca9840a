import { describe, expect, it } from "vitest";
import { trajectoryNames } from "../../src/loop/qa-measure.ts";
import type { QATask } from "../../src/task/qa/benchmark.ts";

const panel = (...ids: string[]): QATask[] =>
  ids.map((id) => ({ id, question: "q", gold: { kind: "text", value: "a" } }) as QATask);

// Each task of a QA panel writes its trajectory to a file named after its id; two tasks must never share one, and
// an id from a user's dataset may be longer than a file name can be.
describe("trajectory file names of a QA panel", () => {
  it("keeps the name of an id that is safe and short", () => {
    expect([...trajectoryNames(panel("simple_0", "HumanEval/0", "q.sample1")).values()]).toEqual([
      "simple_0.jsonl",
      "HumanEval_0.jsonl",
      "q.sample1.jsonl",
    ]);
  });

  it("gives ids that make the same name a file each", () => {
    const names = trajectoryNames(panel("a_b", "a/b", "a b", "a:b"));
    expect(new Set(names.values()).size).toBe(4);
    expect(names.get("a_b")).toBe("a_b.jsonl");
    expect(names.get("a/b")).toMatch(/^a_b-[0-9a-f]{16}\.jsonl$/);
  });

  it("cuts an id longer than a file name may be, and still tells two such ids apart", () => {
    const long = "x".repeat(400);
    const names = trajectoryNames(panel(`${long}1`, `${long}2`));
    const [a, b] = [...names.values()];
    expect(a).not.toBe(b);
    for (const n of [a, b]) expect(Buffer.byteLength(n as string)).toBeLessThan(255);
  });
});
