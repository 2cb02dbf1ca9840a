import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cellRecordSchema } from "../../src/compare/cell.ts";
import { cellIdentityDifferences } from "../../src/compare/comparable.ts";
import { buildReport } from "../../src/compare/report.ts";
import { reportNotes } from "../../src/compare/text.ts";
import { contentHash } from "../../src/harness/files.ts";
import { RunContext } from "../../src/loop/optimize-context.ts";
import { controlMismatch } from "../../src/loop/optimize-ratchet.ts";
import { Recording } from "../../src/loop/recording.ts";
import type { RolloutRow } from "../../src/store/rollouts.ts";
import { taskContentHash } from "../../src/task/content-hash.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { loadEntry, readRegistry } from "../../src/task/registry.ts";
import { cellRecord, identity } from "../compare/records.ts";
import { makeTask, tempDir, write } from "../helpers/fixtures.ts";

const EVALUATOR = "from helper import SCALE\n\ndef evaluate(program_path):\n    return {'combined_score': SCALE}\n";
const PLAIN = EVALUATOR.replace("from helper import SCALE\n", "SCALE = 1.0\n");

/** A task folder beside a python_path folder `lib` (holding helper.py), named relative to it. */
function taskWithLib(): { dir: string; lib: string } {
  const root = tempDir();
  write(join(root, "lib", "helper.py"), "SCALE = 1.0\n");
  const dir = join(root, "task");
  cpSync(makeTask(EVALUATOR, { honeYaml: "python_path: [../lib]\n" }), dir, { recursive: true });
  return { dir, lib: join(root, "lib") };
}

/** A recorded run's folder whose rollouts carry these identities (id → identity). */
function recordedRun(rollouts: Record<string, unknown>): string {
  const dir = tempDir("hone-recorded-");
  const db = new Database(join(dir, "hone.db"));
  db.exec("CREATE TABLE rollouts (id TEXT PRIMARY KEY, identity TEXT)");
  for (const [id, identity] of Object.entries(rollouts))
    db.prepare("INSERT INTO rollouts (id, identity) VALUES (?, ?)").run(id, JSON.stringify(identity));
  db.close();
  return dir;
}

const replaying = (source: string) => new Recording(tempDir("hone-replay-"), { cache: { mode: "replay" }, replayOf: source });

describe("the task hash of a manifest entry", () => {
  it("leaves the manifest loader's defaults out: an entry that overrides nothing hashes as its folder", () => {
    const root = tempDir();
    const made = makeTask(PLAIN);
    cpSync(made, join(root, "t"), { recursive: true });
    writeFileSync(join(root, "MANIFEST_eft.json"), JSON.stringify({ tasks: [{ task_id: "plain_task", rel_path: "t" }] }));
    const e = readRegistry(join(root, "MANIFEST_eft.json")).find((x) => x.id === "plain_task");
    if (!e) throw new Error("no entry");
    expect(taskContentHash(loadEntry(e))).toBe(contentHash(join(root, "t")));
  });
});

describe("a replay whose task folder changed since", () => {
  it("still says to put the folder back when the folder itself changed", () => {
    const { dir } = taskWithLib();
    const task = loadTaskFolder(dir);
    const source = recordedRun({ "r01-k1": { task: { id: task.id, content: "0".repeat(64) } } });
    const recording = replaying(source);
    try {
      expect(() => recording.evaluator(async () => ({}) as never, taskContentHash(task))).toThrow(/back as it was/);
    } finally {
      recording.close();
    }
  });
});

describe("a python_path folder's share of the task hash", () => {
  it("hashes a file past the budget by its size and time, never reading it whole", () => {
    const { dir, lib } = taskWithLib();
    // 5 GiB of holes: no space on disk, and more than one read can hold.
    execFileSync("truncate", ["-s", "5G", join(lib, "weights.bin")]);
    const task = loadTaskFolder(dir);
    const a = taskContentHash(task);
    utimesSync(join(lib, "weights.bin"), new Date(1_000_000), new Date(1_000_000));
    expect(taskContentHash(task)).not.toBe(a);
  });

  it("is refused, naming the entry and the cap, for a folder of more files than the hash reads", { timeout: 120_000 }, () => {
    const { dir, lib } = taskWithLib();
    execFileSync("python3", [
      "-c",
      "import os,sys\nfor d in range(101):\n  p=os.path.join(sys.argv[1],'pkg%d'%d); os.mkdir(p)\n  for f in range(1000): open(os.path.join(p,'m%d.py'%f),'w').close()",
      lib,
    ]);
    let refused: unknown;
    try {
      taskContentHash(loadTaskFolder(dir));
    } catch (err) {
      refused = err;
    }
    expect((refused as Error | undefined)?.message).toMatch(/holds more than 100000 files/);
    expect((refused as { field?: string } | undefined)?.field).toBe("python_path[0]");
  });
});

