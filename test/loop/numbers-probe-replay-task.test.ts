import { appendFileSync, cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A stochastic task (unseeded noise), copied so that the test can change its files after the run was recorded.
const FIXTURE = join(ROOT, "test", "fixtures", "noisy-minimization");

function taskCopy(): string {
  const dir = join(tempDir(), "noisy-minimization");
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

const runs: Record<string, (task: string, out: string) => string[]> = {
  run: (task, out) => ["run", "--task", task, "--model", "offline", "--max-evals", "3", "--out", out],
  optimize: (task, out) => [
    "optimize",
    ...["--task", task, "--rounds", "1", "--proposals", "2", "--max-evals", "3", "--seed", "4", "--concurrency", "2"],
    ...["--cache", "off", "--out", out],
  ],
};

describe("a replay of a run whose task folder changed since", () => {
  // Before: every evaluation missed its record (they are keyed by the task's content hash), so the replay stopped
  // with exit 7 and "this evaluation was never recorded (evaluation 0 of a program in …)", naming no cause.
  it.each(Object.keys(runs))(
    "hone %s: refused before anything runs, naming the task folder and both hashes",
    {
      timeout: 240_000,
    },
    async (kind) => {
      const task = taskCopy();
      const out = join(tempDir(), "run");
      const made = await hone([...(runs[kind] as (t: string, o: string) => string[])(task, out), "--json"], {
        timeoutMs: 200_000,
      });
      expect(made.code, made.stderr).toBe(0);

      const evaluator = join(task, "evaluator.py");
      const original = readFileSync(evaluator, "utf8");
      appendFileSync(evaluator, "\n# edited after the run\n");
      const refused = await hone(["replay", out], { timeoutMs: 120_000 });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(/replay: the task has changed since .* was recorded/);
      expect(refused.stderr).toContain(`(${task})`);
      expect(refused.stderr).not.toMatch(/never recorded/);
      expect(existsSync(`${out}-replay`)).toBe(false);

      writeFileSync(evaluator, original);
      const replayed = await hone(["replay", out, "--json"], { timeoutMs: 120_000 });
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(JSON.parse(replayed.stdout).differences).toEqual([]);
    },
  );
});

describe("a replay of a run on a built-in task another hone recorded", () => {
  // A built-in task's folder changes only with hone itself: "put the task folder back" misled (found by review).
  it("says that this hone's copy of the task differs, and how to replay it", { timeout: 120_000 }, async () => {
    const out = join(tempDir(), "run");
    const made = await hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "2", "--out", out]);
    expect(made.code, made.stderr).toBe(0);
    // The run as an older hone, whose circle-packing folder hashed otherwise, would have recorded it.
    const db = new Database(join(out, "hone.db"));
    const rows = db.prepare("SELECT rowid, identity FROM rollouts").all() as { rowid: number; identity: string }[];
    for (const row of rows) {
      const identity = JSON.parse(row.identity);
      identity.task.content = "0".repeat(64);
      db.prepare("UPDATE rollouts SET identity = ? WHERE rowid = ?").run(JSON.stringify(identity), row.rowid);
    }
    db.close();
    const refused = await hone(["replay", out], { timeoutMs: 100_000 });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      "the built-in task circle-packing of this hone differs from the one of the hone that recorded the run",
    );
    expect(refused.stderr).not.toContain("Put the task folder");
  });
});
