import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BUILTIN_TASKS_DIR } from "../../src/task/builtin.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { PYTHON_DIR } from "../../src/task/python-env.ts";

// Outputs on which the built-in evaluators disagreed with the published ones (probed against OpenEvolve's, TTT-Discover's
// and SimpleTES's own evaluators run on the same values): each case says what they do and what hone now does.
const task = (id: string) => loadTaskFolder(`${BUILTIN_TASKS_DIR}/${id}`, { id });
const score = (id: string, program: string) => evaluateProgram(task(id), program);
const block = (body: string, tail: string) =>
  `import numpy as np\n\n# EVOLVE-BLOCK-START\n${body}\n# EVOLVE-BLOCK-END\n\n${tail}\n`;

describe("Erdős minimum overlap: h must be 1-D", () => {
  const erdos = (shape: string) =>
    block("def construct_h():\n    return np.full(100, 0.5)", `def run():\n    h = construct_h()\n    return ${shape}, 0.5, 100`);
  // Every published evaluator refuses a 2-D h ("Expected h shape (n,)" / "h_values must be 1D"); hone unwrapped it
  // twice and scored its first row as if it were h.
  it.each([
    ["(1, n)", "h[None, :]"],
    ["(2, n), the first row a valid h", "np.vstack([h, np.zeros_like(h)])"],
  ])("refuses h of shape %s", async (_label, shape) => {
    const e = await score("erdos-min-overlap", erdos(shape));
    expect(e.valid, JSON.stringify(e.metrics)).toBe(false);
    expect(e.reason).toMatch(/1-D/);
  });
});

describe("Hadamard 29: run_code() may report more after M", () => {
  // SimpleTES takes out[0] of any tuple; hone refused (M, det) as "not 29 x 29".
  it("scores (M, reported_det) on M alone (J - 2I: |det| = 27·2^28), the report ignored", async () => {
    const e = await score(
      "hadamard-29",
      block(
        "def construct_matrix():\n    return np.ones((29, 29), dtype=int) - 2 * np.eye(29, dtype=int)",
        "def run_code():\n    return construct_matrix(), 1.2e21",
      ),
    );
    expect(e.valid, JSON.stringify(e.metrics)).toBe(true);
    expect(e.metrics.abs_det).toBe(String(27n * 2n ** 28n));
  });
});

describe("second autocorrelation inequality: round-off below zero", () => {
  const c2 = (dip: string) =>
    block(
      `def construct_f():\n    f = np.linspace(1, 2, 300)\n    f[7] = ${dip}\n    return f`,
      "def run():\n    f = construct_f()\n    return f, 0.0, 0.0, len(f)",
    );
  // OpenEvolve refuses below -1e-6 and clamps the rest to 0; TTT-Discover clamps every negative. hone refused any
  // negative, so an optimiser's -1e-17 voided a construction both published evaluators score.
  it("scores heights of -1e-17 and -1e-9 exactly as the same function with 0 there", async () => {
    const zero = await score("autocorrelation-c2", c2("0.0"));
    expect(zero.valid).toBe(true);
    for (const dip of ["-1e-17", "-1e-9"]) {
      const e = await score("autocorrelation-c2", c2(dip));
      expect(e.valid, JSON.stringify(e.metrics)).toBe(true);
      expect(e.score).toBe(zero.score);
    }
    const far = await score("autocorrelation-c2", c2("-1e-3"));
    expect(far.valid).toBe(false);
    expect(far.reason).toMatch(/non-negative/);
  });
});

describe("what the program's process and the checks make of odd numbers", () => {
  it("a packing whose radii are np.longdouble scores as with float64 (numpy has no plainer form for it)", async () => {
    const e = await score(
      "circle-packing",
      `import numpy as np\n\n# EVOLVE-BLOCK-START\ndef run_packing():\n    c = np.array([[0.1 + 0.2 * (i % 5), 0.1 + 0.2 * (i // 5)] for i in range(26)])\n    c[25] = [0.2, 0.2]\n    r = np.full(26, 0.05, dtype=np.longdouble)\n    return c, r, float(r.sum())\n# EVOLVE-BLOCK-END\n`,
    );
    expect(e.valid, e.reason).toBe(true);
    expect(e.metrics.sum_radii).toBeCloseTo(1.3, 12);
  });

  it("an integer too large for a float is the program's invalid output, not the evaluator raising", async () => {
    const e = await score(
      "erdos-min-overlap",
      block("def construct_h():\n    return [10**400] + [0.5] * 99", "def run():\n    h = construct_h()\n    return h, 0.5, 100"),
    );
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/too large for a float/);
    expect(e.reason).not.toMatch(/evaluator raised/);
  });
});

describe("circle packing at exactly the tolerance", () => {
  // TTT-Discover and SimpleTES refuse a pair when distance < r_i + r_j - 1e-12; hone computed distance - (r_i + r_j)
  // < -1e-12, which rounds differently: 1,291 of 20,000 pairs within one rounding step of the tolerance were valid
  // there and not here. This pair is one.
  it("decides a pair as the published evaluators write the test", () => {
    const script = [
      "import sys, numpy as np",
      "sys.path.insert(0, sys.argv[1])",
      "import hone_checks",
      "c = np.array([[0.7885012032657381, 0.6113251906884168], [0.5902755657606897, 0.6130680383425641]])",
      "r = np.array([0.1430230139573421, 0.05521028516928016])",
      "hone_checks.check_packing(c, r, 2)",
      "print('valid')",
    ].join("\n");
    expect(execFileSync("python3", ["-c", script, PYTHON_DIR]).toString().trim()).toBe("valid");
  });
});
