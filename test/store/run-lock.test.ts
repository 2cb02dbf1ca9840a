import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockRunDir, type RunLock } from "../../src/store/run-lock.ts";
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
});
