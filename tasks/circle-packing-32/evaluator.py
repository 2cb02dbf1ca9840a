"""Evaluator for circle packing, n = 32: the rules of the n = 26 task (hone_checks.evaluate_packing), 32 circles.

The program runs in its own isolated process; the sum of radii is recomputed; containment and non-overlap are
checked at tolerance 1e-12. combined_score is the raw sum of radii.
"""
from hone_checks import evaluate_packing

N = 32
BEST_KNOWN = 2.939573


def evaluate(program_path):
    return evaluate_packing(program_path, N, BEST_KNOWN)
