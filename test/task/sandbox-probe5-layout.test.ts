import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PythonInfo } from "../../src/task/python-env.ts";
import { automountsUnder, bwrapArgs, procSysBinds } from "../../src/task/sandbox-layout.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// The sandbox's layout on hosts unlike this one: a mount under /proc/sys (systemd's binfmt_misc automount, whose
// read-only remount makes bubblewrap die), a GPU's device in a folder of its own (which bubblewrap makes 0700, closed
// to the unprivileged user programs run as), and a bubblewrap too old for the options hone uses.
const python: PythonInfo = { executable: "true", roots: ["/usr/lib"], namespaces: true, unprivileged: true, readonlyRoot: true };

const tree: Record<string, string[]> = {
  "/proc/sys": ["kernel", "fs", "net", "vm"],
  "/proc/sys/fs": ["file-max", "binfmt_misc", "inotify"],
};

describe("the sandbox's read-only cover of /proc/sys", () => {
  it("is one bind where no automount lies below it", () => {
    expect(procSysBinds([], (d) => tree[d] ?? [])).toEqual(["--ro-bind", "/proc/sys", "/proc/sys"]);
  });

  it("binds a folder holding an automount entry by entry, leaving the automount out", () => {
    const args = procSysBinds(["/proc/sys/fs/binfmt_misc"], (d) => tree[d] ?? []);
    const bound = args.filter((_, i) => i % 3 === 1);
    expect(bound).toEqual(["/proc/sys/fs/file-max", "/proc/sys/fs/inotify", "/proc/sys/kernel", "/proc/sys/net", "/proc/sys/vm"]);
    expect(args.filter((_, i) => i % 3 === 0).every((a) => a === "--ro-bind-try")).toBe(true);
  });

  it("binds /proc/sys/net whole, whose entries depend on the network namespace", () => {
    const args = procSysBinds(["/proc/sys/net/x/auto"], (d) => tree[d] ?? []);
    expect(args.filter((_, i) => i % 3 === 1)).toContain("/proc/sys/net");
    expect(args.join(" ")).not.toContain("/proc/sys/net/");
  });

  it("reads the automounts below a folder from a mountinfo table, escapes decoded, other mounts left to the bind", () => {
    const table = [
      "22 27 0:21 / /proc rw,nosuid - proc proc rw",
      "40 22 0:36 / /proc/sys/fs/binfmt\\040misc rw,relatime shared:13 - autofs systemd-1 rw,fd=29",
      "41 40 0:45 / /proc/sys/fs/binfmt\\040misc rw,relatime shared:14 - binfmt_misc binfmt_misc rw",
      "42 22 0:37 / /proc/sys/kernel/random/boot_id ro - tmpfs none rw",
      "",
    ].join("\n");
    expect(automountsUnder("/proc/sys", table)).toEqual(["/proc/sys/fs/binfmt misc"]);
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

/** `hone doctor`'s bubblewrap line with a bwrap on PATH that runs `script` (a stand-in for another version's answers). */
async function doctorWith(script: string): Promise<{ ok: boolean; found: string } | undefined> {
  const bin = join(tempDir(), "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "bwrap"), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, "bwrap"), 0o755);
  const r = await hone(["doctor", "--json"], { env: { PATH: `${bin}:${process.env.PATH}` } });
  const checks = JSON.parse(r.stdout).checks as { id: string; ok: boolean; found: string }[];
  return checks.find((c) => c.id === "bubblewrap");
}

describe("bubblewrap checked with hone's own layout, once at the start", () => {
  it("names a bubblewrap too old for it, with what to do, instead of failing every evaluation", async () => {
    // bubblewrap 0.4's answer to an option it lacks (--perms and --clearenv came in 0.5).
    const bwrap = await doctorWith(
      'for a in "$@"; do case "$a" in --perms|--clearenv) echo "bwrap: Unknown option $a" >&2; exit 1;; esac; done\nexit 0',
    );
    expect(bwrap?.ok).toBe(false);
    expect(bwrap?.found).toMatch(/too old for hone's sandbox \(bwrap: Unknown option --perms\): bubblewrap 0\.5 or later/);
  });

  it("names a layout it cannot set up, without the container advice meant for namespaces", async () => {
    const bwrap = await doctorWith('echo "bwrap: Can\'t find source path /proc/sys: No such file or directory" >&2\nexit 1');
    expect(bwrap?.ok).toBe(false);
    expect(bwrap?.found).toMatch(/cannot set up hone's sandbox layout here \(bwrap: Can't find source path \/proc\/sys/);
    expect(bwrap?.found).not.toMatch(/seccomp/);
  });

  it("takes a layout with no `true` to run (NixOS: bubblewrap got as far as running it) as one that works", async () => {
    const bwrap = await doctorWith('echo "bwrap: execvp true: No such file or directory" >&2\nexit 1');
    expect(bwrap?.ok).toBe(true);
  });
});
