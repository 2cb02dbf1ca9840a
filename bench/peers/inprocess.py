"""The baselines' way of running a program: imported into the evaluating interpreter itself, no isolation.

Importing this module replaces hone_checks.run_program, so the task's own evaluator (its checks and its score)
runs unchanged while the program runs where a peer would run it. `run_in_process` is the same interpreter;
`run_in_fresh_interpreter` is OpenEvolve's example evaluators' way: a temporary script run by a new
`sys.executable`, which imports the program and pickles the entry's result to a temporary file.
"""
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import tempfile

import hone_checks


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def run_in_process(program_path, entry, args=(), timeout=60.0, memory_mb=2048):
    spec = importlib.util.spec_from_file_location("program", program_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return _plain(getattr(module, entry)(*args))


_CHILD = """
import importlib.util, pickle, sys
spec = importlib.util.spec_from_file_location("program", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
result = getattr(module, sys.argv[2])()
with open(sys.argv[3], "wb") as f:
    pickle.dump(result, f)
"""


def run_in_fresh_interpreter(program_path, entry, args=(), timeout=60.0, memory_mb=2048):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(_CHILD)
    out = script.name + ".pickle"
    try:
        proc = subprocess.Popen([sys.executable, script.name, program_path, entry, out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise hone_checks.ProgramError("the program's process exited with %d" % proc.returncode)
        with open(out, "rb") as f:
            return _plain(pickle.load(f))
    finally:
        for path in (script.name, out):
            if os.path.exists(path):
                os.unlink(path)


def load_evaluator(path):
    spec = importlib.util.spec_from_file_location("evaluation_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dump(result):
    return json.dumps({k: v for k, v in result.items() if isinstance(v, (int, float, str))})
