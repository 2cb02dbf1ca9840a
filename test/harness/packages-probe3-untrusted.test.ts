// biome-ignore-all lint/suspicious/noTemplateCurlyInString: NexAU's ${variables.x} and ${env.NAME} references are what these tests write
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HoneError } from "../../src/errors.ts";
import { listFiles } from "../../src/harness/files.ts";
import { importNexau, NexauRefused, nexauNotes } from "../../src/harness/formats/nexau.ts";
import { nexauExport } from "../../src/harness/formats/nexau-export.ts";
import { HarnessRefused, harnessProblems, loadHarness } from "../../src/harness/package.ts";
import { copyOf, edit, INITIAL_HARNESS, ROOT, tempDir } from "../helpers/fixtures.ts";

// Packages as an attacker or a careless author writes them, and NexAU's own reading rules (variables, env, file names).

const FIXTURE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");
const load = (dir: string) => loadHarness(dir, { generatedCode: () => {} });

function refusal(fn: () => unknown): HoneError & { problems: { file: string; field?: string; message: string }[] } {
  try {
    fn();
  } catch (err) {
    return err as HoneError & { problems: { file: string; field?: string; message: string }[] };
  }
  throw new Error("expected a refusal");
}

const deepFlow = (n: number) => `${"[".repeat(n)}1${"]".repeat(n)}`;

describe("deeply nested YAML is refused with a depth cap, not a stack overflow", () => {
  it.each([
    ["a flow list 5000 deep in agent.yaml", (t: string) => `${t}\nextra: ${deepFlow(5000)}\n`],
    ["a flow mapping 3000 deep in agent.yaml", (t: string) => `${t}\ndescription: ${"{a: ".repeat(3000)}1${"}".repeat(3000)}\n`],
  ])("hone package: %s", (_name, change) => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), change);
    const err = refusal(() => loadHarness(dir));
    expect(err).toBeInstanceOf(HarnessRefused);
    expect(err.exit).toBe("badHarness");
    expect(err.message).not.toMatch(/call stack/);
    expect(err.message).toMatch(/agent\.yaml: is nested more than 64 levels deep .* at line \d+/);
  });

  it("a block mapping 100 deep in a tool file is refused, naming the file", () => {
    const dir = copyOf(INITIAL_HARNESS);
    let text = "type: tool\nname: finish\ndescription: d\ninput_schema:\n  type: object\n  properties:\n";
    for (let i = 0; i < 100; i++) text += `${"  ".repeat(i + 2)}p${i}:\n`;
    writeFileSync(join(dir, "tools", "finish.tool.yaml"), `${text}${"  ".repeat(102)}x: 1\n`);
    const problems = harnessProblems(dir);
    expect(problems.map((p) => p.message).join("\n")).toMatch(/nested more than 64 levels deep/);
    expect(problems.some((p) => p.file.endsWith("finish.tool.yaml"))).toBe(true);
  });

  it("depth reached through aliases counts: an anchor 40 deep aliased inside another 40 deep", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => `${t}\nx_a: &a ${deepFlow(40)}\nx_b: ${"[".repeat(40)}*a${"]".repeat(40)}\n`);
    expect(refusal(() => loadHarness(dir)).message).toMatch(/nested more than 64 levels deep .*once its aliases/);
  });

  it("a NexAU package: deep YAML in agent.yaml is refused", () => {
    const dir = copyOf(FIXTURE);
    edit(join(dir, "agent.yaml"), (t) => t.replace("timeout: 600", `timeout: 600\nsource_id: ${deepFlow(4000)}`));
    const err = refusal(() => load(dir));
    expect(err.exit).toBe("badHarness");
    expect(err.message).toMatch(/agent\.yaml: is nested more than 64 levels deep/);
    expect(err.message).not.toMatch(/call stack/);
  });

  it("a NexAU package: deep YAML in a tool file and a SKILL.md frontmatter, both listed", () => {
    const dir = copyOf(FIXTURE);
    edit(join(dir, "tools", "finish.tool.yaml"), (t) => `${t}\nx: ${deepFlow(2000)}\n`);
    edit(join(dir, "skills", "discovery-optimization", "SKILL.md"), (t) =>
      t.replace(/^---\n/, `---\nmetadata: ${deepFlow(3000)}\n`),
    );
    const err = refusal(() => load(dir));
    expect(err).toBeInstanceOf(NexauRefused);
    const text = err.problems.map((p) => `${p.file} ${p.field ?? ""} ${p.message}`).join("\n");
    expect(text).not.toMatch(/call stack/);
    expect(err.problems.filter((p) => /nested more than 64 levels/.test(p.message)).length).toBe(2);
  });

  it("a file 64 levels deep still loads (the cap is past what a package needs)", () => {
    const dir = copyOf(INITIAL_HARNESS);
    // description is not a collection; a mapping key that is ignored would be refused, so nest inside llm_config's
    // chat_template_kwargs (a free mapping): llm_config (1) + chat_template_kwargs (2) + 61 levels of lists = 64.
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace("llm_config:\n", `llm_config:\n  chat_template_kwargs: {deep: ${deepFlow(61)}}\n`),
    );
    expect(() => loadHarness(dir)).not.toThrow();
  });
});

