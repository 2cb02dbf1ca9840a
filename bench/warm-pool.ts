// Evaluations per second on the circle-packing evaluator: the warm pool against spawning a fresh interpreter per
// evaluation (OpenEvolve's and HarnessTTT's way), side by side in one run, same programs, same isolation.
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import { evaluateProgram } from "../src/task/evaluator.ts";
import { EvaluatorPool } from "../src/task/evaluator-pool.ts";
import { isolationSupport } from "../src/task/python-env.ts";
import { report } from "./lib.ts";

const EVALS = Number(process.env.BENCH_EVALS ?? 20);

export async function benchWarmPool(): Promise<void> {
  const task = loadTaskFolder(`${BUILTIN_TASKS_DIR}/circle-packing`, { id: "circle-packing" });
  const programs = Array.from({ length: EVALS }, (_, i) =>
    task.seedProgram.replace("0.7 * np.cos", `${(0.6 + i * 0.005).toFixed(3)} * np.cos`),
  );
  const started = performance.now();
  const pool = await EvaluatorPool.start(task, { size: 1 });
  const startup = performance.now() - started;
  let t = performance.now();
  for (const p of programs) await pool.evaluate(p);
  const warm = (performance.now() - t) / 1000;
  pool.close();
  t = performance.now();
  for (const p of programs) await evaluateProgram(task, p);
  const cold = (performance.now() - t) / 1000;
  const speedup = cold / warm;
  report(
    `evaluator throughput (issue 4): circle packing, ${EVALS} evaluations, one at a time, program sandbox ${isolationSupport().bwrap ? "bubblewrap" : "off"}`,
    [
      [
        "warm pool",
        `${(EVALS / warm).toFixed(1)} evaluations/s (${((warm / EVALS) * 1000).toFixed(0)} ms each; pool start ${startup.toFixed(0)} ms once)`,
      ],
      ["spawn per evaluation", `${(EVALS / cold).toFixed(1)} evaluations/s (${((cold / EVALS) * 1000).toFixed(0)} ms each)`],
      ["speed-up", `${speedup.toFixed(1)}x`],
    ],
    { ok: speedup >= 5, text: "target: at least 5x faster on cheap evaluators" },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWarmPool();
