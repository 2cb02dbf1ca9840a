import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import {
  type ArchiveRecord,
  type ExternalMethod,
  loadExternalMethod,
  runExternalStep,
  writeArchive,
} from "../../src/method/external.ts";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.ts";
import { copyOf, INITIAL_HARNESS, ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// Bring your own method: the README's example program is run as a method step against the offline proposer,
// and what a hostile method writes is refused with its reasons (links, unknown parents, floods).
const EXAMPLE = join(ROOT, "examples", "methods", "prompt-tweak");

describe("methods given as programs", () => {
  let proposer: ResolvedModel;
  beforeAll(async () => {
    proposer = await resolveModel({ model: "offline" });
  });
  afterAll(() => proposer.close());
  const archive = () => [{ id: "r00-seed", parent: null, score: 0.96, valid: true, dir: copyOf(INITIAL_HARNESS) }];
  const step = (m: ExternalMethod, into = join(tempDir(), "proposals")) =>
    runExternalStep(
      m,
      { round: 1, proposals: 2, budget: { evaluator_calls: 10 } },
      archive(),
      { model: proposer.model, modelId: "offline" },
      into,
    );

  it("the README shows the example method as it is", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).toContain(readFileSync(join(EXAMPLE, "propose.py"), "utf8"));
    expect(readme).toContain(readFileSync(join(EXAMPLE, "method.json"), "utf8"));
  });

  it("runs the README's example method: two proposals, each a harness folder with its parent", async () => {
    const r = await step(loadExternalMethod(EXAMPLE));
    expect(r.refused).toEqual([]);
    expect(r.proposals.map((p) => [p.name, p.parent])).toEqual([
      ["tweak-0", "r00-seed"],
      ["tweak-1", "r00-seed"],
    ]);
    for (const p of r.proposals) {
      expect(readFileSync(join(p.dir, "prompt.md"), "utf8")).toMatch(/Advice \(round 1\): /);
      expect(loadHarness(p.dir).name).toBe(loadHarness(INITIAL_HARNESS).name);
    }
  });

  it("gives the program each candidate's trajectories, without the task's message or evaluator metrics", () => {
    const dir = tempDir();
    const trajectory = join(dir, "trajectory.jsonl");
    const events = [
      { type: "message", source: "task", role: "user", content: "the task brief with its reference value" },
      { type: "assistant", content: "I will widen the ring", t: 1 },
      { type: "evaluation", index: 0, valid: true, score: 0.97, metrics: { ratio_to_best: 0.36 } },
    ];
    writeFileSync(trajectory, events.map((e) => JSON.stringify(e)).join("\n"));
    const out = join(dir, "archive");
    const [seed] = archive();
    writeArchive(out, [{ ...(seed as ArchiveRecord), trajectories: [trajectory, trajectory] }]);
    expect(JSON.parse(readFileSync(join(out, "candidates.jsonl"), "utf8"))).toEqual({
      id: "r00-seed",
      parent: null,
      score: 0.96,
      valid: true,
    });
    const trace = readFileSync(join(out, "traces", "r00-seed", "trajectory.jsonl"), "utf8");
    expect(
      trace
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { type: "assistant", content: "I will widen the ring" },
      { type: "evaluation", index: 0, valid: true, score: 0.97 },
    ]);
    expect(readFileSync(join(out, "traces", "r00-seed", "trajectory-1.jsonl"), "utf8")).toBe(trace);
  });

  it("refuses a bad method.json naming the field", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "method.json"), JSON.stringify({ name: "x y", entrypoint: "" }));
    expect(() => loadExternalMethod(dir)).toThrow(/name: .*entrypoint/s);
  });

  it("refuses proposals with links, unknown parents or no proposal.json, and keeps the good one", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "method.json"), JSON.stringify({ name: "hostile", entrypoint: "python3 m.py", timeout: 60 }));
    writeFileSync(
      join(dir, "m.py"),
      [
        "import json, os, shutil, sys",
        "req = json.load(sys.stdin); out = req['output_dir']",
        "src = os.path.join(req['archive_dir'], 'candidates', 'r00-seed')",
        "for name, parent in (('good', 'r00-seed'), ('orphan', 'r99'), ('linked', 'r00-seed'), ('bare', None)):",
        "    shutil.copytree(src, os.path.join(out, name))",
        "    if parent: json.dump({'parent': parent}, open(os.path.join(out, name, 'proposal.json'), 'w'))",
        "os.symlink('/etc/passwd', os.path.join(out, 'linked', 'prompt2.md'))",
        "open(os.path.join(out, 'stray.txt'), 'w').write('x')",
      ].join("\n"),
    );
    const r = await step(loadExternalMethod(dir));
    expect(r.proposals.map((p) => p.name)).toEqual(["good"]);
    expect(r.refused.join("\n")).toMatch(/bare\/proposal\.json: missing/);
    expect(r.refused.join("\n")).toMatch(/linked\/prompt2\.md: a symbolic link/);
    expect(r.refused.join("\n")).toMatch(/orphan\/proposal\.json: parent r99 is not a candidate/);
    expect(r.refused.join("\n")).toMatch(/stray\.txt: not a proposal folder/);
  });

  it("a method program sees no secret and no network but its proposer", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    process.env.OPENAI_API_KEY_REAL = "sk-real";
    const dir = tempDir();
    writeFileSync(join(dir, "method.json"), JSON.stringify({ name: "spy", entrypoint: "python3 m.py", timeout: 60 }));
    writeFileSync(
      join(dir, "m.py"),
      "import json, os, socket, sys\nreq = json.load(sys.stdin)\nseen = {'env': sorted(k for k in os.environ if 'KEY' in k), 'token': os.environ['OPENAI_API_KEY'].startswith('hone-')}\ntry:\n    socket.create_connection(('1.1.1.1', 443), timeout=2); seen['net'] = True\nexcept OSError:\n    seen['net'] = False\nraise SystemExit(json.dumps(seen))\n",
    );
    try {
      await expect(step(loadExternalMethod(dir))).rejects.toThrow(/"env": \["OPENAI_API_KEY"\], "token": true, "net": false/);
    } finally {
      delete process.env.OPENAI_API_KEY_REAL;
    }
  });
});
