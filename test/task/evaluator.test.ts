import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { judgeMetrics } from "../../src/task/evaluation.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { CIRCLE_PACKING, makeTask } from "../helpers/fixtures.ts";

/** An evaluator that runs the program's run() in-process and scores its value; each test gives it a program. */
const passThrough = `
import importlib.util
def evaluate(program_path):
    spec = importlib.util.spec_from_file_location("p", program_path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return {"combined_score": m.run(), "validity": 1.0}
`;
const seedWith = (body: string) => `# EVOLVE-BLOCK-START\n${body}\n# EVOLVE-BLOCK-END\n`;

describe("metric judgement", () => {
  it.each([
    [{ combined_score: 1.5 }, true, undefined],
    [{ combined_score: 1.5, validity: 0 }, false, /marked the program invalid/],
    [{ combined_score: 1.5, valid: false, error: "overlap" }, false, /overlap/],
    [{ combined_score: { __nonfinite__: "nan" } }, false, /nan, not a finite number/],
    [{ combined_score: { __nonfinite__: "inf" } }, false, /inf/],
    [{ combined_score: "2.6" }, false, /not a number/],
    [{ score: 1 }, false, /has no "combined_score"/],
    [{ error: 0, timeout: true }, false, /timeout/],
  ])("%j → valid=%s", (metrics, valid, reason) => {
    const r = judgeMetrics(metrics as Record<string, unknown>, "combined_score");
    expect(r.valid).toBe(valid);
    if (reason) expect(r.reason).toMatch(reason);
    if (!valid) expect(r.score).toBeUndefined();
  });
});

describe("evaluator failure modes", () => {
  it("scores a normal program", async () => {
    const task = loadTaskFolder(makeTask(passThrough));
    const e = await evaluateProgram(task, seedWith("def run():\n    return 2.5"));
    expect(e).toMatchObject({ valid: true, score: 2.5 });
  });

  it("kills a hanging program's whole process group at the timeout and records it invalid", async () => {
    const task = loadTaskFolder(makeTask(passThrough, { timeout: 1.5 }));
    const hang = seedWith(
      "import subprocess, time\nsubprocess.Popen(['sleep', '300'])\ndef run():\n    time.sleep(300)\n    return 9.0",
    );
    const started = Date.now();
    const e = await evaluateProgram(task, hang);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(e.valid).toBe(false);
    expect(e.timedOut).toBe(true);
    expect(e.reason).toMatch(/did not finish within 1.5 s/);
    expect(e.score).toBeUndefined();
  });

  it("refuses a NaN score", async () => {
    const task = loadTaskFolder(makeTask(passThrough));
    const e = await evaluateProgram(task, seedWith("def run():\n    return float('nan')"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/nan/);
  });

  it("refuses an infinite score", async () => {
    const task = loadTaskFolder(makeTask(passThrough));
    const e = await evaluateProgram(task, seedWith("def run():\n    return float('inf')"));
    expect(e).toMatchObject({ valid: false });
    expect(e.reason).toMatch(/inf/);
  });

  it("records a crash with the exception", async () => {
    const task = loadTaskFolder(makeTask(passThrough));
    const e = await evaluateProgram(task, seedWith("def run():\n    raise ValueError('boom')"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/ValueError: boom/);
  });

  it("records a missing score", async () => {
    const task = loadTaskFolder(makeTask("def evaluate(program_path):\n    return {'other': 'text'}\n"));
    const e = await evaluateProgram(task, seedWith("X = 1"));
    expect(e.reason).toMatch(/has no "combined_score"/);
  });

  it("records an evaluator that returns something that is not metrics", async () => {
    const task = loadTaskFolder(makeTask("def evaluate(program_path):\n    return 42\n"));
    const e = await evaluateProgram(task, seedWith("X = 1"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/expected a dict of metrics/);
  });

  it("records a process that dies without a result", async () => {
    const task = loadTaskFolder(makeTask("import os\ndef evaluate(program_path):\n    os._exit(3)\n"));
    const e = await evaluateProgram(task, seedWith("X = 1"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/exited with code 3 without a result/);
  });

  it("contains a memory bomb under the memory limit", async () => {
    const task = loadTaskFolder(makeTask(passThrough, { honeYaml: "memory_mb: 256\n" }));
    const e = await evaluateProgram(task, seedWith("def run():\n    x = bytearray(2 * 1024 ** 3)\n    return 1.0"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/memory/i);
  });

  it("keeps a flood of output bounded", async () => {
    const task = loadTaskFolder(makeTask(passThrough));
    const e = await evaluateProgram(task, seedWith("import sys\nsys.stderr.write('x' * 5_000_000)\ndef run():\n    return 1.0"));
    expect(e.valid).toBe(true);
    expect((e.artifacts.stderr ?? "").length).toBeLessThan(30_000);
  });

  it("gives the evaluator no API keys from the environment", async () => {
    process.env.OPENAI_API_KEY = "sk-test-secret-must-not-leak";
    try {
      const task = loadTaskFolder(
        makeTask(
          "import os\ndef evaluate(program_path):\n    return {'combined_score': float('OPENAI_API_KEY' in os.environ)}\n",
        ),
      );
      const e = await evaluateProgram(task, seedWith("X = 1"));
      expect(e.score).toBe(0);
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });
});

describe("circle packing evaluator", () => {
  const task = loadTaskFolder(CIRCLE_PACKING);
  const seed = readFileSync(task.seedPath, "utf8");
  const withBody = (construct: string) =>
    seed.replace(/# EVOLVE-BLOCK-START[\s\S]*# EVOLVE-BLOCK-END/, `# EVOLVE-BLOCK-START\n${construct}\n# EVOLVE-BLOCK-END`);

  it("scores the seed program about 0.96 (raw sum of radii)", async () => {
    const e = await evaluateProgram(task, seed);
    expect(e.valid).toBe(true);
    expect(e.score).toBeCloseTo(0.9597642, 6);
    expect(e.metrics.sum_radii).toBe(e.score);
  });

  it.each([
    ["NaN centres", "def construct_packing():\n    c = np.full((26, 2), np.nan)\n    return c, np.full(26, 0.1)", /finite/],
    ["overlapping circles", "def construct_packing():\n    c = np.full((26, 2), 0.5)\n    return c, np.full(26, 0.1)", /overlap/],
    [
      "circles outside the square",
      "def construct_packing():\n    c = np.array([[0.05 + 0.035 * i, 0.5] for i in range(26)])\n    return c, np.full(26, 0.06)",
      /not inside|overlap/,
    ],
    ["wrong shapes", "def construct_packing():\n    return np.zeros((25, 2)), np.zeros(25)", /shape/],
    [
      "negative radii",
      "def construct_packing():\n    c = np.array([[0.1 + 0.03 * i, 0.5] for i in range(26)])\n    r = np.full(26, 0.001)\n    r[0] = -5.0\n    return c, r",
      /non-negative/,
    ],
  ])("refuses %s", async (_name, body, reason) => {
    const e = await evaluateProgram(task, withBody(body));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(reason);
  });

  it("ignores the program's own claimed sum", async () => {
    const lying = seed.replace("return centers, radii, float(np.sum(radii))", "return centers, radii, 99.0");
    const e = await evaluateProgram(task, lying);
    expect(e.score).toBeCloseTo(0.9597642, 6);
  });
});
