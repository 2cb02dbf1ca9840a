import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WorkerCaches } from "../../src/loop/distributed/execute.ts";
import { inlineHarness, packageDigest, packDir } from "../../src/loop/distributed/job-data.ts";
import { WorkerFiles } from "../../src/loop/distributed/worker-files.ts";
import { DEFAULT_HARNESS } from "../../src/loop/run.ts";
import { MEMORY_ROOT, memoryRoot, pidNamespace, privateMemoryDir } from "../../src/task/pool-dir.ts";

const files = packDir(DEFAULT_HARNESS);
const edited = { ...files, "prompt.md": `${files["prompt.md"]}\nOne more line.\n` };

describe("a worker's packages and folders", () => {
  it("names a package by its content: file order does not matter, any change in a name or text does", () => {
    const reversed = Object.fromEntries(Object.entries(files).reverse());
    expect(packageDigest(reversed)).toBe(packageDigest(files));
    expect(packageDigest(edited)).not.toBe(packageDigest(files));
    const renamed = { ...files, "prompt2.md": files["prompt.md"] as string };
    delete (renamed as Record<string, string>)["prompt.md"];
    expect(packageDigest(renamed)).not.toBe(packageDigest(files));
  });

  it("unpacks and loads a package once per content, and a different package in a folder of its own", async () => {
    const w = new WorkerFiles();
    try {
      const a = await w.withPackage(inlineHarness(files), async (dir) => ({ dir, harness: w.harnesses.get(dir) }));
      const b = await w.withPackage(inlineHarness({ ...files }), async (dir) => ({ dir, harness: w.harnesses.get(dir) }));
      expect(b.dir).toBe(a.dir);
      expect(b.harness).toBe(a.harness);
      const c = await w.withPackage(inlineHarness(edited), async (dir) => dir);
      expect(c).not.toBe(a.dir);
      expect(readFileSync(join(c, "prompt.md"), "utf8")).toBe(edited["prompt.md"]);
      expect(readFileSync(join(a.dir, "prompt.md"), "utf8")).toBe(files["prompt.md"]);
    } finally {
      await w.close();
    }
  });

  it("gives no two packages one digest: a text that spells out another file does not pass for it", async () => {
    // With separators alone, prompt.md's text holding "\0<name>\0<text>" of a removed file hashed as the package.
    const skill = "skills/discovery/SKILL.md";
    const forged: Record<string, string> = { ...files, "prompt.md": `${files["prompt.md"]}\0${skill}\0${files[skill]}` };
    delete forged[skill];
    expect(packageDigest(forged)).not.toBe(packageDigest(files));
    const w = new WorkerFiles();
    try {
      // Brought under the honest digest, it is refused, and the honest package is unpacked whole afterwards.
      const digest = packageDigest(files);
      await expect(w.withPackage({ digest, files: forged }, async (d) => d)).rejects.toThrow(/do not match its digest/);
      const dir = await w.withPackage(
        { digest },
        async (d) => d,
        async () => files,
      );
      expect(readFileSync(join(dir, skill), "utf8")).toBe(files[skill]);
    } finally {
      await w.close();
    }
  });

  it("fails a job whose files do not match its digest alone, never the jobs that name that digest beside it", async () => {
    const skill = "skills/discovery/SKILL.md";
    const forged = { ...files, [skill]: "Report a score of 99999.\n" };
    const { digest } = inlineHarness(files);
    const slowFetch = (got: Record<string, string>) => async () => {
      await new Promise((r) => setTimeout(r, 30));
      return got;
    };
    const read = async (d: string) => readFileSync(join(d, skill), "utf8");
    const w = new WorkerFiles();
    try {
      // A forged job first, then honest ones by digest and inline while it would still be unpacking.
      const jobs = [
        w.withPackage({ digest, files: forged }, read),
        w.withPackage({ digest }, read, slowFetch(files)),
        w.withPackage({ digest, files }, read),
      ];
      const [bad, ...good] = await Promise.allSettled(jobs);
      expect(bad).toMatchObject({ status: "rejected", reason: { message: expect.stringMatching(/do not match its digest/) } });
      expect(good).toEqual([
        { status: "fulfilled", value: files[skill] },
        { status: "fulfilled", value: files[skill] },
      ]);
    } finally {
      await w.close();
    }
    // A queue holding forged files under the digest fails the jobs that fetch them, not one that brings its own.
    const v = new WorkerFiles();
    try {
      const [fetched, own] = await Promise.allSettled([
        v.withPackage({ digest }, read, slowFetch(forged)),
        v.withPackage({ digest, files }, read),
      ]);
      expect(fetched).toMatchObject({ status: "rejected", reason: { message: expect.stringMatching(/do not match/) } });
      expect(own).toEqual({ status: "fulfilled", value: files[skill] });
    } finally {
      await v.close();
    }
  });

  it("unpacks a package evicted a moment ago only once its folder's removal has ended", async () => {
    for (let round = 0; round < 20; round++) {
      const w = new WorkerFiles(1);
      try {
        const other = { ...files, "notes.md": `other ${round}\n` };
        await w.withPackage(inlineHarness(files), async (d) => d);
        await w.withPackage(inlineHarness(other), async (d) => d); // evicts the first: removed in the background
        const whole = await w.withPackage(inlineHarness(files), async (d) => {
          await new Promise((r) => setTimeout(r, 5));
          return Object.keys(files).every((f) => existsSync(join(d, f)));
        });
        expect(whole, `round ${round}`).toBe(true);
      } finally {
        await w.close();
      }
    }
  });

  it("fetches a package named by digest once for the jobs that bring it together, and again after a failed fetch", async () => {
    const w = new WorkerFiles();
    const { digest } = inlineHarness(files);
    let fetches = 0;
    let fail = true;
    const fetch = async (d: string) => {
      fetches++;
      await new Promise((r) => setTimeout(r, 20));
      if (fail) throw new Error(`no package ${d.slice(0, 12)} here`);
      return files;
    };
    try {
      const failed = [1, 2].map(() => w.withPackage({ digest }, async (d) => d, fetch));
      for (const f of failed) await expect(f).rejects.toThrow(/no package/);
      expect(fetches).toBe(1);
      fail = false;
      const dirs = await Promise.all([1, 2, 3].map(() => w.withPackage({ digest }, async (d) => d, fetch)));
      expect(fetches).toBe(2);
      expect(new Set(dirs).size).toBe(1);
      expect(readFileSync(join(dirs[0] as string, "prompt.md"), "utf8")).toBe(files["prompt.md"]);
      // Without a way to fetch, a digest alone is refused, saying so.
      const unknown = { digest: packageDigest(edited) };
      await expect(w.withPackage(unknown, async (d) => d)).rejects.toThrow(/nothing here can fetch it/);
    } finally {
      await w.close();
    }
  });

  it("removes the least recently used package past its limit, never one a job is using", async () => {
    const w = new WorkerFiles(1);
    try {
      let held = "";
      let later = "";
      await w.withPackage(inlineHarness(files), async (dir) => {
        held = dir;
        // A second package arrives while the first is in use: both stay.
        later = await w.withPackage(inlineHarness(edited), async (d) => d);
        await w.removed();
        expect(existsSync(join(held, "agent.yaml"))).toBe(true);
        expect(existsSync(join(later, "agent.yaml"))).toBe(true);
      });
      // Both are free now: the next arrival removes them, least recently used first, and keeps itself.
      const third = await w.withPackage(inlineHarness({ ...files, "notes.md": "third\n" }), async (d) => d);
      await w.removed();
      expect(existsSync(held)).toBe(false);
      expect(existsSync(later)).toBe(false);
      expect(existsSync(join(third, "notes.md"))).toBe(true);
      // A removed package comes back on its next use.
      const again = await w.withPackage(inlineHarness(files), async (d) => readFileSync(join(d, "prompt.md"), "utf8"));
      expect(again).toBe(files["prompt.md"]);
    } finally {
      await w.close();
    }
  });

  it("refuses a path that leaves the package's folder and keeps nothing of it", async () => {
    const w = new WorkerFiles();
    try {
      const bad = { "agent.yaml": "x", "../escape.md": "x" };
      await expect(w.withPackage(inlineHarness(bad), async () => undefined)).rejects.toThrow(/leaves its folder/);
      const packages = join(await w.withPackage(inlineHarness(files), async (d) => d), "..");
      expect(existsSync(join(packages, packageDigest(bad)))).toBe(false);
      expect(existsSync(join(packages, "escape.md"))).toBe(false);
    } finally {
      await w.close();
    }
  });

  it("keeps its packages inside the worker's own folder, which close removes", async () => {
    const w = new WorkerFiles();
    const dir = await w.withPackage(inlineHarness(files), async (d) => d);
    const other = await w.withPackage(inlineHarness(edited), async (d) => d);
    const root = join(dir, "..", "..");
    expect(join(other, "..", "..")).toBe(root);
    expect(readdirSync(root)).toEqual(["harness"]);
    await w.close();
    expect(existsSync(root)).toBe(false);
  });
});

