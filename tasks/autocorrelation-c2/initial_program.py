"""Second autocorrelation inequality: a non-negative step function f maximising ||f*f||_2^2 / (||f*f||_1 ||f*f||_inf)."""
import numpy as np


# EVOLVE-BLOCK-START
def construct_f():
    """A smooth bump; longer and rougher functions do better."""
    n = 2000
    x = np.linspace(-1.0, 1.0, n)
    width = 0.5
    return np.exp(-((x / width) ** 2))
# EVOLVE-BLOCK-END


def run():
    """Entry point: (heights, c2 as the program computes it, loss, n). The evaluator recomputes C2 itself."""
    f = construct_f()
    return f, 0.0, 0.0, len(f)
