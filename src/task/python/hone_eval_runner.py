"""Runs evaluator calls for hone and hands each result back as JSON over a pipe, never through a file.

Cold use (one evaluation per process):
    hone_eval_runner.py EVALUATOR_PATH CASCADE_JSON < {"program": TEXT, "ext": ".py", "memory_mb": N}
The program text is written into this process's own scratch folder, the evaluator runs on it, and the result
({"metrics", "artifacts"} or {"error"}) is written to file descriptor 3, which hone holds; the exit code is 0 only
when the evaluator returned. Evaluator output goes to stdout/stderr, which hone keeps as artifacts.

The evaluator's `evaluate(program_path)` (a function or an `async def` one, defined or imported) may return a dict
of metrics or an object with `metrics` and `artifacts` (OpenEvolve's EvaluationResult). With a cascade ({"enabled": true, "thresholds": [...]}) and
`evaluate_stage1/2/3` defined, stages run as OpenEvolve's cascade runs them (hone_cascade).
Non-finite floats are written as {"__nonfinite__": "nan"} so hone can refuse them explicitly. hone_pool.py imports
this module and forks per evaluation.
"""
import importlib.util
import inspect
import json
import math
import os
import sys
import traceback

from hone_cascade import run_cascade  # beside this file: the script's own folder, or hone_pool's path
from hone_sandbox import seal_keyrings


def limit_memory(mb):
    if mb <= 0:
        return
    try:
        import resource

        limit = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except Exception:
        pass


def clean(value, depth=0):
    if depth > 8:
        return str(value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else float(value)
    if isinstance(value, float):
        if math.isnan(value):
            return {"__nonfinite__": "nan"}
        if math.isinf(value):
            return {"__nonfinite__": "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "item") and callable(value.item):
        try:
            return clean(value.item(), depth + 1)
        except Exception:
            return str(value)
    if isinstance(value, dict):
        return {str(k): clean(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v, depth + 1) for v in value[:1000]]
    return str(value)


def split_result(result):
    if isinstance(result, dict):
        return result, {}
    metrics = getattr(result, "metrics", None)
    if isinstance(metrics, dict):
        artifacts = getattr(result, "artifacts", None) or {}
        return metrics, artifacts if isinstance(artifacts, dict) else {"artifacts": str(artifacts)}
    raise TypeError("evaluate() returned %s; expected a dict of metrics or an object with .metrics" % type(result).__name__)


EVALUATOR_MODULE = "hone_task_evaluator"


def load_evaluator(path):
    """Imports the evaluator as Python imports a module: registered in sys.modules before its code runs (as
    OpenEvolve's evaluator.py does), so that what looks its own module up while it loads (a @dataclass under
    `from __future__ import annotations`, pickle, typing.get_type_hints) finds it. A forked evaluation inherits it."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(EVALUATOR_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[EVALUATOR_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(EVALUATOR_MODULE, None)
        raise
    if not hasattr(module, "evaluate") and not hasattr(module, "evaluate_stage1"):
        raise AttributeError("the evaluator defines no evaluate(program_path) function")
    return module


def call_entry(fn, program_path):
    """An entry point's result; an `async def` one is run to its end on an event loop of its own."""
    result = fn(program_path)
    if inspect.isawaitable(result):
        import asyncio

        result = asyncio.run(_awaited(result))
    return result


async def _awaited(awaitable):
    return await awaitable


def run_evaluation(module, program_path, cascade):
    """The metrics and artifacts of one evaluation, running cascade stages (hone_cascade) when configured and defined."""
    # An evaluator with stages and no evaluate() is scored by its stages, the cascade on or not.
    staged = cascade.get("enabled") or not callable(getattr(module, "evaluate", None))
    if staged and callable(getattr(module, "evaluate_stage1", None)):
        return run_cascade(module, cascade.get("thresholds"), lambda stage: split_result(call_entry(stage, program_path)))
    return split_result(call_entry(module.evaluate, program_path))


RESULT_FD = 3
MAX_RESULT_BYTES = 8 << 20
OUT_OF_MEMORY = json.dumps({"error": "the evaluator ran out of memory"})


def evaluate_payload(module, program_path, cascade):
    """(exit code, payload): 0 with {"metrics", "artifacts"} when the evaluator returned, 1 with {"error"}."""
    try:
        metrics, artifacts = run_evaluation(module, program_path, cascade)
        payload = json.dumps({"metrics": clean(metrics), "artifacts": clean(artifacts)})
        if len(payload) > MAX_RESULT_BYTES:
            return 1, json.dumps({"error": "the evaluator's result is larger than %d bytes" % MAX_RESULT_BYTES})
        return 0, payload
    except MemoryError:
        return 1, OUT_OF_MEMORY
    except BaseException:
        return 1, json.dumps({"error": traceback.format_exc(limit=8)[-4000:]})


def write_fd(fd, text):
    write_bytes(fd, text.encode())


def write_bytes(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_program(scratch, request):
    ext = request.get("ext") or ".py"
    if not isinstance(ext, str) or not ext.startswith(".") or "/" in ext or len(ext) > 8:
        raise ValueError("bad program extension %r" % (ext,))
    path = os.path.join(scratch, "program" + ext)
    with open(path, "x") as f:
        f.write(request["program"])
    return path


if __name__ == "__main__":
    evaluator_path = sys.argv[1]
    cascade = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    request = json.loads(sys.stdin.read())
    seal_keyrings()  # before anything of the task's runs
    program_path = write_program(os.getcwd(), request)
    limit_memory(int(request.get("memory_mb") or 0))
    try:
        module = load_evaluator(evaluator_path)
    except BaseException:
        code, payload = 1, json.dumps({"error": traceback.format_exc(limit=8)[-4000:], "stage": "load"})
    else:
        code, payload = evaluate_payload(module, program_path, cascade)
    sys.stdout.flush()
    sys.stderr.flush()
    write_fd(RESULT_FD, payload)
    os._exit(code)
