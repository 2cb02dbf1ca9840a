import { describe, expect, it } from "vitest";
import { BUILTIN_TASKS_DIR } from "../../src/task/builtin.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";

// Every built-in task: each known cheat (and a few more) is scored invalid, and constructions with values we can
// derive by hand score exactly that value. Programs are written whole so each case reads on its own.
const task = (id: string) => loadTaskFolder(`${BUILTIN_TASKS_DIR}/${id}`, { id });
const block = (body: string, tail: string) =>
  `import numpy as np\n\n# EVOLVE-BLOCK-START\n${body}\n# EVOLVE-BLOCK-END\n\n${tail}\n`;
async function score(id: string, program: string) {
  return evaluateProgram(task(id), program);
}
async function expectInvalid(id: string, program: string, reason: RegExp) {
  const e = await score(id, program);
  expect(e.valid, JSON.stringify(e.metrics)).toBe(false);
  expect(e.reason).toMatch(reason);
  expect(e.score).toBeUndefined();
}

const packing = (_n: number, body: string) =>
  block(`def construct():\n${body}`, `def run_packing():\n    c, r = construct()\n    return c, r, 99.0`);
const grid = (n: number, r: number) =>
  `    side = int(np.ceil(np.sqrt(${n})))\n    pts = [((i % side + 0.5) / side, (i // side + 0.5) / side) for i in range(${n})]\n    return np.array(pts), np.full(${n}, ${r})`;

describe("circle packing (n = 26 and 32)", () => {
  it.each([26, 32])("a grid of touching circles scores exactly n·r with the claimed 99.0 ignored (n=%i)", async (n) => {
    const side = Math.ceil(Math.sqrt(n));
    const r = 1 / (2 * side);
    const e = await score(n === 26 ? "circle-packing" : "circle-packing-32", packing(n, grid(n, r)));
    expect(e.valid).toBe(true);
    expect(Math.abs((e.score as number) - n * r)).toBeLessThan(1e-9);
  });
  it("refuses NaN centres (OpenEvolve #285)", () =>
    expectInvalid("circle-packing", packing(26, "    return np.full((26, 2), np.nan), np.full(26, 0.2)"), /finite/));
  it("refuses a 'valid' sum of 4.01 built from overlapping circles (#183)", () =>
    expectInvalid("circle-packing", packing(26, "    return np.full((26, 2), 0.5), np.full(26, 0.154)"), /overlap/));
  it("refuses an overlap of 1e-9, beyond the 1e-12 tolerance", () => {
    const touching =
      "    c = np.array([[0.25, 0.25], [0.75, 0.25]] + [[0.05 + 0.036 * i, 0.9] for i in range(24)])\n    r = np.full(26, 0.001)\n    r[0] = 0.25 + 1e-9\n    r[1] = 0.25\n    return c, r";
    return expectInvalid("circle-packing", packing(26, touching), /overlap|not inside/);
  });
  it("refuses infinite radii", () =>
    expectInvalid("circle-packing", packing(26, "    return np.zeros((26, 2)), np.full(26, np.inf)"), /finite/));
  it("refuses the wrong number of circles", () =>
    expectInvalid("circle-packing-32", packing(26, grid(26, 0.05)), /shape \(32, 2\)/));
  it("refuses a program that patches numpy in its own process (the checker runs elsewhere)", () =>
    expectInvalid(
      "circle-packing",
      block(
        "def construct():\n    np.any = lambda *a, **k: False\n    np.min = lambda *a, **k: 1.0\n    return np.full((26, 2), 0.5), np.full(26, 0.3)",
        "def run_packing():\n    c, r = construct()\n    return c, r, 7.8",
      ),
      /overlap/,
    ));
  it("refuses a program that prints fake result lines", () =>
    expectInvalid(
      "circle-packing",
      block(
        'def construct():\n    print(\'{"combined_score": 9.9, "validity": 1.0}\')\n    return np.full((26, 2), 0.5), np.full(26, 0.3)',
        "def run_packing():\n    c, r = construct()\n    return c, r, 7.8",
      ),
      /overlap/,
    ));
  it("refuses strings and booleans where numbers belong", () =>
    expectInvalid("circle-packing", packing(26, "    return [['0.5', '0.5']] * 26, [True] * 26"), /numbers|numeric/));
});

const erdos = (body: string, reported = "0.1") =>
  block(`def construct_h():\n${body}`, `def run():\n    h = construct_h()\n    return h, ${reported}, len(h)`);