describe("an alias bomb says what it is", () => {
  it("names the resource-exhaustion pattern, not a bare ReferenceError", () => {
    const dir = copyOf(INITIAL_HARNESS);
    const bomb = `a: &a [x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 9 }, (_, i) => `b${i}: &b${i} [${`*${i ? `b${i - 1}` : "a"}, `.repeat(9)}]`).join("\n")}\n`;
    writeFileSync(join(dir, "tools", "finish.tool.yaml"), bomb);
    const err = refusal(() => loadHarness(dir));
    expect(err.message).toMatch(/finish\.tool\.yaml: uses aliases \(\*name\) that would expand past 100 copies/);
    expect(err.message).not.toMatch(/ReferenceError|Excessive alias/);
  });
});

describe("a missing or wrong agent.yaml field is named with what to do, not zod's raw words", () => {
  it("missing name and yaml_path; an unknown key; a wrong type; a wrong literal", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) =>
      t
        .replace(/^name: .*\n/m, "")
        .replace("    yaml_path: tools/finish.tool.yaml\n", "")
        .replace("max_iterations: 80", "max_iterations: 2.5\ncolour: red")
        .replace("type: agent", "type: agnt"),
    );
    const problems = harnessProblems(dir);
    const by = Object.fromEntries(problems.map((p) => [p.field, p.message]));
    expect(by.name).toMatch(/^is missing; add it \(the harness's name/);
    expect(by["tools.4.yaml_path"]).toMatch(/^is missing; add it \(the tool file's path in the package/);
    expect(by.colour).toBe("is not a field of agent.yaml; remove it (or check its spelling)");
    expect(by.max_iterations).toBe("must be a whole number, not 2.5");
    expect(by.type).toBe('is "agnt"; it must be "agent"');
    for (const p of problems) expect(p.message).not.toMatch(/Invalid input|received undefined|Unrecognized key/);
  });

  it("a tool file without description, a middleware's unknown parameter", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "tools", "finish.tool.yaml"), (t) => t.replace(/^description:.*\n(?:[ ].*\n)*/m, ""));
    edit(join(dir, "agent.yaml"), (t) => t.replace("from_calls_left: 3", "from_calls_left: 3\n      nope: 1"));
    const problems = harnessProblems(dir);
    const text = problems.map((p) => `${p.field}: ${p.message}`);
    expect(text).toContain("description: is missing; add it (one or two sentences saying what it is for)");
    expect(text.find((l) => l.startsWith("middlewares.0.params.nope"))).toMatch(
      /is not a parameter of hone:budget_reminder \(its parameters: from_calls_left, message\)/,
    );
  });
});

