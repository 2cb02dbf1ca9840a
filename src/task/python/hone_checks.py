"""Checks and exact recomputations shared by hone's built-in task evaluators, written from the published rules.

Every function recomputes from the program's raw output and never trusts a value the program reports.
"""
from fractions import Fraction

import numpy as np
from hone_runtime import ProgramError, finite_array, run_program  # at import: the warm evaluator forks with it loaded

GEOMETRY_TOL = 1e-12


class Invalid(Exception):
    """The program's output breaks a rule of the task; the message says which."""


def invalid(reason):
    return {"combined_score": 0.0, "validity": 0.0, "error": str(reason)[:500]}


# ---- circle packing -------------------------------------------------------------------------------------------

def check_packing(centers, radii, n, tol=GEOMETRY_TOL):
    """Raises Invalid unless n circles lie inside the unit square without overlaps (tolerance tol)."""
    if centers.shape != (n, 2):
        raise Invalid("centers must have shape (%d, 2), got %s" % (n, centers.shape))
    if radii.shape != (n,):
        raise Invalid("radii must have shape (%d,), got %s" % (n, radii.shape))
    if not (np.all(np.isfinite(centers)) and np.all(np.isfinite(radii))):
        raise Invalid("centers and radii must be finite numbers")
    if np.any(radii < 0):
        raise Invalid("radii must be non-negative")
    low = centers - radii[:, None]
    high = centers + radii[:, None]
    if np.any(low < -tol) or np.any(high > 1 + tol):
        i = int(np.argmax(np.maximum(-low, high - 1).max(axis=1)))
        raise Invalid("circle %d is not inside the unit square" % i)
    for i in range(n - 1):
        # As TTT-Discover and SimpleTES write it (distance < r_i + r_j - tol): the same test in other words rounds
        # differently at exactly the tolerance.
        dist = np.sqrt(np.sum((centers[i + 1:] - centers[i]) ** 2, axis=1))
        reach = radii[i + 1:] + radii[i]
        if np.any(dist < reach - tol):
            j = i + 1 + int(np.argmax(reach - dist))
            raise Invalid("circles %d and %d overlap by %.3g" % (i, j, float(reach[j - i - 1] - dist[j - i - 1])))


# ---- sequences (Erdos, autocorrelation) -----------------------------------------------------------------------

def reported_head(value):
    """The sequence in run()'s value, given alone or first in a tuple with what the program reports ((h, c5, n)).
    A value of two or more items that are all lists is a 2-D array, whose first row is not the sequence."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        if len(value) == 1 or not all(isinstance(v, list) for v in value):
            return value[0]
    return value


def sequence(value, name="the sequence", max_len=200_000):
    """A 1-D float array from the program's output: non-empty, numbers only (no bools, complex or NaN markers)."""
    value = reported_head(value)
    if not isinstance(value, list) or len(value) == 0:
        raise Invalid("%s must be a non-empty list of numbers" % name)
    if len(value) > max_len:
        raise Invalid("%s has %d values; at most %d are allowed" % (name, len(value), max_len))
    for v in value:
        if isinstance(v, list):
            raise Invalid("%s must be a 1-D sequence of numbers (got a nested list, e.g. a 2-D array)" % name)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise Invalid("%s must contain only real numbers (found %s)" % (name, "a non-finite value" if isinstance(v, dict) else type(v).__name__))
    try:
        a = np.asarray(value, dtype=np.float64)
    except OverflowError:
        raise Invalid("%s holds an integer too large for a float" % name)
    if not np.all(np.isfinite(a)):
        raise Invalid("%s must be finite" % name)
    return a


def autoconvolution(a):
    """a * a (full, length 2n-1): exact direct sum for short inputs, a float64 FFT for long ones."""
    n = len(a)
    if n <= 4096:
        return np.convolve(a, a)
    size = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(a, size)
    return np.fft.irfft(spectrum * spectrum, size)[: 2 * n - 1]


def scaled_to_unit_peak(a, peak):
    """a scaled by the power of two that brings its peak into [0.5, 1): exact, so every product and sum below is the
    published formula's own value scaled by a power of two (the ratios come out to the last bit as upstream computes
    them), while heights around 1e-161, whose products would underflow to a score of zero, are measured."""
    return np.ldexp(a, -int(np.frexp(peak)[1]))


def first_autocorrelation(a):
    """C1 = 2n * max(a*a) / (sum a)^2 for a non-negative step function with n steps on [-1/4, 1/4]."""
    if np.any(a < 0):
        raise Invalid("heights must be non-negative")
    peak = float(np.max(a))
    if peak <= 0:
        raise Invalid("heights must not all be zero")
    b = scaled_to_unit_peak(a, peak)
    total = float(np.sum(b))
    if total < 1e-9:
        raise Invalid("the function's integral is too small to measure")
    return 2 * len(b) * float(np.max(autoconvolution(b))) / total**2


