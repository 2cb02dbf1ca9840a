import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { readExperiment } from "../../src/compare/experiment.ts";
import { planCells } from "../../src/compare/plan.ts";
import { runExperiment } from "../../src/compare/run-experiment.ts";
import { refuseOtherVersion } from "../../src/loop/hone-version.ts";
import { HONE_VERSION, type IdentityParts, identityDigest } from "../../src/measure/identity.ts";
import { createRunDb, openDb } from "../../src/store/db.ts";
import { recordedHoneVersion } from "../../src/store/receipts.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const TASK = join(ROOT, "test", "fixtures", "noisy-minimization");

/**
 * Rewrites the run in `out` as a hone `version` before 0.2.0 would have recorded it: no version in its meta, every
 * rollout identity naming it (digests follow).
 */
function recordAs(out: string, version: string): string[] {
  const db = new Database(join(out, "hone.db"));
  // hone before 0.2.0 wrote no version into the run's meta: its rollouts' identities name it.
  db.prepare("DELETE FROM meta WHERE key = 'hone'").run();
  const rows = db.prepare("SELECT id, identity FROM rollouts").all() as { id: string; identity: string }[];
  for (const r of rows) {
    const older: IdentityParts = { ...(JSON.parse(r.identity) as IdentityParts), hone: version };
    db.prepare("UPDATE rollouts SET identity = ?, identity_digest = ? WHERE id = ?").run(
      JSON.stringify(older),
      identityDigest(older),
      r.id,
    );
  }
  db.close();
  return rows.map((r) => r.id);
}

describe("a run recorded by another hone version than this one", () => {
  // Before: the replay ran until it met a record the other version never made ("this evaluation was never recorded",
  // exit 7), or listed opaque digest lines; a resume mixed two versions' rules in one run.
  it("is refused for replay up front, naming both versions, with no replay folder left", { timeout: 180_000 }, async () => {
    const out = join(tempDir(), "run");
    const made = await hone(["run", "--task", TASK, "--model", "offline", "--max-evals", "3", "--out", out, "--json"], {
      timeoutMs: 120_000,
    });
    expect(made.code, made.stderr).toBe(0);
    expect(recordAs(out, "0.0.9").length).toBeGreaterThan(0);

    const replay = await hone(["replay", out, "--json"], { timeoutMs: 120_000 });
    expect(replay.code, replay.stderr).toBe(2);
    expect(replay.stderr).toContain(`was recorded by hone 0.0.9, and this is hone ${HONE_VERSION}`);
    expect(existsSync(`${out}-replay`)).toBe(false);
  });

  it("is refused for --resume, naming both versions, and the run is left as it was", { timeout: 180_000 }, async () => {
    const out = join(tempDir(), "opt");
    const args = ["optimize", "--task", TASK, "--executor", "offline", "--proposer", "offline", "--proposals", "1"];
    const made = await hone([...args, "--rounds", "1", "--max-evals", "3", "--out", out], { timeoutMs: 120_000 });
    expect(made.code, made.stderr).toBe(0);
    recordAs(out, "0.0.9");
    const before = readFileSync(join(out, "hone.db"));
    const resumed = await hone(["optimize", "--resume", out, "--rounds", "2"], { timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stderr).toContain(`was recorded by hone 0.0.9, and this is hone ${HONE_VERSION}`);
    expect(readFileSync(join(out, "hone.db")).equals(before)).toBe(true);
  });
});

/** The version the run in `dir` recorded, read as hone reads it. */
function versionOf(dir: string): string | null {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    return recordedHoneVersion(db);
  } finally {
    db.close();
  }
}

describe("the version a run's records follow", () => {
  it("is written at its start, so a run stopped before any measurement (a QA or train run too) is refused", () => {
    const dir = tempDir();
    createRunDb(join(dir, "hone.db"), "train", {});
    expect(() => refuseOtherVersion(dir, "resume", versionOf(dir))).not.toThrow();
    const db = new Database(join(dir, "hone.db"));
    db.prepare("UPDATE meta SET value = '9.9.9' WHERE key = 'hone'").run();
    db.close();
    expect(() => refuseOtherVersion(dir, "resume", versionOf(dir))).toThrow(/recorded by hone 9\.9\.9, and this is hone/);
    // A run someone sent is untrusted: its version is shown escaped.
    const sent = new Database(join(dir, "hone.db"));
    sent.prepare("UPDATE meta SET value = ? WHERE key = 'hone'").run("1\u001b[2J");
    sent.close();
    expect(() => refuseOtherVersion(dir, "resume", versionOf(dir))).toThrow(/recorded by hone 1\\u001b\[2J,/);
  });
});

describe("an experiment folder holding cells an earlier hone ran", () => {
  it("is refused before anything runs, naming the cells, with nothing written", async () => {
    const out = tempDir();
    const exp = readExperiment(join(ROOT, "test", "fixtures", "compare", "small.yaml"));
    const cell = planCells(exp)[0]?.dir as string;
    mkdirSync(join(out, cell), { recursive: true });
    // hone 0.1.0's manifest: no version in it.
    writeFileSync(join(out, "experiment.json"), JSON.stringify({ format: "hone-experiment/1", planned: [cell] }));
    const before = readFileSync(join(out, "experiment.json"), "utf8");
    await expect(runExperiment(exp, { out })).rejects.toThrow(/holds cells hone before 0\.2\.0 ran .*give another --out/);
    expect(readFileSync(join(out, "experiment.json"), "utf8")).toBe(before);
  });
});
