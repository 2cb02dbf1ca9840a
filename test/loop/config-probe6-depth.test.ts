import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { readConfigFile } from "../../src/loop/config-file.ts";
import { tempDir } from "../helpers/fixtures.ts";

// An options file (optimize.yaml, train.yaml, an experiment file) nested thousands deep exhausted the stack while the
// YAML was composed, and was refused as "not valid YAML: Maximum call stack size exceeded": now its depth is read
// first and the refusal says what is wrong and where.
describe("options files nested too deep", () => {
  const schema = z.object({ a: z.unknown().optional() });

  it("are refused naming the file, the depth and the line, before the YAML is composed", () => {
    const file = join(tempDir(), "deep.yaml");
    writeFileSync(file, `a: 1\nb: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`);
    expect(() => readConfigFile(file, schema)).toThrow(/deep\.yaml[\s\S]*more than 64 levels deep \(at line 2\)/);
  });

  it("a file nested a few levels reads as before", () => {
    const file = join(tempDir(), "fine.yaml");
    writeFileSync(file, "a:\n  b:\n    c: [1, [2, [3]]]\n");
    expect(readConfigFile(file, schema)).toEqual({ a: { b: { c: [1, [2, [3]]] } } });
  });
});
