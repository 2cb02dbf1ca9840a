"""Evaluator for the second autocorrelation inequality (C2, higher is better), written for hone from the published rules.

run() returns (heights, c2_reported, loss, n). Heights must be real and finite (not all zero, at most 200,000). As in
the published rule (OpenEvolve), a height below -1e-6 is refused and the others are clamped to f >= 0, so an
optimiser's round-off (-1e-17) does not void a construction; C2 is that of the clamped function, which the program
could have returned itself, so the clamp gains nothing. c = a*a (float64 FFT for long inputs) is viewed as piecewise
linear on 2n+1 equally spaced points over [-1/2, 1/2] with zero ends; C2 = L2^2 / (L1 Linf) with
L2^2 = sum h/3 (y1^2 + y1 y2 + y2^2), L1 = sum|c| / (m+1), Linf = max|c|. Scale-invariant and recomputed; the
reported value is never scored. combined_score is C2 itself.
"""
import numpy as np
from hone_checks import Invalid, invalid, second_autocorrelation, sequence
from hone_runtime import ProgramError, run_program

NEGATIVE_TOL = 1e-6


def clamped(a):
    """f >= 0: heights in [-1e-6, 0) become 0 (round-off); a height below -1e-6 is refused."""
    if np.any(a < -NEGATIVE_TOL):
        raise Invalid("heights must be non-negative (below -%g found)" % NEGATIVE_TOL)
    return np.maximum(a, 0.0)


def evaluate(program_path):
    try:
        out = run_program(program_path, "run", timeout=120)
        a = sequence(out, "the heights", max_len=200_000)
        c2 = second_autocorrelation(clamped(a))
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    return {"c2": c2, "combined_score": c2, "n": len(a), "validity": 1.0}
