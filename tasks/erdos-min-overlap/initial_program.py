"""Erdős minimum overlap: a step function h on [0, 2] with values in [0, 1] and integral 1 minimising C5."""
import numpy as np


# EVOLVE-BLOCK-START
def construct_h():
    """A smooth symmetric profile, clipped to [0, 1] and scaled so its integral over [0, 2] is 1."""
    n = 200
    x = (np.arange(n) + 0.5) * (2.0 / n)
    base = 0.5
    amplitude = 0.3
    profile = np.clip(base + amplitude * np.cos(np.pi * (x - 1.0)), 0.0, 1.0)
    return np.minimum(profile * (n / 2.0) / np.sum(profile), 1.0)
# EVOLVE-BLOCK-END


def run():
    """Entry point: (h, c5 as the program computes it, n). The evaluator recomputes C5 itself."""
    h = construct_h()
    n = len(h)
    dx = 2.0 / n
    c5 = float(np.max(np.correlate(h, 1.0 - h, mode="full")) * dx)
    return h, c5, n
