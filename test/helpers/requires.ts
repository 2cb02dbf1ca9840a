import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { TestContext } from "vitest";
import { isolationSupport, pythonInfo } from "../../src/task/python-env.ts";
import { findExecutable } from "../../src/which.ts";

// The tools some suites need beyond what the README's first lines name (Node 20, python3 with numpy). A test that
// needs one calls requireTool(): where the tool is missing the test is skipped with a one-line reason, and marked so
// `.ci/run` (which installs every tool) counts such a skip as a failure. With CI=true a missing tool fails at once.

declare module "@vitest/runner" {
  interface TaskMeta {
    /** Set on a test skipped because a tool it needs is missing on this machine. */
    missingTool?: Tool;
  }
}

export type Tool = "redis-server" | "chromium" | "slurm" | "bubblewrap" | "namespaces" | "pyyaml";

const INSTALL: Record<Tool, string> = {
  "redis-server": "apt-get install redis-server / brew install redis",
  chromium: "apt-get install chromium, or set HONE_CHROMIUM",
  slurm: "as root: apt-get install slurm-wlm munge",
  bubblewrap: "apt-get install bubblewrap",
  namespaces: "allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1, or a container with them",
  pyyaml: "apt-get install python3-yaml / pip install pyyaml",
};

/** Debian's chromium (or HONE_CHROMIUM), found on PATH as a user's shell would. */
export function chromiumPath(): string | undefined {
  if (process.env.HONE_CHROMIUM) return existsSync(process.env.HONE_CHROMIUM) ? process.env.HONE_CHROMIUM : undefined;
  return findExecutable("chromium") ?? findExecutable("chromium-browser");
}

const SLURM_COMMANDS = ["slurmctld", "slurmd", "munged", "munge", "sbatch", "sinfo", "squeue", "scancel"];

function why(tool: Tool): string | undefined {
  switch (tool) {
    case "redis-server":
      return process.env.HONE_TEST_REDIS_URL || findExecutable("redis-server") ? undefined : "redis-server is not installed";
    case "chromium":
      return chromiumPath() ? undefined : "chromium is not installed";
    case "slurm": {
      const absent = SLURM_COMMANDS.filter((c) => !findExecutable(c));
      if (absent.length > 0) return `Slurm is not installed (no ${absent.join(", ")})`;
      return process.getuid?.() === 0 ? undefined : "the single-node Slurm the tests bring up needs root";
    }
    case "bubblewrap": {
      const s = isolationSupport();
      return s.bwrap ? undefined : (s.reason ?? "bubblewrap cannot be used here");
    }
    case "namespaces":
      return pythonInfo("python3").namespaces ? undefined : "python3 cannot create namespaces here";
    case "pyyaml":
      return spawnSync("python3", ["-c", "import yaml"]).status === 0 ? undefined : "python3 has no PyYAML";
  }
}

const known = new Map<Tool, string | undefined>();

/** Why `tool` is not usable here (one line, with how to install it), or undefined when it is. Checked once. */
export function missing(tool: Tool): string | undefined {
  if (!known.has(tool)) {
    const reason = why(tool);
    known.set(tool, reason && `${reason} (${INSTALL[tool]})`);
  }
  return known.get(tool);
}

/**
 * Skips the running test when `tool` is missing (or `reason` is given: the tool is there but could not be brought
 * up; its first line is the skip's reason), marking the skip for `.ci/run`. Call it first thing in a test or in
 * `beforeEach`.
 */
export function requireTool(ctx: TestContext, tool: Tool, reason = missing(tool)): void {
  if (!reason) return;
  if (process.env.CI === "true") throw new Error(`${reason}; on CI every test must run, so this is a failure`);
  ctx.task.meta.missingTool = tool;
  ctx.skip(reason.split("\n")[0]);
}

/** Why the sealed program sandbox (bubblewrap, and namespaces for Python) cannot run here, or undefined. */
export const sealedMissing = (): string | undefined => missing("bubblewrap") ?? missing("namespaces");
