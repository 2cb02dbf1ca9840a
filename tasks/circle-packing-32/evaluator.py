"""Evaluator for circle packing, n = 32: the rules of the n = 26 task (see hone_checks.check_packing), 32 circles.

The program runs in its own isolated process; the sum of radii is recomputed; containment and non-overlap are
checked at tolerance 1e-12. combined_score is the raw sum of radii.
"""
import numpy as np
from hone_checks import Invalid, check_packing, invalid
from hone_runtime import ProgramError, finite_array, run_program

N = 32
BEST_KNOWN = 2.939573


def evaluate(program_path):
    try:
        out = run_program(program_path, "run_packing", timeout=50)
        if not isinstance(out, list) or len(out) < 2:
            raise Invalid("run_packing() must return (centers, radii, sum_of_radii)")
        centers = finite_array(out[0], "centers")
        radii = finite_array(out[1], "radii")
        check_packing(centers, radii, N)
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    except ValueError as exc:
        return invalid("centers and radii must be numeric arrays: %s" % exc)
    total = float(np.sum(radii))
    return {"combined_score": total, "sum_radii": total, "validity": 1.0, "ratio_to_best_known": total / BEST_KNOWN}
