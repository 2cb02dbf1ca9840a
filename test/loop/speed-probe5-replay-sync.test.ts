import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_QA_HARNESS, optimize } from "../../src/loop/optimize.ts";
import { replayRun } from "../../src/loop/replay.ts";
import { DEFAULT_HARNESS, runHarness } from "../../src/loop/run.ts";
import { offlineOptimizeSettings, ROOT, tempDir } from "../helpers/fixtures.ts";

// A replay's hone.db commits without an fsync each (SQLite's synchronous NORMAL in WAL mode: synced at checkpoints and
// at the close): with FULL, a replay of the replay bench's run made ~35 fsyncs of its WAL, ~0.1 s of a 0.6 s replay on
// a disk. A live run keeps FULL. Seen from outside: the synchronous level of every connection opened to write a
// hone.db, by the file it was opened on (`PRAGMA synchronous`: 1 NORMAL, 2 FULL).
const opened = vi.hoisted(() => [] as { path: string; synchronous: number }[]);

vi.mock("../../src/store/db.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/store/db.ts")>();
  return {
    ...real,
    openDb: (path: string, opts?: Parameters<typeof real.openDb>[1]) => {
      const db = real.openDb(path, opts);
      if (!opts?.readonly) opened.push({ path, synchronous: db.pragma("synchronous", { simple: true }) as number });
      return db;
    },
  };
});

/** The synchronous levels of the hone.db connections opened to write while `go` ran (the run's own, wherever it builds). */
async function levelsDuring(go: () => Promise<unknown>): Promise<number[]> {
  const before = opened.length;
  await go();
  return [
    ...new Set(
      opened
        .slice(before)
        .filter((o) => o.path.endsWith("hone.db"))
        .map((o) => o.synchronous),
    ),
  ];
}

describe("a replay's hone.db", () => {
  it("commits without a sync each where the live run syncs every commit (optimize)", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const small = { rounds: 1, proposals: 2, maxEvals: 2, noiseRepeats: 1, cache: { mode: "off" as const } };
    const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
    expect(await levelsDuring(() => optimize({ task: "circle-packing", ...models, ...small }, { outDir: run }))).toEqual([2]);
    let differences: string[] = [];
    expect(await levelsDuring(async () => ({ differences } = await replayRun(run, join(dir, "again"))))).toEqual([1]);
    expect(differences).toEqual([]);
  });

  it("commits without a sync each where the live run syncs every commit (run)", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const live = () => runHarness(DEFAULT_HARNESS, "circle-packing", { model: "offline", maxEvals: 2, outDir: run });
    expect(await levelsDuring(live)).toEqual([2]);
    let differences: string[] = [];
    expect(await levelsDuring(async () => ({ differences } = await replayRun(run, join(dir, "again"))))).toEqual([1]);
    expect(differences).toEqual([]);
  });

  it("commits without a sync each where the live run syncs every commit (optimize on a QA benchmark)", {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const benchmark = { id: "gsm8k", train: 4, validation: 2, dataDir: join(ROOT, "test", "fixtures", "datasets"), splitSeed: 0 };
    const settings = offlineOptimizeSettings({
      task: undefined,
      benchmark,
      seedHarness: DEFAULT_QA_HARNESS,
      proposals: 2,
      rounds: 1,
    });
    expect(await levelsDuring(() => optimize(settings, { outDir: run }))).toEqual([2]);
    let differences: string[] = [];
    expect(await levelsDuring(async () => ({ differences } = await replayRun(run, join(dir, "again"))))).toEqual([1]);
    expect(differences).toEqual([]);
  });
});
