"""First autocorrelation inequality: a non-negative step function f on [-1/4, 1/4] minimising max(f*f) / (int f)^2."""
import numpy as np


# EVOLVE-BLOCK-START
def construct_f():
    """A raised cosine bump with flat shoulders."""
    n = 600
    x = np.linspace(-0.25, 0.25, n)
    width = 0.2
    floor = 0.35
    return floor + np.exp(-((x / width) ** 2))
# EVOLVE-BLOCK-END


def run():
    """Entry point: (heights, c1 as the program computes it, loss, n). The evaluator recomputes C1 itself."""
    f = construct_f()
    n = len(f)
    c1 = float(2 * n * np.max(np.convolve(f, f)) / np.sum(f) ** 2)
    return f, c1, c1, n
