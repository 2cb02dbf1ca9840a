import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// bubblewrap can work where a program cannot have namespaces of its own inside it (user namespaces refused to
// everything but bwrap: Ubuntu's AppArmor rule for unprivileged ones, a setuid bwrap, a user namespace limit). Then
// programs share their zygote's sandbox: one program's kill(-1) ended the program evaluated beside it ("ended without
// a result"), and another read the scratch folder of the program beside it, while hone said nothing (the notice was
// only for a missing bubblewrap). Simulated here with `unshare -Ur` and a user namespace limit of 0 inside it, where
// bwrap still works (as root of that namespace) and hone_sandbox's own unshare is refused; a fresh HOME so the probe
// of the interpreter is not answered from the disk cache.

const EVALUATOR = `import json
from hone_runtime import run_program, ProgramError
def evaluate(program_path):
    try:
        out = run_program(program_path, 'run', timeout=20)
    except ProgramError as e:
        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}
    return {'combined_score': 1.0, 'validity': 1.0, 'seen': json.dumps(out)}
`;
const VICTIM = "def run():\n    import time\n    time.sleep(6)\n    return 'victim done'\n";
const KILLER = "def run():\n    import os, signal\n    os.kill(-1, signal.SIGKILL)\n    return 'sent'\n";

const DRIVER = (dir: string) => `
import { mkdirSync, writeFileSync } from "node:fs";
import { loadTaskFolder } from ${JSON.stringify(join(ROOT, "src/task/discovery-task.ts"))};
import { EvaluatorPool } from ${JSON.stringify(join(ROOT, "src/task/evaluator-pool.ts"))};
import { isolationNotice, isolationSupport } from ${JSON.stringify(join(ROOT, "src/task/python-env.ts"))};
const task = ${JSON.stringify(join(dir, "task"))};
mkdirSync(task);
writeFileSync(task + "/evaluator.py", ${JSON.stringify(EVALUATOR)});
writeFileSync(task + "/initial_program.py", "def run():\\n    return 1\\n");
writeFileSync(task + "/config.yaml", "prompt:\\n  system_message: a test task\\nevaluator:\\n  timeout: 30\\n");
const pool = await EvaluatorPool.start(loadTaskFolder(task), { size: 2 });
const victim = pool.evaluate(${JSON.stringify(VICTIM)});
await new Promise((r) => setTimeout(r, 1500));
await pool.evaluate(${JSON.stringify(KILLER)});
const v = await victim;
pool.close();
console.log(JSON.stringify({ bwrap: isolationSupport().bwrap, notice: isolationNotice() ?? null, victimValid: v.valid }));
`;

describe("bubblewrap without namespaces for the programs inside it", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap"));

  it("says what programs can then do to each other, which they can", () => {
    const dir = tempDir("hone-nested-probe-");
    writeFileSync(join(dir, "driver.mts"), DRIVER(dir));
    const tsx = join(ROOT, "node_modules/.bin/tsx");
    const script = `echo 0 > /proc/sys/user/max_user_namespaces && exec "${tsx}" "${join(dir, "driver.mts")}"`;
    const out = execFileSync("unshare", ["-Ur", "sh", "-c", script], {
      env: { ...process.env, HOME: dir, HONE_NO_BWRAP: "" },
      encoding: "utf8",
      timeout: 180_000,
    });
    const got = JSON.parse(out.trim().split("\n").at(-1) as string);
    expect(got.bwrap).toBe(true);
    expect(got.victimValid).toBe(false); // the gap is real: the program beside it was killed
    expect(got.notice).toMatch(/bubblewrap works, but a program cannot have namespaces of its own inside it/);
    expect(got.notice).toMatch(/killing or stopping the programs evaluated beside them/);
    expect(got.notice).toMatch(/scratch folders of the programs evaluated beside them/);
  });
});
