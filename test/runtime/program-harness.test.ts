import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadProgramHarness } from "../../src/harness/program.ts";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.ts";
import { runProgramHarness } from "../../src/runtime/program-harness.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// Harnesses as programs (HarnessGrad's contract): the shipped example runs against the offline model through
// hone's model proxy; a hostile harness program reaches nothing but that proxy and leaves nothing but its answer.
const EXAMPLE = join(ROOT, "harnesses", "examples", "program-harness");

function programHarness(code: string, manifest: Record<string, unknown> = {}): string {
  const dir = join(tempDir(), "h");
  mkdirSync(dir);
  writeFileSync(
    join(dir, "harness.json"),
    JSON.stringify({ name: "probe", entrypoint: "python3 main.py", timeout: 60, ...manifest }),
  );
  writeFileSync(join(dir, "main.py"), code);
  return dir;
}

describe("harness programs", () => {
  let offline: ResolvedModel;
  beforeAll(async () => {
    offline = await resolveModel({ model: "offline" });
  });
  afterAll(() => offline.close());
  const qa = {
    kind: "qa" as const,
    id: "q1",
    question: "Tom has 3 apples and buys 4 more. How many apples?",
    answer_format: "#### <number>",
  };

  it("runs the example harness on a QA task through the model proxy, recording its model call", async () => {
    const t = new MemoryTrajectory();
    const r = await runProgramHarness(loadProgramHarness(EXAMPLE), qa, {}, offline.model, "offline", t);
    expect(r.status, r.error).toBe("completed");
    expect(r.modelCalls).toBe(1);
    expect(r.output?.length).toBeGreaterThan(0);
    expect(t.events.filter((e) => e.type === "model_call" && e.source === "harness_program")).toHaveLength(1);
  });

  it("refuses a harness.json with a bad field, naming it", () => {
    const dir = programHarness("", { name: "bad name!" });
    expect(() => loadProgramHarness(dir)).toThrow(/harness\.json \(name\)/);
  });

  it("a hostile harness program reaches no network or secret and writes nothing else", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    process.env.HONE_TEST_SECRET_KEY = "sk-must-not-leak";
    const victim = join(tempDir(), "victim.txt");
    writeFileSync(victim, "intact");
    const code = [
      "import argparse, json, os, socket, urllib.request",
      "p = argparse.ArgumentParser(); p.add_argument('--task'); p.add_argument('--workdir'); a = p.parse_args()",
      "seen = {'secret': [k for k in os.environ if 'SECRET' in k], 'key_is_token': os.environ['OPENAI_API_KEY'].startswith('hone-')}",
      "try:",
      "    socket.create_connection(('1.1.1.1', 80), timeout=2); seen['internet'] = True",
      "except OSError:",
      "    seen['internet'] = False",
      "try:",
      `    open(${JSON.stringify(victim)}, 'w').write('pwned'); seen['wrote'] = True`,
      "except OSError:",
      "    seen['wrote'] = False",
      "seen['task'] = sorted(json.load(open(a.task)))",
      "req = urllib.request.Request(os.environ['OPENAI_BASE_URL'] + '/models', headers={'Authorization': 'Bearer ' + os.environ['OPENAI_API_KEY']})",
      "seen['models'] = [m['id'] for m in json.load(urllib.request.urlopen(req))['data']]",
      "open(os.path.join(a.workdir, 'answer.txt'), 'w').write(json.dumps(seen))",
    ].join("\n");
    try {
      const r = await runProgramHarness(
        loadProgramHarness(programHarness(code)),
        qa,
        {},
        offline.model,
        "offline",
        new MemoryTrajectory(),
      );
      expect(r.status, r.error).toBe("completed");
      expect(JSON.parse(r.output as string)).toEqual({
        secret: [],
        key_is_token: true,
        internet: false,
        wrote: false,
        task: ["answer_format", "id", "kind", "question"],
        models: ["offline"],
      });
    } finally {
      delete process.env.HONE_TEST_SECRET_KEY;
    }
  });

  it("a program that hangs is stopped at its time limit; one that links its answer elsewhere is refused", async () => {
    const hang = programHarness("import time\ntime.sleep(600)\n", { timeout: 1 });
    const r = await runProgramHarness(loadProgramHarness(hang), qa, {}, offline.model, "offline", new MemoryTrajectory());
    expect(r).toMatchObject({ status: "failed", error: expect.stringMatching(/did not finish within 1 s/) });
    const link = programHarness(
      "import argparse, os\np = argparse.ArgumentParser(); p.add_argument('--task'); p.add_argument('--workdir'); a = p.parse_args()\nos.symlink('/etc/hostname', os.path.join(a.workdir, 'answer.txt'))\n",
    );
    const l = await runProgramHarness(loadProgramHarness(link), qa, {}, offline.model, "offline", new MemoryTrajectory());
    expect(l).toMatchObject({ status: "failed", error: expect.stringMatching(/left no answer\.txt/) });
  });
});
