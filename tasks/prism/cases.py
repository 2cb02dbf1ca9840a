"""PRISM cases, drawn by the published rule (SkyDiscover's benchmarks/ADRS/prism evaluator): numpy's legacy
generator seeded with 42, then for each of 50 cases gpu_num in 5..9 and, for each of its 2 x gpu_num models, a size
of 10..29 GB, a request rate of 1..9 and an SLO of 5..9, drawn in that order. The same draws give the same cases,
so scores are comparable with the published PRISM numbers (the human baseline 21.89 in SkyDiscover's Table 1)."""
import numpy as np

GPU_MEMORY = 80


def generate_cases(seed=42, count=50):
    rng = np.random.RandomState(seed)  # the legacy stream np.random.seed(seed) sets; stable across numpy versions
    cases = []
    for _ in range(count):
        gpu_num = int(rng.randint(5, 10))
        models = []
        for i in range(2 * gpu_num):
            size, rate, slo = int(rng.randint(10, 30)), int(rng.randint(1, 10)), int(rng.randint(5, 10))
            models.append({"name": "m%d" % i, "size": size, "rate": rate, "slo": slo})
        cases.append({"gpu_num": gpu_num, "models": models})
    return cases
