"""The trusted side of a code check (HumanEval, MBPP): runs the benchmark's tests, never the completion's code.

The official harnesses exec the tests in the completion's own process, so a completion can read them through
frames, return an object whose __eq__ is always true, patch builtins or sys.modules, swallow the assertion, or exit
early with status 0. Here the completion runs in another process (hone_sandbox.run_contained: namespaces of its own,
no network, a private /tmp, process, memory, file and CPU limits, everything in it killed at the end), which
`exec`s a fresh interpreter (hone_code_server.py), so it shares no memory with this one. The tests run here, and
each call of the function under test crosses as plain typed data (hone_code_values): the value a test compares is
always one this process built. A completion that fails to load, exits, hangs, or breaks the protocol fails the check.

Request (stdin, one JSON object): program (the completion's module text), setup (trusted code run here first:
HumanEval's prompt, for helpers such as `poly`; MBPP's test imports), tests (trusted test code), entries (names
under test, bound here to proxies), after (trusted code run last, e.g. "check(has_close_elements)"), timeout
(seconds of the completion's own running time, the official 3.0), limits (hone_sandbox limits). Verdict (stdout):
{"passed": bool, "result": "passed" | "failed: ..." | "timed out", "calls": n, "isolation": {...}}.
"""
import builtins
import json
import os
import select
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
for extra in sys.argv[1:]:
    sys.path.insert(0, extra)  # the folder of hone_sandbox.py
import hone_code_values as values  # noqa: E402
from hone_sandbox import run_contained  # noqa: E402

# Read now, before any namespace: a call's private /tmp hides a checkout under /tmp, so the contained interpreter gets
# the server and its value codec as text (argv), never by path.
with open(os.path.join(HERE, "hone_code_server.py"), encoding="utf-8") as _f:
    SERVER_SOURCE = _f.read()
with open(os.path.join(HERE, "hone_code_values.py"), encoding="utf-8") as _f:
    VALUES_SOURCE = _f.read()
BOOT = (
    "import sys, types\n"
    "m = types.ModuleType('hone_code_values')\n"
    "exec(compile(sys.argv[1], 'hone_code_values.py', 'exec'), m.__dict__)\n"
    "sys.modules['hone_code_values'] = m\n"
    "source = sys.argv[2]\n"
    "del sys.argv[1:], m\n"
    "exec(compile(source, 'hone_code_server.py', 'exec'), {'__name__': '__main__'})\n"
)


class Abort(BaseException):
    """Ends the tests at once: a test's own `except Exception` cannot swallow it."""


class TimedOut(Abort):
    pass


class Broken(Abort):
    pass


class Channel:
    """One completion process: a line out on its descriptor 0, a line back from its descriptor 3, under a budget
    that counts only the time the completion itself is running."""

    def __init__(self, out_fd, in_fd, budget):
        self.out_fd, self.in_fd, self.left = out_fd, in_fd, budget
        self.buffer = b""
        self.calls = 0

    def exchange(self, message):
        data = values.dumps(message)
        view = memoryview(data)
        started = time.monotonic()
        try:
            while view:
                view = view[os.write(self.in_fd, view):]
        except OSError:
            raise Broken("the completion's process is gone")
        line = self._line(started)
        try:
            return values.loads(line)
        except values.BadValue as exc:
            raise Broken("the completion broke the protocol: %s" % exc)

    def _line(self, started):
        while b"\n" not in self.buffer:
            left = self.left - (time.monotonic() - started)
            if left <= 0:
                self.left = 0
                raise TimedOut()
            ready, _, _ = select.select([self.out_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.out_fd, 1 << 16)
            if not chunk:
                raise Broken("the completion's process ended")
            self.buffer += chunk
            if len(self.buffer) > values.MAX_LINE:
                raise Broken("the completion sent a message too large")
        line, _, self.buffer = self.buffer.partition(b"\n")
        self.left -= time.monotonic() - started
        if self.buffer:
            raise Broken("the completion sent a line nobody asked for")
        return line


def _exception(error):
    """The completion's exception as one of this process's own built-in exception types (by name only)."""
    if not (isinstance(error, list) and len(error) == 2 and all(isinstance(e, str) for e in error)):
        raise Broken("the completion sent a malformed error")
    name, message = error[0][:100], error[1][:1000]
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins":
        try:
            return cls(message)
        except Exception:
            pass
    return RuntimeError("%s: %s" % (name, message))


def proxy(channel, name):
    """What the tests call in place of the completion's function: the arguments go out as data, the result
    comes back as data (or the completion's exception, re-raised here)."""

    def call(*args, **kwargs):
        try:
            message = {"call": name, "args": [values.encode(a) for a in args], "kwargs": [[k, values.encode(v)] for k, v in kwargs.items()]}
        except values.NotData as exc:
            raise TypeError("hone passes only plain data to the completion: %s" % exc)
        channel.calls += 1
        reply = channel.exchange(message)
        if reply.get("ok") is True and set(reply) == {"ok", "value"}:
            try:
                return values.decode(reply["value"])
            except values.BadValue as exc:
                raise Broken("the completion sent a value that is not data: %s" % exc)
        if reply.get("ok") is False and set(reply) == {"ok", "error"}:
            raise _exception(reply["error"])
        raise Broken("the completion sent an unknown reply")

    call.__name__ = name
    return call


def run_tests(request, channel):
    ready = channel.exchange({"program": request["program"]}).get("ready")
    if not isinstance(ready, dict) or not isinstance(ready.get("ok"), bool):
        raise Broken("the completion's process did not start properly")
    if not ready["ok"]:
        error = _exception(ready.get("error"))
        return "failed: the program raised %s at import: %s" % (type(error).__name__, error)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    exec(compile(request.get("setup") or "", "setup.py", "exec"), namespace)
    for name in request["entries"]:
        namespace[name] = proxy(channel, name)
    exec(compile(request["tests"], "tests.py", "exec"), namespace)
    if request.get("after"):
        exec(compile(request["after"], "check.py", "exec"), namespace)
    return "passed"


def check(request):
    """Runs one check; returns the verdict dict. Must run in a disposable process (run_contained's rule)."""
    verdict = {}

    def target(_scratch):
        os.execv(sys.executable, [sys.executable, "-I", "-c", BOOT, VALUES_SOURCE, SERVER_SOURCE])

    def converse(out_fd, in_fd, _pid):
        channel = Channel(out_fd, in_fd, float(request.get("timeout") or 3.0))
        try:
            verdict["result"] = run_tests(request, channel)
        except TimedOut:
            verdict["result"] = "timed out"
        except Broken as exc:
            verdict["result"] = "failed: %s" % exc
        except BaseException as exc:  # the tests' own assertion (or anything else they raise) is a failure
            verdict["result"] = "failed: %s: %s" % (type(exc).__name__, str(exc)[:300])
        verdict["calls"] = channel.calls
        return b"", None

    budget = float(request.get("timeout") or 3.0)
    limits = dict(request.get("limits") or {})
    limits.setdefault("cpu_seconds", int(budget) + 2)
    _, failure, isolation = run_contained(target, limits, budget + 5, converse=converse)
    result = verdict.get("result") or "failed: %s" % (failure or "the check did not run")
    return {"passed": result == "passed", "result": result, "calls": verdict.get("calls", 0), "isolation": isolation}


def main():
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    verdict = check(request)
    sys.stdout.write(json.dumps(verdict) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
