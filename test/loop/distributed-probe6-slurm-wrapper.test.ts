import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { jobScript } from "../../src/loop/distributed/slurm-script.ts";

// A site's job script template runs hone's command through a wrapper as often as not: `srun {{command}}` (a job step
// Slurm accounts and signals), `timeout 3600 {{command}}`, `apptainer exec image.sif {{command}}`, `env X=1 {{command}}`.
// There {{command}} must be the wrapper's arguments as they are: an `exec` in front of them is the program the wrapper
// then looks for ("timeout: failed to run command 'exec'"), and no rollout ever runs.

const ODD = ["/runs/a b", "it's", "$HOME", "`id`", "100%j", "a;b&c|d", "$(echo x)"];

const run = (template: string): string =>
  execFileSync("bash", ["-c", jobScript(template, {}, { name: "n", output: "/tmp/o", argv: ["printf", "%s\\n", ...ODD] })], {
    encoding: "utf8",
  });

describe("a job script template that runs {{command}} through a wrapper", () => {
  it("hands the wrapper hone's command word for word", () => {
    for (const template of [
      "#!/bin/bash\nset -euo pipefail\ntimeout 600 {{command}}\n",
      "#!/bin/bash\nenv HONE_PROBE=1 {{command}}\n",
      "#!/bin/bash\nif true; then {{command}}; fi\n",
      "#!/bin/bash\nnice -n 0 {{command}} && echo done >/dev/null\n",
      // A wrapper continued on the next line: the command is still its arguments.
      "#!/bin/bash\nenv \\\n  HONE_PROBE=1 \\\n  {{command}}\n",
    ])
      expect(run(template).split("\n").slice(0, -1)).toEqual(ODD);
  });

  it("still replaces the shell where {{command}} starts its line (indented or not)", () => {
    expect(jobScript("a\n{{command}}\n", {}, { name: "n", output: "/o", argv: ["true"] })).toBe("a\nexec 'true'\n");
    expect(jobScript("if x; then\n  {{command}}\nfi\n", {}, { name: "n", output: "/o", argv: ["true"] })).toBe(
      "if x; then\n  exec 'true'\nfi\n",
    );
    expect(jobScript("srun --ntasks=1 {{command}}\n", {}, { name: "n", output: "/o", argv: ["a b"] })).toBe(
      "srun --ntasks=1 'a b'\n",
    );
    // A line ending in an escaped backslash continues nothing: the next line is a command of its own.
    expect(jobScript("echo \\\\\n{{command}}\n", {}, { name: "n", output: "/o", argv: ["true"] })).toBe(
      "echo \\\\\nexec 'true'\n",
    );
    // The command still ends the script where it starts its line: nothing after it runs in the job's shell.
    expect(run("{{command}}\necho after\n")).not.toContain("after");
  });
});
