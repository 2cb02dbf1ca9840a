"""Evaluator for the second autocorrelation inequality (C2, higher is better), written for hone from the published rules.

run() returns (heights, c2_reported, loss, n). Heights must be real, finite and non-negative (not all zero, at
most 200,000). c = a*a (float64 FFT for long inputs) is viewed as piecewise linear on 2n+1 equally spaced points
over [-1/2, 1/2] with zero ends; C2 = L2^2 / (L1 Linf) with L2^2 = sum h/3 (y1^2 + y1 y2 + y2^2),
L1 = sum|c| / (m+1), Linf = max|c|. Scale-invariant and recomputed; the reported value is never scored.
combined_score is C2 itself.
"""
from hone_checks import Invalid, invalid, second_autocorrelation, sequence
from hone_runtime import ProgramError, run_program


def evaluate(program_path):
    try:
        out = run_program(program_path, "run", timeout=120)
        a = sequence(out, "the heights", max_len=200_000)
        c2 = second_autocorrelation(a)
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    return {"c2": c2, "combined_score": c2, "n": len(a), "validity": 1.0}
