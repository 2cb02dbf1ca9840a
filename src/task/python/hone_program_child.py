"""Runs one candidate program's entry point, contained, and returns its result as JSON text.

`program_reply(request)` runs it in a warm zygote's call, the process a CallHost made and sealed (see
hone_program_zygote); `serve(request)` on the cold path (this file run as a fresh interpreter with the request on
stdin and the reply on stdout) makes a Box and runs it there. Both build the reply with the same code, so both give
the same bytes. The request carries the program's text, never a path: the program runs in its own namespaces
(hone_sandbox) with a private /tmp, and sees no folder of the evaluator or of hone. Floats are written with repr,
which round-trips.
"""
import importlib.util
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from hone_sandbox import DEFAULTS, run_contained, set_limits  # noqa: E402

MAX_PROGRAM_BYTES = 4 << 20
# What a request may set; everything else about the containment comes from the host's configuration.
REQUEST_LIMITS = ("memory_mb",)


def to_jsonable(value, depth=0):
    if depth > 20:
        raise ValueError("the program's result is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return {"__nonfinite__": "nan"}
        if math.isinf(value):
            return {"__nonfinite__": "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, complex):
        return {"__complex__": [to_jsonable(value.real), to_jsonable(value.imag)]}
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        plain = tolist()
        if type(plain) is type(value):  # a scalar numpy has no plainer form for (longdouble, clongdouble)
            plain = complex(value) if "complex" in type(value).__name__ else float(value)
        return to_jsonable(plain, depth + 1)
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, depth + 1) for k, v in value.items()}
    item = getattr(value, "item", None)
    if callable(item):
        return to_jsonable(item(), depth + 1)
    raise TypeError("the program returned a %s, which is not numbers, lists or dicts" % type(value).__name__)


def _failure(exc):
    if isinstance(exc, MemoryError):
        return "the program ran out of memory"
    if isinstance(exc, RecursionError):
        return "the program exceeded the recursion limit"
    return ("%s: %s" % (type(exc).__name__, exc))[:1000]


def _call(fn, args):
    try:
        return {"ok": True, "value": to_jsonable(fn(*args))}
    except BaseException as exc:  # the program is untrusted: any failure is a result, not a crash
        return {"ok": False, "error": _failure(exc)}


PROGRAM_MODULE = "candidate_program"


def run_entry(program_path, entry, args, many=False):
    """Imports the program and calls its entry with `args` (or once per item of `args` when `many`); returns the
    JSON text {"ok": true, "value": ...} (with `many`, value is a list of per-call {"ok", "value"|"error"})."""
    try:
        spec = importlib.util.spec_from_file_location(PROGRAM_MODULE, program_path)
        module = importlib.util.module_from_spec(spec)
        # Registered while it loads and runs, as Python's import does (a @dataclass under `from __future__ import
        # annotations` looks its module up there); removed after, so the rehearsal leaves nothing registered.
        sys.modules[PROGRAM_MODULE] = module
        spec.loader.exec_module(module)
        fn = getattr(module, entry, None)
        if not callable(fn):
            return json.dumps({"ok": False, "error": "the program defines no %s() function" % entry})
        if many:
            return json.dumps({"ok": True, "value": [_call(fn, a) for a in args]})
        return json.dumps({"ok": True, "value": to_jsonable(fn(*args))})
    except BaseException as exc:
        return json.dumps({"ok": False, "error": _failure(exc)})
    finally:
        sys.modules.pop(PROGRAM_MODULE, None)


def _error(text):
    return json.dumps({"ok": False, "error": text})


_REHEARSAL = """import numpy as np

def run(n):
    a = np.clip(np.zeros((n, 2)) + np.arange(n)[:, None] * 0.1, 0.0, 1.0)
    d = np.sqrt(np.sum((a[1:] - a[0]) ** 2, axis=1))
    return a, np.minimum.reduce([a[:, 0], a[:, 1]]), float(np.max(d)), [1, 2.5, "x", None, True]
"""


