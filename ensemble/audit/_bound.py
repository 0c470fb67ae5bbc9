"""A sufficient proof for cut sums of trees: how much the sum can move across the points a notion calls close.

Near a point p, a tree is constant unless one of its box bounds equals p_f on some feature
f; there it moves by at most J_t, the largest value difference between two of its boxes
whose closures meet. So near p the sum moves by at most the sum of J_t over the trees
with a bound at p, bounded per feature by the heaviest threshold value. Along a move of
one feature inside one gap between training values, a tree with one threshold value there
moves by at most J_t (it crosses from one box to a touching one) and by at most its value
range otherwise; and the thresholds crossed in the gap along one line are all crossed at
face pairs whose boxes (on the other features) hold that line: if at most N(p) crossings
(a tree and one of its threshold values in the gap) have a face pair holding any one line
through pair p's box (counted as those with a pair whose box meets p's, or, per axis, the
most whose pairs meeting p's box hold one same coordinate of it), the n changes along a
line are each at most max_q step_q N(q) / n, the n of them at most max_q step_q N(q)
(docs/design.md section 13, Theorem 13.2). Two classes apart needs a
move of more than the smallest spacing g of consecutive cut points; a bound <= g proves
the notion. Written for the audit alone, from
the boxes it read: it does not call the models' certificates.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from ensemble.base._kernels import compiled, sort_order
from relabel._numba import float_array, index_array

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


def _face_pairs(comp, f: int) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Every face pair of one component across f: its threshold, its step (upper box minus lower),
    and the closed intersection of the two boxes on the other features (lower, upper).

    A face at b: box a ends at b on f, box c starts there, and on every other feature their
    intervals overlap with positive length (a line parallel to f passes through both).
    """
    lo, up, v = comp.lower, comp.upper, comp.values[:, 0].astype(np.float64)
    a, c = np.nonzero((up[:, f][:, None] == lo[:, f][None, :]) & np.isfinite(up[:, f])[:, None])
    others = np.ones(lo.shape[1], dtype=bool)
    others[f] = False
    low = np.maximum(lo[a][:, others], lo[c][:, others])
    high = np.minimum(up[a][:, others], up[c][:, others])
    ok = np.all(low < high, axis=1)
    return up[a[ok], f], v[c[ok]] - v[a[ok]], low[ok], high[ok]


def _face_steps(pairs: tuple) -> tuple[NDArray, NDArray, NDArray]:
    """Per threshold value b of one component on f: the largest rise and fall across its faces at b
    (from its :func:`_face_pairs`)."""
    at, step = pairs[0], pairs[1]
    b, inv = np.unique(at, return_inverse=True)
    rise, fall = np.zeros(b.shape[0]), np.zeros(b.shape[0])
    np.maximum.at(rise, inv, np.maximum(step, 0.0))
    np.maximum.at(fall, inv, np.maximum(-step, 0.0))
    return b, rise, fall


@compiled
def _box_misses(lo_a, hi_a, lo_b, hi_b):
    for j in range(lo_a.shape[0]):
        if lo_a[j] > hi_b[j] or lo_b[j] > hi_a[j]:
            return True
    return False


@compiled
def _tree_meets(lp, hp, first, last, outer, outer_low, outer_high, inner, inner_low, inner_high,
                low, high):
    """Whether a pair of outer boxes first:last (one tree's) meets the closed box lp..hp."""
    for o in range(first, last):
        if _box_misses(outer_low[o], outer_high[o], lp, hp):
            continue
        for c in range(outer[o], outer[o + 1]):
            if _box_misses(inner_low[c], inner_high[c], lp, hp):
                continue
            for q in range(inner[c], inner[c + 1]):
                if not _box_misses(low[q], high[q], lp, hp):
                    return True
    return False