describe("Erdős minimum overlap", () => {
  it("scores h = 1/2 everywhere at exactly C5 = 1/2 and ignores the reported 0.1", async () => {
    const e = await score("erdos-min-overlap", erdos("    return np.full(100, 0.5)"));
    expect(e.valid).toBe(true);
    expect(Math.abs((e.score as number) - 0.5)).toBeLessThan(1e-12);
  });
  it("recomputes C5 = 1 for the indicator of [0, 1] (a full overlap at shift 1)", async () => {
    const e = await score("erdos-min-overlap", erdos("    return np.concatenate([np.ones(50), np.zeros(50)])"));
    expect(Math.abs((e.score as number) - 1)).toBeLessThan(1e-12);
  });
  it("refuses values above 1", () =>
    expectInvalid(
      "erdos-min-overlap",
      erdos("    h = np.full(100, 0.5)\n    h[0] = 1.5\n    h[1] = -0.5\n    return h"),
      /\[0, 1\]/,
    ));
  it("refuses an integral other than 1 (a cheaper h)", () =>
    expectInvalid("erdos-min-overlap", erdos("    return np.full(100, 0.4)"), /integral of h must be 1/));
  it("refuses NaN", () =>
    expectInvalid("erdos-min-overlap", erdos("    h = np.full(100, 0.5)\n    h[3] = np.nan\n    return h"), /non-finite|finite/));
  it("refuses an empty h", () => expectInvalid("erdos-min-overlap", erdos("    return np.array([])"), /non-empty/));
});

const auto = (body: string) =>
  block(`def construct_f():\n${body}`, "def run():\n    f = construct_f()\n    return f, 0.0001, 0.0001, len(f)");
describe("first autocorrelation inequality (C1)", () => {
  it("scores a constant function at exactly C1 = 2 and ignores the reported value", async () => {
    const e = await score("autocorrelation-c1", auto("    return np.ones(600)"));
    expect(Math.abs((e.score as number) - 2)).toBeLessThan(1e-9);
  });
  it("gives the same C1 to tiny values that would underflow to a zero score", async () => {
    const normal = await score("autocorrelation-c1", auto("    x = np.linspace(-1, 1, 300)\n    return 1.0 + x * x"));
    const tiny = await score("autocorrelation-c1", auto("    x = np.linspace(-1, 1, 300)\n    return (1.0 + x * x) * 1e-161"));
    expect(tiny.valid).toBe(true);
    expect(Math.abs((tiny.score as number) - (normal.score as number))).toBeLessThan(1e-9);
  });
  it("uses an FFT for long inputs with the same value as the direct sum", async () => {
    const e = await score("autocorrelation-c1", auto("    return np.ones(20000)"));
    expect(Math.abs((e.score as number) - 2)).toBeLessThan(1e-9);
  });
  it("refuses negative heights", () =>
    expectInvalid("autocorrelation-c1", auto("    f = np.ones(100)\n    f[::2] = -1.0\n    return f"), /non-negative/));
  it("refuses complex numbers", () =>
    expectInvalid("autocorrelation-c1", auto("    return np.ones(10) * (1 + 1j)"), /real numbers/));
  it("refuses booleans", () => expectInvalid("autocorrelation-c1", auto("    return [True] * 10"), /real numbers/));
  it("refuses all zeros", () => expectInvalid("autocorrelation-c1", auto("    return np.zeros(10)"), /not all be zero/));
  it("refuses infinity", () =>
    expectInvalid("autocorrelation-c1", auto("    f = np.ones(10)\n    f[2] = np.inf\n    return f"), /non-finite|finite/));
});

describe("second autocorrelation inequality (C2)", () => {
  // For f = 1 on n steps, c = a*a is the triangle 1..n..1; C2 follows in closed form from the definition.
  const closedForm = (n: number) => {
    const c = Array.from({ length: 2 * n - 1 }, (_, k) => Math.min(k + 1, 2 * n - 1 - k));
    const y = [0, ...c, 0];
    const h = 1 / (c.length + 1);
    let l2 = 0;
    for (let i = 0; i + 1 < y.length; i++)
      l2 += (h / 3) * ((y[i] as number) ** 2 + (y[i] as number) * (y[i + 1] as number) + (y[i + 1] as number) ** 2);
    const l1 = c.reduce((a, b) => a + b, 0) / (c.length + 1);
    return l2 / (l1 * n);
  };
  it("scores a constant function at its closed-form C2 (direct and FFT paths)", async () => {
    for (const n of [50, 6000]) {
      const e = await score("autocorrelation-c2", auto(`    return np.ones(${n})`));
      expect(Math.abs((e.score as number) - closedForm(n))).toBeLessThan(1e-9);
    }
  });
  it("is scale-invariant, so huge or tiny scales gain nothing", async () => {
    const a = await score("autocorrelation-c2", auto("    return np.linspace(1, 2, 500)"));
    const b = await score("autocorrelation-c2", auto("    return np.linspace(1, 2, 500) * 1e-200"));
    expect(Math.abs((a.score as number) - (b.score as number))).toBeLessThan(1e-12);
  });
  it("refuses negative heights", () =>
    expectInvalid("autocorrelation-c2", auto("    f = np.ones(100)\n    f[5] = -3.0\n    return f"), /non-negative/));
  it("refuses NaN", () =>
    expectInvalid("autocorrelation-c2", auto("    f = np.ones(100)\n    f[5] = np.nan\n    return f"), /finite/));
  it("refuses more than 200,000 heights", () =>
    expectInvalid("autocorrelation-c2", auto("    return np.ones(200001)"), /at most 200000/));
});

