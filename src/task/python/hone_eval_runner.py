"""Runs evaluator calls for hone and hands each result back as JSON over a pipe, never through a file.

Cold use (one evaluation per process):
    hone_eval_runner.py EVALUATOR_PATH CASCADE_JSON < {"program": TEXT, "ext": ".py", "memory_mb": N}
The program text is written into this process's own scratch folder, the evaluator runs on it, and the result
({"metrics", "artifacts"} or {"error"}) is written to file descriptor 3, which hone holds; the exit code is 0 only
when the evaluator returned. Evaluator output goes to stdout/stderr, which hone keeps as artifacts.

The evaluator's `evaluate(program_path)` may return a dict of metrics or an object with `metrics` and
`artifacts` (OpenEvolve's EvaluationResult). With a cascade ({"enabled": true, "thresholds": [...]}) and
`evaluate_stage1/2/3` defined, stages run in turn while combined_score clears each threshold, as OpenEvolve does.
Non-finite floats are written as {"__nonfinite__": "nan"} so hone can refuse them explicitly. hone_pool.py imports
this module and forks per evaluation.
"""
import importlib.util
import json
import math
import os
import sys
import traceback


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


def load_evaluator(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("hone_task_evaluator", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "evaluate") and not hasattr(module, "evaluate_stage1"):
        raise AttributeError("the evaluator defines no evaluate(program_path) function")
    return module


def _score(metrics):
    v = metrics.get("combined_score")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    nums = [float(x) for x in metrics.values() if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)]
    return sum(nums) / len(nums) if nums else 0.0


def run_evaluation(module, program_path, cascade):
    """The metrics and artifacts of one evaluation, running cascade stages when configured and defined."""
    stages = [getattr(module, "evaluate_stage%d" % i, None) for i in (1, 2, 3)]
    if cascade.get("enabled") and callable(stages[0]):
        thresholds = list(cascade.get("thresholds") or [])
        metrics, artifacts = {}, {}
        for i, stage in enumerate(s for s in stages if callable(s)):
            m, a = split_result(stage(program_path))
            metrics.update(m)
            artifacts.update(a)
            metrics["cascade_stage"] = i + 1
            if i < len(thresholds) and _score(m) < thresholds[i]:
                break
        return metrics, artifacts
    return split_result(module.evaluate(program_path))


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
    program_path = write_program(os.getcwd(), request)
    limit_memory(int(request.get("memory_mb") or 0))
    try:
        module = load_evaluator(evaluator_path)
    except BaseException:
        code, payload = 1, json.dumps({"error": traceback.format_exc(limit=8)[-4000:]})
    else:
        code, payload = evaluate_payload(module, program_path, cascade)
    sys.stdout.flush()
    sys.stderr.flush()
    write_fd(RESULT_FD, payload)
    os._exit(code)
