import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkSlurmRun, jobScript, sbatchPath, shellWord } from "../../src/loop/distributed/slurm-script.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A rollout's job script is read by two parsers: bash reads its command, sbatch its #SBATCH lines. A run directory
// may hold anything a file name can (spaces, quotes, $, %, backquotes), and each must reach the job as it is. How
// sbatch reads a quoted #SBATCH value and % patterns was checked against the real sbatch (test/e2e/slurm.test.ts runs
// a run directory with a space, ', $ and % through a real cluster).

const ODD = ["/tmp/a b", "it's", "$HOME", "`id`", "100%j", "a;b&c|d", "$(echo x)", "tab\there", "*"];

describe("the job script", () => {
  it("hands the command its arguments exactly, whatever they hold", () => {
    const script = jobScript("{{command}}\n", {}, { name: "n", output: "/tmp/o", argv: ["printf", "%s\\n", ...ODD] });
    const out = execFileSync("bash", ["-c", script], { encoding: "utf8" });
    expect(out.split("\n").slice(0, -1)).toEqual(ODD);
    expect(shellWord("it's")).toBe("'it'\\''s'");
  });

  it("fills a placeholder wherever it appears, and reads nothing in a value as a replacement pattern", () => {
    const template = "#SBATCH --job-name={{name}}\n#SBATCH --comment={{name}}\n#SBATCH --output={{output}}\n{{command}}\n";
    const script = jobScript(template, {}, { name: "hone-r01-k0", output: "/runs/$&/$1/x.out", argv: ["true"] });
    expect(script).toBe(
      "#SBATCH --job-name=hone-r01-k0\n#SBATCH --comment=hone-r01-k0\n#SBATCH --output=\"/runs/$&/$1/x.out\"\nexec 'true'\n",
    );
  });

  it("quotes the log's path once where a template quoted {{output}} itself", () => {
    for (const template of ['#SBATCH --output="{{output}}"', "#SBATCH --output='{{output}}'", "#SBATCH --output={{output}}"])
      expect(jobScript(template, {}, { name: "n", output: "/runs/a b/x.out", argv: ["true"] })).toBe(
        '#SBATCH --output="/runs/a b/x.out"',
      );
  });

  it("writes a log's path for sbatch's parser: quoted, % doubled; one it cannot carry is refused", () => {
    expect(sbatchPath("/runs/a b/100%/it's $x/slurm.out", "log")).toBe('"/runs/a b/100%%/it\'s $x/slurm.out"');
    // sbatch splits a script into a heterogeneous job at any #SBATCH line holding hetjob or packjob, quoted or not
    for (const bad of ['/runs/say "hi"', "/runs/back\\slash", "/runs/two\nlines", "/scratch/HetJob-sweep", "/x/packjob"])
      expect(() => sbatchPath(bad, "the job's log")).toThrow(/the job's log .* cannot carry; use a run directory without them/);
  });

  it("carries the settings as directives, and refuses a value that would add lines of its own", () => {
    const script = jobScript(
      "{{directives}}",
      { partition: "gpu", gres: "gpu:a100:1", timeMinutes: 15 },
      {
        name: "n",
        output: "/o",
        argv: ["true"],
      },
    );
    expect(script).toMatch(/^#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=15\n#SBATCH --export=PATH/);
    expect(() => checkSlurmRun({ partition: "gpu\nrm -rf ~" })).toThrow(/slurm partition .*one word/);
    expect(() => checkSlurmRun({ gres: "gpu:1 --wrap=x" })).toThrow(/slurm gres/);
    expect(() => checkSlurmRun({ env: ["OK_NAME", "BAD,NAME"] })).toThrow(/slurm env "BAD,NAME" is not/);
    expect(() => checkSlurmRun({ partition: "gpu,debug", gres: "gpu:1", env: ["HF_TOKEN"] })).not.toThrow();
  });

  it("reads a template that runs {{command}}, and says which file or directory is wrong otherwise", () => {
    const dir = tempDir();
    const none = join(dir, "none.sh");
    expect(() => checkSlurmRun({ template: none })).toThrow(new RegExp(`slurm template ${none}: cannot be read`));
    const idle = join(dir, "idle.sh");
    writeFileSync(idle, "#!/bin/bash\n#SBATCH --output={{output}}\nsleep 1\n");
    expect(() => checkSlurmRun({ template: idle })).toThrow(/has no \{\{command\}\}: its jobs would never run a rollout/);
    expect(checkSlurmRun({})).toMatch(/\{\{command\}\}/);
    expect(() => checkSlurmRun({}, '/runs/a "quoted" run')).toThrow(/the run directory .* cannot carry/);
  });
});
