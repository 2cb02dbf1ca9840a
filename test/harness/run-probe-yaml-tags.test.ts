import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { harnessProblems } from "../../src/harness/package.ts";
import { copyOf, edit, INITIAL_HARNESS, ROOT, write } from "../helpers/fixtures.ts";

const NEXAU_PACKAGE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");

/**
 * A YAML tag `yaml` cannot resolve was read as plain text (with a Node warning on stderr) and the package accepted;
 * NexAU reads these files with PyYAML's safe_load, which refuses such a tag ("could not determine a constructor").
 */
describe("package YAML with a tag no safe loader resolves", () => {
  it("a SKILL.md frontmatter with !!js/function is refused naming the tag and its line", () => {
    const dir = copyOf(INITIAL_HARNESS);
    write(
      join(dir, "skills", "discovery", "SKILL.md"),
      '---\nname: discovery\ndescription: !!js/function "function(){}"\n---\nbody\n',
    );
    const [p, ...rest] = harnessProblems(dir);
    expect(rest).toEqual([]);
    expect(p?.file.endsWith("SKILL.md")).toBe(true);
    expect(p?.message).toMatch(/Unresolved tag: tag:yaml\.org,2002:js\/function .*remove the tag\) at line 2/);
  });

  it("an agent.yaml with a custom tag is refused, in a hone package and in a NexAU package", () => {
    for (const source of [INITIAL_HARNESS, NEXAU_PACKAGE]) {
      const dir = copyOf(source);
      edit(join(dir, "agent.yaml"), (t) => t.replace(/^name: /m, "name: !custom "));
      const messages = harnessProblems(dir).map((p) => `${p.file}: ${p.message}`);
      expect(messages).toEqual([expect.stringMatching(/agent\.yaml: .*Unresolved tag: !custom .*remove the tag\) at line \d+/)]);
    }
  });
});
