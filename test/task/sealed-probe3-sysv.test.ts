// Third attacker's probe (issue 12): System V IPC objects outlive the processes that make them. In the warm pool an
// evaluator's sandbox (one IPC namespace) serves evaluation after evaluation, and a program run in the evaluator's
// own process (as many upstream evaluators run theirs) left a shared memory segment, a message queue and a semaphore
// set that the next candidate's evaluation found: a channel between candidates, and memory no limit counts once
// detached. The cold path (a sandbox per evaluation) never showed them. The evaluator's own, made as it loaded, stay.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram, sealed } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { makeTask } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

const LIBC = `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
`;

// Imports the program into its own process (OpenEvolve's examples do), after making a segment of its own at load.
const EVALUATOR = `${LIBC}import importlib.util
OWN = libc.shmget(0x484f4e00, 4096, 0o1000 | 0o600)
def evaluate(program_path):
    spec = importlib.util.spec_from_file_location("candidate", program_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    own = 'own kept' if libc.shmget(0x484f4e00, 4096, 0o600) == OWN else 'own gone'
    return {'combined_score': 1.0, 'seen': ' '.join(module.run() + [own])}
`;

const PROGRAM = `${LIBC}KEY = 0x484f4e45
def run():
    seen = []
    for kind, get in (('shm', lambda f: libc.shmget(KEY, 1 << 20, f)), ('msg', lambda f: libc.msgget(KEY + 1, f)),
                      ('sem', lambda f: libc.semget(KEY + 2, 1, f))):
        found = get(0o600) >= 0
        seen.append(kind + (' found' if found else ' absent'))
        if not found:
            get(0o1000 | 0o600)
    return seen
`;

const FRESH = "shm absent msg absent sem absent own kept";
const OWN_KEY = 0x484f4e00;
const KEY = 0x484f4e45;

/**
 * Removes, by key, every object these programs make, should one have been made outside a sandbox (a run without
 * bubblewrap, a sandbox that failed): the host's IPC namespace must not keep them. Absent ones are no error.
 */
function removeHostObjects(): void {
  const hex = (n: number) => `0x${n.toString(16)}`;
  for (const [flag, key] of [
    ["-M", OWN_KEY],
    ["-M", KEY],
    ["-Q", KEY + 1],
    ["-S", KEY + 2],
  ] as const)
    spawnSync("ipcrm", [flag, hex(key)], { stdio: "ignore" });
}

describe("System V IPC objects an evaluation leaves", () => {
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  beforeAll(async () => {
    task = loadTaskFolder(makeTask(EVALUATOR, { timeout: 30 }));
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => {
    pool?.close();
    removeHostObjects();
  });

  it("are gone for the next evaluation of the same warm evaluator, which keeps its own", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    expect(sealed(task)).toBe(true);
    for (let i = 0; i < 3; i++) expect((await pool.evaluate(PROGRAM)).metrics.seen).toBe(FRESH);
  });

  it("are never seen on the cold path either", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    for (let i = 0; i < 2; i++) expect((await evaluateProgram(task, PROGRAM)).metrics.seen).toBe(FRESH);
  });
});
