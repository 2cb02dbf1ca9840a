"""The completion's side of a code check: a fresh interpreter, contained, that holds the completion and nothing else.

The checker starts it with `exec` inside hone_sandbox's contained process, so it shares no memory with the checker:
it never held the tests, the prompt's reference or the gold code. It reads the program as the first line on
descriptor 0, runs it as a module, and answers one call at a time: {"call": name, "args": [...], "kwargs": [...]} in,
{"ok": true, "value": ...} or {"ok": false, "error": [type name, message]} out on descriptor 3 (hone_code_values
encodings). Everything here runs next to the completion's code, so nothing it writes is trusted: the checker checks
every line.
"""
import builtins
import os
import sys

if "hone_code_values" not in sys.modules:  # run as a file; the checker hands the codec over as text
    HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, HERE)
    import hone_code_values  # noqa: F401

    sys.path.remove(HERE)
import hone_code_values as values  # noqa: E402
sys.setrecursionlimit(10_000)


def _read_lines(fd):
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return
            buffer += chunk
            if len(buffer) > values.MAX_LINE:
                return
        line, _, buffer = buffer.partition(b"\n")
        yield line


def _send(message):
    data = values.dumps(message)
    view = memoryview(data)
    while view:
        view = view[os.write(3, view):]


def _error(exc):
    return [type(exc).__name__[:100], str(exc)[:1000]]


def _call(namespace, msg):
    fn = namespace.get(msg.get("call")) if isinstance(msg.get("call"), str) else None
    if not callable(fn):
        return {"ok": False, "error": ["NameError", "name %r is not defined by the program" % msg.get("call")]}
    args = [values.decode(a) for a in msg.get("args") or []]
    kwargs = {k: values.decode(v) for k, v in msg.get("kwargs") or []}
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # the completion's own failure is the call's result
        return {"ok": False, "error": _error(exc)}
    try:
        return {"ok": True, "value": values.encode(result)}
    except values.NotData as exc:
        return {"ok": False, "error": ["TypeError", "the function returned a value hone cannot compare: %s" % exc]}
    except BaseException as exc:  # e.g. a generator that raises while it is read out
        return {"ok": False, "error": _error(exc)}


def main():
    lines = _read_lines(0)
    first = next(lines, None)
    if first is None:
        return
    request = values.loads(first)
    namespace = {"__name__": "candidate", "__builtins__": builtins}
    try:
        exec(compile(request["program"], "completion.py", "exec"), namespace)
    except BaseException as exc:  # SystemExit included: a program that exits at import has failed
        _send({"ready": {"ok": False, "error": _error(exc)}})
        return
    _send({"ready": {"ok": True}})
    for line in lines:
        _send(_call(namespace, values.loads(line)))


if __name__ == "__main__":
    main()
