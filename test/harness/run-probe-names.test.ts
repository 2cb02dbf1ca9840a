import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { harnessProblems } from "../../src/harness/package.ts";
import { hone } from "../helpers/cli.ts";
import { copyOf, INITIAL_HARNESS, ROOT, tempDir } from "../helpers/fixtures.ts";

const NEXAU_PACKAGE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");

/** A path under `dir` whose last part is the raw bytes `name` (not UTF-8: Node's strings cannot spell it). */
const rawPath = (dir: string, name: number[]) => Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(name)]);

describe("a package holding a file or folder whose name is not UTF-8", () => {
  it.each([
    ["hone", INITIAL_HARNESS],
    ["NexAU", NEXAU_PACKAGE],
  ])("a %s package is refused naming it, not an internal error", (_kind, source) => {
    const dir = copyOf(source);
    mkdirSync(rawPath(join(dir, "skills"), [0xff, 0xfe]));
    writeFileSync(rawPath(dir, [0x6e, 0xe9, 0x2e, 0x6d, 0x64]), "Latin-1 name\n"); // "né.md" in Latin-1
    const problems = harnessProblems(dir);
    const named = problems.filter((p) => /its name is not UTF-8/.test(p.message));
    expect(named.map((p) => p.message).sort()).toEqual([
      expect.stringContaining("bytes 6ee92e6d64"),
      expect.stringContaining("bytes fffe"),
    ]);
  });

  it("hone run refuses it with exit 3 and writes nothing", async () => {
    const dir = copyOf(INITIAL_HARNESS);
    writeFileSync(rawPath(join(dir, "skills", "discovery"), [0xff, 0x2e, 0x74, 0x78, 0x74]), "notes\n");
    const out = join(tempDir(), "run");
    const r = await hone([
      "run",
      "--harness",
      dir,
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "2",
      "--out",
      out,
    ]);
    expect(r.stderr).toMatch(/discovery\/.*\.txt: its name is not UTF-8 \(bytes ff2e747874\)/);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(3);
    expect(existsSync(out)).toBe(false);
  });
});

describe("a package path that is no folder", () => {
  it("a device (or any file) is said to be a file, not a missing folder", () => {
    expect(harnessProblems("/dev/zero").map((p) => p.message)).toEqual([
      "is not a harness package (a file, not a folder); give the package's folder",
    ]);
  });
});
