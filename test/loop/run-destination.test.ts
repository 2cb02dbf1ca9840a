import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimDestination } from "../../src/loop/run-destination.ts";
import { tempDir } from "../helpers/fixtures.ts";

// claimDestination, in one process: a second claim of a held folder is refused as another process's is (the store's
// lock refuses a second connection in the same process).

describe("hone run's destination (claimDestination)", () => {
  const was = process.cwd();
  let cwd: string;
  beforeEach(() => {
    cwd = tempDir();
    process.chdir(cwd);
  });
  afterEach(() => {
    process.chdir(was);
    delete process.env.HONE_RUN_LOCK;
  });

  it("gives claims without --out made in one second a folder each, and leaves nothing once they are abandoned", () => {
    const claims = [1, 2, 3].map(() => claimDestination(undefined, "cp"));
    const names = claims.map((c) => c.outDir.split("/").pop() as string);
    // The same second's name with -2, -3 (or the next second's, if the clock ticked between the claims).
    expect(new Set(names).size).toBe(3);
    for (const c of claims) expect(existsSync(c.partial)).toBe(true);
    for (const c of claims) c.abandon();
    expect(readdirSync(join(cwd, "runs"))).toEqual([]);
  });

  it("refuses an --out being built, and one that holds anything, naming it", () => {
    const out = join(cwd, "x");
    const first = claimDestination(out, "cp");
    expect(() => claimDestination(out, "cp")).toThrow(`${out} is being written by another hone process (pid ${process.pid}`);
    first.abandon();
    mkdirSync(out);
    writeFileSync(join(out, "hone.lock"), "");
    expect(() => claimDestination(out, "cp")).toThrow(`${out} already exists and is not empty`);
  });

  it("puts the run in place, and keeps it beside an --out filled meanwhile instead of replacing that", () => {
    const out = join(cwd, "x");
    const a = claimDestination(out, "cp");
    writeFileSync(join(a.partial, "result.json"), "{}");
    a.finish();
    expect(readdirSync(out)).toEqual(["result.json"]);
    const b = claimDestination(join(cwd, "y"), "cp");
    writeFileSync(join(b.partial, "result.json"), "{}");
    mkdirSync(join(cwd, "y"));
    writeFileSync(join(cwd, "y", "notes.txt"), "mine");
    mkdirSync(join(cwd, `.y.kept-${process.pid}`)); // an earlier process's with the same pid
    writeFileSync(join(cwd, `.y.kept-${process.pid}`, "result.json"), "earlier");
    expect(() => b.finish()).toThrow(
      `${join(cwd, "y")} is not an empty folder any more (something else wrote there while this run went); this run is kept in ${join(cwd, `.y.kept-${process.pid}-2`)}`,
    );
    b.abandon();
    expect(readdirSync(join(cwd, `.y.kept-${process.pid}-2`))).toEqual(["result.json"]);
    expect(readFileSync(join(cwd, `.y.kept-${process.pid}`, "result.json"), "utf8")).toBe("earlier");
    expect(readdirSync(join(cwd, "y"))).toEqual(["notes.txt"]);
    expect(readdirSync(cwd).sort()).toEqual([`.y.kept-${process.pid}`, `.y.kept-${process.pid}-2`, "x", "y"].sort());
  });

  it("with the lock off, builds in a folder named by its process, and makes no shared one", () => {
    process.env.HONE_RUN_LOCK = "off";
    const out = join(cwd, "x");
    const notes: string[] = [];
    const a = claimDestination(out, "cp", (t) => notes.push(t));
    expect(a.partial).toBe(join(cwd, `.x.partial-${process.pid}`));
    expect(readdirSync(cwd)).toEqual([`.x.partial-${process.pid}`]);
    expect(notes).toEqual([
      `${out} is built without its lock (HONE_RUN_LOCK=off): a second run into it is not refused until it finishes`,
    ]);
    a.finish();
    expect(readdirSync(cwd)).toEqual(["x"]);
  });

  it("puts the run in the folder a symbolic link --out names, and refuses a link to nothing", () => {
    mkdirSync(join(cwd, "disk", "run1"), { recursive: true });
    symlinkSync(join(cwd, "disk", "run1"), join(cwd, "out"));
    const d = claimDestination(join(cwd, "out"), "cp");
    expect(d.outDir).toBe(join(cwd, "disk", "run1"));
    writeFileSync(join(d.partial, "result.json"), "{}");
    d.finish(); // before, the rename met the link (ENOTDIR) and the run was kept beside it
    expect(readdirSync(join(cwd, "out"))).toEqual(["result.json"]);
    expect(readlinkSync(join(cwd, "out"))).toBe(join(cwd, "disk", "run1"));
    symlinkSync(join(cwd, "nowhere"), join(cwd, "dangling"));
    expect(() => claimDestination(join(cwd, "dangling"), "cp")).toThrow(
      `${join(cwd, "dangling")} is a symbolic link to nothing; make the folder it names, or choose another --out`,
    );
    expect(readdirSync(cwd).sort()).toEqual(["dangling", "disk", "out"]);
  });

  it("names the --out it was given, never its hidden folder, where no folder can be made", () => {
    writeFileSync(join(cwd, "afile"), "");
    expect(() => claimDestination(join(cwd, "afile", "sub"), "cp")).toThrow(
      `${join(cwd, "afile", "sub")}: the run's folder cannot be made there (ENOTDIR); choose another --out`,
    );
    expect(readdirSync(cwd)).toEqual(["afile"]);
  });
});
