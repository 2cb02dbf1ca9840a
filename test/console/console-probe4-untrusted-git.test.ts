import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HarnessRepo } from "../../src/store/git.ts";
import { startHone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// A run folder is untrusted: shared, downloaded, copied from a cluster. `hone view` over it must read its harness
// versions without running what its harnesses.git names, without passing its recorded commit ids to git as options,
// and without blocking on, or reading through, what its refs are.
const root = tempDir("hone-console-probe4-git-");
const marks = tempDir("hone-console-probe4-marks-");
const secret = join(marks, "secret.txt");
/**
 * What the reader's file holds: found nowhere else, so seeing it in an answer means the file was read through the
 * link; and shaped as a commit id, so that a ref read through the link would be taken as the incumbent and shown.
 */
const SECRET_TEXT = "4f9c2e71b8d3a6050c1d2e3f4a5b6c7d8e9f0a1b";
let view: Awaited<ReturnType<typeof startHone>>;
let base: string;

/** A program that leaves a file named `name` in `marks` if anything runs it. */
function tripwire(name: string): string {
  const path = join(marks, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\necho ran > ${join(marks, name)}\ncat "$@" 2>/dev/null\n`);
  chmodSync(path, 0o755);
  return path;
}

const get = (path: string) => fetch(`${base}/api/runs/${path}`, { signal: AbortSignal.timeout(20_000) });

beforeAll(async () => {
  writeFileSync(secret, `${SECRET_TEXT}\n`);
  await Promise.all(
    ["evil", "bad-id", "fifo", "link", "big"].map((r) => writeSyntheticRun(join(root, r), { rounds: 1, perRound: 2 })),
  );

  // The repository's config names programs git runs on a diff (external diff, textconv driver).
  const evil = join(root, "evil", "harnesses.git");
  appendFileSync(
    join(evil, "config"),
    `[diff]\n\texternal = ${tripwire("external")}\n[diff "x"]\n\ttextconv = ${tripwire("textconv")}\n`,
  );
  mkdirSync(join(evil, "info"), { recursive: true });
  writeFileSync(join(evil, "info", "attributes"), "* diff=x\n");
  writeFileSync(join(evil, ".gitconfig"), `[diff]\n\texternal = ${tripwire("global")}\n`);

  // A recorded commit id that is an option to git.
  const db = new Database(join(root, "bad-id", "hone.db"));
  db.prepare("UPDATE candidates SET commit_sha = ? WHERE id = 'r01-k1'").run(`--output=${join(marks, "written")}`);
  db.close();

  // The incumbent's ref a FIFO (reading it blocks until a writer comes), or a link to the reader's file.
  const fifoRef = join(root, "fifo", "harnesses.git", "refs", "heads", "main");
  rmSync(fifoRef, { force: true });
  execFileSync("mkfifo", [fifoRef]);
  const linkRef = join(root, "link", "harnesses.git", "refs", "heads", "main");
  rmSync(linkRef, { force: true });
  symlinkSync(secret, linkRef);

  // A harness file of 3 MiB.
  const big = join(root, "big");
  const pkg = join(marks, "bigpkg");
  mkdirSync(pkg);
  writeFileSync(join(pkg, "prompt.md"), "a line of a long prompt\n".repeat(131_072));
  const sha = await new HarnessRepo(join(big, "harnesses.git")).commitDir(pkg, "big", undefined, 9);
  const bigDb = new Database(join(big, "hone.db"));
  bigDb.prepare("UPDATE candidates SET commit_sha = ? WHERE id = 'r01-k0'").run(sha);
  bigDb.close();

  view = await startHone(["view", root, "--port", "0", "--json"]);
  base = (JSON.parse(view.firstLine) as { url: string }).url;
}, 120_000);

afterAll(async () => {
  // A console blocked reading the FIFO (the defect) is let go, so that it can stop.
  try {
    closeSync(openSync(join(root, "fifo", "harnesses.git", "refs", "heads", "main"), constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // nobody is reading it
  }
  await view?.stop();
});

describe("hone view over a run folder from someone else", () => {
  it("diffs and shows harness versions without running the programs the repository's config names", async () => {
    const diff = await get("evil/diff?a=r00-seed&b=r01-k0");
    expect(diff.status).toBe(200);
    expect(((await diff.json()) as { diff: string }).diff).toMatch(/^[-+].*Version/m);
    const file = await get("evil/candidates/r01-k0/file?path=prompt.md");
    expect(file.status).toBe(200);
    expect(((await file.json()) as { content: string }).content).toMatch(/^You search for better programs/);
    for (const name of ["external", "textconv", "global"]) expect(existsSync(join(marks, name)), name).toBe(false);
  });

  it("never passes a recorded commit id to git as an option (no file written), answering 404", async () => {
    expect((await get("bad-id/diff?a=r01-k1&b=r00-seed")).status).toBe(404);
    expect((await get("bad-id/candidates/r01-k1/file?path=prompt.md")).status).toBe(404);
    const candidate = await get("bad-id/candidates/r01-k1");
    expect(candidate.status).toBe(200);
    expect(((await candidate.json()) as { files: string[] }).files).toEqual([]);
    expect(existsSync(join(marks, "written"))).toBe(false);
    expect(existsSync(join(marks, "written:prompt.md"))).toBe(false);
  });

  it("never shows a file a ref links to", async () => {
    const receipt = await get("link/receipt");
    expect(receipt.status).toBe(200);
    expect(await receipt.text()).not.toContain(SECRET_TEXT);
  });

  it("cuts a harness file larger than 2 MiB, saying so", async () => {
    const r = await get("big/candidates/r01-k0/file?path=prompt.md");
    expect(r.status).toBe(200);
    const body = (await r.json()) as { content: string; truncated?: number };
    expect(body.truncated).toBe(2 * 1024 * 1024);
    expect(Buffer.byteLength(body.content)).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(body.content.startsWith("a line of a long prompt\n")).toBe(true);
  });

  it("answers a run's receipt whose incumbent ref is a FIFO, and keeps answering the others", async () => {
    const receipt = await get("fifo/receipt");
    expect(receipt.status).toBe(200);
    expect((await fetch(`${base}/api/runs`, { signal: AbortSignal.timeout(20_000) })).status).toBe(200);
  });
});

describe("HarnessRepo.diff (hone log's diff) of a run folder from someone else", () => {
  it("runs no external diff or textconv program the repository's config names", () => {
    const repo = new HarnessRepo(join(root, "evil", "harnesses.git"));
    const db = new Database(join(root, "evil", "hone.db"), { readonly: true });
    const shas = db
      .prepare("SELECT commit_sha FROM candidates WHERE id IN ('r00-seed', 'r01-k0') ORDER BY id")
      .pluck()
      .all() as string[];
    db.close();
    expect(repo.diff(shas[0] as string, shas[1] as string)).toMatch(/^[-+].*Version/m);
    for (const name of ["external", "textconv"]) expect(existsSync(join(marks, name)), name).toBe(false);
  });
});