@compiled
def _any_crowded(queries, step, g, low, high, start, outer, outer_low, outer_high,
                 inner, inner_low, inner_high):
    """Whether some pair p of ``queries`` has step_p N(p) > g.

    N(p) is the smaller of the crossings with a pair meeting p's box and of
    :func:`_deepest_line`'s count, both at least the crossings along one line through p's
    box. The pairs are grouped in two levels of boxes: crossing t owns outer boxes
    start[t]:start[t+1], outer box o owns inner boxes outer[o]:outer[o+1], inner box c owns
    pairs inner[c]:inner[c+1]; each box bounds what it owns, and a box missing p's is
    skipped whole. The first count of p stops as soon as it passes g / step_p; only then is
    the second taken.
    """
    for i in range(queries.shape[0]):
        p = queries[i]
        count = 0
        for t in range(start.shape[0] - 1):
            if _tree_meets(low[p], high[p], start[t], start[t + 1], outer, outer_low, outer_high,
                           inner, inner_low, inner_high, low, high):
                count += 1
                if step[p] * count > g:
                    break
        if step[p] * count > g and step[p] * _deepest_line(p, low, high, start, outer, inner) > g:
            return True
    return False


@compiled
def _deepest_line(p, low, high, start, outer, inner):
    """At least the crossings along any one line through pair p's box: per axis, the most crossings with a pair
    meeting p's box and holding one same coordinate of it there, the fewest over the axes.

    A crossing along a line in p's box has a pair holding the line: that pair meets p's box
    and holds the line's coordinate on every axis. Per axis, each crossing's intervals (cut
    to p's) are merged, and the most merged intervals holding one point is counted.
    """
    n_pairs = inner[inner.shape[0] - 1]
    owner = np.empty(n_pairs, dtype=np.int64)
    for t in range(start.shape[0] - 1):
        for o in range(start[t], start[t + 1]):
            for q in range(inner[outer[o]], inner[outer[o + 1]]):
                owner[q] = t
    members = np.empty(n_pairs, dtype=np.int64)
    m = 0
    for q in range(n_pairs):
        if not _box_misses(low[q], high[q], low[p], high[p]):
            members[m] = q
            m += 1
    members = members[:m]  # in crossing order, as the pairs are
    best = m
    merged_lo = np.empty(m)
    merged_hi = np.empty(m)
    for axis in range(low.shape[1]):
        k = 0
        first = 0
        while first < m:
            last = first
            while last < m and owner[members[last]] == owner[members[first]]:
                last += 1
            ends_lo = np.maximum(low[members[first:last], axis], low[p, axis])
            ends_hi = np.minimum(high[members[first:last], axis], high[p, axis])
            order = sort_order(ends_lo)
            cur_lo, cur_hi = ends_lo[order[0]], ends_hi[order[0]]
            for j in order[1:]:
                if ends_lo[j] <= cur_hi:
                    cur_hi = max(cur_hi, ends_hi[j])
                else:
                    merged_lo[k], merged_hi[k] = cur_lo, cur_hi
                    k += 1
                    cur_lo, cur_hi = ends_lo[j], ends_hi[j]
            merged_lo[k], merged_hi[k] = cur_lo, cur_hi
            k += 1
            first = last
        starts = merged_lo[:k][sort_order(merged_lo[:k])]
        ends = merged_hi[:k][sort_order(merged_hi[:k])]
        deepest = 0
        for j in range(k):  # the depth is highest at some interval's start
            deepest = max(deepest, j + 1 - np.searchsorted(ends, starts[j], side="left"))
        best = min(best, deepest)
    return best


#: Members per box at both levels of :func:`_crowded_steps`' boxes. A tree lists its faces in
#: leaf order (node ids: depth first in scikit-learn's and this library's trees), so consecutive
#: pairs mostly lie in one small part of the space; another order is slower, never wrong.
_CHUNK = 16


def _runs(n: int) -> NDArray[np.int64]:
    """Ends of consecutive runs of _CHUNK out of n (the last one shorter)."""
    return np.minimum(np.arange(_CHUNK, n + _CHUNK, _CHUNK), n)


