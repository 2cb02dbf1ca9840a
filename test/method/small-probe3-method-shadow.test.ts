import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isMethodFolder, recordedMethodRef } from "../../src/method/method-ref.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A built-in method's name means the built-in even with a method folder of that name beside the user: that choice
// is said (once, on stderr), naming the folder and how to use it instead, never made silently.

afterEach(() => {
  vi.restoreAllMocks();
});

const said = () => {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  return lines;
};

describe("a built-in method's name with a folder of that name beside it", () => {
  it("warns once, naming the folder and saying to write ./name", () => {
    const base = tempDir();
    mkdirSync(join(base, "random"));
    writeFileSync(join(base, "random", "method.json"), JSON.stringify({ name: "random", entrypoint: "python3 p.py" }));
    const lines = said();
    expect(isMethodFolder("random", base)).toBe(false);
    expect(recordedMethodRef("random", base)).toBe("random");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`method "random" is the built-in method; the folder ${join(base, "random")}`);
    expect(lines[0]).toContain("write ./random");
  });

  it("says nothing without such a folder, for another name's folder, or for a path", () => {
    const base = tempDir();
    mkdirSync(join(base, "mine"));
    writeFileSync(join(base, "mine", "method.json"), "{}");
    mkdirSync(join(base, "gepa"));
    const lines = said();
    expect(isMethodFolder("random", base)).toBe(false);
    expect(isMethodFolder("gepa", base)).toBe(false);
    expect(isMethodFolder("mine", base)).toBe(true);
    expect(isMethodFolder("./random", base)).toBe(true);
    expect(lines).toEqual([]);
  });
});
