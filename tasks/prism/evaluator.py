"""Evaluator for PRISM (LLM model placement on GPUs), written for hone from the published description.

50 cases from cases.py, drawn as SkyDiscover's evaluator draws them (numpy seed 42), so scores compare with the
published ones (its initial program scores 21.891622 here and there). compute_model_placement(gpu_num, models) gets
the models as dicts {name, size, rate, slo} and returns {gpu: [model names]} (or a list of lists); a GPU may also hold
the model dicts themselves, unaltered (upstream's programs place the model objects they are given). Closing the
public evaluators' holes: GPU ids must be exactly 0..gpu_num-1; every model must be placed exactly once; a GPU may
hold at most 80 GB; every case must succeed (a failed or timed-out case fails the whole evaluation, it is never
skipped). KVPR of a GPU = sum(rate/slo) / (80 - sum(size)) (1e6 when full, 0 when empty), from the case's own models;
a case scores its largest KVPR. combined_score = 1 / mean(largest KVPR) + success rate (so 1 + ... when every case
succeeds), the mean taken by numpy as upstream takes it.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import GPU_MEMORY, generate_cases  # noqa: E402
from hone_checks import Invalid, invalid  # noqa: E402
from hone_runtime import ProgramError, run_program_many  # noqa: E402

CASE_TIMEOUT = 10


def model_name(entry, by_name, gpu):
    """The name of a placed model: its name, or the model itself as it was given (upstream's programs place the
    model objects they receive); a model whose fields differ from the case's is not that model."""
    if isinstance(entry, dict) and isinstance(entry.get("name"), str) and by_name.get(entry["name"]) == entry:
        return entry["name"]
    if isinstance(entry, str) and entry in by_name:
        return entry
    if isinstance(entry, dict):
        raise Invalid("GPU %d holds a model dict that is not one of the case's models as given (name %r; place the model, or its name, unchanged)" % (gpu, entry.get("name")))
    raise Invalid("GPU %d holds %r, which is not one of the case's models" % (gpu, entry))


def case_pressure(case, placement):
    gpu_num = case["gpu_num"]
    by_name = {m["name"]: m for m in case["models"]}
    if isinstance(placement, list):
        placement = {str(i): v for i, v in enumerate(placement)}
    if not isinstance(placement, dict):
        raise Invalid("the placement must be {gpu: [model names]}")
    gpus = {}
    for key, names in placement.items():
        try:
            gpu = int(key)
        except (TypeError, ValueError):
            raise Invalid("GPU id %r is not an integer" % (key,))
        if gpu < 0 or gpu >= gpu_num or str(gpu) != str(key).strip():
            raise Invalid("GPU id %r is outside 0..%d" % (key, gpu_num - 1))
        if not isinstance(names, list):
            raise Invalid("GPU %d must hold a list of model names" % gpu)
        gpus.setdefault(gpu, []).extend(names)
    seen = []
    worst = 0.0
    for gpu, names in gpus.items():
        size = 0
        demand = 0.0
        for name in names:
            name = model_name(name, by_name, gpu)
            seen.append(name)
            size += by_name[name]["size"]
            demand += by_name[name]["rate"] / by_name[name]["slo"]
        if size > GPU_MEMORY:
            raise Invalid("GPU %d holds %d GB, more than %d" % (gpu, size, GPU_MEMORY))
        kvpr = 1e6 if size == GPU_MEMORY and demand > 0 else (demand / (GPU_MEMORY - size) if names else 0.0)
        worst = max(worst, kvpr)
    if sorted(seen) != sorted(by_name):
        missing = sorted(set(by_name) - set(seen))
        raise Invalid("every model must be placed exactly once (%s)" % ("missing " + ", ".join(missing[:5]) if missing else "some placed twice"))
    return worst


def evaluate(program_path):
    cases = generate_cases()
    try:
        results = run_program_many(program_path, "compute_model_placement", [(c["gpu_num"], c["models"]) for c in cases], timeout=CASE_TIMEOUT * len(cases))
        worst = []
        for i, (case, r) in enumerate(zip(cases, results)):
            if not r.get("ok"):
                raise Invalid("case %d failed: %s" % (i, r.get("error")))
            try:
                worst.append(case_pressure(case, r["value"]))
            except Invalid as exc:
                raise Invalid("case %d: %s" % (i, exc))
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    mean_worst = float(np.mean(worst))  # as the published evaluator averages (pairwise summation), bit for bit
    if mean_worst <= 0:
        return invalid("the mean largest KVPR must be positive")
    return {"combined_score": 1.0 / mean_worst + 1.0, "mean_max_kvpr": mean_worst, "success_rate": 1.0, "cases": len(cases), "validity": 1.0}
