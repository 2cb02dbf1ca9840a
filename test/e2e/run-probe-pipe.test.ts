import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

/**
 * `hone run … | head -1`: the reader of hone's output closes after the first line. Starts hone with its stdout (and,
 * with `both`, its stderr) on one pipe, closes that pipe's reading end after the first line and resolves with the
 * exit code and whatever hone said on stderr.
 */
function runUntilFirstLine(args: string[], both: boolean): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let seen = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    const closeAfterFirstLine = (chunk: Buffer) => {
      seen += chunk.toString();
      if (!seen.includes("\n")) return;
      child.stdout.destroy();
      if (both) child.stderr.destroy();
    };
    child.stdout.on("data", closeAfterFirstLine);
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("hone run whose reader goes away (`hone run … | head -1`)", () => {
  it.each([
    ["stdout", false],
    ["stdout and stderr", true],
  ])("with %s closed: stops, exits 141 as a process ended by SIGPIPE, and leaves no folder", async (_what, both) => {
    const parent = tempDir();
    const out = join(parent, "run");
    const args = ["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "30", "--out", out, "--cold"];
    const r = await runUntilFirstLine(args, both);
    expect(r.code).toBe(141);
    if (!both) expect(r.stderr).toMatch(/the reader of hone's output went away: stopping/);
    expect(readdirSync(parent)).toEqual([]);
  });
});
