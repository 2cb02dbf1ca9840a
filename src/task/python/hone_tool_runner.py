"""Runs one call of a generated Python tool (`custom_tools/<name>.py`, `def run(ctx, args)`), contained.

The tool runs like an evaluated program (hone_sandbox: namespaces of its own, no network, a private /tmp, no
secrets, a process limit) plus a CPU limit and an address-space limit of its own. Its `ctx` reaches the host only
by messages: each method writes {"ctx": name, "args": [...]} as one JSON line and reads one JSON line back, under
the names HarnessTTT's tool context uses, so released tools run unchanged:

    get_program() get_best_program() best_score() stage_edit(code) probe(subsample=None) evaluate()
    budget_left() list_task_inputs() read_input_sample(name, nrows=1000) read_input_df(name, nrows=2000)
    scratch_write(name, text) scratch_read(name) log(message)

`read_input_df` is HarnessTTT's CSV reader: the header and at most `nrows` rows of a listed input as a pandas
DataFrame. It asks the host for the text (read_input_sample, so the same files, caps and checks) and parses it in the
tool's own process; like HarnessTTT's, it needs pandas, and without it says so (an ImportError).

The relay between the tool and the host (`converse`) checks every line the tool writes, allows one outstanding
ctx call at a time, and counts the wall-clock limit only while the tool itself is running (not while the host
evaluates for it). The call ends with {"done": {"ok": true, "value": ...}} or {"done": {"ok": false, "kind",
"error"}}, kind one of error, timeout, cpu, memory, crashed, protocol, cancelled.

Cold use (no zygote): `python3 hone_tool_runner.py` with the request as the first line on stdin; the
conversation continues on stdin/stdout.
"""
import json
import os
import select
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from hone_program_child import to_jsonable  # noqa: E402
from hone_sandbox import mapped_bytes, run_contained  # noqa: E402

MAX_LINE = 1 << 20
MAX_CTX_CALLS = 1000
CTX_METHODS = (
    "get_program get_best_program best_score stage_edit probe evaluate budget_left list_task_inputs read_input_sample "
    "scratch_write scratch_read log"
).split()
MAX_CODE_CHARS = 6000
SAMPLE_CAP = 5000  # the most lines read_input_sample returns (src/sandbox/python-task-inputs.ts)
NOT_ALLOWED = "ERROR: path not allowed or missing"


class ToolContext:
    """What a generated tool's `ctx` is inside its process: every method is one message to the host."""

    __slots__ = ("_inbox",)

    def __init__(self):
        self._inbox = os.fdopen(0, "rb", buffering=0)

    def _call(self, name, *args):
        os.write(3, (json.dumps({"ctx": name, "args": list(args)}) + "\n").encode())
        line = bytearray()
        while not line.endswith(b"\n"):
            chunk = self._inbox.read(1 << 16)
            if not chunk:
                raise RuntimeError("the host ended the call")
            line += chunk
        reply = json.loads(line.decode())
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply.get("value")

    def get_program(self):
        return self._call("get_program")

    def get_best_program(self):
        return self._call("get_best_program")

    def best_score(self):
        value = self._call("best_score")
        return float("-inf") if value is None else value

    def stage_edit(self, code):
        return self._call("stage_edit", str(code))

    def probe(self, subsample=None):
        return self._call("probe", subsample)

    def evaluate(self):
        return self._call("evaluate")

    def budget_left(self):
        return self._call("budget_left")

    def list_task_inputs(self):
        return self._call("list_task_inputs")

    def read_input_sample(self, name, nrows=1000):
        return self._call("read_input_sample", str(name), int(nrows))

    def read_input_df(self, name, nrows=2000):
        pandas = _pandas()
        rows = max(0, min(int(nrows), SAMPLE_CAP - 1))
        text = self.read_input_sample(name, rows + 1)
        if not isinstance(text, str) or text == NOT_ALLOWED:
            raise ValueError("input not allowed or missing: %s" % name)
        import io

        return pandas.read_csv(io.StringIO(text), nrows=rows)

    def scratch_write(self, name, text):
        return self._call("scratch_write", str(name), str(text))

    def scratch_read(self, name):
        return self._call("scratch_read", str(name))

    def log(self, message):
        self._call("log", str(message)[:400])


def _pandas():
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(
            "ctx.read_input_df needs pandas, which the task's Python does not have (install it there, or read the text "
            "with ctx.read_input_sample(name, nrows))"
        ) from exc
    return pandas


def _done(ok, value=None, kind=None, error=None):
    body = {"ok": True, "value": value} if ok else {"ok": False, "kind": kind, "error": str(error)[:2000]}
    return json.dumps({"done": body}) + "\n"


def seal_dataclass_field_names():
    """dataclasses writes each field's name into the source text it compiles (__init__, __repr__, __eq__) and reads
    attributes by it (asdict, replace), and a Field's `name` is a plain writable attribute: a tool that renames a field
    it holds (`dataclasses.fields(A)[0].name = "a,)==()\\n raise ..."`) and then declares a subclass runs that text.
    In the tool's process a Field is named once (dataclasses names it when it builds the class; a rename is refused),
    and only with an identifier that is no keyword and does not start with `__` (`__globals__` would be read by
    asdict), whatever the route: a field renamed after the fact, TypedDict's or a hostile object's annotations; and
    Field has no subclasses there (a subclass's own `name` attribute would be a plain one)."""
    import dataclasses
    import keyword

    slot = dataclasses.Field.__dict__["name"]
    if isinstance(slot, property):
        return

    def set_name(field, name):
        if name is not None and not (isinstance(name, str) and name.isidentifier() and not name.startswith("__") and not keyword.iskeyword(name)):
            raise TypeError("a dataclass field name must be an identifier not starting with __, not %r" % (name,))
        try:
            current = slot.__get__(field, dataclasses.Field)
        except AttributeError:  # Field.__init__ setting it the first time
            current = None
        if current is not None and name != current:
            raise TypeError("a dataclass field is named once: %r cannot become %r" % (current, name))
        slot.__set__(field, name)

    def no_subclass(cls, **kwargs):
        raise TypeError("a tool may not subclass dataclasses.Field (its own `name` would bypass this check)")

    dataclasses.Field.name = property(lambda field: slot.__get__(field, dataclasses.Field), set_name)
    dataclasses.Field.__init_subclass__ = classmethod(no_subclass)


