"""Evaluator for the first autocorrelation inequality (C1, lower is better), written for hone from the published rules.

run() returns (heights, c1_reported, loss, n). The heights must be a non-empty list of real, finite, non-negative
numbers (no booleans, no complex values); they are scaled by their maximum before anything is computed, so values
that underflow (around 1e-161) cannot produce a zero score. C1 = 2n max(a*a) / (sum a)^2 is recomputed (float64
FFT for long inputs); the reported value is never scored. combined_score = 1.5052939684401607 / C1.
"""
from hone_checks import Invalid, first_autocorrelation, invalid, sequence
from hone_runtime import ProgramError, run_program

ALPHAEVOLVE_C1 = 1.5052939684401607


def evaluate(program_path):
    try:
        out = run_program(program_path, "run", timeout=120)
        a = sequence(out, "the heights", max_len=200_000)
        c1 = first_autocorrelation(a)
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    return {"c1": c1, "combined_score": ALPHAEVOLVE_C1 / c1, "n": len(a), "validity": 1.0}
