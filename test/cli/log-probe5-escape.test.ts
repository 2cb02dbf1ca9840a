import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { HarnessRepo } from "../../src/store/git.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// `hone log` over a run folder from someone else: its hone.db holds a gate error and a changed file name with
// terminal escapes and line breaks, which must neither drive the terminal nor print a line of their own.
const run = join(tempDir("hone-log-escape-"), "run");
const ESC = "\u001b";

beforeAll(async () => {
  await writeSyntheticRun(run, { rounds: 1, perRound: 3, refuseEvery: 3 });
  const db = new Database(join(run, "hone.db"));
  db.prepare("UPDATE candidates SET gate_error = ? WHERE status = 'invalid'").run(`bad${ESC}]0;owned\u0007\nround 9  → moved`);
  db.prepare("UPDATE candidates SET changed = ? WHERE status = 'valid' AND round = 1").run(
    JSON.stringify([`prompt.md${ESC}[2J\r* forged`]),
  );
  // A version whose prompt holds escapes, recorded as a round-1 candidate's: `hone diff` shows it escaped.
  const parent = (db.prepare("SELECT commit_sha FROM candidates WHERE id = 'r00-seed'").get() as { commit_sha: string })
    .commit_sha;
  const pkg = join(tempDir("hone-log-escape-pkg-"), "pkg");
  mkdirSync(pkg);
  writeFileSync(join(pkg, "prompt.md"), `You search.${ESC}[2J${ESC}]0;owned\u0007\r* forged\n`);
  const sha = await new HarnessRepo(join(run, "harnesses.git")).commitDir(pkg, "hostile", parent, 9);
  db.prepare("UPDATE candidates SET commit_sha = ?, parent_commit = ? WHERE id = 'r01-k1'").run(sha, parent);
  db.close();
}, 60_000);

describe("hone log over hostile records", () => {
  it("prints each record on its own line with control characters escaped", async () => {
    const r = await hone(["log", run]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(ESC);
    expect(r.stdout).not.toContain("\u0007");
    expect(r.stdout).not.toContain("\r");
    expect(r.stdout).not.toMatch(/^round 9/m);
    expect(r.stdout).toContain("bad\\u001b]0;owned\\u0007\\u000around 9");
    expect(r.stdout).toContain("prompt.md\\u001b[2J\\u000d* forged");
  });

  it("hone diff shows a version's text with its control characters escaped, its lines kept", async () => {
    const r = await hone(["diff", run, "r01-k1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(ESC);
    expect(r.stdout).not.toContain("\r");
    expect(r.stdout).toMatch(/^\+You search\.\\u001b\[2J\\u001b\]0;owned\\u0007\\u000d\* forged$/m);
  });
});
