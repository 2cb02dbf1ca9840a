"""Runs a command and reports what its whole process tree cost, as JSON on stdout.

    python3 tree_rusage.py COMMAND [ARG...]

{"code", "wall", "cpu", "machine_cpu", "maxrss_mb"}: `machine_cpu` is the machine's busy CPU time (/proc/stat: all
but idle and iowait) from the start until the command and every process it left have exited, so the bench must be
the only work on the machine (it prints the load); `cpu` is what getrusage(RUSAGE_CHILDREN) counts. The two differ
because the kernel discards the CPU time of processes that die with a PID namespace (its dying init reaps them
without accounting, and bubblewrap's sandboxes are PID namespaces): `machine_cpu` is the figure to use. This process
is a child subreaper (Linux), so the processes the command leaves orphaned are reparented here and waited for (at
most 60 s after the command exits). The command's stdout is discarded, its stderr passed through.
"""
import ctypes
import json
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
USER_HZ = os.sysconf("SC_CLK_TCK")


def busy_seconds():
    """The machine's busy CPU seconds so far: user, nice, system, irq, softirq and steal of every CPU."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / USER_HZ


def main():
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("tree_rusage.py: prctl(PR_SET_CHILD_SUBREAPER) failed: %s" % os.strerror(ctypes.get_errno()))
    start, busy = time.monotonic(), busy_seconds()
    child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
    code = child.wait()
    wall = time.monotonic() - start
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.01)
        except ChildProcessError:
            break
    machine = busy_seconds() - busy
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"code": code, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "machine_cpu": machine, "maxrss_mb": ru.ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
