import { readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { HoneError } from "../../src/errors.ts";
import { listFiles } from "../../src/harness/files.ts";
import { importNexau, isNexauPackage, NexauRefused, nexauNotes, writePackage } from "../../src/harness/formats/nexau.ts";
import { nexauExport } from "../../src/harness/formats/nexau-export.ts";
import { ADDED_TOOLS, PROBE_TOOL_SOURCE } from "../../src/harness/formats/nexau-layout.ts";
import { loadHarness } from "../../src/harness/package.ts";
import type { Harness } from "../../src/harness/types.ts";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { copyOf, edit, INITIAL_HARNESS, ROOT, tempDir, write } from "../helpers/fixtures.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");
const load = (dir: string) => loadHarness(dir, { generatedCode: () => {} });

/** A loaded harness without what depends on where it lives (folder, hash, file paths). */
function behaviour(h: Harness) {
  return {
    name: h.name,
    description: h.description,
    systemPrompt: h.systemPrompt,
    maxIterations: h.maxIterations,
    timeoutSec: h.timeoutSec,
    sampling: h.sampling,
    defaults: h.defaults,
    stopTools: h.stopTools,
    tools: h.tools.map(({ file: _f, ...t }) => t),
    skills: h.skills.map(({ file: _f, ...s }) => s),
    middlewares: h.middlewares.map(({ file: _f, ...m }) => m),
  };
}

const filesOf = (dir: string) => Object.fromEntries(listFiles(dir).map((f) => [f, readFileSync(join(dir, f), "utf8")]));
const out = () => join(tempDir(), "out");

describe("a HarnessTTT package in NexAU's layout, read as a hone harness", () => {
  const h = load(FIXTURE);

  it("is recognised by its bindings; hone's own packages are not", () => {
    expect(isNexauPackage(join(FIXTURE, "agent.yaml"))).toBe(true);
    expect(isNexauPackage(join(INITIAL_HARNESS, "agent.yaml"))).toBe(false);
    const honeBinding = copyOf(INITIAL_HARNESS);
    edit(join(honeBinding, "agent.yaml"), (t) =>
      t.replace("yaml_path: tools/finish.tool.yaml", "yaml_path: tools/finish.tool.yaml\n    binding: hone:finish"),
    );
    expect(isNexauPackage(join(honeBinding, "agent.yaml"))).toBe(false);
  });

  it("maps HarnessTTT's tools onto hone's, keeping their descriptions and argument schemas", () => {
    expect(h.tools.map((t) => [t.name, t.kind, t.language ?? null])).toEqual([
      ["view_program", "builtin", null],
      ["edit_program", "builtin", null],
      ["evaluate_program", "builtin", null],
      ["probe_solution", "custom", "javascript"],
      ["finish", "builtin", null],
      ["evaluate_block", "custom", "python"],
      ["load_skill", "builtin", null],
    ]);
    // The model is offered each tool under the package's name, as its prompt calls them (NexAU's LoadSkill too).
    expect(h.tools.filter((t) => t.offeredAs).map((t) => [t.name, t.offeredAs])).toEqual([
      ["edit_program", "edit_solution"],
      ["evaluate_program", "evaluate_solution"],
      ["load_skill", "LoadSkill"],
    ]);
    const edit = h.tools.find((t) => t.name === "edit_program");
    expect(edit?.inputSchema).toMatchObject({ properties: { code: { type: "string" } }, required: ["code"] });
    expect(edit?.file).toBe(join(FIXTURE, "tools", "edit_solution.tool.yaml"));
    expect(h.tools.find((t) => t.name === "probe_solution")?.source).toBe(PROBE_TOOL_SOURCE);
  });

  it("takes the Python tool's code as it is and hides HarnessTTT's dispatcher argument from the model", () => {
    const tool = h.tools.find((t) => t.name === "evaluate_block");
    expect(tool?.source).toBe(readFileSync(join(FIXTURE, "custom_tools", "evaluate_block.py"), "utf8"));
    expect(tool?.file).toBe(join(FIXTURE, "custom_tools", "evaluate_block.py"));
    expect(Object.keys((tool?.inputSchema.properties ?? {}) as object)).toEqual(["block"]);
  });

  it("maps the middlewares with their parameters renamed", () => {
    expect(h.middlewares.map((m) => [m.name, m.kind, m.params])).toEqual([
      ["budget_reminder", "builtin", expect.objectContaining({ from_calls_left: 3 })],
      ["stall_restart", "builtin", { after_evaluations: 8, max_restarts: 2 }],
      ["long_tool_output", "builtin", { max_chars: 8001, head_chars: 4000, tail_chars: 4000 }],
    ]);
  });

  it("keeps prompt, skill, sampling and limits, and names the NexAU files", () => {
    expect(h.systemPrompt).toBe(readFileSync(join(FIXTURE, "system.md"), "utf8").trim());
    expect(h.skills.map((s) => [s.name, s.file])).toEqual([
      ["discovery-optimization", join(FIXTURE, "skills", "discovery-optimization", "SKILL.md")],
    ]);
    expect(h.sampling).toEqual({ temperature: 0.7, top_p: 0.95, top_k: 20, max_tokens: 8192, stream: false });
    expect(h.defaults).toEqual({ model: "qwen3.5-9b", baseUrl: "http://127.0.0.1:8800/v1" });
    expect([h.maxIterations, h.timeoutSec, h.stopTools]).toEqual([36, 600, ["finish"]]);
    expect(h.dir).toBe(FIXTURE);
    expect(h.files).toContain("system.md");
  });

  it("says what it does not apply", () => {
    const notes = nexauNotes(FIXTURE).join("\n");
    for (const what of [
      "max_context_tokens",
      "RoundAndTokenReminderMiddleware",
      "head_lines",
      "bypass_tool_names",
      "view_program is added",
    ])
      expect(notes).toContain(what);
  });

  it("adds the tools hone needs with harnesses/initial's texts", () => {
    for (const [name, file] of Object.entries(ADDED_TOOLS)) {
      const initial = parseYaml(readFileSync(join(INITIAL_HARNESS, "tools", `${name}.tool.yaml`), "utf8"));
      expect(initial).toEqual(file);
    }
  });
});

