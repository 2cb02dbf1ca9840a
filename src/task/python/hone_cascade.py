"""OpenEvolve's cascade evaluation, as its Evaluator runs it (`_cascade_evaluate` and `_passes_threshold` in
openevolve/evaluator.py), for an evaluator defining evaluate_stage1 (and evaluate_stage2, evaluate_stage3):

- stage 1 runs; stage 2 runs only if stage 1's metrics pass the first threshold and stage 2 is defined;
- once stage 2 has run, the metrics are those of both stages merged, numbers only (booleans as 0.0/1.0, no
  "error"), and stage 3 runs only if a second threshold is given and those merged metrics pass it;
- a stage passes when its combined_score (any number) is at least the threshold, or else the mean of its numbers
  but "error"; metrics without any number never pass;
- stage 2 or 3 raising keeps what the stages before gave, with `stage<N>_passed: 0.0` and the failure in the
  artifacts. Stage 1 raising fails the evaluation, as an evaluate() raising does in hone (OpenEvolve scores it 0.0).

hone adds `cascade_stage` (how many stages ran), which is never part of the score. Timeouts cover the whole
evaluation, not each stage. With no thresholds at all (`cascade_thresholds: []`), where OpenEvolve fails on its first
check, every stage runs, as hone always ran them then.
"""
import traceback


def passes(metrics, threshold):
    if not metrics:
        return False
    score = metrics.get("combined_score")
    if "combined_score" in metrics and isinstance(score, (int, float)):
        return float(score) >= threshold
    values = [float(v) for k, v in metrics.items() if k != "error" and isinstance(v, (int, float))]
    return bool(values) and sum(values) / len(values) >= threshold


def _numbers(metrics):
    return {k: float(v) for k, v in metrics.items() if k != "error" and isinstance(v, (int, float))}


def _stage(module, n):
    fn = getattr(module, "evaluate_stage%d" % n, None)
    return fn if callable(fn) else None


def _failed(metrics, artifacts, n, exc):
    artifacts.update({"stage%d_stderr" % n: str(exc), "stage%d_traceback" % n: traceback.format_exc(), "failure_stage": "stage%d" % n})
    metrics["stage%d_passed" % n] = 0.0
    return metrics, artifacts


def _run(module, thresholds, run_stage):
    metrics, artifacts = run_stage(module.evaluate_stage1)
    metrics, artifacts = dict(metrics), dict(artifacts)
    stage2 = _stage(module, 2)
    if stage2 is None or (thresholds and not passes(metrics, thresholds[0])):
        return metrics, artifacts, 1
    try:
        m2, a2 = run_stage(stage2)
    except Exception as exc:
        return _failed(metrics, artifacts, 2, exc) + (2,)
    metrics, artifacts = {**_numbers(metrics), **_numbers(m2)}, {**artifacts, **a2}
    stage3 = _stage(module, 3)
    if stage3 is None or (thresholds and (len(thresholds) < 2 or not passes(metrics, thresholds[1]))):
        return metrics, artifacts, 2
    try:
        m3, a3 = run_stage(stage3)
    except Exception as exc:
        return _failed(metrics, artifacts, 3, exc) + (3,)
    metrics.update(_numbers(m3))
    artifacts.update(a3)
    return metrics, artifacts, 3


def run_cascade(module, thresholds, run_stage):
    """(metrics, artifacts) of the stages that ran; `run_stage(fn)` runs one stage on the program and returns its
    (metrics, artifacts)."""
    metrics, artifacts, ran = _run(module, list(thresholds or []), run_stage)
    metrics["cascade_stage"] = ran
    return metrics, artifacts
