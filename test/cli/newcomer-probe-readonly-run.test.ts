import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { ROOT } from "../helpers/fixtures.ts";

/**
 * Runs the CLI as a process that may read the run folder but not write it. As root (who may write anything) that is
 * root in a mount namespace of its own where the folder is mounted read-only (util-linux's unshare, then python3): the unprivileged
 * `nobody` could not read hone's own checkout where a fresh clone sits (a 0700 folder under /tmp). Otherwise this user,
 * on a folder made read-only.
 */
/** Mounts $RUN read-only over itself (as `mount --bind` then `-o remount,ro,bind`; `mount` is not on every PATH), then runs argv. */
const READ_ONLY = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
run = os.environ["RUN"].encode()
for flags in (MS_BIND, MS_REMOUNT | MS_BIND | MS_RDONLY):
    if libc.mount(run, run, None, flags, None) != 0:
        sys.exit("mount: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])`;

function honeAsReader(args: string[], tmp: string, run: string) {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? "unshare" : process.execPath;
  const prefix = asRoot ? ["-rm", "python3", "-c", READ_ONLY, process.execPath] : [];
  const r = spawnSync(command, [...prefix, join(ROOT, "bin", "hone.js"), ...args], {
    cwd: "/",
    encoding: "utf8",
    env: { ...process.env, HOME: "/nonexistent", TMPDIR: tmp, RUN: run },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("newcomer probe: a run folder this user can only read", () => {
  it("hone receipt and hone log read it (another user's run, a read-only copy) and write nothing there", async () => {
    // Outside the test run's own TMPDIR, which only this user may enter.
    const parent = mkdtempSync("/tmp/hone-newcomer-readonly-");
    const tmp = join(parent, "tmp");
    mkdirSync(tmp);
    chmodSync(tmp, 0o1777);
    const run = join(parent, "run");
    try {
      const made = await hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "2", "--out", run]);
      expect(made.code, made.stderr).toBe(0);
      const before = readdirSync(run).sort();
      chmodSync(parent, 0o755);
      chmodSync(join(run, "hone.db"), 0o444);
      chmodSync(run, 0o555);
      const receipt = honeAsReader(["receipt", run, "--json"], tmp, run);
      expect(receipt.stderr).toBe("");
      expect(receipt.code).toBe(0);
      expect(JSON.parse(receipt.stdout).run).toMatchObject({ kind: "run", status: "finished" });
      const log = honeAsReader(["log", run], tmp, run);
      expect(log.code, log.stderr).toBe(0);
      expect(log.stdout).toMatch(/completed \(budget_spent\)/);
      expect(readdirSync(run).sort()).toEqual(before);
    } finally {
      chmodSync(parent, 0o700);
      if (existsSync(run)) chmodSync(run, 0o755);
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
