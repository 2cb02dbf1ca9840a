"""hone's helper for task evaluators: run a candidate program in a separate, isolated process.

    from hone_runtime import run_program, ProgramError
    value = run_program(program_path, "run_packing", timeout=60)

The program runs in another process than the evaluator, with no secrets in its environment, no network and no
write access outside a scratch directory where bubblewrap works, so it cannot monkeypatch the checker or print
fake results. Under hone's warm pool the process is forked from a sandboxed zygote that has numpy imported; in a
cold run it is a fresh interpreter under bubblewrap. Both run the same code and return the same values.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(HERE, "hone_program_child.py")
KEEP_ENV = ("PATH", "LANG", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE")


class ProgramError(Exception):
    """The program failed, timed out, or returned something that is not plain data."""


def _decode(text):
    try:
        reply = json.loads(text)
    except Exception:
        raise ProgramError("the program's process returned no result")
    if not reply.get("ok"):
        raise ProgramError(reply.get("error") or "the program failed")
    return reply.get("value")


def _via_zygote(path, program_path, entry, args, timeout, memory_mb, many=False):
    request = json.dumps({"program": program_path, "entry": entry, "args": args, "timeout": timeout, "memory_mb": memory_mb, "many": many})
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout + 30)
        s.connect(path)
        s.sendall(request.encode() + b"\n")
        chunks = []
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    return _decode(b"".join(chunks).decode())


def _bwrap_prefix(scratch):
    if os.environ.get("HONE_BWRAP") != "1":
        return []
    hidden = [d for d in os.environ.get("HONE_HIDE_DIRS", "").split(os.pathsep) if d]
    prefix = ["bwrap", "--unshare-net", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for d in hidden:
        prefix += ["--tmpfs", d]
    prefix += ["--bind", scratch, scratch, "--ro-bind", CHILD, CHILD, "--chdir", scratch, "--clearenv"]
    for k in KEEP_ENV:
        if k in os.environ:
            prefix += ["--setenv", k, os.environ[k]]
    return prefix


def _cold(program_path, entry, args, timeout, memory_mb, many=False):
    scratch = tempfile.mkdtemp(prefix="hone-program-")
    try:
        program_copy = os.path.join(scratch, "program" + os.path.splitext(program_path)[1])
        result_path = os.path.join(scratch, "result.json")
        with open(program_path) as src, open(program_copy, "w") as dst:
            dst.write(src.read())
        env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
        env["HOME"] = scratch
        cmd = _bwrap_prefix(scratch) + [sys.executable, CHILD, program_copy, entry, json.dumps(args), str(memory_mb), result_path, "1" if many else "0"]
        proc = subprocess.Popen(cmd, cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            raise ProgramError("the program did not return within %g s" % timeout)
        try:
            with open(result_path) as f:
                text = f.read()
        except OSError:
            lines = err.decode(errors="replace").strip().splitlines()
            raise ProgramError("the program's process ended without a result" + (": " + lines[-1][:300] if lines else ""))
        return _decode(text)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_program(program_path, entry, args=(), timeout=60.0, memory_mb=2048):
    """Calls `entry(*args)` of the program at `program_path` in an isolated process and returns its value
    (numpy arrays as lists, non-finite floats as {"__nonfinite__": ...}). Raises ProgramError on any failure."""
    zygote = os.environ.get("HONE_PROGRAM_SOCKET")
    if zygote:
        return _via_zygote(zygote, os.path.abspath(program_path), entry, list(args), float(timeout), int(memory_mb))
    return _cold(os.path.abspath(program_path), entry, list(args), float(timeout), int(memory_mb))


def run_program_many(program_path, entry, args_list, timeout=60.0, memory_mb=2048):
    """Calls `entry(*args)` once per item of `args_list` in one isolated process (the timeout covers all calls).
    Returns a list of {"ok": True, "value": ...} or {"ok": False, "error": ...}, one per call."""
    args_list = [list(a) for a in args_list]
    zygote = os.environ.get("HONE_PROGRAM_SOCKET")
    if zygote:
        return _via_zygote(zygote, os.path.abspath(program_path), entry, args_list, float(timeout), int(memory_mb), many=True)
    return _cold(os.path.abspath(program_path), entry, args_list, float(timeout), int(memory_mb), many=True)


def finite_array(value, name="value"):
    """Rejects the {"__nonfinite__": ...} markers and non-numbers before numpy sees them."""
    import numpy as np

    def walk(v):
        if isinstance(v, dict):
            raise ProgramError("%s contains a non-finite or non-numeric value" % name)
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ProgramError("%s must contain only numbers" % name)

    walk(value)
    return np.asarray(value, dtype=float)
