import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removePartials } from "../../src/store/atomic.ts";
import { tempDir } from "../helpers/fixtures.ts";

describe("removePartials", () => {
  it("removes what killed writers left (folders, files, links) and nothing else, never following a link", () => {
    const dir = tempDir("hone-partials-");
    const outside = tempDir("hone-partials-outside-");
    writeFileSync(join(outside, "keep.txt"), "x");
    mkdirSync(join(dir, ".r0.partial-123", "deep"), { recursive: true });
    writeFileSync(join(dir, ".r0.partial-123", "deep", "f"), "x");
    writeFileSync(join(dir, ".r0.partial-9"), "x");
    symlinkSync(outside, join(dir, ".r0.partial-link"));
    mkdirSync(join(dir, "r0"));
    writeFileSync(join(dir, ".r1.partial-123"), "x");
    removePartials(dir, ".r0.partial-");
    expect(readdirSync(dir).sort()).toEqual([".r1.partial-123", "r0"]);
    expect(existsSync(join(outside, "keep.txt"))).toBe(true);
    for (const d of [dir, outside]) rmSync(d, { recursive: true, force: true });
  });

  it("does nothing for a folder that is not there", () => {
    const dir = tempDir("hone-partials-");
    expect(() => removePartials(join(dir, "absent"), ".x.partial-")).not.toThrow();
    rmSync(dir, { recursive: true, force: true });
  });
});
