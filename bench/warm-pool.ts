// Evaluations on the circle-packing evaluator (n=26), one at a time, side by side in one run, same programs:
// - hone's warm pool (the evaluator imported once and forked per evaluation, the program in its sandbox);
// - a fresh `python3` per evaluation that imports the evaluator and runs the program in itself (no sandbox);
// - OpenEvolve's path (peers/openevolve_path.py): the evaluator imported once in a long-lived process, each
//   program written to a temporary file and run by a fresh interpreter, its result pickled back;
// - the evaluator's own compute: the same evaluator and program in one warm interpreter, nothing around them.
// Every path must give the same score for every program, or the bench stops.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import { EvaluatorPool } from "../src/task/evaluator-pool.ts";
import { isolationSupport, PYTHON_DIR } from "../src/task/python-env.ts";
import { benchDir, type Measured, pageCostRow, report, spread } from "./lib.ts";
import { LineProcess } from "./peers/line-process.ts";

const EVALS = Number(process.env.BENCH_EVALS ?? 10);
const REPS = Number(process.env.BENCH_REPS ?? 5);
const PEERS = join(import.meta.dirname, "peers");

type Score = { combined_score?: number };

export async function benchWarmPool(): Promise<boolean> {
  const task = loadTaskFolder(`${BUILTIN_TASKS_DIR}/circle-packing`, { id: "circle-packing" });
  const programs = Array.from({ length: EVALS }, (_, i) =>
    task.seedProgram.replace("0.7 * np.cos", `${(0.6 + i * 0.005).toFixed(3)} * np.cos`),
  );
  const dir = benchDir("pool");
  const files = programs.map((p, i) => {
    const f = join(dir, `p${i}.py`);
    writeFileSync(f, p);
    return f;
  });
  const started = performance.now();
  const pool = await EvaluatorPool.start(task, { size: 1 });
  const poolStart = performance.now() - started;
  const peer = (mode: string) =>
    new LineProcess("python3", [join(PEERS, "openevolve_path.py"), PYTHON_DIR, task.evaluatorPath, mode]);
  const openevolve = peer("fresh");
  const compute = peer("inprocess");
  await Promise.all([openevolve.next(), compute.next()]);

  const scores = new Map<string, number[]>();
  const record = (path: string, i: number, s: number | undefined) => {
    const ref = scores.get("warm")?.[i];
    if (path !== "warm" && ref !== undefined && s !== ref)
      throw new Error(`${path} scored program ${i} ${s}, the warm pool ${ref}`);
    scores.set(path, [...(scores.get(path) ?? []), s ?? Number.NaN]);
  };
  const paths: Record<string, (i: number) => Promise<number | undefined>> = {
    warm: async (i) => (await pool.evaluate(programs[i] as string)).score,
    fresh: async (i) => {
      const out = execFileSync("python3", [join(PEERS, "fresh_python.py"), PYTHON_DIR, task.evaluatorPath, files[i] as string]);
      return (JSON.parse(out.toString()) as Score).combined_score;
    },
    openevolve: async (i) => ((await openevolve.ask({ program: programs[i] })) as Score).combined_score,
    compute: async (i) => ((await compute.ask({ program: programs[i] })) as Score).combined_score,
  };
  for (const run of Object.values(paths)) await run(0); // warm-up, not timed
  const warm: number[] = [];
  const fresh: number[] = [];
  const oe: number[] = [];
  const own: number[] = [];
  const perEval: Record<string, number[]> = { warm, fresh, openevolve: oe, compute: own };
  // Interleaved program by program, so that the load of a shared machine falls on every path alike.
  for (let r = 0; r < REPS; r++) {
    const total: Record<string, number> = { warm: 0, fresh: 0, openevolve: 0, compute: 0 };
    scores.clear();
    for (let i = 0; i < EVALS; i++)
      for (const [name, run] of Object.entries(paths)) {
        const t = performance.now();
        const score = await run(i);
        total[name] = (total[name] ?? 0) + performance.now() - t;
        record(name, i, score);
      }
    for (const name of Object.keys(paths)) perEval[name]?.push((total[name] ?? 0) / EVALS);
  }
  // Back to back, with no idle time between evaluations: the work a warm evaluation leaves for after its reply
  // (its files removed, the next child forked, the next sandbox made) then falls on the next one.
  const backToBack: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const t = performance.now();
    for (let i = 0; i < EVALS; i++) await pool.evaluate(programs[i] as string);
    backToBack.push((performance.now() - t) / EVALS);
  }
  pool.close();
  openevolve.close();
  compute.close();

  const ratio = (a: number[], b: number[]) => a.map((x, i) => x / (b[i] as number));
  const goals: Measured[] = [
    {
      goal: { figure: "warm pool vs a fresh python3 per evaluation", op: ">=", value: 20, unit: "x" },
      samples: ratio(fresh, warm),
    },
    { goal: { figure: "warm pool vs OpenEvolve's path", op: ">=", value: 10, unit: "x" }, samples: ratio(oe, warm) },
    {
      goal: { figure: "fixed cost per evaluation above the evaluator's compute", op: "<=", value: 3, unit: " ms" },
      samples: warm.map((x, i) => x - (own[i] as number)),
    },
  ];
  return report(
    `evaluator throughput (issue 19): circle packing n=26, ${EVALS} evaluations x ${REPS} repetitions, one at a time; program sandbox ${isolationSupport().bwrap ? "bubblewrap" : "off"} in the warm pool, none in the baselines`,
    [
      [
        "warm pool, per evaluation",
        `${spread(warm, " ms")} median (min–max of the repetitions); pool start ${poolStart.toFixed(0)} ms once`,
      ],
      ["warm pool, back to back (no idle time between)", spread(backToBack, " ms")],
      ["fresh python3 per evaluation", spread(fresh, " ms")],
      ["OpenEvolve's path", spread(oe, " ms")],
      ["the evaluator's own compute", spread(own, " ms", 2)],
      ["scores", `identical on every path for all ${EVALS} programs`],
      pageCostRow(),
    ],
    goals,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWarmPool();
