"""Runs one evaluator call for hone in its own process and writes the result as JSON.

Usage: hone_eval_runner.py EVALUATOR_PATH PROGRAM_PATH RESULT_PATH MEMORY_MB

The evaluator's `evaluate(program_path)` may return a dict of metrics or an object with `metrics` and
`artifacts` (OpenEvolve's EvaluationResult). Non-finite floats are written as {"__nonfinite__": "nan"} so that
JSON stays valid and hone can refuse them explicitly. The result file is written only at the end, atomically.
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


def write(path, payload):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(payload, f)
    os.replace(tmp, path)


def main():
    evaluator_path, program_path, result_path, memory_mb = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    limit_memory(memory_mb)
    sys.path.insert(0, os.path.dirname(os.path.abspath(evaluator_path)))
    try:
        spec = importlib.util.spec_from_file_location("hone_task_evaluator", evaluator_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(module, "evaluate"):
            raise AttributeError("the evaluator defines no evaluate(program_path) function")
        metrics, artifacts = split_result(module.evaluate(program_path))
        write(result_path, {"metrics": clean(metrics), "artifacts": clean(artifacts)})
    except MemoryError:
        write(result_path, {"error": "the evaluator ran out of memory"})
        sys.exit(1)
    except BaseException:
        write(result_path, {"error": traceback.format_exc(limit=8)[-4000:]})
        sys.exit(1)


if __name__ == "__main__":
    main()
