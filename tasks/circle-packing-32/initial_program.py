"""Circle packing, n = 32: place 32 disjoint circles in the unit square to maximise the sum of their radii."""
import numpy as np


# EVOLVE-BLOCK-START
def construct_packing():
    """Returns (centers, radii): a centre circle, an inner ring of 10 and an outer ring of 21."""
    n = 32
    centers = np.zeros((n, 2))
    centers[0] = [0.5, 0.5]
    for i in range(10):
        angle = 2.0 * np.pi * i / 10
        centers[1 + i] = [0.5 + 0.3 * np.cos(angle), 0.5 + 0.3 * np.sin(angle)]
    for i in range(21):
        angle = 2.0 * np.pi * i / 21
        centers[11 + i] = [0.5 + 0.7 * np.cos(angle), 0.5 + 0.7 * np.sin(angle)]
    centers = np.clip(centers, 0.01, 0.99)
    return centers, compute_max_radii(centers)


def compute_max_radii(centers):
    """Largest radii with every circle inside the square; overlapping pairs shrink proportionally."""
    n = centers.shape[0]
    radii = np.minimum.reduce([centers[:, 0], centers[:, 1], 1 - centers[:, 0], 1 - centers[:, 1]])
    for i in range(n):
        for j in range(i + 1, n):
            distance = np.sqrt(np.sum((centers[i] - centers[j]) ** 2))
            if radii[i] + radii[j] > distance:
                scale = distance / (radii[i] + radii[j])
                radii[i] *= scale
                radii[j] *= scale
    return radii
# EVOLVE-BLOCK-END


def run_packing():
    """Entry point called by the evaluator: (centers 32x2, radii 32, reported sum of radii)."""
    centers, radii = construct_packing()
    return centers, radii, float(np.sum(radii))
