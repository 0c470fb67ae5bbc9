"""A sufficient proof for cut sums of trees: how much the sum can move across the points a notion calls close.

Near a point p, a tree is constant unless one of its box bounds equals p_f on some feature
f; there it moves by at most J_t, the largest value difference between two of its boxes
whose closures meet. So near p the sum moves by at most the sum of J_t over the trees
with a bound at p, bounded per feature by the heaviest threshold value. Along a move of
one feature inside one gap between training values, a tree with one threshold value there
moves by at most J_t (it crosses from one box to a touching one) and by at most its value
range otherwise. Two classes apart needs a move of more than the smallest spacing g of
consecutive cut points; a bound <= g proves the notion. Written for the audit alone, from
the boxes it read: it does not call the models' certificates.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["sum_bound_proof"]


def _closure_jump(comp) -> float:
    """Largest |value difference| between two boxes of one component whose closures meet."""
    lo, up, v = comp.lower, comp.upper, comp.values[:, 0].astype(np.float64)
    best = 0.0
    for i in range(lo.shape[0]):
        touch = np.all((np.maximum(lo[i], lo) <= np.minimum(up[i], up)), axis=1)
        if touch.any():
            best = max(best, float(np.abs(v[touch] - v[i]).max()))
    return best


def _bounds_of(comp, f: int) -> NDArray[np.float64]:
    b = np.concatenate((comp.lower[:, f], comp.upper[:, f]))
    return np.unique(b[np.isfinite(b)])


def sum_bound_proof(reading, notion: str, values: list | None) -> bool:
    """True when the bounds prove no jump of two (``notion`` "pointwise" or "data")."""
    if reading.kind != "threshold" or reading.components[0].values.shape[1] != 1:
        return False
    theta = np.asarray(reading.theta, dtype=np.float64)
    if theta.shape[0] < 2:
        return True  # two classes: nothing is two apart
    g = float(np.diff(theta).min())
    if not reading.integer:  # float sums: keep clear of rounding in predict
        g -= 1e-9 * max(1.0, float(np.abs(theta).max()))
    comps = reading.components
    J = np.array([_closure_jump(c) for c in comps])
    rng = np.array([float(c.values.max() - c.values.min()) for c in comps])
    movable = np.flatnonzero(~reading.categorical)
    per_feature_weight, per_feature_count = [], []
    for f in movable:
        weight: dict = {}
        for t, c in enumerate(comps):
            for b in _bounds_of(c, f):
                weight.setdefault(b, []).append(t)
        per_feature_weight.append(max((J[ts].sum() for ts in weight.values()), default=0.0))
        per_feature_count.append(max((len(ts) for ts in weight.values()), default=0))
    n = int(sum(per_feature_count))
    pointwise = min(float(np.sort(J)[::-1][:n].sum()), float(sum(per_feature_weight)))
    if pointwise > g:
        return False
    if notion != "data":
        return True
    for f in movable:
        v = values[f] if values is not None else None
        if v is None:
            continue
        load: dict = {}
        for t, c in enumerate(comps):
            b = _bounds_of(c, f)
            if b.shape[0] == 0:
                continue
            gaps, n_in = np.unique(np.searchsorted(v, b, side="right"), return_counts=True)
            for k, count in zip(gaps.tolist(), n_in.tolist(), strict=True):
                load[k] = load.get(k, 0.0) + (J[t] if count == 1 else rng[t])
        if load and max(load.values()) > g:
            return False
    return True