describe("the evaluator's versions, kept on disk between processes", () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.HONE_CACHE_DIR;
    process.env.HONE_CACHE_DIR = tempDir("hone-cache-");
    vi.resetModules();
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.HONE_CACHE_DIR;
    else process.env.HONE_CACHE_DIR = saved;
  });
  const fresh = async () => (await import("../../src/task/evaluator-runtime.ts")).evaluatorRuntime;

  it("are read from the cache in a new process, and asked afresh once numpy changed where it was found", async () => {
    const lib = tempDir("hone-lib-");
    write(join(lib, "numpy-9.9.9.dist-info", "METADATA"), "Metadata-Version: 2.1\nName: numpy\nVersion: 9.9.9\n");
    const task = { python: "python3", pythonPath: [lib], dir: tempDir("hone-task-") };
    expect((await (await fresh())(task))?.numpy).toBe("9.9.9");
    const folder = join(process.env.HONE_CACHE_DIR as string, "evaluator-runtime");
    const [entry] = readdirSync(folder);
    if (!entry) throw new Error("no entry kept");
    // Served from the entry, not asked: what the entry says is what comes back.
    const kept = JSON.parse(readFileSync(join(folder, entry), "utf8"));
    kept.probe.numpy = "7.7.7";
    writeFileSync(join(folder, entry), JSON.stringify(kept));
    vi.resetModules();
    expect((await (await fresh())(task))?.numpy).toBe("7.7.7");
    // An upgrade (a new metadata folder in place of the old) is seen by the folder's time: asked afresh.
    renameSync(join(lib, "numpy-9.9.9.dist-info"), join(lib, "numpy-9.9.10.dist-info"));
    writeFileSync(join(lib, "numpy-9.9.10.dist-info", "METADATA"), "Metadata-Version: 2.1\nName: numpy\nVersion: 9.9.10\n");
    utimesSync(lib, new Date(2_000_000), new Date(2_000_000));
    vi.resetModules();
    expect((await (await fresh())(task))?.numpy).toBe("9.9.10");
  });
});

const runtime = (numpy: string) => ({ python: "3.11.2", numpy, sandbox: "bubblewrap" as const });

describe("a replayed run's identities", () => {
  it("name each rollout's own recorded evaluator (a run resumed after a numpy upgrade measured under two)", () => {
    const base = { task: { id: "t", content: "c".repeat(64), metric: "m", direction: "maximize" } };
    const source = recordedRun({
      "r01-k1": { task: { ...base.task, evaluator: runtime("1.26.4") } },
      "r02-k1": { task: { ...base.task, evaluator: runtime("2.0.0") } },
      "r03-k1": { task: { ...base.task } },
    });
    const recording = replaying(source);
    try {
      const ctx = { recording, identityBase: { ...base, task: { ...base.task, evaluator: runtime("1.26.4") } } };
      const of = (id: string) => RunContext.prototype.identityOf.call(ctx as unknown as RunContext, id)?.task.evaluator;
      expect(of("r01-k1")?.numpy).toBe("1.26.4");
      expect(of("r02-k1")?.numpy).toBe("2.0.0");
      expect(of("r03-k1")).toBeUndefined();
      expect(of("r09-k1")?.numpy).toBe("1.26.4"); // not in the recorded run: the run's own
    } finally {
      recording.close();
    }
  });
});

describe("a paired control evaluated under another evaluator", () => {
  const row = (id: string, numpy: string, harness: string): RolloutRow => ({
    id,
    candidate_id: "r01-k1",
    kind: id.endsWith("parent") ? "parent" : "candidate",
    seed: 3,
    status: "completed",
    error: null,
    best_score: 1,
    own_max: 1,
    own_min: 1,
    best_program: "x",
    evals_used: 1,
    identity: JSON.stringify({
      task: { id: "t", content: "c", metric: "m", direction: "maximize", evaluator: runtime(numpy) },
      executor: { endpoint: "offline", model: "offline", dialect: "vllm" },
      sampling: { seed: 3 },
      budget: { maxEvals: 2, timeoutSec: 60 },
      harness,
      hone: "0.2.0",
    }),
  });

  it("is still its control: the difference is named, not refused", () => {
    const notes: string[] = [];
    expect(controlMismatch(row("r01-k1", "2.0.0", "h1"), row("r01-k1-parent", "1.26.4", "h0"), "h0", notes)).toEqual([]);
    expect(notes).toEqual(['task.evaluator.numpy: "2.0.0" ≠ "1.26.4"']);
    // Anything else still refuses it.
    const other = row("r01-k1-parent", "1.26.4", "h9");
    expect(controlMismatch(row("r01-k1", "2.0.0", "h1"), other, "h0").join("; ")).toMatch(/not the parent/);
  });
});

describe("compare cells measured under different evaluator versions", () => {
  const under = (numpy: string) =>
    identity((id) => {
      id.measurement.task.evaluator = runtime(numpy);
    });

  it("are compared, and the report names which cells and seeds ran under which", () => {
    const recs = [
      cellRecord({ method: "random", seed: 0, final: [0.5], identity: under("1.26.4") }),
      cellRecord({ method: "random", seed: 1, final: [0.6], identity: under("1.26.4") }),
      cellRecord({ method: "greedy", seed: 0, final: [0.7], identity: under("2.0.0") }),
      cellRecord({ method: "greedy", seed: 1, final: [0.8], identity: under("1.26.4") }),
    ];
    for (const r of recs) expect(cellRecordSchema.safeParse(r).success).toBe(true);
    expect(cellIdentityDifferences(under("1.26.4"), under("2.0.0"))).toEqual([]);
    const report = buildReport(recs, { baseline: "random" });
    expect(report.comparisons[0]?.status).toBe("compared");
    expect(report.cells.every((c) => c.identity_conflicts.length === 0)).toBe(true);
    const note = reportNotes(report).find((n) => n.includes("different evaluator versions"));
    expect(note).toContain("Python 3.11.2, numpy 2.0.0, under bubblewrap: gsm8k-slice/qa/greedy (seed 0)");
    expect(note).toContain("gsm8k-slice/qa/greedy (seed 1)");
  });

  it("name nothing when every cell ran under the same versions", () => {
    const recs = [0, 1].map((seed) => cellRecord({ method: "random", seed, final: [0.5], identity: under("1.26.4") }));
    expect(buildReport(recs, { baseline: "random" }).evaluator_differences).toEqual([]);
    expect(reportNotes(buildReport(recs, { baseline: "random" })).join("\n")).not.toMatch(/evaluator versions/);
  });
});
