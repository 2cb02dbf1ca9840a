"""The trusted side of a code check (HumanEval, MBPP): runs the benchmark's tests, never the completion's code.

The official harnesses exec the tests in the completion's own process, so a completion can read them through
frames, return an object whose __eq__ is always true, patch builtins or sys.modules, swallow the assertion, or exit
early with status 0. Here the completion runs in another process (hone_sandbox.run_contained: namespaces of its own,
no network, a private /tmp, process, memory, file and CPU limits, everything in it killed at the end), which
`exec`s a fresh interpreter (hone_code_server.py), so it shares no memory with this one. The tests run here, and
each call of the function under test crosses as typed data (hone_code_values): the value a test compares is always
one this process built, or a Remote that is equal only to itself. So that tests behave as in the official single
program, a call's argument changed in place is changed here too, an argument returned is the same object, the
completion's exception arrives under its built-in base, and names of the completion's module that the tests use
(a module it imported, a helper) are bound here (`bind_globals`). A completion that fails to load, exits, hangs, or
breaks the protocol fails the check.

Request (stdin, one JSON object): program (the completion's module text), setup (trusted code run here first:
HumanEval's prompt, for helpers such as `poly`; MBPP's test imports), tests (trusted test code), entries (names
under test, bound here to proxies), after (trusted code run last, e.g. "check(has_close_elements)"), timeout
(seconds of the completion's own running time, the official 3.0), limits (hone_sandbox limits). Verdict (stdout):
{"passed": bool, "result": "passed" | "failed: ..." | "timed out", "calls": n, "isolation": {...}}.
"""
import builtins
import importlib
import json
import os
import resource
import select
import signal
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
    """The completion's exception, built here: its built-in type, or a class of its name under its nearest built-in
    base (so `except ValueError` catches a completion's ValueError subclass), with its arguments when they are data."""
    if not (isinstance(error, list) and len(error) in (2, 4) and all(isinstance(e, str) for e in error[:2])):
        raise Broken("the completion sent a malformed error")
    name, message = error[0][:100], error[1][:1000]
    base = error[2] if len(error) == 4 and isinstance(error[2], str) else name
    cls = getattr(builtins, name, None)
    if not _builtin_exception(cls):
        cls = getattr(builtins, base[:100], None)
        if not _builtin_exception(cls):
            return RuntimeError("%s: %s" % (name, message))
        if name.isidentifier() and cls not in (SystemExit, KeyboardInterrupt, GeneratorExit):
            cls = type(name, (cls,), {"__module__": "completion"})
    args = None
    if len(error) == 4 and error[3] is not None:
        try:
            args = values.decode(error[3])
        except values.BadValue:
            args = None
    for attempt in ((args,) if isinstance(args, tuple) else ()) + ((message,),):
        try:
            return cls(*attempt)
        except Exception:
            pass
    return RuntimeError("%s: %s" % (name, message))


def _builtin_exception(cls):
    return isinstance(cls, type) and issubclass(cls, BaseException) and cls.__module__ == "builtins"


