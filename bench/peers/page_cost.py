"""What memory and the kernel cost a freshly forked process on this machine, as JSON on stdout.

    python3 page_cost.py [PAGES]

{"cow_write_us", "first_touch_us", "read_after_fork_us", "syscall_us"}: in a child forked from a process that has
written PAGES pages (5000 unless given), the microseconds per page of its first write to each (a copy-on-write
fault), of its first write to each page of a fresh anonymous mapping (a zero-fill fault), and of its first read of
each shared page; and per getppid() call. A fork-per-call sandbox pays these for every page the call touches: a warm
pool's program call writes several hundred pages of the numpy-loaded interpreter it was forked from. Printed beside
the figures of the benches that fork per evaluation, never judged.
"""
import json
import mmap
import os
import sys
import time

PAGE = mmap.PAGESIZE


def per_page(buf, pages, value):
    t = time.perf_counter()
    for i in range(0, pages * PAGE, PAGE):
        buf[i] = value
    return (time.perf_counter() - t) / pages * 1e6


def reads(buf, pages):
    t = time.perf_counter()
    total = 0
    for i in range(0, pages * PAGE, PAGE):
        total += buf[i]
    return (time.perf_counter() - t) / pages * 1e6


def child(pages, shared, other, out):
    calls = 20000
    t = time.perf_counter()
    for _ in range(calls):
        os.getppid()
    syscall = (time.perf_counter() - t) / calls * 1e6
    fresh = mmap.mmap(-1, pages * PAGE)
    result = {
        "cow_write_us": per_page(shared, pages, 2),
        "first_touch_us": per_page(fresh, pages, 2),
        "read_after_fork_us": reads(other, pages),
        "syscall_us": syscall,
    }
    os.write(out, json.dumps(result).encode())


def main():
    pages = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    shared, other = bytearray(pages * PAGE), bytearray(pages * PAGE)
    per_page(shared, pages, 1)
    per_page(other, pages, 1)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            child(pages, shared, other, w)
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.waitpid(pid, 0)
    sys.stdout.write(data.decode() + "\n")


if __name__ == "__main__":
    main()
