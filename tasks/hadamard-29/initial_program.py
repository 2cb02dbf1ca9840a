"""Hadamard maximal determinant, order 29: a 29 x 29 matrix of +1/-1 entries with |det| as large as possible."""
import numpy as np


# EVOLVE-BLOCK-START
def construct_matrix():
    """A quadratic-residue circulant, improved by a short seeded local search over single-entry flips."""
    n = 29
    residues = {(i * i) % n for i in range(1, n)}
    first = np.array([1] + [1 if k in residues else -1 for k in range(1, n)])
    m = np.array([np.roll(first, i) for i in range(n)])
    rng = np.random.default_rng(2026)
    temperature = 0.05
    _, best = np.linalg.slogdet(m)
    for _ in range(300):
        i, j = rng.integers(0, n, size=2)
        m[i, j] = -m[i, j]
        sign, value = np.linalg.slogdet(m)
        if sign != 0 and (value > best or rng.random() < np.exp((value - best) / temperature)):
            best = value
        else:
            m[i, j] = -m[i, j]
    return m
# EVOLVE-BLOCK-END


def run_code():
    """Entry point: (M,) with M a 29 x 29 array of +1/-1."""
    return (construct_matrix(),)
