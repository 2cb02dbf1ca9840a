"""PRISM: place LLM models on GPUs (80 GB each) to minimise the largest KV-cache pressure (KVPR) over GPUs.

KVPR of a GPU = sum(rate / slo) over its models / (80 - sum(size) over its models).
"""

GPU_MEMORY = 80


# EVOLVE-BLOCK-START
def compute_model_placement(gpu_num, models):
    """Greedy: largest models first, each on the GPU whose pressure stays lowest; returns {gpu: [model names]}."""
    size_weight = 1.0
    pressure_weight = 1.0
    placement = {g: [] for g in range(gpu_num)}
    used = [0] * gpu_num
    load = [0.0] * gpu_num
    order = sorted(models, key=lambda m: size_weight * m["size"] + pressure_weight * m["rate"] / m["slo"], reverse=True)
    for m in order:
        best, best_kvpr = None, None
        for g in range(gpu_num):
            if used[g] + m["size"] >= GPU_MEMORY:
                continue
            kvpr = (load[g] + m["rate"] / m["slo"]) / (GPU_MEMORY - used[g] - m["size"])
            if best is None or kvpr < best_kvpr:
                best, best_kvpr = g, kvpr
        if best is None:
            best = min(range(gpu_num), key=lambda g: used[g])
        placement[best].append(m["name"])
        used[best] += m["size"]
        load[best] += m["rate"] / m["slo"]
    return placement
# EVOLVE-BLOCK-END