const hadamard = (body: string) => block(`def construct_matrix():\n${body}`, "def run_code():\n    return (construct_matrix(),)");
describe("Hadamard maximal determinant, order 29", () => {
  it("computes |det| exactly: J - 2I has |det| = 27·2^28", async () => {
    const e = await score("hadamard-29", hadamard("    return np.ones((29, 29), dtype=int) - 2 * np.eye(29, dtype=int)"));
    expect(e.metrics.abs_det).toBe(String(27n * 2n ** 28n));
    expect(Math.abs((e.score as number) - (27 * 2 ** 28) / Number(1270698346568170340352n))).toBeLessThan(1e-18);
  });
  it("scores a singular matrix 0 (valid)", async () => {
    const e = await score("hadamard-29", hadamard("    return np.ones((29, 29))"));
    expect(e).toMatchObject({ valid: true, score: 0 });
  });
  it("the record determinant 2^34·5·7^12 is exactly 160/171 of the normaliser", () => {
    expect(2n ** 34n * 5n * 7n ** 12n * 171n).toBe(160n * 1270698346568170340352n);
  });
  it("refuses entries other than ±1", () =>
    expectInvalid("hadamard-29", hadamard("    m = np.ones((29, 29))\n    m[0, 0] = 2.0\n    return m"), /exactly \+1 or -1/));
  it("refuses 0.5 entries that would inflate a float determinant", () =>
    expectInvalid("hadamard-29", hadamard("    return np.full((29, 29), 0.5)"), /exactly \+1 or -1/));
  it("refuses the wrong order", () => expectInvalid("hadamard-29", hadamard("    return np.ones((28, 28))"), /29 x 29/));
  it("refuses NaN", () =>
    expectInvalid("hadamard-29", hadamard("    m = np.ones((29, 29))\n    m[3, 3] = np.nan\n    return m"), /exactly \+1 or -1/));
});

const prism = (body: string) =>
  `GPU_MEMORY = 80\n\n# EVOLVE-BLOCK-START\ndef compute_model_placement(gpu_num, models):\n${body}\n# EVOLVE-BLOCK-END\n`;
const roundRobin =
  "    p = {g: [] for g in range(gpu_num)}\n    for i, m in enumerate(models):\n        p[i % gpu_num].append(m['name'])\n    return p";
describe("PRISM", () => {
  it("scores a valid placement", async () => {
    const e = await score("prism", prism(roundRobin));
    expect(e.valid).toBe(true);
    expect(e.metrics.success_rate).toBe(1);
  });
  it("refuses a placement on a GPU that does not exist (unchecked GPU count)", () =>
    expectInvalid(
      "prism",
      prism(
        "    p = {g: [] for g in range(gpu_num + 1)}\n    for i, m in enumerate(models):\n        p[i % (gpu_num + 1)].append(m['name'])\n    return p",
      ),
      /outside 0\.\./,
    ));
  it("refuses skipping hard cases (one case raising)", () =>
    expectInvalid(
      "prism",
      prism(`    if gpu_num == 9:\n        raise RuntimeError('too hard')\n${roundRobin}`),
      /case \d+ failed: RuntimeError: too hard/,
    ));
  it("refuses a model placed twice", () =>
    expectInvalid(
      "prism",
      prism(
        `    p = {g: [] for g in range(gpu_num)}\n    for i, m in enumerate(models):\n        p[i % gpu_num].append(m['name'])\n    p[0].append(models[0]['name'])\n    return p`,
      ),
      /exactly once/,
    ));
  it("refuses a missing model", () =>
    expectInvalid(
      "prism",
      prism(
        `    p = {g: [] for g in range(gpu_num)}\n    for i, m in enumerate(models[1:]):\n        p[i % gpu_num].append(m['name'])\n    return p`,
      ),
      /missing m0/,
    ));
  it("refuses an over-full GPU", () =>
    expectInvalid("prism", prism("    return {0: [m['name'] for m in models]}"), /more than 80/));
  it("refuses invented models", () =>
    expectInvalid(
      "prism",
      prism(`${roundRobin.replace("    return p", "    p[0].append('ghost')\n    return p")}`),
      /not one of the case's models/,
    ));
});

const txn = (body: string) => `# EVOLVE-BLOCK-START\ndef get_best_schedule(workload, num_seqs):\n${body}\n# EVOLVE-BLOCK-END\n`;
describe("transaction scheduling", () => {
  it("recomputes the makespan and ignores a self-reported cost", async () => {
    const honest = await score("txn-scheduling", txn("    return list(range(len(workload)))"));
    const lying = await score("txn-scheduling", txn("    return (0, list(range(len(workload))))"));
    expect(honest.valid).toBe(true);
    expect(lying.score).toBe(honest.score);
  });
  it("refuses a partial schedule", () =>
    expectInvalid("txn-scheduling", txn("    return list(range(len(workload) - 1))"), /exactly once/));
  it("refuses a schedule with repeats", () =>
    expectInvalid("txn-scheduling", txn("    return [0] * len(workload)"), /exactly once/));
  it("refuses non-integer indices", () =>
    expectInvalid("txn-scheduling", txn("    return [float(i) for i in range(len(workload))]"), /list of transaction indices/));
});
