"""Baseline: OpenEvolve's evaluation path, emulated from its evaluator.py and process_parallel.py.

One long-lived process (a worker of OpenEvolve's process pool) imports the evaluator once with importlib; for
each program (a JSON line {"program": text} on stdin) it writes the code to a temporary .py file, calls
evaluate(path) in a thread with a timeout (run_in_executor + wait_for), removes the file and prints the result.
Mode `fresh` runs each program the way OpenEvolve's example evaluators do (a new interpreter, results pickled);
mode `inprocess` runs it in this interpreter: the evaluator's own compute, with nothing around it.

`python3 openevolve_path.py PYTHON_DIR EVALUATOR fresh|inprocess`
"""
import concurrent.futures
import json
import os
import sys
import tempfile

sys.path[:0] = [sys.argv[1], os.path.dirname(os.path.abspath(sys.argv[2]))]
import hone_checks  # noqa: E402
import inprocess  # noqa: E402

hone_checks.run_program = inprocess.run_in_fresh_interpreter if sys.argv[3] == "fresh" else inprocess.run_in_process
evaluator = inprocess.load_evaluator(sys.argv[2])
executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(json.loads(line)["program"])
    try:
        result = executor.submit(evaluator.evaluate, f.name).result(timeout=60)
    finally:
        os.unlink(f.name)
    print(inprocess.dump(result), flush=True)
