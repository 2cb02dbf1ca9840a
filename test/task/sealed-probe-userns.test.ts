// A program that enters a user namespace of its own is root there: it may mount a tmpfs and fill it, and a tmpfs's
// pages are counted by no limit of the call (not the address space, not /tmp's size). On the cold path without
// bubblewrap the call has a /proc of its own to map its ids with, and one program held 1.4 GB of the host's memory
// under a 256 MB limit (more files, more memory). The call's seccomp filter now refuses clone and unshare asking for
// CLONE_NEWUSER, and clone3 (whose flags it cannot read), with ENOSYS; threads, forks and subprocesses still work.
// Without bubblewrap (HONE_NO_BWRAP=1, read once per process) is where the mount worked; warm and cold are both checked.
process.env.HONE_NO_BWRAP = "1";

import { describe, expect, it } from "vitest";
import { isolationSupport } from "../../src/task/python-env.ts";
import { ENOSYS, FILTERED, seen, warmAndCold } from "../helpers/sealed-probe.ts";

/** Enters a user and mount namespace, maps its ids where /proc allows, mounts a 2 GB tmpfs and writes 320 MB. */
const HOARD = `def run():
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(0x10000000 | 0x00020000) != 0:
        return {'held_mb': 0, 'errno': ctypes.get_errno()}
    for name, text in (('setgroups', 'deny'), ('uid_map', '0 %d 1' % uid), ('gid_map', '0 %d 1' % gid)):
        try:
            with open('/proc/self/' + name, 'w') as f:
                f.write(text)
        except OSError:
            pass
    os.makedirs('/tmp/hoard', exist_ok=True)
    if libc.mount(b'none', b'/tmp/hoard', b'tmpfs', 0, b'size=2g') != 0:
        return {'held_mb': 0, 'errno': ctypes.get_errno(), 'mounted': False}
    held, chunk = 0, b'x' * (16 << 20)
    try:
        for i in range(2):  # two files: each stays under the call's 256 MB per file
            with open('/tmp/hoard/f%d' % i, 'wb') as f:
                for _ in range(10):
                    f.write(chunk)
                    held += 16
    except OSError as e:
        return {'held_mb': held, 'errno': e.errno}
    return {'held_mb': held, 'errno': None}
`;

/** The same through raw system calls: clone asking for CLONE_NEWUSER (x86-64's number and argument order), clone3. */
const RAW = `def run():
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    got = {}
    pid = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
    if pid == 0:
        os._exit(0)
    got['clone'] = ctypes.get_errno() if pid < 0 else 'made'
    if pid > 0:
        os.waitpid(pid, 0)
    args = (ctypes.c_uint64 * 11)(0x10000000, 0, 0, 0, 17)  # struct clone_args: flags, ..., exit_signal
    pid = libc.syscall(435, ctypes.byref(args), ctypes.sizeof(args))
    if pid == 0:
        os._exit(0)
    got['clone3'] = ctypes.get_errno() if pid < 0 else 'made'
    if pid > 0:
        os.waitpid(pid, 0)
    return got
`;

const HONEST = `def run():
    import os, subprocess, sys, threading
    box = []
    t = threading.Thread(target=lambda: box.append(1))
    t.start()
    t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    child = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    sub = subprocess.run([sys.executable, '-c', 'print(6 * 7)'], capture_output=True, text=True).stdout.strip()
    return {'thread': box, 'child': child, 'sub': sub}
`;

describe("without bubblewrap, a program cannot hold memory in a tmpfs of its own user namespace", () => {
  const evaluate = warmAndCold(128);

  it("is really the fallback", () => expect(isolationSupport().bwrap).toBe(false));

  it.runIf(FILTERED).each(["warm", "cold"])("[%s] a new user namespace is refused, so no tmpfs is filled", async (mode) => {
    const e = await evaluate(mode, HOARD);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(seen(e)).toEqual({ held_mb: 0, errno: ENOSYS });
  });

  it.runIf(process.arch === "x64").each(["warm", "cold"])(
    "[%s] clone with CLONE_NEWUSER and clone3 are refused",
    async (mode) => {
      const e = await evaluate(mode, RAW);
      expect(seen(e)).toEqual({ clone: ENOSYS, clone3: ENOSYS });
    },
  );

  it.each(["warm", "cold"])("[%s] threads, forks and subprocesses still work", async (mode) => {
    const e = await evaluate(mode, HONEST);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(seen(e)).toEqual({ thread: [1], child: 7, sub: "42" });
  });
});
