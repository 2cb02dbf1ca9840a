"""The completion's side of a code check: a fresh interpreter, contained, that holds the completion and nothing else.

The checker starts it with `exec` inside hone_sandbox's contained process, so it shares no memory with the checker:
it never held the tests, the prompt's reference or the gold code. It reads the program as the first line on
descriptor 0, runs it as a module, and answers one message at a time (hone_code_values encodings) on descriptor 3:
  {"call": name, "args": [...], "kwargs": [...]}: the program's function `name` called;
  {"op": op, "h": id, ...}: an operation on a value that stayed here (a handle): bool, len, str, repr, iter, next,
    getattr (name), getitem (args[0]), contains (args[0]), call (args, kwargs);
  {"global": name}: what the program bound to a name the tests use and do not bind themselves (a module by its name).
A call's answer is {"ok": true, "value": ..., "after": [...]}, `after` the new state of each argument the call changed
in place (null for the others), or {"ok": false, "error": [type name, message, nearest built-in base, args]}.
Descriptor 0 is then an empty pipe, so the program's input() ends as it does under the official harness. Everything
here runs next to the completion's code, so nothing it writes is trusted: the checker checks every line.
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

HANDLES = []
# An object already handed out keeps its handle (HANDLES keeps it alive, so its id is not reused): an argument the
# tests passed back, unchanged, encodes as they sent it, as it is the same object in one process.
HANDLE_OF = {}
MAX_HANDLES = 100_000


class Codec(values.Codec):
    """A value that is not data stays here as a handle; a call's own argument returns as itself."""

    def __init__(self, arguments=()):
        self.arguments = {id(a): i for i, a in enumerate(arguments) if isinstance(a, (list, dict, set, bytearray))}

    def handle(self, value):
        index = HANDLE_OF.get(id(value))
        if index is None:
            if len(HANDLES) >= MAX_HANDLES:
                return None
            HANDLES.append(value)
            index = HANDLE_OF[id(value)] = len(HANDLES) - 1
        return ["H", format(index, "x"), type(value).__name__[:100]]

    def reference(self, value):
        index = self.arguments.get(id(value))
        return None if index is None else ["A", index]

    def remote(self, ident, _type_name):
        return HANDLES[ident] if 0 <= ident < len(HANDLES) else None

    def failure(self, exc):
        return _error(exc)


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
    base = next(c for c in type(exc).__mro__ if getattr(builtins, c.__name__, None) is c)
    try:
        args = values.encode(tuple(exc.args))
    except BaseException:
        args = None
    return [type(exc).__name__[:100], str(exc)[:1000], base.__name__, args]


def _answer(compute, arguments=(), nodes=()):
    """Runs `compute()` (the completion's code) and encodes its value, with the arguments it changed in place."""
    try:
        result = compute()
    except BaseException as exc:  # the completion's own failure is the call's result
        return {"ok": False, "error": _error(exc)}
    try:
        value = values.encode(result, codec=Codec(arguments))
        after = []
        for arg, node in zip(arguments, nodes):
            now = values.encode(arg, codec=Codec()) if isinstance(arg, (list, dict, set, bytearray)) else None
            after.append(now if now is not None and now != node else None)
        return {"ok": True, "value": value, "after": after}
    except values.NotData as exc:
        return {"ok": False, "error": ["TypeError", "the function returned a value hone cannot compare: %s" % exc, "TypeError", None]}
    except BaseException as exc:  # e.g. a generator that raises while it is read out
        return {"ok": False, "error": _error(exc)}


def _arguments(msg):
    codec = Codec()
    nodes = list(msg.get("args") or []) + [v for _k, v in msg.get("kwargs") or []]
    args = [values.decode(a, codec=codec) for a in msg.get("args") or []]
    kwargs = {k: values.decode(v, codec=codec) for k, v in msg.get("kwargs") or []}
    return args, kwargs, args + list(kwargs.values()), nodes


OPS = {
    "bool": lambda obj, args, kwargs: bool(obj),
    "len": lambda obj, args, kwargs: len(obj),
    "str": lambda obj, args, kwargs: str(obj),
    "repr": lambda obj, args, kwargs: repr(obj),
    "iter": lambda obj, args, kwargs: _Iterator(iter(obj)),
    "next": lambda obj, args, kwargs: next(obj),
    "getitem": lambda obj, args, kwargs: obj[args[0]],
    "contains": lambda obj, args, kwargs: args[0] in obj,
    "call": lambda obj, args, kwargs: obj(*args, **kwargs),
}


class _Iterator:
    """An iterator the tests asked for stays here (a handle), read one item at a time."""

    def __init__(self, it):
        self.it = it


def _operate(msg):
    obj = Codec().remote(msg.get("h"), "") if type(msg.get("h")) is int else None
    op = msg.get("op")
    if obj is None or (op not in OPS and op != "getattr"):
        return {"ok": False, "error": ["TypeError", "no such value or operation", "TypeError", None]}
    args, kwargs, arguments, nodes = _arguments(msg)
    if isinstance(obj, _Iterator):
        obj = obj.it
    if op == "getattr":
        name = msg.get("name")
        return _answer(lambda: getattr(obj, name) if isinstance(name, str) else None)
    return _answer(lambda: OPS[op](obj, args, kwargs), arguments, nodes)


def _global(namespace, name):
    if not isinstance(name, str) or name not in namespace:
        return {"ok": False}
    value = namespace[name]
    if type(value) is type(sys):
        return {"ok": True, "module": str(getattr(value, "__name__", ""))[:200]}
    # A name imported from a module under its own name (`from math import pi`): said as the module's, for the checker
    # to take from its own copy of that module.
    for module_name, module in list(sys.modules.items()):
        public = not any(part.startswith("_") for part in str(module_name).split("."))
        if module is not None and public and getattr(module, name, None) is value:
            return {"ok": True, "module": str(module_name)[:200], "attr": name}
    return _answer(lambda: value)


def _call(namespace, msg):
    fn = namespace.get(msg.get("call")) if isinstance(msg.get("call"), str) else None
    if not callable(fn):
        return {"ok": False, "error": ["NameError", "name %r is not defined by the program" % msg.get("call"), "NameError", None]}
    args, kwargs, arguments, nodes = _arguments(msg)
    return _answer(lambda: fn(*args, **kwargs), arguments, nodes)


def _handle(namespace, msg):
    if "call" in msg:
        return _call(namespace, msg)
    if "op" in msg:
        return _operate(msg)
    return _global(namespace, msg.get("global"))


def main():
    channel = os.dup(0)  # the checker's messages; descriptor 0 becomes an empty pipe for the program
    empty, writer = os.pipe()
    os.close(writer)
    os.dup2(empty, 0)
    os.close(empty)
    lines = _read_lines(channel)
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
        _send(_handle(namespace, values.loads(line)))


if __name__ == "__main__":
    main()
