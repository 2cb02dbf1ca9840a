"""Evaluator for circle packing (n circles in the unit square, maximise the sum of radii).

Written for hone from the published rules: the program runs in its own process and only its centres and
radii come back; the sum of radii is recomputed here (the program's own claim is never scored); shapes,
finiteness, non-negative radii, containment and pairwise non-overlap are checked at tolerance 1e-12.
combined_score is the raw sum of radii.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

N = int(os.environ.get("HONE_CIRCLES", "26"))
TOL = 1e-12
BEST_KNOWN = {26: 2.635977, 32: 2.939573}
PROGRAM_TIMEOUT = float(os.environ.get("HONE_PROGRAM_TIMEOUT", "50"))

_CALL = r"""
import importlib.util, json, sys
import numpy as np
spec = importlib.util.spec_from_file_location("candidate", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
out = module.run_packing()
payload = {"centers": np.asarray(out[0], dtype=float).tolist(), "radii": np.asarray(out[1], dtype=float).tolist()}
with open(sys.argv[2], "w") as f:
    json.dump(payload, f)
"""


def invalid(reason, **extra):
    return {"combined_score": 0.0, "validity": 0.0, "error": reason, **extra}


def run_program(program_path):
    with tempfile.TemporaryDirectory() as scratch:
        out_path = os.path.join(scratch, "packing.json")
        proc = subprocess.run(
            [sys.executable, "-c", _CALL, program_path, out_path],
            cwd=scratch, capture_output=True, text=True, timeout=PROGRAM_TIMEOUT,
        )
        if proc.returncode != 0:
            raise RuntimeError("the program failed: " + proc.stderr.strip().splitlines()[-1][:500] if proc.stderr.strip() else "the program failed")
        with open(out_path) as f:
            return json.load(f)


def check(centers, radii, n=N):
    if centers.shape != (n, 2):
        return "centers must have shape (%d, 2), got %s" % (n, centers.shape)
    if radii.shape != (n,):
        return "radii must have shape (%d,), got %s" % (n, radii.shape)
    if not (np.all(np.isfinite(centers)) and np.all(np.isfinite(radii))):
        return "centers and radii must be finite numbers"
    if np.any(radii < 0):
        return "radii must be non-negative"
    low = centers - radii[:, None]
    high = centers + radii[:, None]
    if np.any(low < -TOL) or np.any(high > 1 + TOL):
        i = int(np.argmax(np.maximum(-low, high - 1).max(axis=1)))
        return "circle %d is not inside the unit square" % i
    for i in range(n):
        gaps = np.sqrt(np.sum((centers[i + 1:] - centers[i]) ** 2, axis=1)) - (radii[i + 1:] + radii[i])
        if gaps.size and np.min(gaps) < -TOL:
            j = i + 1 + int(np.argmin(gaps))
            return "circles %d and %d overlap by %.3g" % (i, j, -float(np.min(gaps)))
    return None


def evaluate(program_path):
    try:
        data = run_program(program_path)
        centers = np.asarray(data["centers"], dtype=float)
        radii = np.asarray(data["radii"], dtype=float)
    except subprocess.TimeoutExpired:
        return invalid("the program did not return within %g s" % PROGRAM_TIMEOUT)
    except Exception as exc:  # any failure of the program is an invalid result, never a crash of the evaluator
        return invalid(str(exc)[:500])
    problem = check(centers, radii)
    if problem:
        return invalid(problem)
    total = float(np.sum(radii))
    return {
        "combined_score": total,
        "sum_radii": total,
        "validity": 1.0,
        "ratio_to_best_known": total / BEST_KNOWN.get(N, total or 1.0),
    }
