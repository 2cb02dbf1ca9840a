"""PRISM cases, generated from a seed by hone's own rule (after the published description: 50 cases; 5-9 GPUs of
80 GB; 2 x GPUs models of 10-29 GB with request rate 1-9 and SLO 5-9). Not the upstream data: values here are
not comparable with published PRISM numbers."""
import random

GPU_MEMORY = 80


def generate_cases(seed=42, count=50):
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        gpu_num = rng.randint(5, 9)
        models = [
            {"name": "m%d" % i, "size": rng.randint(10, 29), "rate": rng.randint(1, 9), "slo": rng.randint(5, 9)}
            for i in range(2 * gpu_num)
        ]
        cases.append({"gpu_num": gpu_num, "models": models})
    return cases
