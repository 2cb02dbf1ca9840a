import { mkdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { copyOf, edit, INITIAL_HARNESS, ROOT } from "../helpers/fixtures.ts";

// `hone harness check` / `import` on hostile packages, as a user runs them: the documented exit code (3, bad harness
// package), a clear refusal, and nothing from the package driving the terminal.

const FIXTURE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");

describe("hone harness on hostile packages", () => {
  it("agent.yaml nested 20000 deep: exit 3 with the depth cap named, no stack overflow", async () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => `${t}\nextra: ${"[".repeat(20000)}${"]".repeat(20000)}\n`);
    const r = await hone(["harness", "check", dir]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/agent\.yaml: is nested more than 64 levels deep/);
    expect(r.stdout + r.stderr).not.toMatch(/call stack|RangeError/);
  });

  it("a missing name: the field and what to add, not zod's words", async () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace(/^name: .*\n/m, ""));
    const r = await hone(["harness", "check", dir]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/agent\.yaml \(name\): is missing; add it/);
    expect(r.stdout).not.toMatch(/Invalid input/);
  });

  it("ESC and BEL in file names and agent.yaml values are printed written out, by check and by import", async () => {
    const dir = copyOf(FIXTURE);
    writeFileSync(join(dir, "x\u001b]0;PWNED\u0007.txt"), "x");
    edit(join(dir, "agent.yaml"), (t) => t.replace("  # warn when few", '  - import: "evil\\e[2J:Cls"\n  # warn when few'));
    const check = await hone(["harness", "check", dir]);
    expect(check.code).toBe(3);
    expect(check.stdout).toContain("x\\u001b]0;PWNED\\u0007.txt");
    expect(check.stdout).toContain("evil\\u001b[2J:Cls");
    const imp = await hone(["harness", "import", dir, "--out", join(dir, "..", "imported")]);
    expect(imp.code).toBe(3);
    for (const out of [check.stdout, check.stderr, imp.stdout, imp.stderr]) expect(out).not.toMatch(/[\u0007\u001b]/);
  });
});

describe("hone harness check: what a package's size and its Python tools get", () => {
  it("a Python tool in a package that fails for another reason is not refused by the JavaScript gate", async () => {
    const imported = join(copyOf(FIXTURE), "..", "imported-py");
    expect((await hone(["harness", "import", FIXTURE, "--out", imported])).code).toBe(0);
    rmSync(join(imported, "prompt.md"));
    const r = await hone(["harness", "check", imported]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/agent\.yaml \(system_prompt\): names prompt\.md, which does not exist/);
    expect(r.stdout).not.toMatch(/\[gate\]/);
  });

  it("a package with a 3 GB (sparse) file or 1500 files: exit 3 naming it, no crash, the path said once", async () => {
    const big = copyOf(FIXTURE);
    writeFileSync(join(big, "blob.bin"), "");
    truncateSync(join(big, "blob.bin"), 3 * 1024 ** 3);
    const r = await hone(["harness", "check", big]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/refused \[load\] blob\.bin: brings the package past 64 MiB/);
    expect(r.stdout + r.stderr).not.toMatch(/ERR_FS_FILE_TOO_LARGE|RangeError|\n\s+at /);
    rmSync(join(big, "blob.bin"));
    const many = copyOf(INITIAL_HARNESS);
    mkdirSync(join(many, "skills", "discovery", "refs"));
    for (let i = 0; i < 1500; i++) writeFileSync(join(many, "skills", "discovery", "refs", `${i}.md`), "");
    const m = await hone(["harness", "check", many]);
    expect(m.code).toBe(3);
    expect(m.stdout).toMatch(/holds 1508 files; a harness package holds at most 1000/);
  });
});
