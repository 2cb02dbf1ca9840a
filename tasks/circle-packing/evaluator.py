"""Evaluator for circle packing, n = 26: 26 disjoint circles in the unit square, maximise the sum of radii.

Written for hone from the published rules. The program runs in its own isolated process (hone_runtime) and only
its centres and radii come back; the sum of radii is recomputed here (the program's own claim is never scored);
shapes, finiteness, non-negative radii, containment and pairwise non-overlap are checked at tolerance 1e-12.
combined_score is the raw sum of radii.
"""
import numpy as np
from hone_checks import Invalid, check_packing, invalid
from hone_runtime import ProgramError, finite_array, run_program

N = 26
BEST_KNOWN = 2.635977


def evaluate(program_path, n=N, best_known=BEST_KNOWN):
    try:
        out = run_program(program_path, "run_packing", timeout=50)
        if not isinstance(out, list) or len(out) < 2:
            raise Invalid("run_packing() must return (centers, radii, sum_of_radii)")
        centers = finite_array(out[0], "centers")
        radii = finite_array(out[1], "radii")
        check_packing(centers, radii, n)
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    except ValueError as exc:
        return invalid("centers and radii must be numeric arrays: %s" % exc)
    total = float(np.sum(radii))
    return {"combined_score": total, "sum_radii": total, "validity": 1.0, "ratio_to_best_known": total / best_known}