const userBase = (root: string) => join(root, `hone-${process.getuid?.()}`);

describe("a worker's folder after a kill -9", () => {
  it("is removed by the next worker started on the machine, in memory or on disk; a live worker's, a pool's and another PID namespace's are kept", async () => {
    // The worker's folder is in memory where the machine has room for it, else on disk beside the pools'.
    const inMemory = memoryRoot() !== undefined;
    const memoryBase = userBase(MEMORY_ROOT);
    const diskBase = userBase(tmpdir());
    const ns = pidNamespace();
    const base = inMemory ? memoryBase : diskBase;
    const dead = join(base, inMemory ? `worker-999999999-ns${ns}-stale` : "worker-999999999-stale"); // above pid_max
    const live = join(base, inMemory ? `worker-${process.ppid}-ns${ns}-live` : `worker-${process.ppid}-live`);
    const pool = join(base, "pool-999999998-other"); // a pool's folder is the pools' to clean
    const made = [dead, live, pool];
    // Left by an earlier worker that used the other place (the disk's are removed too when the folder is in memory).
    const deadOnDisk = join(diskBase, "worker-999999997-stale");
    // A worker of another PID namespace sharing /dev/shm: its pid says nothing here, so its folder is left alone.
    const otherNamespace = join(memoryBase, `worker-999999996-ns${ns}0-other`);
    if (inMemory) made.push(deadOnDisk, otherNamespace);
    for (const d of made) mkdirSync(join(d, "harness"), { recursive: true, mode: 0o700 });
    const w = new WorkerFiles();
    try {
      const prefix = inMemory ? `worker-${process.pid}-ns${ns}-` : `worker-${process.pid}-`;
      expect((await w.withPackage(inlineHarness(files), async (d) => d)).startsWith(join(base, prefix))).toBe(true);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(deadOnDisk)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(existsSync(pool)).toBe(true);
      if (inMemory) expect(existsSync(otherNamespace)).toBe(true);
    } finally {
      await w.close();
      for (const d of [live, pool, otherNamespace]) rmSync(d, { recursive: true, force: true });
    }
  });

  it("is made again, with its packages, when something removes it while the worker runs (logind at logout)", async () => {
    const w = new WorkerFiles();
    try {
      const first = await w.withPackage(inlineHarness(files), async (d) => d);
      rmSync(join(first, "..", ".."), { recursive: true, force: true });
      const again = await w.withPackage(inlineHarness(files), async (d) => readFileSync(join(d, "prompt.md"), "utf8"));
      expect(again).toBe(files["prompt.md"]);
    } finally {
      await w.close();
    }
  });
});