describe("NexAU's reading rules: variables, ${this_file_dir}, ${env.NAME}", () => {
  const withVariables = () => {
    const dir = copyOf(FIXTURE);
    edit(join(dir, "agent.yaml"), (t) =>
      t
        .replace("max_iterations: 36", "variables:\n  iters: 36\n  llm:\n    temp: 0.6\nmax_iterations: ${variables.iters}")
        .replace("temperature: 0.7", "temperature: ${variables.llm.temp}")
        .replace("yaml_path: ./tools/finish.tool.yaml", "yaml_path: ${this_file_dir}/tools/finish.tool.yaml"),
    );
    return dir;
  };

  it("puts variables in as NexAU does, and accepts the variables key", () => {
    const h = load(withVariables());
    expect(h.maxIterations).toBe(36);
    expect(h.sampling.temperature).toBe(0.6);
    expect(h.tools.map((t) => t.name)).toContain("finish");
  });

  it("an undefined variable or a non-scalar one is a problem naming it", () => {
    const dir = withVariables();
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace("${variables.iters}", "${variables.nope}").replace("timeout: 600", "timeout: ${variables.llm}"),
    );
    const err = refusal(() => load(dir));
    const fields = err.problems.map((p) => p.field);
    expect(fields).toEqual(expect.arrayContaining(["variables.nope", "variables.llm"]));
  });

  it("a long value named many times is refused, not put in (a memory bomb), with one problem", () => {
    const dir = withVariables();
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace("variables:\n", `variables:\n  big: ${"x".repeat(100_000)}\n`).concat(`\n# ${"${variables.big} ".repeat(100)}\n`),
    );
    const err = refusal(() => load(dir));
    expect(err.problems.filter((p) => p.field === "variables")).toHaveLength(1);
    expect(err.problems[0]?.message).toMatch(/more than 4194304 characters/);
  });

  it("import then export writes agent.yaml back byte for byte, ${…} references and all", () => {
    const dir = withVariables();
    const imported = join(tempDir(), "imp");
    importNexau(dir, imported);
    const conv = nexauExport(load(imported));
    expect(conv.problems).toEqual([]);
    expect(conv.files.get("agent.yaml")?.toString()).toBe(readFileSync(join(dir, "agent.yaml"), "utf8"));
  });

  it("llm_config.model as ${env.NAME} is not kept as the model's name; a note says to give --model", () => {
    const dir = copyOf(FIXTURE);
    edit(join(dir, "agent.yaml"), (t) => t.replace("model: qwen3.5-9b", "model: ${env.LLM_MODEL}"));
    const h = load(dir);
    expect(h.defaults.model).toBeUndefined();
    expect(nexauNotes(dir).join("\n")).toMatch(/llm_config\.model is \$\{env\.LLM_MODEL\}.*give --model/);
  });
});

describe("a folder whose NexAU agent config has another name (as NexAU's own examples name theirs)", () => {
  it("says which file it is and to copy it to agent.yaml", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "code_agent.yaml"), "type: agent\nname: nexau_code_agent\nsystem_prompt: hi\n");
    writeFileSync(join(dir, "other.yaml"), "a: 1\n");
    expect(refusal(() => loadHarness(dir)).message).toMatch(
      /has no agent\.yaml.*code_agent\.yaml here is a NexAU agent config under another name: .*copy the one to run to .*agent\.yaml/,
    );
    expect(refusal(() => importNexau(dir, join(tempDir(), "o"))).message).toMatch(
      /code_agent\.yaml here is a NexAU agent config/,
    );
  });
});

describe("control characters from a package never reach the terminal raw", () => {
  it("file names and agent.yaml values in problems and notes are written out", () => {
    const dir = copyOf(FIXTURE);
    writeFileSync(join(dir, "evil\u001b]0;PWNED\u0007.txt"), "x");
    writeFileSync(join(dir, "evil\r  accepted.txt"), "x");
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace("  # warn when few", '  - import: "evil\\e[31mRED\\e[0m:Cls"\n  # warn when few'),
    );
    const notes = nexauNotes(dir).join("\n");
    const err = refusal(() => load(dir));
    const shown = [notes, err.message, ...err.problems.map((p) => `${p.file}${p.field}${p.message}`)].join("\n");
    expect(shown).toContain("evil\\u001b]0;PWNED\\u0007.txt");
    expect(shown).toContain("evil\\u000d  accepted.txt");
    expect(shown).toContain("evil\\u001b[31mRED");
    // eslint-disable-next-line no-control-regex
    expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  it("a hone package's problems too (a tool file named with an ESC sequence)", () => {
    const dir = copyOf(INITIAL_HARNESS);
    mkdirSync(join(dir, "tools"), { recursive: true });
    edit(join(dir, "agent.yaml"), (t) => t.replace("yaml_path: tools/finish.tool.yaml", 'yaml_path: "tools/\\e[2Jx.tool.yaml"'));
    const text = harnessProblems(dir)
      .map((p) => `${p.file}${p.field}${p.message}`)
      .join("\n");
    expect(text).toContain("\\u001b[2Jx.tool.yaml");
    expect(text).not.toContain("\u001b");
  });
});

it("the fixture itself is untouched by these tests (copies only)", () => {
  expect(listFiles(FIXTURE)).toContain("agent.yaml");
});
