import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PYTHON_DIR } from "../../src/task/python-env.ts";

// OpenEvolve's cascade (openevolve/evaluator.py, _cascade_evaluate and _passes_threshold), the rules alone: which
// stages run, and the metrics and artifacts an evaluation ends with. Each case is an evaluator given as the metrics
// its stages return ("raise" for a stage that raises, absent for one it does not define) and the thresholds.
const RUN = `
import json, sys, types
sys.path.insert(0, sys.argv[1])
from hone_cascade import run_cascade, passes
out = []
for case in json.loads(sys.stdin.read()):
    if case["kind"] == "passes":
        out.append(passes(case["metrics"], case["threshold"]))
        continue
    module, ran = types.SimpleNamespace(), []
    for n, m in enumerate(case["stages"], 1):
        def stage(path, n=n, m=m):
            ran.append(n)
            if m == "raise":
                raise ValueError("stage %d broke" % n)
            return m
        setattr(module, "evaluate_stage%d" % n, stage)
    metrics, artifacts = run_cascade(module, case["thresholds"], lambda stage: (stage("p.py"), {"from": 1}))
    out.append({"ran": ran, "metrics": metrics, "failure": artifacts.get("failure_stage")})
print(json.dumps(out))
`;
type Case = { kind: "passes"; metrics: object; threshold: number } | { kind: "run"; stages: unknown[]; thresholds: number[] };
const run = (cases: Case[]) =>
  JSON.parse(execFileSync("python3", ["-c", RUN, PYTHON_DIR], { input: JSON.stringify(cases), encoding: "utf8", stdio: "pipe" }));
const cascade = (stages: unknown[], thresholds = [0.5, 0.75]) => run([{ kind: "run", stages, thresholds }])[0];

describe("OpenEvolve's cascade", () => {
  it("passes a threshold on combined_score, or else on the mean of the numbers but error", () => {
    const cases: [object, number][] = [
      [{ combined_score: 0.5 }, 0.5],
      [{ combined_score: 0.4, a: 1 }, 0.5],
      [{ a: 1, b: 0, error: 9 }, 0.5],
      [{ a: true, b: false }, 0.5],
      [{ a: 0.4, note: "x" }, 0.5],
      [{}, -1],
      [{ note: "x" }, -1],
    ];
    expect(run(cases.map(([metrics, threshold]) => ({ kind: "passes", metrics, threshold })))).toEqual([
      true,
      false,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it("runs stage 2 only past the first threshold, and judges stage 3 on both stages' metrics merged", () => {
    expect(cascade([{ combined_score: 0.4 }, { combined_score: 1 }])).toMatchObject({
      ran: [1],
      metrics: { combined_score: 0.4, cascade_stage: 1 },
    });
    // Stage 2 alone would pass (mean 0.9), but the merged metrics keep stage 1's combined_score of 0.6.
    expect(cascade([{ combined_score: 0.6 }, { accuracy: 0.9 }, { combined_score: 1 }])).toEqual({
      ran: [1, 2],
      metrics: { combined_score: 0.6, accuracy: 0.9, cascade_stage: 2 },
      failure: null,
    });
    expect(cascade([{ combined_score: 0.6 }, { combined_score: 0.8, note: "kept out", ok: true }, { extra: 3 }])).toEqual({
      ran: [1, 2, 3],
      metrics: { combined_score: 0.8, ok: 1, extra: 3, cascade_stage: 3 },
      failure: null,
    });
  });

  it("stops after stage 2 without a second threshold, and runs every stage with none (OpenEvolve fails there)", () => {
    expect(cascade([{ combined_score: 1 }, { combined_score: 1 }, { combined_score: 1 }], [0.5]).ran).toEqual([1, 2]);
    expect(cascade([{ combined_score: 0 }, { combined_score: 0 }, { combined_score: 0 }], []).ran).toEqual([1, 2, 3]);
  });

  it("keeps what the stages before gave when stage 2 or 3 raises", () => {
    expect(cascade([{ combined_score: 0.6, note: "x" }, "raise"])).toEqual({
      ran: [1, 2],
      metrics: { combined_score: 0.6, note: "x", stage2_passed: 0, cascade_stage: 2 },
      failure: "stage2",
    });
    expect(cascade([{ combined_score: 0.6 }, { combined_score: 0.8 }, "raise"])).toEqual({
      ran: [1, 2, 3],
      metrics: { combined_score: 0.8, stage3_passed: 0, cascade_stage: 3 },
      failure: "stage3",
    });
  });

  it("lets stage 1 raising fail the evaluation", () => {
    expect(() => cascade(["raise", { combined_score: 1 }])).toThrow(/stage 1 broke/);
  });
});