def rehearse():
    """Runs a tiny program through the path a real one takes (the request checked, the file written, imported,
    called, numpy, JSON), in a prepared first process before its request arrives: the copy-on-write faults of a
    freshly forked interpreter then fall here, off the evaluation's path. Limits are not set (a request sets its
    own, and a hard limit cannot be raised again). Leaves nothing behind (run_entry removes the module it registered
    from sys.modules, the file is removed)."""
    scratch = os.getcwd()  # the call's own scratch folder
    try:
        job = program_job({"program": _REHEARSAL, "ext": ".py", "entry": "run", "args": [8]}, {})
        if not isinstance(job, str):
            target, _, _ = job
            json.loads(target(scratch))
    except Exception:
        pass
    finally:
        try:
            os.unlink(program_file(scratch, ".py"))
        except OSError:
            pass


def program_file(scratch, ext):
    """Where a call writes its program: the rehearsal's file and a request's are the same one."""
    return os.path.join(scratch, "program" + ext)


def program_job(request, config_limits):
    """What one program request runs in its contained process: (target, limits of the call, False), or the
    error reply's text for a request that is refused before anything runs. The warm zygote's prepared first
    process and the handler that hands it the request both call this, so they agree on what the call is."""
    program, ext = request.get("program"), request.get("ext") or ".py"
    if not isinstance(program, str) or len(program.encode()) > MAX_PROGRAM_BYTES:
        return _error("the program text is missing or larger than %d bytes" % MAX_PROGRAM_BYTES)
    if not isinstance(ext, str) or not ext.startswith(".") or "/" in ext or len(ext) > 8:
        return _error("bad program extension")
    entry, args, many = str(request.get("entry") or ""), request.get("args") or [], bool(request.get("many"))

    def target(scratch):
        path = program_file(scratch, ext)
        with open(path, "w") as f:
            f.write(program)
        return run_entry(path, entry, args, many=many)

    limits = dict(config_limits)
    limits.update({k: request[k] for k in REQUEST_LIMITS if k in request})
    return target, limits, False


def _cap(limits):
    return int(limits.get("output_mb") or DEFAULTS["output_mb"]) << 20


TOO_LARGE = "the program's result is larger than the output cap"
NO_RESULT = "the program's process ended without a result"


def timed_out(timeout):
    return _error("the program did not return within %g s" % timeout)


def program_reply(request, config_limits, contained=True):
    """A warm call's reply: runs the request's program in this process (a call a CallHost made and sealed, whose
    working directory is its scratch folder) and returns the reply's JSON text."""
    job = program_job(request, config_limits)
    if isinstance(job, str):
        return job
    target, limits, _ = job
    set_limits(limits, contained)  # its request's own (the memory it may use)
    text = target(os.getcwd())
    return _error(TOO_LARGE) if len(text) > _cap(limits) else text


def serve(request, config_limits, cancel_fd=None):
    """The cold path's program call, in namespaces made now: the reply's JSON text (never raises for anything the
    program does)."""
    job = program_job(request, config_limits)
    if isinstance(job, str):
        return job
    target, limits, _ = job
    timeout = float(request.get("timeout") or 60)
    out, failure, _ = run_contained(target, limits, timeout, cancel_fd)
    if failure == "timeout":
        return timed_out(timeout)
    if failure == "too_large":
        return _error(TOO_LARGE)
    if failure == "cancelled":
        return _error("the evaluation ended before the program returned")
    try:
        text = out.decode()
        json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _error(NO_RESULT)
    return text


if __name__ == "__main__":
    # Cold path: one request on stdin, the reply on stdout; containment settings from the environment.
    req = json.loads(sys.stdin.buffer.read(MAX_PROGRAM_BYTES * 2 + (1 << 20)))
    settings = json.loads(os.environ.get("HONE_PROGRAM_LIMITS") or "{}")
    sys.stdout.write(serve(req, settings))
    sys.stdout.flush()