def second_autocorrelation(a):
    """C2 = ||f*f||_2^2 / (||f*f||_1 ||f*f||_inf), with f*f piecewise linear on 2n+1 points over [-1/2, 1/2]."""
    if np.any(a < 0):
        raise Invalid("heights must be non-negative")
    peak = float(np.max(a))
    if peak <= 0:
        raise Invalid("heights must not all be zero")
    c = autoconvolution(scaled_to_unit_peak(a, peak))
    c = np.maximum(c, 0.0)  # FFT round-off only; a*a of a non-negative sequence is non-negative
    m = len(c)
    # As the published verifiers integrate (AlphaEvolve's notebook, OpenEvolve, TTT-Discover): interval widths from
    # np.diff(np.linspace(-1/2, 1/2, m + 2)), the terms added one after another (cumsum is that sequential sum).
    h = np.diff(np.linspace(-0.5, 0.5, m + 2))
    y = np.concatenate(([0.0], c, [0.0]))
    l2sq = float(np.cumsum(h / 3 * (y[:-1] ** 2 + y[:-1] * y[1:] + y[1:] ** 2))[-1])
    l1 = float(np.sum(np.abs(c))) / (m + 1)
    linf = float(np.max(np.abs(c)))
    if l1 <= 0 or linf <= 0:
        raise Invalid("the autoconvolution is zero")
    return l2sq / (l1 * linf)


def erdos_overlap(h, sum_tol=1e-3):
    """C5 for a step function h on [0, 2] with values in [0, 1] and integral 1 (rescaled exactly to 1)."""
    n = len(h)
    dx = 2.0 / n
    if np.any(h < 0) or np.any(h > 1):
        raise Invalid("h must take values in [0, 1]")
    total = np.sum(h)
    integral = float(total) * dx
    # OpenEvolve's np.isclose(integral, 1, atol=1e-3), whose default rtol=1e-5 widens the band to 1.00101.
    if not np.isclose(integral, 1.0, rtol=1e-5, atol=sum_tol):
        raise Invalid("the integral of h must be 1 (got %.6g)" % integral)
    if total != n / 2.0:  # rescaled as TTT-Discover and SimpleTES rescale (sum h = n/2), left alone when it is exact
        h = h * ((n / 2.0) / total)
        if np.any(h > 1):
            raise Invalid("h exceeds 1 once its integral is made exactly 1")
    overlap = np.correlate(h, 1.0 - h, mode="full") if n <= 4096 else _fft_correlate(h, 1.0 - h)
    return float(np.max(overlap)) * dx


def _fft_correlate(x, y):
    n = len(x)
    size = 1 << (2 * n - 1).bit_length()
    r = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(y[::-1], size), size)[: 2 * n - 1]
    return r


# ---- exact determinants ---------------------------------------------------------------------------------------

def exact_abs_det(rows):
    """|det M| of an integer matrix by Bareiss fraction-free elimination (exact, Python integers)."""
    m = [list(r) for r in rows]
    n = len(m)
    sign = 1
    prev = 1
    for k in range(n - 1):
        if m[k][k] == 0:
            swap = next((i for i in range(k + 1, n) if m[i][k] != 0), None)
            if swap is None:
                return 0
            m[k], m[swap] = m[swap], m[k]
            sign = -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                m[i][j] = (m[i][j] * m[k][k] - m[i][k] * m[k][j]) // prev
        prev = m[k][k]
    return abs(m[n - 1][n - 1])


def pm_one_matrix(value, n):
    """An n x n matrix whose every entry is exactly +1 or -1 (ints or floats equal to them)."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list) and len(value[0]) == n and isinstance(value[0][0], list):
        value = value[0]
    if not isinstance(value, list) or len(value) != n or any(not isinstance(r, list) or len(r) != n for r in value):
        raise Invalid("the matrix must be %d x %d" % (n, n))
    rows = []
    for r in value:
        row = []
        for v in r:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v not in (1, -1):
                raise Invalid("every entry must be exactly +1 or -1")
            row.append(int(v))
        rows.append(row)
    return rows


def ratio(numerator, denominator):
    return float(Fraction(numerator, denominator))


def evaluate_packing(program_path, n, best_known, timeout=50):
    """The circle-packing evaluation for n circles: run_packing() in an isolated process, then check and score."""
    try:
        out = run_program(program_path, "run_packing", timeout=timeout)
        if not isinstance(out, list) or len(out) < 2:
            raise Invalid("run_packing() must return (centers, radii, sum_of_radii)")
        centers = finite_array(out[0], "centers")
        radii = finite_array(out[1], "radii")
        check_packing(centers, radii, n)
    except (ProgramError, Invalid) as exc:
        return invalid(exc)
    except ValueError as exc:
        return invalid("centers and radii must be numeric arrays: %s" % exc)
    total = float(np.sum(radii))
    return {"combined_score": total, "sum_radii": total, "validity": 1.0, "ratio_to_best_known": total / best_known}
