import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadProgramHarness } from "../../src/harness/program.ts";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.ts";
import { runProgramHarness } from "../../src/runtime/program-harness.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A harness.json entrypoint that is one `.py` word was rewritten to `python3 <word>` whatever it was: "./agent.py",
// which had run under its own shebang (a virtualenv's Python, `uv run --script`: the working folder is the
// harness's), then ran under the system's python3 instead, without its packages. Only a bare name (HarnessGrad's
// "agent.py", which as a command is looked up on PATH and never ran) runs with python3; a symlinked one too.

const PY_AGENT = [
  "import argparse, os",
  "p = argparse.ArgumentParser(); p.add_argument('--task'); p.add_argument('--workdir'); a = p.parse_args()",
  "open(os.path.join(a.workdir, 'answer.txt'), 'w').write('#### 7')",
  "",
].join("\n");

// Not Python: it answers only when run under its own shebang.
const SHELL_AGENT =
  '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --workdir ] && w="$2"; shift; done\nprintf "#### 9" > "$w/answer.txt"\n';

function harness(entrypoint: string, files: Record<string, string>): string {
  const dir = join(tempDir(), "h");
  mkdirSync(dir);
  writeFileSync(join(dir, "harness.json"), JSON.stringify({ name: "h", entrypoint }));
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

const qa = { kind: "qa" as const, id: "q1", question: "3 + 4?", answer_format: "#### <number>" };

describe("a harness program's .py entrypoint", () => {
  let offline: ResolvedModel;
  beforeAll(async () => {
    offline = await resolveModel({ model: "offline" });
  });
  afterAll(() => offline.close());
  const run = (dir: string) =>
    runProgramHarness(loadProgramHarness(dir), qa, {}, offline.model, "offline", new MemoryTrajectory());

  it("given as a path (./agent.py) is left as written and runs under its own shebang", async () => {
    const dir = harness("./agent.py", { "agent.py": SHELL_AGENT });
    expect(loadProgramHarness(dir).entrypoint).toEqual(["./agent.py"]);
    const r = await run(dir);
    expect(r.status, r.error).toBe("completed");
    expect(r.output).toBe("#### 9");
    const sub = harness("bin/agent.py", {});
    mkdirSync(join(sub, "bin"));
    writeFileSync(join(sub, "bin", "agent.py"), SHELL_AGENT);
    expect(loadProgramHarness(sub).entrypoint).toEqual(["bin/agent.py"]);
  });

  it("given as a bare name (agent.py) runs under python3", async () => {
    const dir = harness("agent.py", { "agent.py": PY_AGENT });
    expect(loadProgramHarness(dir).entrypoint).toEqual(["python3", "agent.py"]);
    const r = await run(dir);
    expect(r.status, r.error).toBe("completed");
    expect(r.output).toBe("#### 7");
  });

  it("given as a bare name of a symlink to a Python file runs under python3", async () => {
    const dir = harness("agent.py", { "real_agent.py": PY_AGENT });
    symlinkSync("real_agent.py", join(dir, "agent.py"));
    expect(loadProgramHarness(dir).entrypoint).toEqual(["python3", "agent.py"]);
    const r = await run(dir);
    expect(r.status, r.error).toBe("completed");
    expect(r.output).toBe("#### 7");
  });
});
