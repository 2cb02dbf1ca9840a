"""Baseline: a fresh python3 per evaluation. `python3 fresh_python.py PYTHON_DIR EVALUATOR PROGRAM` imports the
task's evaluator and runs the program in this same interpreter (no sandbox), then prints the result as JSON."""
import os
import sys

sys.path[:0] = [sys.argv[1], os.path.dirname(os.path.abspath(sys.argv[2]))]
import hone_checks  # noqa: E402
import inprocess  # noqa: E402

hone_checks.run_program = inprocess.run_in_process
print(inprocess.dump(inprocess.load_evaluator(sys.argv[2]).evaluate(sys.argv[3])))