def _crowded_steps(pairs: list, gaps_of: list, k: int, g: float, rises: bool, falls: bool,
                   deadline: float = float("inf")) -> bool:
    """Whether max over face pairs p in gap k of rise_p N(p) (if ``rises``) and of fall_p N(p) (if
    ``falls``) is at most g (N(p): at least the crossings, a tree and one of its threshold values in
    the gap, with a face pair there holding one line through p's box; :func:`_any_crowded`).

    Pairs are taken largest step first, and only those whose step times the number of trees
    with a pair in the gap passes g need N(p). False when ``deadline`` passes first.
    """
    step, low, high, start, outer, inner = [], [], [], [0], [0], [0]
    for t, (at, st, lo, up) in enumerate(pairs):
        in_gap = gaps_of[t] == k
        # One block per crossing, a threshold value of the tree: a line through the gap crosses
        # each once, so a tree with two values there can change twice along it.
        for value in np.unique(at[in_gap]):
            here = in_gap & (at == value)
            step.append(np.maximum(st[here], 0.0) * rises + np.maximum(-st[here], 0.0) * falls)
            low.append(lo[here])
            high.append(up[here])
            n = int(here.sum())
            n_inner = -(-n // _CHUNK)
            outer.extend(len(inner) - 1 + _runs(n_inner))
            inner.extend(inner[-1] + _runs(n))
            start.append(len(outer) - 1)
    if len(start) == 1:
        return True
    n_crossings = len(start) - 1
    step = float_array(np.concatenate(step))
    low, high = np.concatenate(low), np.concatenate(high)
    # Test first the axes where boxes are bounded: they tell boxes apart soonest.
    axes = np.argsort(np.isinf(low).sum(axis=0) + np.isinf(high).sum(axis=0), kind="stable")
    low, high = float_array(low[:, axes]), float_array(high[:, axes])
    inner, outer, start = index_array(inner), index_array(outer), index_array(start)
    inner_low = float_array(np.minimum.reduceat(low, inner[:-1], axis=0))
    inner_high = float_array(np.maximum.reduceat(high, inner[:-1], axis=0))
    outer_low = float_array(np.minimum.reduceat(inner_low, outer[:-1], axis=0))
    outer_high = float_array(np.maximum.reduceat(inner_high, outer[:-1], axis=0))
    order = np.argsort(-step, kind="stable")
    # Only pairs whose step could reach past g with every crossing counted need N(p).
    order = index_array(order[step[order] * n_crossings > g])
    for s in range(0, order.shape[0], 1024):  # blocks between looks at the clock
        if time.perf_counter() > deadline:
            return False
        if _any_crowded(order[s:s + 1024], step, g, low, high, start, outer, outer_low,
                        outer_high, inner, inner_low, inner_high):
            return False
    return True


def _bounds_of(comp, f: int) -> NDArray[np.float64]:
    b = np.concatenate((comp.lower[:, f], comp.upper[:, f]))
    return np.unique(b[np.isfinite(b)])


def sum_bound_proof(reading, notion: str, values: list | None, deadline: float = float("inf")) -> bool:
    """True when the bounds prove no jump of two (``notion`` "pointwise" or "data").

    False (not proved) when ``deadline``, a ``time.perf_counter()`` value, passes first.
    """
    if reading.kind != "threshold" or reading.components[0].values.shape[1] != 1:
        return False
    theta = np.asarray(reading.theta, dtype=np.float64)
    if theta.shape[0] < 2:
        return True  # two classes: nothing is two apart
    g = float(np.diff(theta).min())
    if not reading.integer:  # float sums: keep clear of rounding in predict
        g -= 1e-9 * max(1.0, float(np.abs(theta).max()))
    comps = reading.components
    J = []
    for c in comps:
        if time.perf_counter() > deadline:
            return False
        J.append(_closure_jump(c))
    J = np.array(J)
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
        if time.perf_counter() > deadline:
            return False
        up_load: dict = {}
        down_load: dict = {}
        pairs = [_face_pairs(c, f) for c in comps]
        for t in range(len(comps)):
            b, rise, fall = _face_steps(pairs[t])
            if b.shape[0] == 0:
                continue
            # A move inside one gap crosses each of the tree's thresholds there once, in one direction.
            gaps = np.searchsorted(v, b, side="right")
            for k in np.unique(gaps).tolist():
                here = gaps == k
                up_load[k] = up_load.get(k, 0.0) + min(rng[t], float(rise[here].sum()))
                down_load[k] = down_load.get(k, 0.0) + min(rng[t], float(fall[here].sum()))
        over = [k for k in up_load if max(up_load[k], down_load[k]) > g]
        if not over:
            continue
        gaps_of = [np.searchsorted(v, p[0], side="right") for p in pairs]
        for k in over:  # the rises, the falls or both need the second bound
            if not _crowded_steps(pairs, gaps_of, k, g, up_load[k] > g, down_load[k] > g, deadline):
                return False
    return True
