import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { HarnessRefused, harnessProblems, loadHarness } from "../../src/harness/package.ts";
import { invalidUtf8Offset } from "../../src/harness/package-files.ts";
import { hone } from "../helpers/cli.ts";
import { copyOf, edit, GENERATED_HARNESS, INITIAL_HARNESS, tempDir, write } from "../helpers/fixtures.ts";

function expectHarnessError(dir: string, file: string, field: RegExp | string | undefined, message: RegExp) {
  let caught: unknown;
  try {
    loadHarness(dir);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(HoneError);
  const e = caught as HoneError;
  expect(e.exit).toBe("badHarness");
  expect(e.file?.endsWith(file)).toBe(true);
  if (field instanceof RegExp) expect(e.field).toMatch(field);
  else expect(e.field).toBe(field);
  expect(e.message).toMatch(message);
}

describe("harness packages", () => {
  it("loads the initial discovery harness", () => {
    const h = loadHarness(INITIAL_HARNESS);
    expect(h.name).toBe("initial-discovery");
    expect(h.tools.map((t) => t.name)).toEqual(["view_program", "edit_program", "evaluate_program", "load_skill", "finish"]);
    expect(h.skills.map((s) => s.name)).toEqual(["discovery"]);
    expect(h.middlewares.map((m) => m.name)).toEqual(["budget_reminder", "stall_restart", "long_tool_output"]);
    expect(h.middlewares[1]?.params).toEqual({ after_evaluations: 6, max_restarts: 2 });
    expect(h.sampling).toEqual({ temperature: 0.7, top_p: 0.95, max_tokens: 4096 });
    expect(h.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("gives the same content hash to identical packages and a different one after any change", () => {
    const dir = copyOf(INITIAL_HARNESS);
    expect(loadHarness(dir).contentHash).toBe(loadHarness(INITIAL_HARNESS).contentHash);
    edit(join(dir, "prompt.md"), (t) => `${t}\nOne more line.`);
    expect(loadHarness(dir).contentHash).not.toBe(loadHarness(INITIAL_HARNESS).contentHash);
  });

  it("sees every edit between loads, and one load's values never leak into the next", () => {
    const dir = copyOf(INITIAL_HARNESS);
    const first = loadHarness(dir);
    first.sampling.temperature = 1.9;
    (first.tools[0] as { description: string }).description = "mutated";
    const again = loadHarness(dir);
    expect(again.sampling.temperature).not.toBe(1.9);
    expect(again.tools[0]?.description).not.toBe("mutated");
    edit(join(dir, "agent.yaml"), (t) => t.replace(/temperature: [\d.]+/, "temperature: 0.33"));
    expect(loadHarness(dir).sampling.temperature).toBe(0.33);
  });

  it("refuses a missing directory and a missing agent.yaml", () => {
    expect(() => loadHarness("/nonexistent/harness")).toThrow(/not a harness package/);
    const dir = copyOf(INITIAL_HARNESS);
    rmSync(join(dir, "agent.yaml"));
    expect(() => loadHarness(dir)).toThrow(/has no agent.yaml/);
  });

  it("names the field of an unknown key in agent.yaml", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => `${t}\nbogus_key: 1\n`);
    expectHarnessError(dir, "agent.yaml", "bogus_key", /is not a field of agent.yaml; remove it/);
  });

  it("names the field of an out-of-range sampling value", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("temperature: 0.7", "temperature: 7"));
    expectHarnessError(dir, "agent.yaml", "llm_config.temperature", /2/);
  });

  it("refuses a literal API key", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("llm_config:", "llm_config:\n  api_key: sk-live-123456"));
    expectHarnessError(dir, "agent.yaml", "llm_config.api_key", /\$\{env\./);
  });

  it("names the middleware param that is wrong", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("max_restarts: 2", "max_restarts: -1"));
    expectHarnessError(dir, "agent.yaml", "middlewares.1.params.max_restarts", /0/);
  });

  it("refuses an unknown built-in middleware", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("hone:stall_restart", "hone:teleport"));
    expectHarnessError(dir, "agent.yaml", "middlewares.1.import", /not a hone middleware/);
  });

  it("refuses a tool file whose name differs from agent.yaml", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "tools/finish.tool.yaml"), (t) => t.replace("name: finish", "name: finish_now"));
    expectHarnessError(dir, "finish.tool.yaml", "name", /agent.yaml lists it as "finish"/);
  });

  it("refuses a tool schema that is not an object schema", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "tools/finish.tool.yaml"), (t) => t.replace("type: object", "type: string"));
    expectHarnessError(dir, "finish.tool.yaml", "input_schema.type", /object/);
  });

  it("refuses a tool with no implementation", () => {
    const dir = copyOf(INITIAL_HARNESS);
    write(join(dir, "tools/teleport.tool.yaml"), "name: teleport\ndescription: go\ninput_schema:\n  type: object\n");
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace(
        "    yaml_path: tools/finish.tool.yaml",
        "    yaml_path: tools/finish.tool.yaml\n  - name: teleport\n    yaml_path: tools/teleport.tool.yaml",
      ),
    );
    expect(() => loadHarness(dir)).toThrow(/custom_tools\/teleport.js does not exist/);
  });

  it("refuses paths that leave the package", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("system_prompt: prompt.md", "system_prompt: ../../etc/passwd"));
    expectHarnessError(dir, "agent.yaml", "system_prompt", /outside the package/);
  });

  it("checks SKILL.md frontmatter per the Agent Skills spec", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "skills/discovery/SKILL.md"), (t) => t.replace("name: discovery", "name: Discovery--X"));
    expectHarnessError(dir, "SKILL.md", "name", /lowercase/);
    edit(join(dir, "skills/discovery/SKILL.md"), (t) => t.replace("name: Discovery--X", "name: other"));
    expectHarnessError(dir, "SKILL.md", "name", /folder is "discovery"/);
    edit(join(dir, "skills/discovery/SKILL.md"), () => "no frontmatter here");
    expectHarnessError(dir, "SKILL.md", undefined, /frontmatter/);
  });

  it("lists every problem of a package, each with its file and field, not only the first", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace("max_restarts: 2", "max_restarts: -1").replace("system_prompt: prompt.md", "system_prompt: none.md"),
    );
    edit(join(dir, "tools/finish.tool.yaml"), (t) => t.replace("type: object", "type: string"));
    edit(join(dir, "skills/discovery/SKILL.md"), (t) => t.replace("name: discovery", "name: other"));
    const problems = harnessProblems(dir).map((p) => `${p.file.slice(dir.length + 1)} ${p.field}`);
    expect(problems).toEqual([
      "agent.yaml system_prompt",
      "tools/finish.tool.yaml input_schema.type",
      "skills/discovery/SKILL.md name",
      "agent.yaml middlewares.1.params.max_restarts",
    ]);
    expect(() => loadHarness(dir)).toThrow(HarnessRefused);
  });

  it("still checks the tool files and skills when agent.yaml itself is broken", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(
      join(dir, "agent.yaml"),
      (t) => `${t}
bogus_key: 1
`,
    );
    edit(join(dir, "tools/finish.tool.yaml"), (t) => t.replace("type: object", "type: string"));
    expect(harnessProblems(dir).map((p) => p.field)).toEqual(["bogus_key", "input_schema.type"]);
  });

  it("refuses invalid YAML with the file name", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => `${t}\n  : : [\n`);
    expect(() => loadHarness(dir)).toThrow(/agent.yaml: is not valid YAML/);
  });

  it("refuses generated code unless the caller brings a sandbox", () => {
    const dir = copyOf(INITIAL_HARNESS);
    write(join(dir, "custom_tools/probe_more.js"), "function run(ctx, args) { return 1; }");
    expect(() => loadHarness(dir)).toThrow(/carries generated code/);
  });
});

