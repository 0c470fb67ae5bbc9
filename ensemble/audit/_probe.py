"""Fast refutation: next-value moves and exact line probes through the rows of the data.

For a row x and a feature f, the model is constant along f between consecutive thresholds
of its trees on f, so the classes met while x_f moves inside a segment are those at the
segment's ends, at every threshold inside and at the float just above each: one call of
``predict`` per segment, exact however thin a band is. A jump of two between a threshold
and the float above it is a pointwise witness; a span of two inside one gap between
consecutive training values is a witness at the data's resolution; a span of two between
points r_f apart is one at resolution r.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

__all__ = ["next_value_moves", "probe_lines"]


def next_value_moves(predict, X: NDArray, values: list, movable: NDArray, deadline: float) -> dict:
    """Move every row's feature to the next larger and the next smaller training value: the jumps of two."""
    moves, jumps, counts, witness = 0, 0, {}, None
    base = predict(X)
    for f in np.flatnonzero(movable):
        v = values[f]
        if v is None or v.shape[0] < 2 or time.perf_counter() > deadline:
            continue
        i = np.searchsorted(v, X[:, f])
        for step in (1, -1):
            j = i + step
            ok = (j >= 0) & (j < v.shape[0]) & (i < v.shape[0]) & (v[np.minimum(i, v.shape[0] - 1)] == X[:, f])
            if not ok.any():
                continue
            Y = X[ok].copy()
            Y[:, f] = v[j[ok]]
            moved = predict(Y)
            moves += int(ok.sum())
            diff = np.abs(moved - base[ok])
            bad = np.flatnonzero(diff >= 2)
            jumps += bad.shape[0]
            for k in bad:
                key = (int(min(moved[k], base[ok][k])), int(max(moved[k], base[ok][k])))
                counts[key] = counts.get(key, 0) + 1
            if bad.shape[0] and (witness is None or diff[bad].max() > witness[2]):
                k = bad[np.argmax(diff[bad])]
                witness = (X[ok][k], Y[k], int(diff[k]))
    return {"moves": moves, "jumps": jumps, "counts": counts, "witness": witness}


_LARGEST = float(np.finfo(np.float64).max)


def _finite(a: float, b: float) -> float:
    """``a + b`` kept finite: a probe beyond the data near the float limit stays a point predict reads."""
    with np.errstate(over="ignore"):
        return float(np.clip(a + b, -_LARGEST, _LARGEST))


def _segments(x_f: float, v: NDArray | None, r: float | None) -> list:
    if r is not None and r > 0:
        return [(_finite(x_f, -r), _finite(x_f, r))]
    if v is None:
        # Near x only, wide enough to stay a segment at any magnitude (x +- 1 is x itself at 1e308).
        width = max(1.0, abs(x_f) * 2.0**-40)
        return [(_finite(x_f, -width), _finite(x_f, width))]
    if v.shape[0] == 0:  # no value kept on the feature: the whole line is one gap
        return [(-_LARGEST, _LARGEST)]
    i = int(np.searchsorted(v, x_f))
    span = max(1.0, min(_LARGEST, 2.0 * float(v[-1] * 0.5 - v[0] * 0.5)))
    out = []
    lo = v[i - 1] if i > 0 else _finite(v[0], -span)
    hi = v[i] if i < v.shape[0] else _finite(v[-1], span)
    if i < v.shape[0] and v[i] == x_f:
        hi = v[i + 1] if i + 1 < v.shape[0] else _finite(v[-1], span)
        out.append((lo, x_f))
    out.append((lo if not out else x_f, hi))
    return out


def _profile_worst(s: NDArray, c: NDArray, how: str, r: float | None) -> tuple[int, int, int]:
    """Largest class difference along one sorted profile, for the notion, with the two indices reaching it."""
    if how == "contact":
        d = np.abs(np.diff(c))
        k = int(np.argmax(d))
        return int(d[k]), k, k + 1
    if how == "gap":
        return int(c.max() - c.min()), int(np.argmin(c)), int(np.argmax(c))
    best, bi, bj = 0, 0, 0
    for i in range(s.shape[0]):
        j_end = np.searchsorted(s, s[i] + r, side="right")
        seg = c[i:j_end]
        d = np.abs(seg - c[i])
        if d.size and d.max() > best:
            best, bi, bj = int(d.max()), i, i + int(np.argmax(d))
    return best, bi, bj


def probe_lines(predict, rows: NDArray, thresholds: list, values: list, movable: NDArray, notion: str,
                r: NDArray | None, deadline: float, target: int = 2, contact: bool = True) -> dict:
    """Exact profiles along every feature through every row, until the deadline; the largest jump found.

    The profiles of one feature through all rows go to ``predict`` in one call. ``contact=False``
    when ``thresholds`` are only sample points (the model's own are unknown): neighbouring profile
    points are then no pointwise witness.
    """
    best, witness, lines = 0, None, 0
    hows = (["contact"] if contact else []) + (["gap"] if notion == "data" else ["window"]
                                                if notion == "resolution" else [])
    for f in np.flatnonzero(movable):
        if time.perf_counter() > deadline:
            break
        t = thresholds[f]
        rf = None if r is None else float(r[f])
        profiles, points = [], []
        for x in rows:
            for lo, hi in _segments(float(x[f]), values[f], rf if notion == "resolution" else None):
                inner = t[(t >= lo) & (t < hi)]
                s = np.unique(np.concatenate(([lo, hi], inner, np.nextafter(inner, np.inf))))
                P = np.repeat(x[None, :], s.shape[0], axis=0)
                P[:, f] = s
                profiles.append(s)
                points.append(P)
        if not points:
            continue
        classes = predict(np.vstack(points))
        at = 0
        for s, P in zip(profiles, points, strict=True):
            c = classes[at:at + s.shape[0]]
            at += s.shape[0]
            lines += 1
            for how in hows:
                jump, i, j = _profile_worst(s, c, how, rf)
                if jump > best:
                    best, witness = jump, (P[i], P[j], jump, "pointwise" if how == "contact" else notion)
    return {"jump": best, "witness": witness, "lines": lines}