class Remote:
    """A value that stayed in the completion's process (a regex match, an instance of its class, a function): each
    operation goes there and its answer comes back as data or as another Remote. It is equal only to itself, so a
    completion's __eq__ never decides a comparison."""

    __slots__ = ("_channel", "_id", "_type")

    def __init__(self, channel, ident, type_name):
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_id", ident)
        object.__setattr__(self, "_type", type_name)

    def _op(self, op, *args, **kwargs):
        return invoke(self._channel, {"op": op, "h": self._id}, args, kwargs)

    def __bool__(self):
        return self._op("bool")

    def __len__(self):
        return self._op("len")

    def __str__(self):
        return self._op("str")

    def __repr__(self):
        return self._op("repr")

    def __iter__(self):
        return self._op("iter")

    def __next__(self):
        return self._op("next")

    def __getitem__(self, key):
        return self._op("getitem", key)

    def __contains__(self, item):
        return self._op("contains", item)

    def __call__(self, *args, **kwargs):
        return self._op("call", *args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return invoke(self._channel, {"op": "getattr", "h": self._id, "name": name}, (), {})

    def __setattr__(self, name, value):
        raise AttributeError("hone does not change the completion's objects from the tests")


class Codec(values.Codec):
    """The checker's side: a Remote goes back by reference; a handle becomes a Remote; "A" is the call's argument."""

    def __init__(self, channel, arguments=()):
        self.channel, self.arguments = channel, arguments

    def reference(self, value):
        return ["H", format(value._id, "x"), value._type] if type(value) is Remote else None

    def remote(self, ident, type_name):
        return Remote(self.channel, ident, type_name)

    def argument_at(self, index):
        return self.arguments[index] if 0 <= index < len(self.arguments) else None

    def raised(self, node):
        return _exception(node)


def invoke(channel, message, args, kwargs):
    """One call or operation in the completion's process: the arguments go out as data (a Remote by reference), the
    result comes back as data, a Remote, or one of the arguments; arguments it changed in place are changed here too;
    its exception is re-raised here."""
    try:
        codec = Codec(channel)
        message = dict(message, args=[values.encode(a, codec=codec) for a in args], kwargs=[[k, values.encode(v, codec=codec)] for k, v in kwargs.items()])
    except values.NotData as exc:
        raise TypeError("hone passes only plain data to the completion: %s" % exc)
    channel.calls += 1
    reply = channel.exchange(message)
    arguments = list(args) + list(kwargs.values())
    if reply.get("ok") is True and set(reply) == {"ok", "value", "after"}:
        after = reply["after"]
        if not (isinstance(after, list) and len(after) == len(arguments)):
            raise Broken("the completion sent an unknown reply")
        try:
            for target, node in zip(arguments, after):
                if node is not None:
                    _update(target, values.decode(node, codec=Codec(channel)))
            return values.decode(reply["value"], codec=Codec(channel, arguments))
        except values.BadValue as exc:
            raise Broken("the completion sent a value that is not data: %s" % exc)
    if reply.get("ok") is False and set(reply) == {"ok", "error"}:
        raise _exception(reply["error"])
    raise Broken("the completion sent an unknown reply")


def _update(target, new):
    """An argument the completion changed in place: the tests' own object gets its new content."""
    if isinstance(target, list) and type(new) is list:
        list.__setitem__(target, slice(None), new)
    elif isinstance(target, bytearray) and type(new) is bytearray:
        bytearray.__setitem__(target, slice(None), new)
    elif isinstance(target, dict) and type(new) is dict:
        dict.clear(target)
        dict.update(target, new)
    elif isinstance(target, set) and type(new) is set:
        set.clear(target)
        set.update(target, new)
    else:
        raise values.BadValue("an argument changed into another type")


def proxy(channel, name):
    """What the tests call in place of the completion's function."""

    def call(*args, **kwargs):
        return invoke(channel, {"call": name}, args, kwargs)

    call.__name__ = name
    return call


def _names(code):
    """Every global or attribute name a compiled test uses, nested functions included."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, type(code)):
            found |= _names(const)
    return found


# Modules whose import does something beyond defining names (a browser, a window, text on stdout, CPython's own test
# suite: test.autotest runs it). A name the completion gives is imported only when it is the standard library's or
# one of these libraries', and no part of it is private (`venv.__main__` creates a venv, `unittest.__main__` runs).
NOT_IMPORTED = {"antigravity", "this", "__hello__", "__phello__", "idlelib", "test", "tkinter", "turtle", "turtledemo", "webbrowser"}
LIBRARIES = {"numpy", "scipy", "sympy", "pandas"}


def importable(module):
    parts = module.split(".")
    top = parts[0]
    return (
        all(p.isidentifier() and not p.startswith("_") for p in parts)
        and (top in getattr(sys, "stdlib_module_names", ()) or top in LIBRARIES)
        and top not in NOT_IMPORTED
    )


def bind_module_name(namespace, name, reply):
    """A module the program bound to `name`, or `name` imported from a module under its own name (`from math import
    pi`), taken from this interpreter's own import of that module: never the completion's object."""
    module = reply["module"]
    if not isinstance(module, str) or not importable(module) or reply.get("attr", name) != name:
        return
    try:
        found = importlib.import_module(module)
    except Exception:
        return
    if "attr" not in reply:
        namespace[name] = found
    elif not name.startswith("_") and hasattr(found, name):
        namespace[name] = getattr(found, name)


def call_only(remote):
    """A program's function or class as the tests may use it: called, and nothing else of it read."""

    def call(*args, **kwargs):
        return remote(*args, **kwargs)

    return call


def bind_globals(channel, namespace, codes):
    """The official harness runs the tests in the completion's module, so they see its names (MBPP's tests use a
    module the program imported, say). Each name the tests use that neither the trusted setup, the tests' entries
    nor the built-ins provide is asked of the completion: a module, or a name imported from one under its own name,
    is taken from this interpreter's own import; a function or class of the program is bound as a call and nothing
    else. Data and other objects are not bound (the
    name stays undefined, a NameError as it was): bound, they would let the completion choose the expected side of
    an assertion (`pi = 0` against `assert f() == pi`, an object posing as `sys` whose getsizeof answers 0). Built-in
    and setup names stay the checker's own."""
    wanted = set()
    for code in codes:
        wanted |= _names(code)
    for name in sorted(wanted):
        if name in namespace or hasattr(builtins, name) or not name.isidentifier():
            continue
        reply = channel.exchange({"global": name})
        if reply == {"ok": False}:
            continue
        if reply.get("ok") is True and set(reply) in ({"ok", "module"}, {"ok", "module", "attr"}):
            bind_module_name(namespace, name, reply)
            continue
        if reply.get("ok") is True and set(reply) == {"ok", "value", "after"} and reply["after"] == []:
            try:
                value = values.decode(reply["value"], codec=Codec(channel))
            except values.BadValue as exc:
                raise Broken("the completion sent a value that is not data: %s" % exc)
            if isinstance(value, Remote):
                namespace[name] = call_only(value)
            continue
        if reply.get("ok") is False and set(reply) == {"ok", "error"}:
            continue
        raise Broken("the completion sent an unknown reply")


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
    tests = compile(request["tests"], "tests.py", "exec")
    after = compile(request.get("after") or "", "check.py", "exec")
    bind_globals(channel, namespace, [tests, after])
    exec(tests, namespace)
    exec(after, namespace)
    return "passed"


def limit_self(budget, limits):
    """The tests run here on the completion's values (`list(r)` of its range(10**9), a set of ints built to share one
    hash), so this process gets limits too, set once the completion's process is forked: memory (the completion's
    own plus 1 GiB) and CPU (twice its budget beyond what is used so far, plus 3 s); past the CPU limit the check
    has timed out, and a second later the kernel stops code that never returns to the interpreter."""
    memory = (int(limits.get("memory_mb") or 1024) + 1024) << 20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or memory < hard:
        resource.setrlimit(resource.RLIMIT_AS, (memory, hard))
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + 2 * budget + 3)
    signal.signal(signal.SIGXCPU, lambda *_: emit({"passed": False, "result": "timed out", "calls": 0}, exit=True))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


VERDICT_FD = [1]


def emit(verdict, exit=False):
    """The verdict, on the descriptor kept for it (the tests' own printing goes nowhere, as the official harness
    swallows it, so no text of the completion's can stand as the last line)."""
    data = (json.dumps(verdict) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[os.write(VERDICT_FD[0], view):]
    if exit:
        os._exit(0)


def check(request):
    """Runs one check; returns the verdict dict. Must run in a disposable process (run_contained's rule)."""
    verdict = {}

    def target(_scratch):
        os.execv(sys.executable, [sys.executable, "-I", "-c", BOOT, VALUES_SOURCE, SERVER_SOURCE])

    def converse(out_fd, in_fd, _pid):
        limit_self(budget, limits)
        channel = Channel(out_fd, in_fd, budget)
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
    sys.stdout.flush()
    VERDICT_FD[0] = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    emit(check(request))


if __name__ == "__main__":
    main()
