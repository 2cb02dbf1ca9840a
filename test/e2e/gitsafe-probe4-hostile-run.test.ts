import { execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// `hone log`, `hone diff` and `hone receipt` over a run folder from someone else: its harnesses.git names programs
// in its config (and in a .gitconfig beside it), and its hone.db records a commit id that is an option to git.
const marks = tempDir("hone-gitsafe-e2e-marks-");
const run = join(tempDir("hone-gitsafe-e2e-"), "run");

function tripwire(name: string): string {
  const path = join(marks, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\necho ran > ${join(marks, name)}\ncat\n`);
  chmodSync(path, 0o755);
  return path;
}

let incumbent: string;
const ran = () => readdirSync(marks).filter((f) => !f.endsWith(".sh") && f !== "hooks");

beforeAll(async () => {
  await writeSyntheticRun(run, { rounds: 1, perRound: 2 });
  const gitDir = join(run, "harnesses.git");
  const env = { PATH: process.env.PATH, HOME: tempDir(), GIT_CONFIG_NOSYSTEM: "1" };
  const db = new Database(join(run, "hone.db"));
  incumbent = (db.prepare("SELECT commit_sha FROM candidates WHERE id = 'r01-k0'").get() as { commit_sha: string }).commit_sha;
  db.prepare("UPDATE candidates SET commit_sha = ? WHERE id = 'r01-k1'").run(`--output=${join(marks, "written")}`);
  db.close();
  writeFileSync(join(gitDir, "refs", "heads", "main"), `${incumbent}\n`);
  execFileSync("git", ["--git-dir", gitDir, "gc", "-q"], { env }); // packed: git reads the versions, not hone
  const hooks = join(marks, "hooks");
  mkdirSync(hooks);
  for (const h of ["reference-transaction", "post-checkout"])
    writeFileSync(join(hooks, h), `#!/bin/sh\ntouch ${join(marks, h)}\n`, { mode: 0o755 });
  const config = [
    `[core]\n\tfsmonitor = ${tripwire("fsmonitor")}\n\thooksPath = ${hooks}\n\tpager = ${tripwire("pager")}`,
    `[diff]\n\texternal = ${tripwire("external")}`,
    `[diff "x"]\n\ttextconv = ${tripwire("textconv")}\n\tcommand = ${tripwire("diffcommand")}`,
    `[filter "x"]\n\tsmudge = ${tripwire("smudge")}\n\tprocess = ${tripwire("process")}`,
    "",
  ].join("\n");
  appendFileSync(join(gitDir, "config"), config);
  writeFileSync(join(gitDir, ".gitconfig"), config);
  writeFileSync(join(gitDir, "info", "attributes"), "* diff=x filter=x\n");
}, 60_000);

describe("the CLI over a hostile run folder", () => {
  it("hone log shows the lineage, running nothing the repository names", async () => {
    const r = await hone(["log", run]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\* r01-k0 /); // the incumbent, read from a packed ref
    expect(ran()).toEqual([]);
  });

  it("hone diff of two recorded versions is git's plain diff, running nothing", async () => {
    const r = await hone(["diff", run, "r00-seed", "r01-k0"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^[-+].*Version/m);
    expect(ran()).toEqual([]);
  });

  it("hone diff of a candidate whose recorded commit is an option says the records are damaged (exit 2), writing nothing", async () => {
    for (const args of [
      ["diff", run, "r01-k1"],
      ["diff", run, "r01-k0", "r01-k1"],
    ]) {
      const r = await hone(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/hone\.db records "--output=.*" as a commit of candidate r01-k1, which is no commit id/);
    }
    expect(existsSync(join(marks, "written"))).toBe(false);
    expect(ran()).toEqual([]);
  });

  it("hone receipt names the incumbent commit, running nothing", async () => {
    const r = await hone(["receipt", run, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { harnesses: { incumbent_commit: string } }).harnesses.incumbent_commit).toBe(incumbent);
    expect(ran()).toEqual([]);
  });
});
