import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadExternalMethod, readProposals } from "../../src/method/external.ts";
import { INITIAL_HARNESS, ROOT, tempDir } from "../helpers/fixtures.ts";

// A method given as a program is untrusted: what it writes (thousands of folders) and its own method.json (a FIFO,
// a flood) must cost hone no more than the limits say, and be refused naming the file.

/** An output folder holding `n` well-formed proposals (each a copy of the initial harness with its proposal.json). */
function flooded(n: number): string {
  const out = tempDir();
  for (let i = 0; i < n; i++) {
    const d = join(out, `p${String(i).padStart(4, "0")}`);
    cpSync(INITIAL_HARNESS, d, { recursive: true });
    writeFileSync(join(d, "proposal.json"), JSON.stringify({ parent: "r00-seed" }));
  }
  return out;
}

describe("a method program's output, read without trusting it", () => {
  it("takes only the K proposals asked for: the rest are refused as over, neither checked nor copied", () => {
    const into = join(tempDir(), "proposals");
    mkdirSync(into);
    const r = readProposals(flooded(30), into, new Set(["r00-seed"]), 2);
    expect(r.proposals.map((p) => p.name)).toEqual(["p0000", "p0001"]);
    expect(readdirSync(into).sort()).toEqual(["p0000", "p0001"]);
    expect(r.refused).toHaveLength(28);
    expect(r.refused[0]).toBe("p0002: over the 2 proposal(s) asked for");
  });

  it("a refused folder does not take a slot: the next good ones are taken", () => {
    const out = flooded(3);
    writeFileSync(join(out, "p0000", "proposal.json"), JSON.stringify({ parent: "r99-nobody" }));
    const into = join(tempDir(), "proposals");
    mkdirSync(into);
    const r = readProposals(out, into, new Set(["r00-seed"]), 2);
    expect(r.proposals.map((p) => p.name)).toEqual(["p0001", "p0002"]);
    expect(r.refused).toEqual(["p0000/proposal.json: parent r99-nobody is not a candidate of the archive"]);
  });
});

describe("method.json, read without trusting it", () => {
  const folder = (manifest: string) => {
    const dir = tempDir();
    writeFileSync(join(dir, "method.json"), manifest);
    return dir;
  };

  it("refuses a method.json larger than 64 KiB, naming the file", () => {
    const dir = folder(JSON.stringify({ name: "big", entrypoint: "python3 p.py", pad: "x".repeat(100 << 10) }));
    expect(() => loadExternalMethod(dir)).toThrow(`${join(dir, "method.json")}: larger than 64 KiB`);
  });

  it("refuses an entrypoint with a NUL byte", () => {
    const dir = folder(JSON.stringify({ name: "nul", entrypoint: "python3 p.py\u0000x" }));
    expect(() => loadExternalMethod(dir)).toThrow(/\(entrypoint\): contains a NUL byte/);
  });

  it("refuses a method.json that is a FIFO instead of blocking on it", () => {
    const dir = tempDir();
    expect(spawnSync("mkfifo", [join(dir, "method.json")]).status).toBe(0);
    // In a child: a blocking read would hang this worker; the child is killed after 60 s, which fails the test.
    const script = `import { loadExternalMethod } from ${JSON.stringify(join(ROOT, "src", "method", "external.ts"))};
try { loadExternalMethod(${JSON.stringify(dir)}); console.log("loaded"); } catch (e) { console.log(e.exit, e.message); }`;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.signal).toBeNull();
    expect(r.stdout.trim()).toBe(`badConfig ${join(dir, "method.json")}: not a regular file`);
  });
});
