"""Runs a command and reports the CPU time and peak memory of its whole process tree, as JSON on stdout.

    python3 tree_rusage.py COMMAND [ARG...]

This process makes itself a child subreaper (Linux), so every descendant the command leaves orphaned is
reparented here and reaped here: RUSAGE_CHILDREN then counts the command and everything it started (evaluator
processes reaped by their own parents are counted in them). It waits for the last descendant, at most 60 s after
the command exits. The command's stdout is discarded, its stderr passed through.
"""
import ctypes
import json
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main():
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("tree_rusage.py: prctl(PR_SET_CHILD_SUBREAPER) failed: %s" % os.strerror(ctypes.get_errno()))
    start = time.monotonic()
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
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"code": code, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "maxrss_mb": ru.ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
