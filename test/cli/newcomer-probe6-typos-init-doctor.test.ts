import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nearestName } from "../../src/nearest-name.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// What a newcomer meets in the first minutes: a mistyped subcommand of a verb that also acts alone, `hone init`
// where a folder sits in a config file's place, and `hone doctor --model` without an endpoint.
describe("newcomer probe 6: typos, init and doctor", () => {
  it("a mistyped subcommand of `hone tasks` and `hone datasets` is an unknown command with a suggestion (exit 2)", async () => {
    const tasks = await hone(["tasks", "shwo", "circle-packing"]);
    expect(tasks.code).toBe(2);
    expect(tasks.stderr).toMatch(/unknown command 'shwo'[\s\S]*Did you mean show\?/);
    expect(tasks.stderr).not.toMatch(/too many arguments/);
    const datasets = await hone(["datasets", "fech", "gsm8k"]);
    expect(datasets.code).toBe(2);
    expect(datasets.stderr).toMatch(/unknown command 'fech'[\s\S]*Did you mean fetch\?/);
    const far = await hone(["tasks", "zzzzzz"]);
    expect(far.code).toBe(2);
    expect(far.stderr).toMatch(/unknown command 'zzzzzz'[\s\S]*show, new/);
    // The verbs themselves and their subcommands still work.
    const list = await hone(["tasks", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).length).toBeGreaterThan(0);
    const show = await hone(["tasks", "show", "circle-packing", "--json"]);
    expect(show.code, show.stderr).toBe(0);
  });

  it("a mistyped required flag is named with a suggestion, not reported as the flag it left missing (exit 2)", async () => {
    const typo = await hone(["run", "--taks", "circle-packing", "--model", "offline"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown option '--taks'[\s\S]*Did you mean --task\?/);
    const evaluate = await hone(["evaluate", "--taks", "circle-packing", "x.py"]);
    expect(evaluate.stderr).toMatch(/unknown option '--taks'/);
    // A required flag that is simply missing is still said so, with the same exit code.
    const missing = await hone(["run", "--model", "offline"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/required option '--task <id\|folder>' not specified/);
    const exportMissing = await hone(["harness", "export", "x", "--out", "y"]);
    expect(exportMissing.code).toBe(2);
    expect(exportMissing.stderr).toMatch(/required option '--format <format>' not specified/);
  });

  it("suggestions are the nearest name only, a swap of two letters one edit", () => {
    expect(nearestName("shwo", ["show", "new"])).toBe("show");
    expect(nearestName("fetchh", ["fetch"])).toBe("fetch");
    expect(nearestName("x", ["show", "new"])).toBeUndefined();
  });

  it("`hone init --force` with a folder where a config file goes writes nothing and says so (exit 2)", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "train.yaml"));
    const r = await hone(["init", dir, "--force"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/train\.yaml is a folder/);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(readdirSync(dir)).toEqual(["train.yaml"]);
    expect(existsSync(join(dir, "hone.yaml"))).toBe(false);
  });

  it("the command `hone tasks new` and `hone init` print can be pasted into a shell where the folder has a space or a quote", async () => {
    const dir = join(tempDir(), "it's here");
    const made = await hone(["tasks", "new", join(dir, "my-task")]);
    expect(made.code, made.stderr).toBe(0);
    const line = made.stdout.split("\n").find((l) => l.includes("try it:")) ?? "";
    expect(line).toContain(`--task '${dir.replaceAll("'", "'\\''")}/my-task' '`);
    const init = await hone(["init", join(dir, "cfg")], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("npx hone optimize --config cfg/hone.yaml");
    const spaced = await hone(["init", join(dir, "a b")], { cwd: dir });
    expect(spaced.stdout).toContain("npx hone optimize --config 'a b/hone.yaml'");
  });

  it("`hone doctor --model X` without --base-url is refused, not answered `ready` unchecked (exit 2)", async () => {
    const r = await hone(["doctor", "--model", "gpt-4o", "--json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--model gpt-4o needs --base-url/);
    expect(r.stdout).toBe("");
  });
});
