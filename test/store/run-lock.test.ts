import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockRunDir, locksRefused, type RunLock } from "../../src/store/run-lock.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A run directory has one writer. The lock is the kernel's (a POSIX record lock through SQLite), so it goes with its
// process however that process ends, and it names its holder from /proc/locks.

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

/** A process of its own that takes the lock of `dir` (dropping its handle first when `drop`), then waits. */
function holder(dir: string, drop = false): Promise<ChildProcess> {
  const script = `
    const { lockRunDir } = await import(${JSON.stringify(join(ROOT, "src", "store", "run-lock.ts"))});
    let lock = lockRunDir(${JSON.stringify(dir)});
    if (!("release" in lock)) { console.log("refused"); process.exit(1); }
    if (${drop}) { lock = undefined; globalThis.gc(); globalThis.gc(); }
    console.log("held");
    setInterval(() => { if (${drop}) globalThis.gc(); }, 50);
  `;
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => (String(d).includes("held") ? resolve(child) : reject(new Error(String(d)))));
    child.on("exit", (code) => reject(new Error(`the holder exited with ${code}`)));
  });
}

const taken = (r: ReturnType<typeof lockRunDir>): RunLock => {
  if (!("release" in r)) throw new Error(`refused: ${JSON.stringify(r)}`);
  return r;
};

describe("lockRunDir", () => {
  it("refuses a second holder in the same process, and lets one in once released", () => {
    const dir = tempDir("run-lock-");
    const first = taken(lockRunDir(dir));
    const second = lockRunDir(dir);
    expect(second).toEqual({ heldBy: { pid: process.pid, command: expect.stringContaining("node") } });
    expect(readdirSync(dir)).toEqual(["hone.lock"]); // its journal kept in memory, none beside it
    first.release();
    first.release(); // a second release changes nothing
    taken(lockRunDir(dir)).release();
  });

  it("tells a file system that takes locks from one that refuses them, leaving nothing behind", () => {
    const dir = tempDir("run-lock-probe-");
    const held = taken(lockRunDir(dir));
    expect(locksRefused(dir)).toBe(false); // a lock on a file of its own, beside the one held
    expect(readdirSync(dir)).toEqual(["hone.lock"]);
    held.release();
    expect(locksRefused(join(dir, "no-such-folder"))).toBe(false); // no file made there: nothing known
  });

  it("refuses while another process holds it, naming that process, and is free as soon as it is killed", async () => {
    const dir = tempDir("run-lock-");
    const child = await holder(dir);
    const refused = lockRunDir(dir);
    expect(refused).toEqual({ heldBy: { pid: child.pid, command: expect.stringContaining("--expose-gc") } });
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await gone;
    taken(lockRunDir(dir)).release();
  });

  it("keeps the lock when its holder drops the handle and the connection is collected", async () => {
    const dir = tempDir("run-lock-");
    const child = await holder(dir, true);
    await new Promise((r) => setTimeout(r, 300)); // several collections in the holder
    expect(lockRunDir(dir)).toMatchObject({ heldBy: { pid: child.pid } });
  });

  it("lets exactly one of two processes trying at the same moment hold it, the other naming it", {
    timeout: 60_000,
  }, async () => {
    // Each process tries the lock of folder i at the same wall-clock moment, holds it ~8 ms if it got it, and says
    // what it got. With BEGIN EXCLUSIVE, both were refused and named nobody ~9 times in 10. Whether two holds
    // overlapped is told by a marker file each holder makes with O_EXCL after taking the lock and removes before
    // letting go, never by comparing two processes' clocks: each process's performance.timeOrigin is off the wall
    // clock by up to a millisecond or more (its start under load), and a hold that follows another's at once is
    // closer than that.
    const base = tempDir("run-lock-race-");
    const start = Date.now() + 3000;
    const script = (n: number) => `
      const { mkdirSync, unlinkSync, writeFileSync } = await import("node:fs");
      const { lockRunDir } = await import(${JSON.stringify(join(ROOT, "src", "store", "run-lock.ts"))});
      const out = [];
      for (let i = 0; i < ${n}; i++) {
        const dir = ${JSON.stringify(base)} + "/" + i;
        mkdirSync(dir, { recursive: true });
        const at = ${start} + i * 15;
        while (Date.now() < at) {}
        const r = lockRunDir(dir);
        if (!("release" in r)) { out.push(r); continue; }
        let overlapped = false;
        try { writeFileSync(dir + "/holding", "", { flag: "wx" }); } catch { overlapped = true; }
        while (Date.now() < at + 8) {}
        if (!overlapped) unlinkSync(dir + "/holding");
        out.push({ held: true, overlapped });
        r.release();
      }
      console.log(JSON.stringify({ pid: process.pid, out }));
    `;
    type Got = { held?: true; overlapped?: boolean; heldBy?: { pid?: number } };
    const run = () =>
      new Promise<{ pid: number; out: Got[] }>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script(40)], {
          cwd: ROOT,
          stdio: ["ignore", "pipe", "inherit"],
        });
        children.push(child);
        let text = "";
        child.stdout?.on("data", (d) => (text += d));
        child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`exited with ${code}`))));
      });
    const [a, b] = await Promise.all([run(), run()]);
    a.out.forEach((x, i) => {
      const y = b.out[i] as Got;
      if (x.held && y.held)
        expect([x, y], `folder ${i}`).toEqual([
          { held: true, overlapped: false },
          { held: true, overlapped: false },
        ]);
      else if (x.held) expect(y, `folder ${i}`).toMatchObject({ heldBy: { pid: a.pid } });
      else expect([x, y], `folder ${i}`).toMatchObject([{ heldBy: { pid: b.pid } }, { held: true }]);
    });
  });
});
