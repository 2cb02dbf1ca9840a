import { describe, expect, it } from "vitest";
import { ENOSYS, FILTERED, seen, warmAndCold } from "../helpers/sealed-probe.ts";

// A socket's queued data is kernel memory, counted by no limit of the call: one program raised SO_SNDBUF on 200 Unix
// sockets (a socketpair works in any network namespace) to the host's maximum and held 1.6 GB under a 256 MB limit,
// warm and cold, with bubblewrap or without (and each of its 64 processes could do the same). setsockopt of a
// buffer size now succeeds without changing the size (a size is a hint; trio sets one without a try, so an error
// would break it), and io_uring is refused (its SETSOCKOPT command set SO_SNDBUF to 8 MB past the filter); at the
// default size the open-file limit keeps a process to about 80 MB.
// Sockets themselves still work (asyncio's event loop makes a socketpair).

const HOARD = `def run():
    import socket
    pairs, held, refused, sizes = [], 0, [], set()
    for _ in range(50):
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        for s in (a, b):
            for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
                try:
                    s.setsockopt(socket.SOL_SOCKET, option, 1 << 30)
                except OSError as e:
                    refused.append(e.errno)
                sizes.add(s.getsockopt(socket.SOL_SOCKET, option) >= 1 << 29)
            s.setblocking(False)
        for s in (a, b):
            while True:
                try:
                    held += s.send(b'x' * 65000)
                except OSError:
                    break
        pairs.append((a, b))
    return {'refused': sorted(set(refused)), 'raised': sorted(sizes), 'held_mb': held >> 20}
`;

/** The same through io_uring, whose operations no seccomp filter sees: IORING_OP_URING_CMD's SETSOCKOPT (Linux 6.7+). */
const URING = `def run():
    import ctypes, mmap, socket, struct
    libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(425, 4, params)
    if fd < 0:
        return {'setup': -ctypes.get_errno()}
    f = struct.unpack_from('10I', params, 0)
    sq_entries, cq_entries = f[0], f[1]
    sq = struct.unpack_from('7I', params, 40)  # head tail mask entries flags dropped array
    cq = struct.unpack_from('6I', params, 80)  # head tail mask entries overflow cqes
    sqring = mmap.mmap(fd, sq[6] + sq_entries * 4, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
    sqes = mmap.mmap(fd, sq_entries * 64, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0x10000000)
    cqring = mmap.mmap(fd, cq[5] + cq_entries * 16, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0x8000000)
    a, b = socket.socketpair()
    val = ctypes.c_int(64 << 20)
    sqe = bytearray(64)
    struct.pack_into('BBHi', sqe, 0, 46, 0, 0, a.fileno())      # IORING_OP_URING_CMD
    struct.pack_into('II', sqe, 8, 3, 0)                          # SOCKET_URING_OP_SETSOCKOPT
    struct.pack_into('II', sqe, 16, socket.SOL_SOCKET, socket.SO_SNDBUF)
    struct.pack_into('Q', sqe, 32, 7)
    struct.pack_into('I', sqe, 44, 4)                             # optlen
    struct.pack_into('Q', sqe, 48, ctypes.addressof(val))         # optval
    sqes[0:64] = bytes(sqe)
    tail = struct.unpack_from('I', sqring, sq[1])[0]
    struct.pack_into('I', sqring, sq[6] + (tail & sq[2]) * 4, 0)
    struct.pack_into('I', sqring, sq[1], tail + 1)
    n = libc.syscall(426, fd, 1, 1, 1, None, 0)
    res = None
    if n >= 0:
        head = struct.unpack_from('I', cqring, cq[0])[0]
        res = struct.unpack_from('QiI', cqring, cq[5] + (head & cq[2]) * 16)[1]
    return {'enter': n if n >= 0 else -ctypes.get_errno(), 'res': res, 'sndbuf': a.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)}
`;

const HONEST = `def run():
    import asyncio, socket
    async def main():
        await asyncio.sleep(0)
        return 'loop'
    a, b = socket.socketpair()
    a.sendall(b'ping')
    got = b.recv(4).decode()
    keep = a.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)  # as trio's wakeup socketpair does, without a try
    return [asyncio.run(main()), got, keep, a.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) > 0]
`;

describe("a program cannot hold memory in socket buffers raised past their default", () => {
  const evaluate = warmAndCold(256);

  it.runIf(FILTERED).each(["warm", "cold"])("[%s] SO_SNDBUF and SO_RCVBUF are left as they were", async (mode) => {
    const e = await evaluate(mode, HOARD);
    expect(e).toMatchObject({ valid: true, score: 1 });
    const out = seen(e);
    expect(out).toMatchObject({ refused: [], raised: [false] });
    expect(out.held_mb).toBeLessThan(256);
  });

  it.runIf(FILTERED).each(["warm", "cold"])("[%s] io_uring, which would set them past the filter, is refused", async (mode) => {
    const e = await evaluate(mode, URING);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(seen(e)).toEqual({ setup: -ENOSYS });
  });

  it.each(["warm", "cold"])("[%s] sockets, their other options and asyncio still work", async (mode) => {
    const e = await evaluate(mode, HONEST);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(seen(e)).toEqual(["loop", "ping", 0, true]);
  });
});
