import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isMethodFolder, recordedMethodRef } from "../../src/method/method-ref.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A folder with method.json beside the user (or beside an experiment file) named like a built-in method used to
// stand in for it: `--method random`, or an experiment's baseline `random`, ran the folder's program under the
// built-in's name. A built-in name now always means the built-in; such a folder is given as a path.
describe("a method's name or folder", () => {
  const base = tempDir();
  for (const name of ["random", "gepa", "mine"]) {
    mkdirSync(join(base, name));
    writeFileSync(join(base, name, "method.json"), JSON.stringify({ name, entrypoint: "python3 p.py" }));
  }

  it("a built-in name means the built-in, whatever folder is beside it", () => {
    expect(isMethodFolder("random", base)).toBe(false);
    expect(isMethodFolder("gepa", base)).toBe(false);
    expect(recordedMethodRef("random", base)).toBe("random");
  });

  it("such a folder is still a method when given as a path, and another name still finds its folder", () => {
    expect(recordedMethodRef("./random", base)).toBe(join(base, "random"));
    expect(isMethodFolder("mine", base)).toBe(true);
    expect(recordedMethodRef("mine", base)).toBe(join(base, "mine"));
    expect(isMethodFolder("nothing-here", base)).toBe(false);
  });
});
