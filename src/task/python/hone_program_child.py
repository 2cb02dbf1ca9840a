"""Runs one candidate program's entry point and returns its result as JSON text.

Shared by the cold path (a fresh interpreter per call) and the warm program zygote (a forked child per call), so
both give the same bytes. Floats are written with repr, which round-trips exactly.
"""
import importlib.util
import json
import math
import os
import sys


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
        return to_jsonable(tolist(), depth + 1)
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, depth + 1) for k, v in value.items()}
    item = getattr(value, "item", None)
    if callable(item):
        return to_jsonable(item(), depth + 1)
    raise TypeError("the program returned a %s, which is not numbers, lists or dicts" % type(value).__name__)


def _call(fn, args):
    try:
        return {"ok": True, "value": to_jsonable(fn(*args))}
    except MemoryError:
        return {"ok": False, "error": "the program ran out of memory"}
    except RecursionError:
        return {"ok": False, "error": "the program exceeded the recursion limit"}
    except BaseException as exc:
        return {"ok": False, "error": ("%s: %s" % (type(exc).__name__, exc))[:1000]}


def run_entry(program_path, entry, args, many=False):
    """Imports the program and calls its entry with `args` (or once per item of `args` when `many`); returns the
    JSON text {"ok": true, "value": ...} (with `many`, value is a list of per-call {"ok", "value"|"error"})."""
    try:
        spec = importlib.util.spec_from_file_location("candidate_program", program_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = getattr(module, entry, None)
        if not callable(fn):
            return json.dumps({"ok": False, "error": "the program defines no %s() function" % entry})
        if many:
            return json.dumps({"ok": True, "value": [_call(fn, a) for a in args]})
        value = to_jsonable(fn(*args))
        return json.dumps({"ok": True, "value": value})
    except MemoryError:
        return json.dumps({"ok": False, "error": "the program ran out of memory"})
    except RecursionError:
        return json.dumps({"ok": False, "error": "the program exceeded the recursion limit"})
    except BaseException as exc:  # the program is untrusted: any failure is a result, not a crash
        text = "%s: %s" % (type(exc).__name__, exc)
        return json.dumps({"ok": False, "error": text[:1000]})


def limit_memory(mb):
    if mb and mb > 0:
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (mb * 1024 * 1024, mb * 1024 * 1024))
        except Exception:
            pass


if __name__ == "__main__":
    # Cold path: hone_program_child.py PROGRAM ENTRY ARGS_JSON MEMORY_MB RESULT_PATH MANY
    program, entry, args_json, memory, result_path = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    limit_memory(memory)
    out = run_entry(program, entry, json.loads(args_json), many=len(sys.argv) > 6 and sys.argv[6] == "1")
    with open(result_path + ".tmp", "w") as f:
        f.write(out)
    os.replace(result_path + ".tmp", result_path)
