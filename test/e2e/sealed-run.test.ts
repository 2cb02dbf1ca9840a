import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { BUILTIN_TASKS_DIR } from "../../src/task/builtin.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { removeStalePools } from "../../src/task/pool-dir.ts";
import { PY_FORGER, survivors } from "../helpers/attacks.ts";
import { hone } from "../helpers/cli.ts";
import { CIRCLE_PACKING, copyOf, makeTask, tempDir } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

// The first report's forgeries, replayed on every built-in task and through `hone run` on the warm pool and the
// cold path: each program is scored exactly what its packing, sequence or matrix is worth, and leaves nothing.
const BUILTIN = [
  "circle-packing",
  "circle-packing-32",
  "erdos-min-overlap",
  "autocorrelation-c1",
  "autocorrelation-c2",
  "hadamard-29",
  "prism",
  "txn-scheduling",
];

describe("forgeries on the built-in tasks", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap", sealedMissing()));
  it.each(BUILTIN)("%s: a forging program is scored what its output is worth, warm and cold", async (id) => {
    const task = loadTaskFolder(join(BUILTIN_TASKS_DIR, id), { id });
    const honest = await evaluateProgram(task, task.seedProgram);
    expect(honest.valid).toBe(true);
    const attack = `${PY_FORGER}\n${task.seedProgram}`;
    const pool = await EvaluatorPool.start(task, { size: 1 });
    try {
      for (const e of [await pool.evaluate(attack), await evaluateProgram(task, attack), await pool.evaluate(task.seedProgram)]) {
        expect(e.valid).toBe(true);
        expect(e.score).toBe(honest.score);
      }
    } finally {
      pool.close();
    }
    expect(survivors()).toEqual([]);
  });
});

describe("hone run with a forging seed program", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap", sealedMissing()));
  it.each([["warm"], ["cold"]])("%s: every recorded score is earned and nothing outlives the run", async (mode) => {
    const dir = copyOf(CIRCLE_PACKING);
    const seed = join(dir, "initial_program.py");
    writeFileSync(seed, `${PY_FORGER}\n${readFileSync(seed, "utf8")}`);
    const out = join(tempDir(), "run");
    const args = ["run", "--task", dir, "--model", "offline", "--max-evals", "4", "--out", out, "--json"];
    const r = await hone(mode === "cold" ? [...args, "--cold"] : args);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.start_score).toBeCloseTo(0.9597642169962064, 9);
    const scores = readFileSync(join(out, "trajectory.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "evaluation" && e.valid)
      .map((e) => e.score as number);
    expect(scores.length).toBeGreaterThan(0);
    // A packing perturbed from the seed is worth little more than the seed; a forged file said 99999.
    for (const s of scores) expect(s).toBeLessThan(1.5);
    expect(survivors()).toEqual([]);
  });
});

describe("without bubblewrap", () => {
  beforeEach((ctx) => requireTool(ctx, "namespaces"));
  it("says exactly what is not enforced, and still keeps programs off the network and the host's files", async () => {
    const victim = join(tempDir(), "victim.txt");
    writeFileSync(victim, "intact");
    const dir = makeTask(
      "import json\nfrom hone_runtime import run_program\ndef evaluate(program_path):\n    return {'combined_score': 1.0, 'seen': json.dumps(run_program(program_path, 'run'))}\n",
    );
    const body = [
      "    import socket",
      "    out = []",
      "    try:",
      `        open(${JSON.stringify(victim)}, 'w').write('pwned'); out.append('wrote')`,
      "    except OSError:",
      "        pass",
      "    try:",
      "        socket.create_connection(('127.0.0.1', 9), timeout=1); out.append('network')",
      "    except OSError as e:",
      "        out.append('no network' if e.errno in (101, 99) else 'refused')",
      "    return out",
    ].join("\n");
    const file = join(tempDir(), "program.py");
    writeFileSync(file, `# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\ndef run():\n${body}\n`);
    const r = await hone(["evaluate", "--task", dir, file, "--json"], { env: { HONE_NO_BWRAP: "1" } });
    expect(r.stderr).toMatch(/not fully isolated \(HONE_NO_BWRAP=1\).*reading files your user can read/);
    expect(r.stderr).not.toMatch(/network access/);
    expect(JSON.parse(JSON.parse(r.stdout).metrics.seen)).toEqual(["no network"]);
    expect(readFileSync(victim, "utf8")).toBe("intact");
  });
});

