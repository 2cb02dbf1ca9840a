// The program zygote and the evaluator process die with hone through PDEATHSIG, which only works when hone is still
// alive at the moment they set it. Started without bubblewrap, each is told hone's pid and exits at once when its
// parent is already someone else (hone died during its start-up), instead of serving forever as an orphan.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PYTHON_DIR } from "../../src/task/python-env.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

function start(script: string, args: string[]) {
  const child = spawn("python3", [join(PYTHON_DIR, script), ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, out: () => out };
}

const zygote = (parent: number) =>
  start("hone_program_zygote.py", [
    JSON.stringify({ socket: join(tempDir(), "z.sock"), preload: [], limits: {}, slots: 1, parent }),
  ]);

describe("no orphan when hone dies while they start", () => {
  it("a program zygote whose recorded parent is not its parent exits before serving", async () => {
    const z = zygote(2 ** 22 + 7); // never a live parent's pid here: pid_max is at most 2^22
    expect(await z.exited).toBe(0);
    expect(z.out()).not.toMatch(/ready/);
  });

  it("with hone as its parent it serves (the check is not a blanket exit), each call in namespaces of its own", async (ctx) => {
    requireTool(ctx, "namespaces");
    const z = zygote(process.pid);
    try {
      await expect.poll(() => z.out(), { timeout: 30_000 }).toMatch(/"ready": true/);
      // It enters its namespaces before numpy loads (whose threads would make that impossible), sandbox or not.
      expect(JSON.parse(z.out().trim().split("\n")[0] as string).isolation).toMatchObject({ namespaces: true });
    } finally {
      z.child.kill("SIGKILL");
      await z.exited;
    }
  });

  it("an evaluator process whose recorded parent is not its parent exits before loading the evaluator", async () => {
    const dir = tempDir();
    const evaluator = join(dir, "evaluator.py");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(evaluator, "def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
    const e = start("hone_pool.py", [evaluator, "{}", JSON.stringify({ parent: 2 ** 22 + 7 })]);
    expect(await e.exited).toBe(0);
    expect(e.out()).toBe("");
  });
});
