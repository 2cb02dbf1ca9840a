"""Evaluator for transaction scheduling, written for hone from the published description.

Three workloads from workloads.py (seed 7). get_best_schedule(workload, 10) must return an exact permutation of
the workload's transaction indices (a partial or repeated schedule is invalid; a returned (cost, schedule) pair is
accepted and the cost ignored). The makespan is recomputed with workloads.makespan, never taken from the program.
combined_score = 1e6 / (1 + sum of makespans) (higher is better).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hone_checks import Invalid, invalid  # noqa: E402
from hone_runtime import ProgramError, run_program_many  # noqa: E402
from workloads import generate_workloads, makespan  # noqa: E402


def schedule_of(value, n):
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], list) and not isinstance(value[0], list):
        value = value[1]
    if not isinstance(value, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in value):
        raise Invalid("the schedule must be a list of transaction indices")
    if sorted(value) != list(range(n)):
        raise Invalid("the schedule must contain each of the %d transactions exactly once (got %d entries)" % (n, len(value)))
    return value


def evaluate(program_path):
    workloads = generate_workloads()
    try:
        results = run_program_many(program_path, "get_best_schedule", [(w, 10) for w in workloads], timeout=300)
        total = 0
        spans = []
        for i, (w, r) in enumerate(zip(workloads, results)):
            if not r.get("ok"):
                raise Invalid("workload %d failed: %s" % (i, r.get("error")))
            try:
                spans.append(makespan(w, schedule_of(r["value"], len(w))))
            except Invalid as exc:
                raise Invalid("workload %d: %s" % (i, exc))
        total = sum(spans)
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    return {"combined_score": 1e6 / (1 + total), "total_makespan": total, "makespans": spans, "validity": 1.0}
