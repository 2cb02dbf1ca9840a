"""Evaluator for circle packing, n = 26: 26 disjoint circles in the unit square, maximise the sum of radii.

Written for hone from the published rules (hone_checks.evaluate_packing). The program runs in its own isolated
process (hone_runtime) and only its centres and radii come back; the sum of radii is recomputed here (the
program's own claim is never scored); shapes, finiteness, non-negative radii, containment and pairwise
non-overlap are checked at tolerance 1e-12. combined_score is the raw sum of radii.
"""
from hone_checks import evaluate_packing

N = 26
BEST_KNOWN = 2.635983


def evaluate(program_path, n=N, best_known=BEST_KNOWN):
    return evaluate_packing(program_path, n, best_known)
