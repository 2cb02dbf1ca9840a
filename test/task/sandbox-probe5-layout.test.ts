import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PythonInfo } from "../../src/task/python-env.ts";
import { bwrapArgs, mountPointsUnder, readOnlyCover } from "../../src/task/sandbox-layout.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// The sandbox's layout on hosts unlike this one: a mount under /proc/sys (systemd's binfmt_misc automount, whose
// read-only remount makes bubblewrap die), a GPU's device in a folder of its own (which bubblewrap makes 0700, closed
// to the unprivileged user programs run as), and a bubblewrap too old for the options hone uses.
const python: PythonInfo = { executable: "true", roots: ["/usr/lib"], namespaces: true, unprivileged: true, readonlyRoot: true };

const tree: Record<string, string[]> = {
  "/proc/sys": ["kernel", "fs", "vm"],
  "/proc/sys/fs": ["file-max", "binfmt_misc", "inotify"],
};

describe("the sandbox's read-only cover of /proc/sys", () => {
  it("is one bind where no mount lies below it", () => {
    expect(readOnlyCover("/proc/sys", [], (d) => tree[d] ?? [])).toEqual(["--ro-bind", "/proc/sys", "/proc/sys"]);
  });

  it("binds a folder holding a mount entry by entry, leaving the mount out", () => {
    const args = readOnlyCover("/proc/sys", ["/proc/sys/fs/binfmt_misc"], (d) => tree[d] ?? []);
    const bound = args.filter((_, i) => i % 3 === 1);
    expect(bound).toEqual(["/proc/sys/fs/file-max", "/proc/sys/fs/inotify", "/proc/sys/kernel", "/proc/sys/vm"]);
    expect(args.filter((_, i) => i % 3 === 0).every((a) => a === "--ro-bind")).toBe(true);
  });

  it("reads the mount points below a folder from a mountinfo table, escapes decoded", () => {
    const table = [
      "22 27 0:21 / /proc rw,nosuid - proc proc rw",
      "40 22 0:36 / /proc/sys/fs/binfmt\\040misc rw,relatime shared:13 - autofs systemd-1 rw,fd=29",
      "41 22 0:37 / /proc/sysvipc rw - tmpfs none rw",
      "",
    ].join("\n");
    expect(mountPointsUnder("/proc/sys", table)).toEqual(["/proc/sys/fs/binfmt misc"]);
  });
});

describe("a device in a folder of its own", () => {
  // A file of the test's in a folder of its own stands for /dev/dri/card0: bubblewrap makes a missing parent 0700
  // wherever it is, and a device is bound at its own path.
  const gpu = join(tempDir(), "gpu");
  const card = join(gpu, "card0");
  mkdirSync(gpu);
  writeFileSync(card, "");

  it("gets its folder made walkable (0755) before it is bound", () => {
    const args = bwrapArgs({ python, readOnly: [], env: {}, devices: [join(gpu, "card*")] }, ["true"]).join(" ");
    expect(args).toContain(`--perms 0755 --dir ${gpu} --dev-bind ${card} ${card}`);
    expect(args).toMatch(/--dev-bind .* --remount-ro \/dev /);
  });

  it("inside bubblewrap: the folder is 0755, the device usable, /dev read-only", (ctx) => {
    requireTool(ctx, "bubblewrap");
    const script = `stat -c %a ${gpu}; echo used > ${card}; cat ${card}; touch /dev/left 2>/dev/null || echo refused`;
    const args = bwrapArgs({ python, readOnly: [], env: { PATH: "/usr/bin:/bin" }, devices: [card] }, ["sh", "-c", script]);
    const r = spawnSync("bwrap", args, { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split("\n")).toEqual(["755", "used", "refused", ""]);
  });
});

describe("a bubblewrap too old for hone's sandbox", () => {
  it("is found once at the start, with what to do, not in every evaluation", async () => {
    const bin = join(tempDir(), "bin");
    mkdirSync(bin);
    // bubblewrap 0.4's answer to an option it lacks (--perms and --clearenv came in 0.5).
    writeFileSync(
      join(bin, "bwrap"),
      '#!/bin/sh\nfor a in "$@"; do case "$a" in --perms|--clearenv) echo "bwrap: Unknown option $a" >&2; exit 1;; esac; done\nexit 0\n',
    );
    chmodSync(join(bin, "bwrap"), 0o755);
    const r = await hone(["doctor", "--json"], { env: { PATH: `${bin}:${process.env.PATH}` } });
    const checks = JSON.parse(r.stdout).checks as { id: string; ok: boolean; found: string }[];
    const bwrap = checks.find((c) => c.id === "bubblewrap");
    expect(bwrap?.ok).toBe(false);
    expect(bwrap?.found).toMatch(/too old for hone's sandbox \(bwrap: Unknown option --perms\): bubblewrap 0\.5 or later/);
  });
});