describe("the warm pool's own housekeeping", () => {
  it("removes the pool folders of dead hone processes at start, and keeps live ones", () => {
    const base = join(tmpdir(), `hone-${process.getuid?.()}`);
    const dead = join(base, "pool-999999999-stale"); // above any pid_max: never a live process
    const live = join(base, `pool-${process.ppid}-live`);
    for (const d of [dead, live]) mkdirSync(join(d, "sock"), { recursive: true, mode: 0o700 });
    removeStalePools(base);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    rmSync(live, { recursive: true, force: true });
  });

  // An evaluator that prints its programs' errors (traceback.print_exc, as OpenEvolve's examples do) prints what a
  // program raises: a program may raise hone_runtime's "sandbox is not answering" line to have the shared zygote
  // killed under the other evaluations in flight. The line is checked against the zygote before anything is killed.
  const printsErrors = () =>
    loadTaskFolder(
      makeTask(
        "import sys, traceback\nfrom hone_runtime import run_program, ProgramError\ndef evaluate(program_path):\n    try:\n        return {'combined_score': float(run_program(program_path, 'run', timeout=10))}\n    except ProgramError as e:\n        traceback.print_exc()\n        return {'combined_score': 0.0, 'error': str(e)}\n",
      ),
    );
  const zygotePid = (pool: EvaluatorPool) => (pool as unknown as { zygote: { child: { pid: number } } }).zygote.child.pid;

  it("a program raising the runtime's sandbox-lost line fails only its own evaluation", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const task = printsErrors();
    const pool = await EvaluatorPool.start(task, { size: 2 });
    try {
      const before = zygotePid(pool);
      const slow = task.seedProgram.replace("return X", "import time\n    time.sleep(1.5)\n    return X");
      const liar = task.seedProgram.replace(
        "return X",
        "raise RuntimeError('hone-runtime: the program sandbox is not answering (timed out)')",
      );
      const victim = pool.evaluate(slow);
      await new Promise((r) => setTimeout(r, 300));
      const attack = await pool.evaluate(liar);
      expect(attack).toMatchObject({
        valid: false,
        reason: expect.stringMatching(/reported that the program sandbox did not answer, but it answers/),
      });
      expect(await victim).toMatchObject({ valid: true, score: 1 });
      expect(zygotePid(pool)).toBe(before);
      expect(await pool.evaluate(task.seedProgram)).toMatchObject({ valid: true, score: 1 });
    } finally {
      pool.close();
    }
  });

  it("a zygote that does not answer when the line comes is started afresh", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const task = printsErrors();
    const pool = await EvaluatorPool.start(task, { size: 1 });
    try {
      const before = zygotePid(pool);
      (pool as unknown as { answers: () => Promise<boolean> }).answers = async () => false; // as a hung zygote
      const liar = task.seedProgram.replace(
        "return X",
        "raise RuntimeError('hone-runtime: the program sandbox is not answering')",
      );
      expect(await pool.evaluate(liar)).toMatchObject({ valid: false, reason: expect.stringMatching(/program sandbox stopped/) });
      expect(await pool.evaluate(task.seedProgram)).toMatchObject({ valid: true, score: 1 });
      expect(zygotePid(pool)).not.toBe(before);
    } finally {
      pool.close();
    }
  });

  it("restarts a dead program zygote and fails the evaluation that lost it", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const task = loadTaskFolder(
      makeTask(
        "from hone_runtime import run_program, ProgramError\ndef evaluate(program_path):\n    try:\n        return {'combined_score': float(run_program(program_path, 'run', timeout=10))}\n    except ProgramError as e:\n        return {'combined_score': 0.0, 'error': str(e)}\n",
      ),
    );
    const pool = await EvaluatorPool.start(task, { size: 1 });
    try {
      const zygote = (pool as unknown as { zygote: { child: { pid: number } } }).zygote.child.pid;
      const slow = task.seedProgram.replace("return X", "import time\n    time.sleep(3)\n    return X");
      const lost = pool.evaluate(slow);
      await new Promise((r) => setTimeout(r, 1000));
      process.kill(zygote, "SIGKILL");
      expect(await lost).toMatchObject({ valid: false, reason: expect.stringMatching(/program sandbox stopped/) });
      expect(await pool.evaluate(task.seedProgram)).toMatchObject({ valid: true, score: 1 });
    } finally {
      pool.close();
    }
  });
});
