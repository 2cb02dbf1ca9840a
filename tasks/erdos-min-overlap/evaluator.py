"""Evaluator for the Erdős minimum overlap problem (C5, lower is better), written for hone from the published rules.

run() returns (h, c5_reported, n): h is a step function on [0, 2] with n equal steps, given as a flat (1-D) sequence
of numbers (a 2-D array, even of shape (1, n), is refused, as the published evaluators refuse it), with values in
[0, 1] and integral 1 (within 1e-3; it is then rescaled to exactly 1 and re-checked). C5 = dx * max over all 2n-1
lags of sum_i h[i+k] (1 - h[i]) is recomputed here; the reported value is never scored. combined_score is
0.38092303510845016 / C5 (higher is better), for OpenEvolve-style comparisons.
"""
from hone_checks import Invalid, erdos_overlap, invalid, sequence
from hone_runtime import ProgramError, run_program

ALPHAEVOLVE_C5 = 0.38092303510845016


def heights(out):
    """h from run()'s value, (h, c5, n) or h alone. Unwrapped once only: `sequence` would unwrap a nested list again,
    silently scoring the first row of a 2-D h."""
    h = out[0] if isinstance(out, list) and out and isinstance(out[0], list) else out
    if isinstance(h, list) and any(isinstance(v, list) for v in h):
        raise Invalid("h must be a 1-D sequence of numbers (got a nested list, e.g. an array of shape (1, n))")
    return h


def evaluate(program_path):
    try:
        out = run_program(program_path, "run", timeout=120)
        h = sequence(heights(out), "h", max_len=100_000)
        c5 = erdos_overlap(h)
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    if not c5 > 0:
        return invalid("C5 must be positive")
    return {"c5": c5, "combined_score": ALPHAEVOLVE_C5 / c5, "n": len(h), "validity": 1.0}
