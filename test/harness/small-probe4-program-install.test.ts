import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadProgramHarness, programNotes } from "../../src/harness/program.ts";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.ts";
import { runProgramHarness } from "../../src/runtime/program-harness.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// HarnessGrad's own harness.json (base_harness/loop) reads
//   {"name": "loop", "version": "0.2.0", "path": ".", "entrypoint": "agent.py", "backend": "cli",
//    "install": "requirements.txt", "env_kinds": ["files", "exec"]}
// Its `install` names the harness's dependencies, installed by a person before a run (HarnessGrad never installs on
// the run path); hone parsed it as a command and never ran it, without a word. Its entrypoint is a Python file that
// HarnessGrad runs as `python <entry>`: hone ran `agent.py` as a command, which failed with exit 127 and no message.
// Now the file runs with python3, and `hone harness check` says `install` is not run and which fields it ignores.

const AGENT = [
  "import argparse, os",
  "p = argparse.ArgumentParser(); p.add_argument('--task'); p.add_argument('--workdir'); a = p.parse_args()",
  "open(os.path.join(a.workdir, 'answer.txt'), 'w').write('#### 7')",
  "",
].join("\n");

function harnessGradLoop(extra: Record<string, unknown> = {}): string {
  const dir = join(tempDir(), "loop");
  mkdirSync(dir);
  const manifest = {
    name: "loop",
    version: "0.2.0",
    path: ".",
    entrypoint: "agent.py",
    backend: "cli",
    install: "requirements.txt",
    env_kinds: ["files", "exec"],
    ...extra,
  };
  writeFileSync(join(dir, "harness.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, "agent.py"), AGENT);
  writeFileSync(join(dir, "requirements.txt"), "openai>=1.0\n");
  return dir;
}

const qa = { kind: "qa" as const, id: "q1", question: "3 + 4?", answer_format: "#### <number>" };

describe("HarnessGrad's harness.json", () => {
  let offline: ResolvedModel;
  beforeAll(async () => {
    offline = await resolveModel({ model: "offline" });
  });
  afterAll(() => offline.close());

  it("loads, and its entrypoint, a Python file of the folder, runs with python3 and answers", async () => {
    const p = loadProgramHarness(harnessGradLoop());
    expect(p.entrypoint).toEqual(["python3", "agent.py"]);
    const r = await runProgramHarness(p, qa, {}, offline.model, "offline", new MemoryTrajectory());
    expect(r.status, r.error).toBe("completed");
    expect(r.output).toBe("#### 7");
  });

  it("an entrypoint that is a command, or names no file of the folder, is run as written", () => {
    expect(loadProgramHarness(harnessGradLoop({ entrypoint: "python3 agent.py -v" })).entrypoint).toEqual([
      "python3",
      "agent.py",
      "-v",
    ]);
    expect(loadProgramHarness(harnessGradLoop({ entrypoint: "missing.py" })).entrypoint).toEqual(["missing.py"]);
  });

  it("says install is not run, and which fields are HarnessGrad's or misspelled", () => {
    const notes = programNotes(loadProgramHarness(harnessGradLoop({ timout: 30 })));
    expect(notes).toEqual([
      expect.stringMatching(/^harness\.json \(install\): "requirements\.txt" is not run by hone: install what it names/),
      "harness.json (path): HarnessGrad's field; hone does not read it",
      "harness.json (backend): HarnessGrad's field; hone does not read it",
      "harness.json (env_kinds): HarnessGrad's field; hone does not read it",
      'harness.json (timout): not a field hone reads, ignored (did you mean "timeout"?)',
    ]);
  });

  it("refuses a blank entrypoint (its words were none, and `--task` ran as the command)", () => {
    const dir = harnessGradLoop({ entrypoint: " \t " });
    expect(() => loadProgramHarness(dir)).toThrow(/harness\.json \(entrypoint\): entrypoint: is blank; write the command to run/);
  });

  it("a harness.json of hone's own fields has no notes", () => {
    const dir = harnessGradLoop();
    writeFileSync(join(dir, "harness.json"), JSON.stringify({ name: "h", entrypoint: "python3 agent.py", timeout: 60 }));
    expect(programNotes(loadProgramHarness(dir))).toEqual([]);
  });

  it("hone harness check prints the notes (and --json lists them) and accepts the harness", async () => {
    const dir = harnessGradLoop();
    const text = await hone(["harness", "check", dir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/notes:\n {4}- harness\.json \(install\): "requirements\.txt" is not run by hone/);
    expect(text.stdout).toMatch(/accepted\n$/);
    const json = await hone(["harness", "check", dir, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      notes: expect.arrayContaining([expect.stringMatching(/install/)]),
    });
  }, 60_000);
});
