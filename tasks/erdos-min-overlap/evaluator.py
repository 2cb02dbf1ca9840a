"""Evaluator for the Erdős minimum overlap problem (C5, lower is better), written for hone from the published rules.

run() returns (h, c5_reported, n): h is a step function on [0, 2] with n equal steps, given as a flat (1-D) sequence
of numbers (a 2-D h in the tuple, even of shape (1, n), or a bare array of several rows is refused, as the
published evaluators refuse it), with values in [0, 1] and integral 1 (within 1e-3 as OpenEvolve's np.isclose reads
it; then rescaled to sum n/2 as TTT-Discover rescales it, and re-checked). C5 = dx * max over all 2n-1 lags of
sum_i h[i+k] (1 - h[i]) is recomputed here; the reported value is never scored. combined_score is
0.38092303510845016 / C5 (higher is better), for OpenEvolve-style comparisons.
"""
from hone_checks import Invalid, erdos_overlap, invalid, reported_head, sequence
from hone_runtime import ProgramError, run_program

ALPHAEVOLVE_C5 = 0.38092303510845016


def heights(out):
    """h from run()'s value, (h, c5, n) or h alone (never the first row of a 2-D array). Unwrapped once only:
    `sequence` would unwrap a nested list again, silently scoring the first row of a 2-D h."""
    h = reported_head(out)
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
