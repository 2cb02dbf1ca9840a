import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadExternalMethod } from "../../src/method/external.ts";
import { nearestName } from "../../src/nearest-name.ts";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A misspelled method.json field (`timout`, `entry_point`) was accepted silently: the default was used in its place
// (a 600 s step limit where 60 was written). Every field that is not one of README's three is now refused (exit 5),
// naming the file, the field and the field it most likely meant.

const folder = (manifest: Record<string, unknown>) => {
  const dir = tempDir();
  writeFileSync(join(dir, "method.json"), JSON.stringify(manifest));
  return dir;
};

describe("method.json's fields", () => {
  it("refuses a misspelled field, naming the file, the field and the nearest valid name", () => {
    const dir = folder({ name: "m", entrypoint: "python3 p.py", timout: 60 });
    let err: unknown;
    try {
      loadExternalMethod(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ exit: "badConfig", file: join(dir, "method.json"), field: "timout" });
    expect((err as Error).message).toBe(
      `${join(dir, "method.json")} (timout): timout: is not a method.json field (did you mean "timeout"?); method.json holds name, entrypoint, timeout`,
    );
  });

  it("names every unknown field; one far from any valid name gets no guess", () => {
    const dir = folder({ Entry_Point: "python3 p.py", name: "m", entrypoint: "python3 p.py", colour: "red" });
    expect(() => loadExternalMethod(dir)).toThrow(
      /Entry_Point: is not a method.json field \(did you mean "entrypoint"\?\); colour: is not a method.json field; method.json holds/,
    );
  });

  it("a field's name with control characters is written out, never sent to the terminal", () => {
    const dir = folder({ name: "m", entrypoint: "python3 p.py", "\u001b[2Jx": 1 });
    expect(() => loadExternalMethod(dir)).toThrow(/\\u001b\[2Jx: is not a method.json field/);
  });

  it("refuses a blank entrypoint (it was split into one empty word and run)", () => {
    const dir = folder({ name: "m", entrypoint: "   " });
    expect(() => loadExternalMethod(dir)).toThrow(/method\.json \(entrypoint\): entrypoint: is blank; write the command to run/);
  });

  it("accepts every field the README documents, and the shipped example", () => {
    const m = loadExternalMethod(folder({ name: "m", entrypoint: "python3 p.py", timeout: 60 }));
    expect([m.name, m.entrypoint, m.timeoutSec]).toEqual(["m", ["python3", "p.py"], 60]);
    const example = join(ROOT, "examples", "methods", "prompt-tweak");
    const shipped = JSON.parse(readFileSync(join(example, "method.json"), "utf8"));
    expect(loadExternalMethod(example)).toMatchObject({ name: shipped.name, timeoutSec: shipped.timeout });
  });

  it("nearestName: case, '_' and '-' aside, within a third of the name", () => {
    const fields = ["name", "entrypoint", "timeout"];
    expect(nearestName("Timeout", fields)).toBe("timeout");
    expect(nearestName("entry-point", fields)).toBe("entrypoint");
    expect(nearestName("nam", fields)).toBe("name");
    expect(nearestName("budget", fields)).toBeUndefined();
  });

  it("hone optimize with such a method exits 5 before anything runs, naming the file and the field", async () => {
    const dir = folder({ name: "m", entrypoint: "python3 p.py", timeuot: 60 });
    const out = join(tempDir(), "run");
    const r = await hone(
      optimizeArgs({ rounds: 1, proposals: 1, maxEvals: 1, seed: 1, out, extra: ["--executor", "offline", "--method", dir] }),
    );
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toContain(`${join(dir, "method.json")} (timeuot)`);
    expect(r.stderr).toContain('did you mean "timeout"?');
  }, 60_000);
});
