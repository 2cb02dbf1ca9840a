import { mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { claimDestination } from "../../src/loop/run-destination.ts";
import { refuseNonEmpty } from "../../src/loop/run-dir.ts";
import { claimNewRunDir, holdRunDir, NO_LOCK, takeRunDir } from "../../src/loop/run-writer.ts";
import { lockRunDir, locksRefused, RUN_LOCK_FILE } from "../../src/store/run-lock.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { refusal } from "../helpers/refusal.ts";

// What a second writer is told, for each answer the store's lock can give; and the way out for a file system whose
// locks refuse everyone.

vi.mock("../../src/store/run-lock.ts", async (actual) => {
  const real = await actual<typeof import("../../src/store/run-lock.ts")>();
  return { ...real, lockRunDir: vi.fn(real.lockRunDir), locksRefused: vi.fn(real.locksRefused) };
});
const lock = vi.mocked(lockRunDir);
const probe = vi.mocked(locksRefused);

afterEach(() => {
  lock.mockClear();
  delete process.env[NO_LOCK];
});

describe("holdRunDir", () => {
  it("names the process that writes the run", () => {
    lock.mockReturnValueOnce({ heldBy: { pid: 4242, command: "node bin/hone.js optimize --out runs/x" } });
    const err = refusal(() => holdRunDir("/runs/x"));
    expect(err.exit).toBe("usage");
    expect(err.message).toBe(
      "/runs/x is being written by another hone process (pid 4242: node bin/hone.js optimize --out runs/x); wait for it to end, or stop it, before resuming the run (or choose another --out)",
    );
  });

  it("says when the holder cannot be named, and how to go on where every lock is refused", () => {
    lock.mockReturnValueOnce({ heldBy: {} });
    const err = refusal(() => holdRunDir("/nfs/runs/x"));
    expect(err.message).toMatch(/^\/nfs\/runs\/x is locked by a process this machine cannot name .*set HONE_RUN_LOCK=off$/);
  });

  it("refuses a lock file it cannot use, naming it", () => {
    lock.mockReturnValueOnce({ failed: "file is not a database" });
    expect(refusal(() => holdRunDir("/runs/x")).message).toBe(
      "/runs/x: its lock file hone.lock cannot be locked (file is not a database); remove it if no hone process is writing the run",
    );
  });

  it("writes unguarded where the file system takes no locks, and says so", () => {
    lock.mockReturnValueOnce({ release: () => {}, unguarded: "SQLITE_IOERR_LOCK" });
    const notices: string[] = [];
    holdRunDir("/fuse/x", (t) => notices.push(t)).release();
    expect(notices).toEqual(["/fuse/x is on a file system without locks (SQLITE_IOERR_LOCK): nothing refuses a second writer"]);
  });

  it("with HONE_RUN_LOCK=off takes no lock at all, and says so", () => {
    const dir = tempDir("run-writer-");
    const held = holdRunDir(dir);
    process.env[NO_LOCK] = "off";
    const notices: string[] = [];
    const second = holdRunDir(dir, (t) => notices.push(t));
    expect(second.unguarded).toBe("HONE_RUN_LOCK=off");
    expect(notices[0]).toMatch(/HONE_RUN_LOCK=off: .* is written without its lock/);
    second.release();
    held.release();
  });
});

describe("holdRunDir of a folder removed meanwhile", () => {
  it("refuses to hold a lock file that was replaced between its look and its lock", () => {
    const dir = tempDir("hold-replaced-");
    writeFileSync(join(dir, RUN_LOCK_FILE), "");
    const real = lock.getMockImplementation() as typeof lockRunDir;
    // As if a failed start removed the folder while this process opened its lock file, and a new one was made.
    lock.mockImplementationOnce((d) => {
      const held = real(d);
      renameSync(join(d, RUN_LOCK_FILE), join(d, "old.lock"));
      writeFileSync(join(d, RUN_LOCK_FILE), "");
      return held;
    });
    expect(refusal(() => holdRunDir(dir)).message).toBe(
      `${dir} was removed or replaced while this process took it; look at it before resuming`,
    );
    const free = lockRunDir(dir);
    expect("release" in free).toBe(true);
    if ("release" in free) free.release();
  });
});

describe("a start cut short", () => {
  it("leaves a folder a new run may take: its lock file and a hone.db being built do not count", () => {
    const dir = tempDir("run-writer-");
    writeFileSync(join(dir, RUN_LOCK_FILE), "");
    writeFileSync(join(dir, "hone.db.new"), "");
    expect(() => refuseNonEmpty(dir)).not.toThrow();
    writeFileSync(join(dir, "hone.db"), "");
    expect(() => refuseNonEmpty(dir)).toThrow(/already exists and is not empty/);
  });
});

describe("a new run's folder (claimNewRunDir, which takeRunDir calls; claimDestination: hone run)", () => {
  const was = process.cwd();
  afterEach(() => {
    process.chdir(was);
    lock.mockReset(); // back to the real lock
    probe.mockReset();
  });
  const inTemp = () => {
    const cwd = tempDir("run-writer-");
    process.chdir(cwd);
    return cwd;
  };

  it("gives runs without --out started together a folder each, and refuses an --out another holds, naming it", () => {
    const cwd = inTemp();
    const claims = [1, 2, 3].map(() => claimNewRunDir(undefined, "eval-gsm8k-test"));
    const names = claims.map((c) => c.dir.slice(join(cwd, "runs").length + 1));
    expect(new Set(names).size).toBe(3);
    const err = refusal(() => claimNewRunDir(claims[0]?.dir, "eval"));
    expect(err.exit).toBe("usage");
    expect(err.message).toContain(`is being written by another hone process (pid ${process.pid}`);
    for (const c of claims) c.lock.release();
    writeFileSync(join(claims[0]?.dir as string, "hone.db"), "");
    expect(refusal(() => claimNewRunDir(claims[0]?.dir, "eval")).message).toMatch(/already exists and is not empty/);
  });

  it("writes a new run into the folder a symbolic link --out names, and refuses a link to nothing", () => {
    const cwd = inTemp();
    mkdirSync(join(cwd, "disk", "run1"), { recursive: true });
    symlinkSync(join(cwd, "disk", "run1"), join(cwd, "out"));
    const got = claimNewRunDir(join(cwd, "out"), "eval");
    expect(got.dir).toBe(join(cwd, "disk", "run1"));
    got.lock.release();
    symlinkSync(join(cwd, "nowhere"), join(cwd, "dangling"));
    // Before, mkdir met the link and the error was an internal one (exit 1).
    const err = refusal(() => claimNewRunDir(join(cwd, "dangling"), "eval"));
    expect(err.exit).toBe("usage");
    expect(err.message).toBe(
      `${join(cwd, "dangling")} is a symbolic link to nothing; make the folder it names, or choose another --out`,
    );
  });

  it("says plainly why a folder cannot be made, and refuses a file as an --out", () => {
    const cwd = inTemp();
    writeFileSync(join(cwd, "afile"), "");
    // Before, a folder under a file was an internal error (exit 1), and with the retry a "removed or replaced" race.
    const under = refusal(() => claimNewRunDir(join(cwd, "afile", "sub"), "eval"));
    expect(under.exit).toBe("usage");
    expect(under.message).toBe(
      `${join(cwd, "afile", "sub")}: the run's folder cannot be made there (ENOTDIR); choose another --out`,
    );
    expect(refusal(() => claimNewRunDir("/sys/hone-x", "eval")).message).toMatch(/cannot be made there \(E(PERM|ACCES|ROFS)\)/);
    expect(refusal(() => claimNewRunDir(join(cwd, "afile"), "eval")).message).toBe(
      `${join(cwd, "afile")} is a file, not a folder; choose another --out`,
    );
  });

  it("refuses a folder that holds anything without writing into it", () => {
    const dir = join(inTemp(), "mine");
    mkdirSync(dir);
    writeFileSync(join(dir, "notes.txt"), "");
    expect(refusal(() => claimNewRunDir(dir, "eval")).message).toBe(
      `${dir} already exists and is not empty; choose another --out`,
    );
    expect(readdirSync(dir)).toEqual(["notes.txt"]);
  });

  it("takes hone run's hidden folder again when the file it locked was replaced meanwhile, never a file no one sees", () => {
    const out = join(inTemp(), "x");
    const real = lock.getMockImplementation() as typeof lockRunDir;
    // As if the holder before it removed the folder (renamed away) and another run made it anew, between the look and
    // the lock: the file locked is not the one looked at.
    lock.mockImplementationOnce((dir) => {
      renameSync(dir, `${dir}.gone`);
      mkdirSync(dir);
      return real(dir);
    });
    const dest = claimDestination(out, "cp");
    expect(lock).toHaveBeenCalledTimes(2);
    expect(dest.partial).toBe(join(dirname(out), ".x.partial"));
    dest.abandon();
  });

  it("hone run on a file system that takes no locks says so once, of its --out, never of its hidden folder", () => {
    const out = join(inTemp(), "x");
    lock.mockReturnValueOnce({ release: () => {}, unguarded: "SQLITE_IOERR_LOCK" });
    const notices: string[] = [];
    const dest = claimDestination(out, "cp", (t) => notices.push(t));
    expect(notices).toEqual([
      `${out} is built without its lock (SQLITE_IOERR_LOCK): a second run into it is not refused until it finishes`,
    ]);
    dest.abandon();
  });

  it("stops, instead of trying name after name, on a file system that refuses every lock", () => {
    inTemp();
    lock.mockReturnValue({ heldBy: {} });
    probe.mockReturnValue(true); // a lock on a file of its own is refused too
    expect(refusal(() => claimNewRunDir(undefined, "eval")).message).toMatch(/locked by a process this machine cannot name/);
    expect(refusal(() => claimDestination(undefined, "cp")).message).toMatch(/locked by a process this machine cannot name/);
    expect(lock).toHaveBeenCalledTimes(2);
  });

  it("goes on to the next name past a holder it cannot name where locks work (no /proc/locks, as on macOS)", () => {
    const cwd = inTemp();
    lock.mockReturnValueOnce({ heldBy: {} }); // the first name's holder, unnamed
    const got = claimNewRunDir(undefined, "eval");
    expect(probe).toHaveBeenCalledTimes(1);
    expect(got.dir).toMatch(/-2$/);
    expect(readdirSync(join(cwd, "runs")).sort()).toEqual(
      [got.dir.split("/").pop(), got.dir.split("/").pop()?.slice(0, -2)].sort(),
    );
    got.lock.release();
  });

  it("gives up after ten thousand names all held, instead of making folders for ever", () => {
    const cwd = inTemp();
    lock.mockReturnValue({ heldBy: { pid: 4242 } });
    expect(refusal(() => claimNewRunDir(undefined, "eval")).message).toMatch(/-10000 are all taken or held; choose an --out$/);
    expect(readdirSync(join(cwd, "runs")).length).toBe(10_000);
  });
});

describe("an optimize or train run's folder (takeRunDir)", () => {
  const was = process.cwd();
  afterEach(() => process.chdir(was));
  const inTemp = () => {
    const cwd = tempDir("take-run-dir-");
    process.chdir(cwd);
    return cwd;
  };
  const take = (dir: string | undefined, resume = false) => takeRunDir({ dir, prefix: "opt-cp", resume });

  it("gives new runs without --out started together a folder each, and a failed start leaves none of them", () => {
    const cwd = inTemp();
    const runs = [1, 2, 3].map(() => take(undefined));
    // The same second's name with -2, -3 (or the next second's, if the clock ticked between them).
    expect(new Set(runs.map((r) => r.dir)).size).toBe(3);
    for (const r of runs) expect(r.dir.startsWith(join(cwd, "runs", "opt-cp-"))).toBe(true);
    for (const r of runs) expect(lockRunDir(r.dir)).toMatchObject({ heldBy: { pid: process.pid } });
    for (const r of runs) r.abandon();
    expect(readdirSync(join(cwd, "runs"))).toEqual([]);
  });

  it("refuses an --out another run holds as a new run's (not a resume's), and one holding a run with a way on", () => {
    const out = join(inTemp(), "x");
    const first = take(out);
    const err = refusal(() => take(out));
    expect(err.exit).toBe("usage");
    expect(err.message).toContain(`${out} is being written by another hone process (pid ${process.pid}`);
    expect(err.message).toMatch(/wait for it to end, or stop it, or choose another --out$/);
    writeFileSync(join(out, "hone.db"), "");
    first.lock.release();
    expect(refusal(() => take(out)).message).toBe(`${out} already exists and is not empty; choose another --out, or --resume it`);
  });

  it("undoes a failed start once: a folder it made goes, one that was there keeps its lock file, a resumed run stays whole", () => {
    const cwd = inTemp();
    const made = take(join(cwd, "made"));
    writeFileSync(join(made.dir, "hone.db"), "");
    made.abandon();
    expect(readdirSync(cwd)).toEqual([]);
    mkdirSync(join(cwd, "mine"));
    const mine = take("mine");
    expect(mine.dir).toBe(join(cwd, "mine"));
    writeFileSync(join(mine.dir, "hone.db"), "");
    mine.abandon();
    mine.abandon(); // once: the second changes nothing
    // Its lock file stays (removed while held, it could be locked twice at once); a folder holding only it is free.
    expect(readdirSync(join(cwd, "mine"))).toEqual([RUN_LOCK_FILE]);
    writeFileSync(join(cwd, "mine", "hone.db"), "");
    const resumed = take("mine", true);
    resumed.abandon();
    expect(readdirSync(join(cwd, "mine")).sort()).toEqual(["hone.db", RUN_LOCK_FILE]);
    const after = lockRunDir(join(cwd, "mine"));
    expect("release" in after).toBe(true);
    if ("release" in after) after.release();
  });

  it("is its writer's once let go: abandon, come late (a stop's cleanup), removes nothing", () => {
    const cwd = inTemp();
    const done = take(join(cwd, "done"));
    writeFileSync(join(done.dir, "hone.db"), "");
    done.lock.release();
    done.abandon();
    expect(readdirSync(join(cwd, "done")).sort()).toEqual(["hone.db", RUN_LOCK_FILE]);
  });
});
