import { spawn } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone, killAfterLine, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A run has one writer: a `--resume` of a run that is still going is refused before it writes anything, naming the
// process that writes it; the run goes on undisturbed; a run that was killed can be resumed at once.

const slow = ["--executor-offline-latency-ms", "150", "--proposer-offline-latency-ms", "150"];

const status = (dir: string) => {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  try {
    return (db.prepare("SELECT status FROM runs WHERE id = 'run'").get() as { status: string }).status;
  } finally {
    db.close();
  }
};

describe("one writer per run directory (CLI)", () => {
  it("refuses to resume a run that another process is writing, and that run finishes untouched", async () => {
    const dir = join(tempDir("run-lock-e2e-"), "run");
    const first = spawn(
      process.execPath,
      [
        join(ROOT, "bin", "hone.js"),
        ...optimizeArgs({ rounds: 2, proposals: 2, maxEvals: 2, out: dir, json: false, extra: slow }),
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    const ended = new Promise<number | null>((resolve) => first.on("close", resolve));
    await new Promise<void>((resolve) =>
      first.stdout.on("data", (d) => {
        out += d;
        if (/^round 0:/m.test(out)) resolve();
      }),
    );
    const second = await hone(["optimize", "--resume", dir, "--json"]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`${dir} is being written by another hone process (pid ${first.pid}: `);
    expect(second.stderr).toMatch(/wait for it to end, or stop it, before resuming the run/);
    expect(await ended).toBe(0);
    expect(out).toMatch(/round 2 done/);
    expect(status(dir)).toBe("finished");
  });

  it("resumes a killed run at once: the kernel dropped its lock with it", async () => {
    const dir = join(tempDir("run-lock-e2e-"), "run");
    await killAfterLine(optimizeArgs({ rounds: 2, proposals: 2, maxEvals: 1, out: dir, json: false }), /^round 1:/);
    expect(status(dir)).toBe("running");
    const resumed = await hone(["optimize", "--resume", dir, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(status(dir)).toBe("finished");
  });
});
