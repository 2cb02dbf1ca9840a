import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runSealed } from "../../src/task/sealed-command.ts";
import { requireTool } from "../helpers/requires.ts";

// A program hone runs sealed (a method or a harness given as a program) starts in its own folder, and its stderr is
// its own: a failing method's error shows the end of it, so a line bubblewrap adds would hide the program's reason.
describe("runSealed", () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("starts the program in its folder, with nothing of bubblewrap's on its stderr", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    dir = mkdtempSync(join(tmpdir(), "hone-sealed-"));
    writeFileSync(join(dir, "prog.py"), "import os, sys\nprint(os.getcwd())\nsys.stderr.write('my reason\\n')\nsys.exit(3)\n");
    const r = await runSealed({
      argv: ["python3", "prog.py"],
      readOnly: [dir],
      writable: [],
      cwd: dir,
      env: {},
      timeoutMs: 30_000,
    });
    expect(r.code).toBe(3);
    expect(r.stdout.trim()).toBe(dir);
    expect(r.stderr).toBe("my reason\n");
  });
});
