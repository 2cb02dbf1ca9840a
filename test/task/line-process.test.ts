// The pool's long-lived processes (src/task/line-process.ts): kill() ends what the process started, and nothing it
// left holding its pipes keeps hone waiting. Found as a hang: bubblewrap killed while it started left its sandbox's
// first process blocked for good on a parent that was gone, holding the pipes, and `hone optimize` never exited.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LineProcess } from "../../src/task/line-process.ts";
import { eventually } from "../helpers/processes.ts";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const left: number[] = [];
afterEach(() => {
  for (const pid of left.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
});

/** A shell that starts `child` in the background (its pid written to a file), then says it is ready and waits. */
function start(child: string): { p: LineProcess; pidFile: string } {
  const dir = mkdtempSync(join(tmpdir(), "hone-line-"));
  const pidFile = join(dir, "pid");
  const script = `${child} & echo $! > ${pidFile}; echo '{"ready": true}'; wait`;
  return { p: new LineProcess("bash", ["-c", script], { PATH: process.env.PATH ?? "/usr/bin:/bin" }, dir), pidFile };
}

/** Whether `pid` leads a session of its own (setsid ran): /proc/<pid>/stat's session field is its pid. */
const ownSession = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]) === pid;
  } catch {
    return false;
  }
};

const pidOf = async (file: string) => {
  expect(await eventually(() => existsSync(file) && readFileSync(file, "utf8").trim() !== "")).toBe(true);
  const pid = Number(readFileSync(file, "utf8"));
  left.push(pid);
  return pid;
};

describe("a pool process (LineProcess)", () => {
  it("kill() ends what it started in its own process group, not only itself", async () => {
    const { p, pidFile } = start("sleep 300");
    expect((await p.ready(10_000)).ready).toBe(true);
    const pid = await pidOf(pidFile);
    expect(alive(pid)).toBe(true);
    p.kill();
    expect(await eventually(() => !alive(pid))).toBe(true);
  });

  it("kill() lets go of the pipes that a process it could not reach still holds", async () => {
    // setsid: a session of its own, beyond the group kill, with the shell's stdout and stderr.
    const { p, pidFile } = start("setsid sleep 300");
    expect((await p.ready(10_000)).ready).toBe(true);
    const pid = await pidOf(pidFile);
    expect(await eventually(() => ownSession(pid))).toBe(true);
    const closed = new Promise<void>((resolve) => p.child.stdout?.once("close", () => resolve()));
    p.kill();
    await closed; // without it, the stream stays open as long as the sleep lives, and so does hone
    expect(alive(pid)).toBe(true);
    expect(p.child.stdout?.destroyed && p.child.stderr?.destroyed && p.child.stdin?.destroyed).toBe(true);
  });

  it("a process that exits by itself takes what it left in its group with it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hone-line-"));
    const pidFile = join(dir, "pid");
    const script = `sleep 300 > /dev/null 2>&1 & echo $! > ${pidFile}; echo '{"ready": true}'; exit 0`;
    const p = new LineProcess("bash", ["-c", script], { PATH: process.env.PATH ?? "/usr/bin:/bin" }, dir);
    expect((await p.ready(10_000)).ready).toBe(true);
    const pid = await pidOf(pidFile);
    expect(await eventually(() => p.exited)).toBe(true);
    expect(await eventually(() => !alive(pid))).toBe(true);
  });

  it("a command that cannot start answers at once that it is not ready", async () => {
    const p = new LineProcess("/nonexistent/hone-no-such-command", [], {}, tmpdir());
    const m = await p.ready(3_000);
    expect(m.ready).toBe(false);
    expect(m.error).toMatch(/ENOENT/); // the reason, not "not ready within 3 s"
  });

  it("reads the lines a process wrote just before it exited (a refusal to start, a kept evaluator's last reply)", async () => {
    // Its exit can be seen before its last lines are read: 5 in 300 starts were lost here before.
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
    let lost = 0;
    for (let i = 0; i < 300; i++) {
      const p = new LineProcess("sh", ["-c", `echo '{"ready": false, "error": "refused"}'; exit 1`], env, tmpdir());
      if ((await p.ready(10_000)).error !== "refused") lost++;
    }
    for (let i = 0; i < 100; i++) {
      const script = `echo '{"ready": true}'; read line; echo '{"id": 1, "exiting": true}'; exit 0`;
      const p = new LineProcess("sh", ["-c", script], env, tmpdir());
      const ready = await p.ready(10_000);
      const reply = ready.ready ? await p.request(1, {}, 10_000) : undefined;
      if (reply?.exiting !== true) lost++;
    }
    expect(lost).toBe(0);
  });

  it("a process that exits by itself does not keep hone waiting on what it left holding its pipes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hone-line-"));
    const pidFile = join(dir, "pid");
    const script = `setsid sleep 300 & echo $! > ${pidFile}; echo '{"ready": true}'; exit 0`;
    const p = new LineProcess("bash", ["-c", script], { PATH: process.env.PATH ?? "/usr/bin:/bin" }, dir);
    expect((await p.ready(10_000)).ready).toBe(true);
    await pidOf(pidFile);
    expect(await eventually(() => p.exited)).toBe(true);
    // Its pipes are let go shortly after it exited (the last lines are read first), though the sleep holds them.
    expect(await eventually(() => p.child.stdout?.destroyed === true)).toBe(true);
  });
});
