"""hone's helper for task evaluators: run a candidate program in a separate, contained process.

    from hone_runtime import run_program, ProgramError
    value = run_program(program_path, "run_packing", timeout=60)

The program runs in another process than the evaluator, in namespaces of its own (no network, a private /tmp,
its own process tree killed whole when the call ends, a process limit), with no secrets in its environment and
no view of the task folder, so it cannot monkeypatch the checker, print fake results or leave anything behind.
Only the JSON value it returns comes back. Under hone's warm pool the process is forked from a sandboxed zygote
that has numpy imported; on the cold path it is a fresh interpreter. Both run the same code and return the same
values.
"""
import json
import math
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(HERE, "hone_program_child.py")
MAX_PROGRAM_BYTES = 4 << 20
MAX_REPLY_BYTES = (64 << 20) + (1 << 20)
SANDBOX_GONE = "hone-runtime: the program sandbox is not answering"


class ProgramError(Exception):
    """The program failed, timed out, or returned something that is not plain data."""


FORGED = "the program's process returned a reply that hone's call never writes"


class _Forged(Exception):
    pass


def _refuse_constant(token):
    # hone's call writes non-finite floats as {"__nonfinite__": ...}: a bare NaN or Infinity token was written by
    # the program itself, on the channel its process holds.
    raise _Forged(token)


def _finite_float(text):
    # Likewise a number too large for a float (1e999), which would read as infinity: hone's call writes repr(x) of
    # finite floats only.
    value = float(text)
    if not math.isfinite(value):
        raise _Forged(text)
    return value


def _is_result(item):
    """One call's result as hone's call writes it: {"ok": true, "value": ...} or {"ok": false, "error": "..."}."""
    if not isinstance(item, dict) or not isinstance(item.get("ok"), bool):
        return False
    return set(item) == ({"ok", "value"} if item["ok"] else {"ok", "error"}) and (item["ok"] or isinstance(item["error"], str))


def _decode(data, count=None):
    """The reply's value. The program's own process writes the reply, so a program may write one itself: anything
    that is not exactly what hone's call writes (with `count`, one result per call) leaves it without a result."""
    try:
        reply = json.loads(data.decode(), parse_constant=_refuse_constant, parse_float=_finite_float)
    except _Forged:
        raise ProgramError(FORGED)
    except Exception:
        raise ProgramError("the program's process returned no result")
    if not _is_result(reply):
        raise ProgramError(FORGED)
    if not reply["ok"]:
        raise ProgramError(reply["error"] or "the program failed")
    value = reply["value"]
    if count is not None and not (isinstance(value, list) and len(value) == count and all(map(_is_result, value))):
        raise ProgramError(FORGED)
    return value


def _read_program(path):
    """At most MAX_PROGRAM_BYTES + 1 bytes of the file, read in chunks: one read of that size makes Python allocate
    (and the kernel map) 4 MB for a program of a few KB, ~0.1 ms of every evaluation."""
    chunks, size = [], 0
    with open(path, "rb", buffering=0) as f:
        while size <= MAX_PROGRAM_BYTES:
            chunk = f.read(min(1 << 16, MAX_PROGRAM_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks)


def _request(program_path, entry, args, timeout, memory_mb, many):
    text = _read_program(program_path)
    if len(text) > MAX_PROGRAM_BYTES:
        raise ProgramError("the program is larger than %d bytes" % MAX_PROGRAM_BYTES)
    try:
        program = text.decode()
    except UnicodeDecodeError as exc:
        raise ProgramError("the program is not UTF-8 text (byte %d)" % exc.start)
    ext = os.path.splitext(program_path)[1] or ".py"
    return {"program": program, "ext": ext, "entry": entry, "args": args, "timeout": timeout, "memory_mb": memory_mb, "many": many}


NO_RESULT = "the program's process ended without a result"


def _read_frame(sock):
    """One reply as the zygote's call sends it: its length in bytes, a newline, then exactly that many bytes. Bytes
    before it that are not a length (a program writing on its connection) leave the call without a result."""
    data = bytearray()
    while b"\n" not in data[:13]:
        chunk = sock.recv(1 << 16) if len(data) < 13 else b""
        if not chunk:
            raise ProgramError(NO_RESULT)
        data += chunk
    head, _, rest = bytes(data).partition(b"\n")
    if not head.isdigit():
        raise ProgramError(NO_RESULT)
    size = int(head)
    if size > MAX_REPLY_BYTES:
        raise ProgramError("the program's reply is too large")
    body = bytearray(rest[:size])
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 20))
        if not chunk:
            raise ProgramError(NO_RESULT)
        body += chunk
    return bytes(body)


def _gone(exc):
    # hone reads this line in the evaluator's stderr: the evaluation is then failed, never scored.
    sys.stderr.write("%s (%s)\n" % (SANDBOX_GONE, exc))
    sys.stderr.flush()
    raise ProgramError("the program sandbox is not answering (%s)" % exc)


def _via_zygote(path, request):

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(request["timeout"] + 30)
        try:
            s.connect(path)
            s.sendall(json.dumps(request).encode() + b"\n")
        except OSError as exc:
            _gone(exc)
        try:
            return _read_frame(s)
        except socket.timeout as exc:  # the zygote enforces the program's own timeout: it stopped answering
            _gone(exc)
        except OSError:
            raise ProgramError(NO_RESULT)


def _cold(request):
    env = {k: os.environ[k] for k in ("PATH", "LANG", "HONE_PROGRAM_LIMITS") if k in os.environ}
    proc = subprocess.Popen(
        [sys.executable, CHILD], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        out, _ = proc.communicate(json.dumps(request).encode(), timeout=request["timeout"] + 30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        raise ProgramError("the program did not return within %g s" % request["timeout"])
    return out


def _run(program_path, entry, args, timeout, memory_mb, many):
    request = _request(os.path.abspath(program_path), entry, args, float(timeout), int(memory_mb), many)
    zygote = os.environ.get("HONE_PROGRAM_SOCKET")
    return _decode(_via_zygote(zygote, request) if zygote else _cold(request), len(args) if many else None)


def run_program(program_path, entry, args=(), timeout=60.0, memory_mb=2048):
    """Calls `entry(*args)` of the program at `program_path` in a contained process and returns its value
    (numpy arrays as lists, non-finite floats as {"__nonfinite__": ...}). Raises ProgramError on any failure."""
    return _run(program_path, entry, list(args), timeout, memory_mb, False)


def run_program_many(program_path, entry, args_list, timeout=60.0, memory_mb=2048):
    """Calls `entry(*args)` once per item of `args_list` in one contained process (the timeout covers all calls).
    Returns a list of {"ok": True, "value": ...} or {"ok": False, "error": ...}, one per call."""
    return _run(program_path, entry, [list(a) for a in args_list], timeout, memory_mb, True)


def finite_array(value, name="value"):
    """Rejects the {"__nonfinite__": ...} markers, non-finite floats and non-numbers before numpy sees them."""
    import numpy as np

    def walk(v):
        if isinstance(v, dict):
            raise ProgramError("%s contains a non-finite or non-numeric value" % name)
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ProgramError("%s must contain only numbers" % name)
        elif isinstance(v, float) and not math.isfinite(v):
            raise ProgramError("%s contains a non-finite or non-numeric value" % name)

    walk(value)
    try:
        return np.asarray(value, dtype=float)
    except OverflowError:
        raise ProgramError("%s holds an integer too large for a float" % name)