/** A copy of the fixture with several things hone cannot run, each in a different file and field. */
function brokenCopy(): string {
  const dir = copyOf(FIXTURE);
  edit(join(dir, "agent.yaml"), (t) =>
    t
      .replace("api_key: EMPTY", "api_key: sk-live-1234")
      .replace("binding: inner.harness.tools.discovery:finish", "binding: mypkg.tools:finish_now")
      .replace("remind_from_left: 3", "remind_from_left: 0")
      .replace(
        "tracers:",
        "  - import: middlewares.guard:GeneratedMiddleware\n  - import: mypkg.middleware:Auditor\n    params: {level: 2}\nsub_agents:\n  - name: helper\n    config_path: ./helper.yaml\ntracers:",
      ),
  );
  write(join(dir, "tools", "evaluate_solution.tool.yaml"), "type: tool\nname: evaluate_solution\ninput_schema: {type: array}\n");
  return dir;
}

describe("refusals list every problem", () => {
  it("names each file and field and says what to do", () => {
    let err: unknown;
    try {
      load(brokenCopy());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NexauRefused);
    const problems = (err as NexauRefused).problems.map(
      (p) => `${p.file.split("/").slice(-2).join("/")} ${p.field ?? ""}: ${p.message}`,
    );
    const expected = [
      /agent.yaml llm_config.api_key: holds a literal key; write \$\{env.VARIABLE\}/,
      /agent.yaml tools.3.binding: "mypkg.tools:finish_now" is a Python function hone cannot run/,
      /agent.yaml middlewares.0.params.remind_from_left: .*1/,
      /agent.yaml middlewares.4.import: is a HarnessTTT generated middleware .*middlewares\/guard.js/,
      /agent.yaml middlewares.5.import: "mypkg.middleware:Auditor" is a Python middleware class hone cannot run/,
      /agent.yaml sub_agents: hone runs one agent/,
      /tools\/evaluate_solution.tool.yaml description: must be text/,
      /tools\/evaluate_solution.tool.yaml input_schema: must be a JSON Schema whose type is object/,
    ];
    for (const e of expected)
      expect(
        problems.some((p) => e.test(p)),
        `${e}\n${problems.join("\n")}`,
      ).toBe(true);
    expect(problems).toHaveLength(expected.length);
    expect((err as HoneError).exit).toBe("badHarness");
  });

  it("refuses Python tools whose code hone cannot find, and files that lead out of the package", () => {
    const dir = copyOf(FIXTURE);
    rmSync(join(dir, "custom_tools", "evaluate_block.py"));
    symlinkSync("/etc/hostname", join(dir, "system.md.link"));
    edit(join(dir, "agent.yaml"), (t) => t.replace("system_prompt: ./system.md", "system_prompt: ./system.md.link"));
    expect(() => load(dir)).toThrow(/custom_tools\/evaluate_block.py does not exist[\s\S]*outside the package/);
  });
});