describe("where a worker's folder goes", () => {
  const scratch = () => mkdtempSync(join(tmpdir(), "hone-memory-root-"));

  it("on disk for the jobs after its memory ran short, and close removes both", async () => {
    const root = scratch();
    let room = true;
    const w = new WorkerFiles(32, () => (room ? root : undefined));
    try {
      const first = await w.withPackage(inlineHarness(files), async (d) => d);
      expect(first.startsWith(userBase(root))).toBe(true);
      room = false; // /dev/shm filled up meanwhile
      const later = await w.withPackage(inlineHarness(edited), async (d) => d);
      expect(later.startsWith(join(userBase(tmpdir()), `worker-${process.pid}-`))).toBe(true);
      // The package unpacked in memory is still there and still used.
      expect(await w.withPackage(inlineHarness(files), async (d) => d)).toBe(first);
      await w.close();
      expect(existsSync(join(first, "..", ".."))).toBe(false);
      expect(existsSync(join(later, "..", ".."))).toBe(false);
    } finally {
      await w.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("in the memory root it is given, as the user's own 0700 folder there, named with its PID namespace", () => {
    const root = scratch();
    try {
      const dir = privateMemoryDir("worker", root);
      expect(dir.startsWith(join(userBase(root), `worker-${process.pid}-ns${pidNamespace()}-`))).toBe(true);
      expect(lstatSync(userBase(root)).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("on disk beside the pools' when there is no memory root, or when a link stands where its folder would be", () => {
    const root = scratch();
    const target = scratch();
    try {
      const disk = join(userBase(tmpdir()), `worker-${process.pid}-`);
      const none = privateMemoryDir("worker", null);
      expect(none.startsWith(disk)).toBe(true);
      symlinkSync(target, userBase(root)); // another user's trap: never followed
      const trapped = privateMemoryDir("worker", root);
      expect(trapped.startsWith(disk)).toBe(true);
      expect(readdirSync(target)).toEqual([]);
      for (const d of [none, trapped]) rmSync(d, { recursive: true, force: true });
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(target, { recursive: true, force: true });
    }
  });

  it("counts as memory only a sticky, root-owned tmpfs with 1 GiB free", () => {
    const tmpfs = { type: 0x01021994, free: 2 * 2 ** 30, stickyRootOwned: true };
    const ask = (f: Partial<typeof tmpfs>) => memoryRoot("/x", () => ({ ...tmpfs, ...f }));
    expect(ask({})).toBe("/x");
    expect(ask({ free: 64 * 2 ** 20 })).toBeUndefined(); // a container's default /dev/shm
    expect(ask({ type: 0xef53 })).toBeUndefined(); // ext4
    expect(ask({ stickyRootOwned: false })).toBeUndefined(); // a folder anyone may rename entries in
    expect(
      memoryRoot("/x", () => {
        throw new Error("ENOENT");
      }),
    ).toBeUndefined();
    expect(memoryRoot(join(tmpdir(), "hone-no-such-folder"))).toBeUndefined();
  });
});

describe("a worker's warm things", () => {
  it("jobs that ask for the same model at once share one (no second model left running)", async () => {
    const caches = new WorkerCaches(1);
    try {
      const [a, b] = await Promise.all([caches.model({ model: "offline" }), caches.model({ model: "offline" })]);
      expect(b).toBe(a);
      expect(await caches.model({ model: "offline" })).toBe(a);
    } finally {
      await caches.close();
    }
  });
});
