import { describe, expect, it } from "vitest";
import { ENOSYS, FILTERED, seen, warmAndCold } from "../helpers/sealed-probe.ts";

// RLIMIT_AS counts what a process maps, not a memfd's pages written with write() nor SysV shared memory attached,
// filled and detached again: one process held 1.4 GB of the host's memory in memfds under a 256 MB limit, and could
// hold any amount for as long as its call ran. Programs get ENOSYS for memfd_create and shmat (a seccomp filter set
// in each call);
// numpy, threads, forks and the call's own /tmp and /dev/shm (size-capped tmpfs) still work.

const MEMFD = `def run():
    import os
    held = 0
    try:
        fd = os.memfd_create('hoard')
        chunk = b'x' * (16 << 20)
        for _ in range(24):  # 384 MB, past the call's 256 MB
            os.write(fd, chunk)
            held += len(chunk)
    except OSError as e:
        return {'held_mb': held >> 20, 'errno': e.errno}
    return {'held_mb': held >> 20, 'errno': None}
`;

const SYSV = `def run():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    held = 0
    for _ in range(3):  # 3 x 200 MB, each attached, filled and detached: never more than 200 MB mapped at once
        sid = libc.shmget(0, 200 << 20, 0o1000 | 0o600)
        if sid < 0:
            return {'held_mb': held >> 20, 'errno': ctypes.get_errno(), 'made': False}
        addr = libc.shmat(sid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return {'held_mb': held >> 20, 'errno': ctypes.get_errno(), 'made': True}
        ctypes.memset(addr, 1, 200 << 20)
        libc.shmdt(ctypes.c_void_p(addr))
        held += 200 << 20
    return {'held_mb': held >> 20, 'errno': None, 'made': True}
`;

const HONEST = `def run():
    import os, threading, numpy as np
    a = np.random.default_rng(1).random((200, 200))
    s = float(np.linalg.svd(a, compute_uv=False)[0])
    t = threading.Thread(target=lambda: None); t.start(); t.join()
    with open('/dev/shm/x', 'wb') as f:
        for _ in range(8):  # 1 MB at a time: numpy's threads and malloc arenas leave an 8 MB bytes object no room at times
            f.write(b'y' * (1 << 20))
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    return {'svd': round(s, 6), 'child': os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}
`;

describe("memory the address-space limit does not count is refused to programs", () => {
  const evaluate = warmAndCold(256);

  it.runIf(FILTERED).each(["warm", "cold"])("[%s] a memfd filled past the memory limit is refused", async (mode) => {
    const e = await evaluate(mode, MEMFD);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(seen(e)).toEqual({ held_mb: 0, errno: ENOSYS });
  });

  it.runIf(FILTERED).each(["warm", "cold"])(
    "[%s] SysV shared memory is made but never attached, so never filled",
    async (mode) => {
      const e = await evaluate(mode, SYSV);
      expect(e).toMatchObject({ valid: true, score: 1 });
      expect(seen(e)).toEqual({ held_mb: 0, errno: ENOSYS, made: true });
    },
  );

  it.each(["warm", "cold"])("[%s] an honest program (numpy, a thread, /dev/shm, a fork) is unaffected", async (mode) => {
    const e = await evaluate(mode, HONEST);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(seen(e)).toMatchObject({ child: 7 });
    expect(seen(e).svd).toBeGreaterThan(100);
  });
});
