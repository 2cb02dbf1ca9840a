import { cpSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { SURVIVOR_MARK, survivors } from "../helpers/attacks.ts";
import { makeTask } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

// hone.yaml `evaluator_state: kept`: evaluations run in the loaded evaluator's process itself (no fork each), with
// the fresh evaluation's rules otherwise, and a tripwire that falls back to fresh evaluators when the evaluator runs
// the program in its own process. Kept only in the evaluator's own sandbox (bubblewrap).

const KEPT = "evaluator_state: kept\n";

function keptTask(evaluator: string, opts: { timeout?: number; honeYaml?: string } = {}): DiscoveryTask {
  return loadTaskFolder(makeTask(evaluator, { timeout: opts.timeout, honeYaml: opts.honeYaml ?? KEPT }));
}

/** Runs `use` on a warm pool of one evaluator for `t`, collecting its notices. */
async function withKept<T>(t: DiscoveryTask, use: (pool: EvaluatorPool, notices: string[]) => Promise<T>): Promise<T> {
  const notices: string[] = [];
  const pool = await EvaluatorPool.start(t, { size: 1, onNotice: (n) => notices.push(n) });
  try {
    return await use(pool, notices);
  } finally {
    pool.close();
  }
}

/** Writes a file beside its own folder and one deep in /tmp; reports whether the evaluation before left them, and the
 * removals tried since: of files named as the task folder's (a walk into the bind), and of its own two files. */
const WALK_WATCHER = `import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
OURS = set(os.listdir(HERE))
TRIED = []
def _watch(event, args):
    if event == 'os.remove' and args and isinstance(args[0], str):
        TRIED.append(os.path.basename(args[0]))
sys.addaudithook(_watch)
FILES = (os.path.join(os.path.dirname(HERE), 'beside'), '/tmp/deep/a/b/c/d/left')
def evaluate(program_path):
    walked = sum(1 for name in TRIED if name in OURS)
    removals = sum(1 for name in TRIED if name in ('beside', 'left'))
    TRIED.clear()
    left = sum(1 for f in FILES if os.path.exists(f))
    os.makedirs(os.path.dirname(FILES[1]), exist_ok=True)
    for f in FILES:
        open(f, 'w').write('x')
    return {'combined_score': 1.0, 'left': left, 'walked': walked, 'removals': removals}
`;

const COUNTER = "COUNT = [0]\ndef evaluate(program_path):\n    COUNT[0] += 1\n    return {'combined_score': float(COUNT[0])}\n";
/** An evaluator that runs the program in its own process in one of three ways, as many upstream evaluators do; it
 * reports whether a program had already changed its process before this evaluation. */
const inProcess = (run: string) => `import builtins, importlib.util
COUNT = [0]
def evaluate(program_path):
    COUNT[0] += 1
    pwned = getattr(builtins, 'HONE_PWNED', False)
${run}
    return {'combined_score': float(ns['run']()), 'count': COUNT[0], 'pwned_before': pwned}
`;
const WAYS: [string, string][] = [
  [
    "imports the program",
    "    spec = importlib.util.spec_from_file_location('p', program_path)\n    m = importlib.util.module_from_spec(spec)\n    spec.loader.exec_module(m)\n    ns = vars(m)",
  ],
  ["execs the program's text", "    ns = {}\n    exec(open(program_path).read(), ns)"],
  [
    "compiles it under another name",
    "    ns = {}\n    exec(compile(open(program_path).read() + '\\nY = 2\\n', '<candidate>', 'exec'), ns)",
  ],
];

describe("a kept evaluator (evaluator_state: kept)", () => {
  it("is read from hone.yaml, fresh by default", () => {
    expect(keptTask(COUNTER).evaluatorState).toBe("kept");
    expect(keptTask(COUNTER, { honeYaml: "stochastic: false\n" }).evaluatorState).toBe("fresh");
    expect(() => keptTask(COUNTER, { honeYaml: "evaluator_state: shared\n" })).toThrow(/evaluator_state/);
  });

  it("keeps its process, and so its module state, across evaluations", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(COUNTER);
    await withKept(t, async (pool, notices) => {
      const scores = [];
      for (let i = 0; i < 3; i++) scores.push((await pool.evaluate(t.seedProgram)).score);
      expect(scores).toEqual([1, 2, 3]);
      expect(notices).toEqual([]);
    });
  });

  it("gives the cold run's metrics, bit for bit, for a stateless evaluator", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(
      "from hone_runtime import run_program\ndef evaluate(program_path):\n    v = run_program(program_path, 'run')\n    return {'combined_score': v / 3.0, 'double': 2 * v}\n",
    );
    await withKept(t, async (pool) => {
      for (const x of ["1.0", "2.5", "-7.25"]) {
        const program = t.seedProgram.replace("X = 1.0", `X = ${x}`);
        const warm = await pool.evaluate(program);
        const cold = await evaluateProgram(t, program);
        expect(JSON.stringify(warm.metrics)).toBe(JSON.stringify(cold.metrics));
        expect(warm.score).toBe(cold.score);
      }
    });
  });

  it.for(WAYS)("that %s is stopped before the program runs, and every later evaluation is fresh", async ([, run], ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(inProcess(run));
    await withKept(t, async (pool, notices) => {
      // The attack changes the process it runs in: had it run in the kept evaluator, later evaluations would see it.
      const attack = t.seedProgram.replace("X = 1.0", "X = 1.0\nimport builtins\nbuiltins.HONE_PWNED = True");
      for (const program of [attack, t.seedProgram, t.seedProgram]) {
        const e = await pool.evaluate(program);
        expect(e).toMatchObject({ valid: true, score: 1 });
        // Evaluated again by a fresh evaluator: its module state starts afresh each time, untouched by the attack.
        expect(e.metrics).toMatchObject({ count: 1, pwned_before: false });
      }
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(/evaluator_state: kept.*ran the program in its own process/);
    });
  });

  it("that strips the EVOLVE markers before running it, or imports it compiled, is stopped too", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const stripped = inProcess(
      "    text = ''.join(l for l in open(program_path) if 'EVOLVE-BLOCK' not in l)\n    ns = {}\n    exec(compile(text, '/opt/elsewhere.py', 'exec'), ns)",
    );
    // An extension module in the program's folder stands for a program compiled there (a copy of one of Python's own).
    const compiled = `import builtins, glob, os, shutil, sys, sysconfig
COUNT = [0]
def evaluate(program_path):
    COUNT[0] += 1
    pwned = getattr(builtins, 'HONE_PWNED', False)
    here = os.path.dirname(program_path)
    so = glob.glob(os.path.join(sysconfig.get_config_var('DESTSHARED'), '_lsprof*.so'))[0]
    shutil.copy(so, here)
    sys.path.insert(0, here)
    try:
        import _lsprof
    finally:
        sys.path.remove(here)
    builtins.HONE_PWNED = True
    return {'combined_score': 1.0, 'count': COUNT[0], 'pwned_before': pwned}
`;
    for (const evaluator of [stripped, compiled]) {
      const t = keptTask(evaluator);
      await withKept(t, async (pool, notices) => {
        for (let i = 0; i < 2; i++)
          expect((await pool.evaluate(t.seedProgram)).metrics).toMatchObject({ count: 1, pwned_before: false });
        expect(notices).toHaveLength(1);
      });
    }
  });

  it("that uses eval, namedtuples, libraries by name, or forks that run the program stays kept", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(`import collections, ctypes, importlib.util, os, json
COUNT = [0]
def evaluate(program_path):
    COUNT[0] += 1
    assert eval('1 + 1') == 2
    Point = collections.namedtuple('Point', 'x y')
    ctypes.CDLL('libc.so.6').getpid()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        spec = importlib.util.spec_from_file_location('p', program_path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        os.write(w, json.dumps(m.run()).encode())
        os._exit(0)
    os.close(w)
    value = json.loads(os.read(r, 1000))
    os.waitpid(pid, 0)
    return {'combined_score': float(value), 'count': COUNT[0], 'p': Point(1, 2).y}
`);
    await withKept(t, async (pool, notices) => {
      const scores = [];
      for (let i = 0; i < 2; i++) scores.push((await pool.evaluate(t.seedProgram)).metrics.count);
      expect(scores).toEqual([1, 2]);
      expect(notices).toEqual([]);
    });
  });

  it("that only parses the program stays kept", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(
      "import ast\nCOUNT = [0]\ndef evaluate(program_path):\n    COUNT[0] += 1\n    ast.parse(open(program_path).read())\n    return {'combined_score': float(COUNT[0])}\n",
    );
    await withKept(t, async (pool, notices) => {
      const scores = [];
      for (let i = 0; i < 2; i++) scores.push((await pool.evaluate(t.seedProgram)).score);
      expect(scores).toEqual([1, 2]);
      expect(notices).toEqual([]);
    });
  });

  it("keeps each evaluation's output apart, and reads nothing from hone's channel", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(
      "import sys\nN = [0]\ndef evaluate(program_path):\n    N[0] += 1\n    print('out-%d' % N[0])\n    print('err-%d' % N[0], file=sys.stderr)\n    return {'combined_score': 1.0, 'stdin': sys.stdin.read()}\n",
    );
    await withKept(t, async (pool) => {
      const first = await pool.evaluate(t.seedProgram);
      const second = await pool.evaluate(t.seedProgram);
      expect(first.artifacts).toMatchObject({ stdout: "out-1\n", stderr: "err-1\n" });
      expect(second.artifacts).toMatchObject({ stdout: "out-2\n", stderr: "err-2\n" });
      expect(second.metrics.stdin).toBe("");
    });
  });

  it("kills what an evaluation left running and removes its files before the next", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(
      `import os, subprocess\ndef evaluate(program_path):\n    seen = os.path.exists('/tmp/left') or os.path.exists('/dev/shm/left')\n    open('/tmp/left', 'w').write('x'); open('/dev/shm/left', 'w').write('x')\n    subprocess.Popen(['sleep', '${SURVIVOR_MARK}'])\n    return {'combined_score': 1.0, 'seen': seen}\n`,
    );
    await withKept(t, async (pool) => {
      expect((await pool.evaluate(t.seedProgram)).metrics.seen).toBe(false);
      expect(survivors()).toEqual([]);
      expect((await pool.evaluate(t.seedProgram)).metrics.seen).toBe(false);
    });
  });

  // A task folder under the host's /tmp is bound read-only inside the evaluator's private /tmp, in a folder that
  // bubblewrap makes there. Emptying /tmp after an evaluation removes what was written beside the bind, at any depth,
  // and never walks into the bind: it once tried to remove each of its files, every evaluation.
  for (const [mode, honeYaml] of [
    ["a kept", KEPT],
    ["a fresh", undefined],
  ] as const)
    it(`empties ${mode} evaluator's /tmp without walking a task folder mounted in it`, async (ctx) => {
      requireTool(ctx, "bubblewrap", sealedMissing());
      const dir = join(mkdtempSync("/tmp/hone-walk-"), "task");
      cpSync(makeTask(WALK_WATCHER, { honeYaml }), dir, { recursive: true });
      const t = loadTaskFolder(dir);
      await withKept(t, async (pool) => {
        const first = await pool.evaluate(t.seedProgram);
        expect(first.metrics).toMatchObject({ left: 0, walked: 0 });
        for (let i = 0; i < 2; i++) {
          const { metrics } = await pool.evaluate(t.seedProgram);
          expect(metrics).toMatchObject({ left: 0, walked: 0 });
          expect(metrics.removals).toBeGreaterThanOrEqual(2); // the watcher sees the removals (a fresh one's add up)
        }
      });
    });

  it("times out an evaluation that overruns, and the next one is served", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(
      "import time\ndef evaluate(program_path):\n    if 'HANG' in open(program_path).read():\n        time.sleep(300)\n    return {'combined_score': 1.0}\n",
      { timeout: 1.5 },
    );
    await withKept(t, async (pool) => {
      const hung = await pool.evaluate(t.seedProgram.replace("X = 1.0", "X = 1.0  # HANG"));
      expect(hung).toMatchObject({ valid: false, timedOut: true });
      expect(hung.seconds).toBeLessThan(8);
      expect(await pool.evaluate(t.seedProgram)).toMatchObject({ valid: true, score: 1 });
    });
  });

  it("runs out of memory in one evaluation only", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const t = keptTask(
      "def evaluate(program_path):\n    if 'BIG' in open(program_path).read():\n        x = bytearray(1 << 34)\n    return {'combined_score': 1.0}\n",
      { honeYaml: `${KEPT}memory_mb: 512\n` },
    );
    await withKept(t, async (pool) => {
      const big = await pool.evaluate(t.seedProgram.replace("X = 1.0", "X = 1.0  # BIG"));
      expect(big.valid).toBe(false);
      expect(big.reason).toMatch(/out of memory/);
      expect(await pool.evaluate(t.seedProgram)).toMatchObject({ valid: true, score: 1 });
    });
  });
});