const readText = (f: string) => readFileSync(f, "utf8");

describe("package files are the package's own, and UTF-8", () => {
  const outside = () => {
    const f = join(tempDir(), "outside.md");
    writeFileSync(f, "a file that is not part of the package\n");
    return f;
  };

  it("refuses a prompt.md that is a symbolic link out of the package, naming the file", () => {
    const dir = copyOf(INITIAL_HARNESS);
    const target = outside();
    rmSync(join(dir, "prompt.md"));
    symlinkSync(target, join(dir, "prompt.md"));
    expectHarnessError(dir, "prompt.md", undefined, /prompt.md: is a symbolic link to .*outside.md, outside the package/);
  });

  it("refuses any link out of the package, even one the package does not use, and a link to nothing", () => {
    const dir = copyOf(INITIAL_HARNESS);
    symlinkSync(outside(), join(dir, "skills", "discovery", "notes.md"));
    symlinkSync(join(dir, "gone"), join(dir, "dangling"));
    const problems = harnessProblems(dir);
    expect(problems.map((p) => p.file.slice(dir.length + 1))).toEqual(["dangling", "skills/discovery/notes.md"]);
    expect(problems[0]?.message).toMatch(/which does not exist/);
    expect(problems[1]?.message).toMatch(/outside the package/);
  });

  // Run through the CLI: before, reading such an agent.yaml blocked the process in open() or read() for good (deaf to
  // SIGTERM), which no in-process test timeout could end.
  it("refuses an agent.yaml that is a FIFO or a link to /dev/zero at once, with exit 3, instead of hanging", async () => {
    const fifo = copyOf(INITIAL_HARNESS);
    rmSync(join(fifo, "agent.yaml"));
    execFileSync("mkfifo", [join(fifo, "agent.yaml")]);
    const zero = copyOf(INITIAL_HARNESS);
    rmSync(join(zero, "agent.yaml"));
    symlinkSync("/dev/zero", join(zero, "agent.yaml"));
    const [a, b] = await Promise.all([
      hone(["harness", "check", fifo], { timeoutMs: 30_000 }),
      hone(["harness", "check", zero], { timeoutMs: 30_000 }),
    ]);
    expect(a.code).toBe(3);
    expect(a.stdout + a.stderr).toMatch(/agent\.yaml is not a regular file/);
    expect(b.code).toBe(3);
    expect(b.stdout + b.stderr).toMatch(/agent\.yaml: is a symbolic link to \/dev\/zero, outside the package/);
  }, 60_000);

  it("reads a SKILL.md saved with a byte order mark like one without", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "skills/discovery/SKILL.md"), (t) => `\uFEFF${t}`);
    expect(loadHarness(dir).skills.map((s) => s.name)).toEqual(["discovery"]);
  });

  it("accepts a link that stays inside the package", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("system_prompt: prompt.md", "system_prompt: system.md"));
    symlinkSync("prompt.md", join(dir, "system.md"));
    expect(loadHarness(dir).systemPrompt.length).toBeGreaterThan(0);
  });

  it.each([
    ["prompt.md", INITIAL_HARNESS],
    ["agent.yaml", INITIAL_HARNESS],
    ["skills/discovery/SKILL.md", INITIAL_HARNESS],
    ["tools/finish.tool.yaml", INITIAL_HARNESS],
    ["custom_tools/evaluate_block.js", GENERATED_HARNESS],
    ["middlewares/halfway_note.js", GENERATED_HARNESS],
  ])("refuses a %s that is not UTF-8, with the byte offset", (file, src) => {
    const dir = copyOf(src);
    // A Latin-1 "é" (0xe9) at the end of the file, where UTF-8 would have 0xc3 0xa9.
    const text = `${readText(join(dir, file))}\n// caf`;
    writeFileSync(join(dir, file), Buffer.concat([Buffer.from(text), Buffer.from([0xe9, 0x0a])]));
    const before = Buffer.byteLength(text);
    const problems = harnessProblems(dir, { generatedCode: () => {} });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.file).toBe(join(dir, file));
    expect(problems[0]?.message).toBe(
      `is not UTF-8 text: byte 0xe9 at byte offset ${before} does not start a valid UTF-8 sequence; save the file as UTF-8`,
    );
  });

  it("finds the first byte that is not UTF-8 (truncated, overlong, surrogate, above U+10FFFF)", () => {
    const at = (...b: number[]) => invalidUtf8Offset(Uint8Array.from(b));
    expect(at(0x61, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80)).toBe(-1);
    expect(at(0x61, 0xc3)).toBe(1);
    expect(at(0x61, 0x62, 0xc0, 0xaf)).toBe(2);
    expect(at(0xe0, 0x80, 0xaf)).toBe(0);
    expect(at(0x61, 0xed, 0xa0, 0x80)).toBe(1);
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0);
    expect(at(0x61, 0x80)).toBe(1);
    expect(at(0xe2, 0x82, 0x41)).toBe(0);
  });
});