describe("a NexAU package is untrusted input", () => {
  const agent = (change: (t: string) => string) => (dir: string) => edit(join(dir, "agent.yaml"), change);
  it.each([
    [
      "a tool file outside the package",
      agent((t) => t.replace("./tools/finish.tool.yaml", "../../../etc/passwd")),
      /points outside the package/,
    ],
    [
      "Python code outside the package",
      agent((t) => t.replace("_sah_py_path: ./custom_tools/evaluate_block.py", "_sah_py_path: /etc/passwd")),
      /points outside the package/,
    ],
    [
      "Python code under another tool's name",
      agent((t) => t.replace("_sah_py_path: ./custom_tools/evaluate_block.py", "_sah_py_path: ./custom_tools/other.py")),
      /hone keeps a tool's code at .\/custom_tools\/evaluate_block.py/,
    ],
    [
      "a fixed argument slipped into a Python tool",
      agent((t) =>
        t.replace(
          "_sah_py_path: ./custom_tools/evaluate_block.py",
          "_sah_py_path: ./custom_tools/evaluate_block.py\n      budget: 999",
        ),
      ),
      /extra_kwargs.budget\): hone passes a Python tool only its model arguments/,
    ],
    [
      "a file too large",
      (d: string) => writeFileSync(join(d, "system.md"), "x".repeat(1024 * 1024 + 1)),
      /at most 1048576 bytes/,
    ],
    [
      "too many files",
      (d: string) => {
        for (let i = 0; i < 501; i++) writeFileSync(join(d, `f${i}.txt`), "x");
      },
      /more than 500 files/,
    ],
    [
      "a YAML alias bomb",
      (d: string) =>
        writeFileSync(
          join(d, "tools", "finish.tool.yaml"),
          `a: &a [x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [${`*${i ? `b${i - 1}` : "a"}, `.repeat(9)}]`).join("\n")}\n`,
        ),
      /finish.tool.yaml: uses aliases \(\*name\) that would expand past 100 copies/,
    ],
  ])("refuses %s", (_name, breakIt, message) => {
    const dir = copyOf(FIXTURE);
    breakIt(dir);
    expect(() => load(dir)).toThrow(message);
  });
});

describe("import -> export -> import", () => {
  it("gives the same harness, and export writes the original package back byte for byte", () => {
    const a = importNexau(FIXTURE, out()).out;
    const fromA = nexauExport(load(a));
    expect(fromA.problems).toEqual([]);
    const b = writePackage(out(), fromA.files);
    expect(filesOf(b)).toEqual(filesOf(FIXTURE));
    const c = importNexau(b, out()).out;
    expect(behaviour(load(c))).toEqual(behaviour(load(a)));
    expect(filesOf(c)).toEqual(filesOf(a));
    expect(behaviour(load(a))).toEqual(behaviour(load(FIXTURE)));
    const d = writePackage(out(), nexauExport(load(c)).files);
    expect(filesOf(d)).toEqual(filesOf(b));
  });

  it("writes back only what a learned harness changed, in place", () => {
    const a = importNexau(FIXTURE, out()).out;
    edit(join(a, "agent.yaml"), (t) =>
      t.replace("from_calls_left: 3", "from_calls_left: 5").replace("temperature: 0.7", "temperature: 0.4"),
    );
    edit(join(a, "prompt.md"), (t) => `${t}Keep a log of what worked.\n`);
    edit(join(a, "tools", "evaluate_block.tool.yaml"), (t) => t.replace("in one call", "in a single call"));
    const b = writePackage(out(), nexauExport(load(a)).files);
    const was = filesOf(FIXTURE);
    const now = filesOf(b);
    const changed = Object.keys(was).filter((f) => was[f] !== now[f]);
    expect(changed.sort()).toEqual(["agent.yaml", "system.md", "tools/evaluate_block.tool.yaml"]);
    const lines = (f: string) => new Set(now[f]?.split("\n"));
    const diff = (f: string) => (was[f] ?? "").split("\n").filter((l) => !lines(f).has(l));
    expect(diff("agent.yaml")).toEqual(["  temperature: 0.7", "      remind_from_left: 3"]);
    expect(now["tools/evaluate_block.tool.yaml"]).toContain("_sah_py_path");
    expect(behaviour(load(b)).middlewares[0]?.params.from_calls_left).toBe(5);
  });

  it("takes hone's own initial harness to HarnessTTT's layout and back; only edit_program's arguments, the tools' order and the names they are offered under change", () => {
    const b = writePackage(out(), nexauExport(load(INITIAL_HARNESS)).files);
    const agent = parseYaml(readFileSync(join(b, "agent.yaml"), "utf8"));
    expect(agent.tools.map((t: { binding: string }) => t.binding)).toEqual([
      "inner.harness.tools.discovery:edit_solution",
      "inner.harness.tools.discovery:evaluate_solution",
      "inner.harness.tools.discovery:finish",
    ]);
    expect(agent.middlewares[0]).toEqual({
      import: "inner.harness.middleware.budget_reminder:BudgetReminderMiddleware",
      params: { remind_from_left: 3 },
    });
    const back = behaviour(load(importNexau(b, out()).out));
    const initial = behaviour(load(INITIAL_HARNESS));
    const editSchema = (x: typeof back) => x.tools.find((t) => t.name === "edit_program")?.inputSchema;
    expect(Object.keys(editSchema(back)?.properties as object)).toEqual(["code"]);
    // Back in NexAU's layout the package offers the model NexAU's names, as its prompt would use them.
    const offered = (x: typeof back) => x.tools.map((t) => [t.name, t.offeredAs ?? null]);
    expect(offered(back).filter(([, as]) => as !== null)).toEqual([
      ["edit_program", "edit_solution"],
      ["evaluate_program", "evaluate_solution"],
      ["load_skill", "LoadSkill"],
    ]);
    expect(offered(initial).filter(([, as]) => as !== null)).toEqual([]);
    const without = (x: typeof back) => ({
      ...x,
      tools: x.tools
        .map(({ offeredAs: _o, ...t }) => ({ ...t, inputSchema: t.name === "edit_program" ? null : t.inputSchema }))
        .sort((p, q) => p.name.localeCompare(q.name)),
      middlewares: x.middlewares.map((m) => ({ ...m, params: { ...m.params, message: null } })),
    });
    expect(without(back)).toEqual(without(initial));
  });

  it("refuses to export what HarnessTTT cannot run, listing each", () => {
    const dir = copyOf(join(ROOT, "harnesses", "examples", "generated-code"));
    edit(join(dir, "agent.yaml"), (t) => t.replace("middlewares:", "middlewares:\n  - import: hone:context_budget"));
    const conv = nexauExport(load(dir));
    expect(conv.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/JavaScript tool; HarnessTTT runs Python tools only/),
      expect.stringMatching(/hone:context_budget has no NexAU counterpart/),
      expect.stringMatching(/generated middleware halfway_note is JavaScript/),
    ]);
  });

  it("writes nothing when the folder exists, and refuses hone packages and broken ones", () => {
    const taken = tempDir();
    writeFileSync(join(taken, "x"), "x");
    expect(() => importNexau(FIXTURE, taken)).toThrow(/already exists and is not an empty folder/);
    expect(() => importNexau(INITIAL_HARNESS, out())).toThrow(/already a hone package/);
    const target = out();
    expect(() => importNexau(brokenCopy(), target)).toThrow(NexauRefused);
    expect(() => readdirSync(target)).toThrow();
  });
});

/** The fixture rewritten as HarnessTTT's compiler lays out a candidate: prompt.md, middlewares/ copies, provenance. */
function candidateLayout(): string {
  const dir = copyOf(FIXTURE);
  const prompt = readFileSync(join(dir, "system.md"), "utf8");
  rmSync(join(dir, "system.md"));
  write(join(dir, "prompt.md"), prompt);
  edit(join(dir, "agent.yaml"), (t) =>
    t
      .replace("system_prompt: ./system.md", "system_prompt: ./prompt.md")
      .replace("inner.harness.middleware.budget_reminder:", "middlewares.budget_reminder:")
      .replace("inner.harness.middleware.stall_restart:", "middlewares.stall_restart:"),
  );
  write(join(dir, "middlewares", "__init__.py"), "# candidate middleware package\n");
  write(join(dir, "middlewares", "budget_reminder.py"), "# (the runtime's own middleware code would be here)\n");
  write(join(dir, "spec.yaml"), "schema: h2spec/1.0\nsampling: {temperature: 0.7}\n");
  write(join(dir, "meta.json"), '{"round": 3, "k": 1}\n');
  return dir;
}

describe("HarnessTTT's candidate layout", () => {
  it("maps its per-candidate middleware imports and carries its other files through import and export", () => {
    const dir = candidateLayout();
    const h = load(dir);
    expect(h.middlewares.map((m) => m.name)).toEqual(["budget_reminder", "stall_restart", "long_tool_output"]);
    expect(nexauNotes(dir).join("\n")).toMatch(
      /kept in nexau-origin\/ for export: README.md, meta.json, middlewares\/__init__.py/,
    );
    const a = importNexau(dir, out()).out;
    expect(listFiles(a).filter((f) => f.startsWith("middlewares/"))).toEqual([]);
    const b = writePackage(out(), nexauExport(load(a)).files);
    expect(filesOf(b)).toEqual(filesOf(dir));
  });
});

describe("edit_program with HarnessTTT's one code argument", () => {
  const program = "import math\n# EVOLVE-BLOCK-START\nX = 1.0\nY = 2.0\n# EVOLVE-BLOCK-END\nprint(X)\n";
  const env = new DiscoveryEnvironment({
    task: { metric: "m", direction: "maximize" },
    startProgram: program,
    maxEvals: 1,
    evaluate: async () => ({ valid: false, reason: "unused", metrics: {}, artifacts: {}, seconds: 0 }),
  });
  it.each([
    ["SEARCH/REPLACE blocks", "<<<<<<< SEARCH\nX = 1.0\n=======\nX = 3.0\n>>>>>>> REPLACE", "X = 3.0\nY = 2.0\n"],
    ["a whole block", "X = 5.0", "X = 5.0\n"],
    ["a fenced block with its markers", "```python\n# EVOLVE-BLOCK-START\nX = 6.0\n# EVOLVE-BLOCK-END\n```", "X = 6.0\n"],
  ])("applies %s", (_name, code, block) => {
    expect(env.applyEdit({ code })).toBe(`import math\n# EVOLVE-BLOCK-START\n${block}# EVOLVE-BLOCK-END\nprint(X)\n`);
  });
  it("refuses an edit outside the block", () => {
    expect(() => env.applyEdit({ code: "<<<<<<< SEARCH\nprint(X)\n=======\nprint(0)\n>>>>>>> REPLACE" })).toThrow(/EVOLVE/);
  });
});