def tool_target(code, args):
    """The tool's process: runs the module, then `run(ctx, args)`; returns the final "done" line."""

    def target(scratch):
        try:
            seal_dataclass_field_names()
            namespace = {"__name__": "hone_tool"}
            exec(compile(code, "custom_tool.py", "exec"), namespace)
            value = namespace["run"](ToolContext(), args)
            return _done(True, to_jsonable(value))
        except MemoryError:
            return _done(False, kind="memory", error="the tool ran out of memory")
        except RecursionError:
            return _done(False, kind="error", error="the tool exceeded the recursion limit")
        except BaseException as exc:  # the tool is untrusted: any failure is a result
            return _done(False, kind="error", error="%s: %s" % (type(exc).__name__, exc))

    return target


def converse(channel_in, channel_out, timeout, cancel_on_eof=True):
    """The relay between a tool's process and the host (over `channel_in`/`channel_out`, file descriptors)."""

    def relay(tool_out, tool_in, pid):
        lines, pending, spent, calls = bytearray(), False, 0.0, 0
        while True:
            started = time.monotonic()
            wait = None if pending else max(0.0, timeout - spent)
            ready, _, _ = select.select([tool_out, channel_in], [], [], wait)
            if not pending:
                spent += time.monotonic() - started
            if not ready:
                return b"", "timeout"
            if channel_in in ready:
                data = os.read(channel_in, 1 << 16)
                if not data:
                    return b"", "cancelled"
                if not pending:
                    return b"", "protocol"
                os.write(tool_in, data)
                pending = not data.endswith(b"\n")
            if tool_out in ready:
                chunk = os.read(tool_out, 1 << 16)
                if not chunk:
                    return b"", "eof"
                lines += chunk
                while b"\n" in lines:
                    line, _, rest = bytes(lines).partition(b"\n")
                    lines = bytearray(rest)
                    try:
                        msg = json.loads(line.decode())
                    except (UnicodeDecodeError, ValueError, RecursionError):
                        return b"", "protocol"
                    if not isinstance(msg, dict) or pending:
                        return b"", "protocol"
                    if "done" in msg:
                        return line + b"\n", None
                    calls += 1
                    if msg.get("ctx") not in CTX_METHODS or not isinstance(msg.get("args"), list) or calls > MAX_CTX_CALLS:
                        return b"", "protocol"
                    os.write(channel_out, line + b"\n")
                    pending = True
                if len(lines) > MAX_LINE:
                    return b"", "protocol"

    return relay


FAILURES = {
    "timeout": "the tool did not finish within %g s of its own running time",
    "cpu": "the tool used more than its %g s of CPU",
    "crashed": "the tool's process died without a result",
    "protocol": "the tool broke the message protocol with the host",
    "cancelled": "the host ended the call",
    "too_large": "the tool's result is too large",
}


def tool_job(request, config_limits):
    """What one tool request runs in its contained process: (target, limits of the call, True: descriptor 0 stays
    the conversation), or the final "done" line for a request refused before anything runs."""
    code, args = request.get("code"), request.get("args")
    if not isinstance(code, str) or len(code) > MAX_CODE_CHARS or not isinstance(args, dict):
        return _done(False, kind="error", error="bad tool request")
    cpu = int(request.get("cpu_seconds") or 1)
    limits = dict(config_limits, cpu_seconds=cpu, memory_mb=int(request.get("memory_mb") or 256), memory_base_bytes=mapped_bytes())
    return tool_target(code, args), limits, True


def serve_tool(request, config_limits, channel_in, channel_out, box=None, raw=None):
    """One contained tool call; writes the final "done" line to `channel_out`. With `box` (a prepared
    hone_sandbox.Box whose job is tool_job for tool requests) the call runs there, handed `raw`."""
    job = tool_job(request, config_limits)
    if isinstance(job, str):
        if box:
            box.discard()
        os.write(channel_out, job.encode())
        return
    target, limits, _ = job
    timeout, cpu = float(request.get("timeout") or 5), limits["cpu_seconds"]
    relay = converse(channel_in, channel_out, timeout)
    if box:
        out, failure, _ = box.run(raw if raw is not None else json.dumps(request), timeout, converse=relay, limits=limits)
    else:
        out, failure, _ = run_contained(target, limits, timeout, converse=relay)
    if failure:
        text = FAILURES.get(failure, failure)
        out = _done(False, kind=failure, error=text % (cpu if failure == "cpu" else timeout) if "%g" in text else text).encode()
    try:
        os.write(channel_out, out)
    except OSError:
        pass


if __name__ == "__main__":
    first = bytearray()
    while not first.endswith(b"\n"):
        chunk = os.read(0, 1 << 16)
        if not chunk:
            sys.exit(0)
        first += chunk
    settings = json.loads(os.environ.get("HONE_PROGRAM_LIMITS") or "{}")
    serve_tool(json.loads(first.decode()), settings, 0, 1)
