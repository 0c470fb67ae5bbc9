"""Exact audit in low dimension: the grid of every threshold of every tree, labelled by ``predict``.

Along feature f the thresholds t_0 < ... < t_{m-1} of all the model's trees cut the line into
cells ``(t_{c-1}, t_c]`` (c = 0..m); every tree, hence every model that is a function of
its trees' leaves, is constant on each product of such cells. Labelling one point of each
cell with the model's own ``predict`` gives exactly the function it computes, and:

* pointwise: two cells whose closures meet differ by at most one index on every feature;
* data's resolution: along f, the cells a move inside one gap [v_{k-1}, v_k] meets are
  those between the thresholds of that gap (a move crosses t when v_{k-1} <= t < v_k);
* resolution r: cells c < c' along f hold points r-close when t_{c'-1} < t_c + r_f;
* monotone: along f, a fall is a larger class in a lower cell.

The grid is the fused partition of all the trees refined to a product, which keeps every
check a shift of one array; it is used while it has at most ``max_cells`` cells.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import NDArray

__all__ = ["cell_points", "grid_audit", "grid_size", "on_mesh", "pair_points"]


def cell_points(t: NDArray[np.float64], values: NDArray | None = None) -> NDArray[np.float64]:
    """A point of each cell ``(t_{c-1}, t_c]`` of one axis: a training value inside if any, else its upper end."""
    m = t.shape[0]
    out = np.empty(m + 1)
    if m == 0:
        out[0] = 0.0 if values is None or values.shape[0] == 0 else values[0]
        return out
    out[:m] = t
    with np.errstate(over="ignore"):  # near the float limit the point above stays finite
        out[m] = min(t[-1] + max(1.0, abs(t[-1])), float(np.finfo(np.float64).max))
    if out[m] <= t[-1]:  # huge magnitudes
        out[m] = np.nextafter(t[-1], np.inf)
    if values is not None and values.shape[0]:
        # The smallest training value of each cell, when it has one: witnesses then read as data rows.
        c = np.searchsorted(t, values, side="left")
        first = np.unique(c, return_index=True)
        out[first[0]] = values[first[1]]
    return out


def pair_points(thresholds: list, values: list, ci: NDArray, cj: NDArray, how: str, r: NDArray | None = None,
                gap: tuple | None = None) -> tuple[NDArray, NDArray]:
    """Two points, one in cell ``ci`` and one in cell ``cj``, as close as the notion ``how`` asks.

    ``how``: "contact" (cells at most one apart: the points are one float apart across each
    threshold between), "resolution" (r-close), "gap" (one feature moves, inside the gap
    ``(f, lo, hi)`` given), "order" (one feature moves, any distance).
    """
    d = len(thresholds)
    x, y = np.empty(d), np.empty(d)
    for f in range(d):
        t = thresholds[f]
        reps = cell_points(t, values[f])
        a, b = int(ci[f]), int(cj[f])
        if a == b:
            x[f] = y[f] = reps[a]
            continue
        lo_cell, hi_cell = min(a, b), max(a, b)
        if how == "gap" and gap is not None and gap[0] == f:
            lo_v, hi_v = gap[1], gap[2]
            p = lo_v if np.isfinite(lo_v) and (lo_cell == 0 or lo_v > t[lo_cell - 1]) else t[lo_cell]
            q = hi_v if np.isfinite(hi_v) and (hi_cell == t.shape[0] or hi_v <= t[hi_cell]) else (
                t[hi_cell] if hi_cell < t.shape[0] else reps[hi_cell])
        elif how == "order":
            p, q = reps[lo_cell], reps[hi_cell]
        else:
            p = t[lo_cell]
            q = np.nextafter(p, np.inf)
            if how == "resolution" and hi_cell > lo_cell + 1:
                q = p + r[f]
                if hi_cell < t.shape[0]:
                    q = min(q, t[hi_cell])
        x[f], y[f] = (p, q) if a < b else (q, p)
    return x, y


def grid_size(thresholds: list) -> float:
    return float(np.prod([t.shape[0] + 1.0 for t in thresholds]))


def on_mesh(axes: list, predict, chunk: int = 200_000) -> NDArray[np.int64]:
    """``predict`` at every point of the product of ``axes``, the mesh made chunk by chunk (never whole in memory)."""
    shape = tuple(a.shape[0] for a in axes)
    size = int(np.prod(shape))
    out = np.empty(size, dtype=np.int64)
    for i in range(0, size, chunk):
        idx = np.unravel_index(np.arange(i, min(i + chunk, size)), shape)
        out[i:i + chunk] = predict(np.column_stack([a[k] for a, k in zip(axes, idx, strict=True)]))
    return out.reshape(shape)


def _offsets(d: int, movable: NDArray[np.bool_]):
    """Half of the non-zero moves in {-1, 0, 1}^d (the other half is their reverse), fixed features kept."""
    for o in itertools.product((-1, 0, 1), repeat=d):
        o = np.array(o)
        nz = np.flatnonzero(o)
        if nz.shape[0] and o[nz[0]] == 1 and not np.any(o[~movable] != 0):
            yield o


def _shifted(C: NDArray, o: NDArray) -> tuple[tuple, tuple]:
    src, dst = [], []
    for k in o:
        src.append(slice(0, -1) if k == 1 else slice(1, None) if k == -1 else slice(None))
        dst.append(slice(1, None) if k == 1 else slice(0, -1) if k == -1 else slice(None))
    return tuple(src), tuple(dst)


def _count(counts: dict, a: NDArray, b: NDArray) -> None:
    bad = np.abs(a - b) >= 2
    if bad.any():
        pairs = np.stack((np.minimum(a[bad], b[bad]), np.maximum(a[bad], b[bad])), axis=1)
        for (p, q), n in zip(*np.unique(pairs, axis=0, return_counts=True), strict=True):
            counts[(int(p), int(q))] = counts.get((int(p), int(q)), 0) + int(n)


def _pointwise(C, movable):
    best, where, counts = 0, None, {}
    for o in _offsets(C.ndim, movable):
        src, dst = _shifted(C, o)
        a, b = C[src], C[dst]
        _count(counts, a, b)
        diff = np.abs(a - b)
        if diff.size and diff.max() > best:
            i = np.unravel_index(np.argmax(diff), diff.shape)
            ci = np.array([ix + (1 if s.start == 1 else 0) for ix, s in zip(i, src, strict=True)])
            best, where = int(diff.max()), (ci, ci + o, "contact", None)
    return best, where, counts


def _gap_moves(C, reading, grid_values, movable):
    """Largest class span of a move inside one gap, along every feature with training values."""
    best, where, counts = 0, None, {}
    for f in np.flatnonzero(movable):
        v, t = grid_values[f], reading.thresholds[f]
        if v is None or t.shape[0] == 0:
            continue
        gaps = np.searchsorted(v, t, side="right")
        for k in np.unique(gaps):
            js = np.flatnonzero(gaps == k)
            block = np.take(C, np.arange(js[0], js[-1] + 2), axis=f)
            hi, lo = block.max(axis=f), block.min(axis=f)
            _count(counts, hi, lo)
            span = hi - lo
            if span.max() > best:
                i = np.unravel_index(np.argmax(span), span.shape)
                line = tuple(list(i[:f]) + [slice(None)] + list(i[f:]))
                prof = block[line]
                ci = np.insert(np.array(i), f, js[0] + int(np.argmin(prof)))
                cj = np.insert(np.array(i), f, js[0] + int(np.argmax(prof)))
                ends = (v[k - 1] if k > 0 else -np.inf, v[k] if k < v.shape[0] else np.inf)
                best, where = int(span.max()), (ci, cj, "gap", (int(f), *ends))
    return best, where, counts


def _window_extreme(C, reading, r, movable, op):
    """Max (or min) of C over the cells r-close to every cell, one axis at a time (a product of windows)."""
    out = C
    for f in range(C.ndim):
        t = reading.thresholds[f]
        m = t.shape[0]
        if m == 0 or not movable[f]:
            continue
        upper_end = np.concatenate((t, [np.inf]))
        lower_end = np.concatenate(([-np.inf], t))
        # cells c' > c are r-close to c when t_{c'-1} < t_c + r (and c' = c + 1 always: a shared end)
        hi = np.maximum(np.searchsorted(lower_end, upper_end + r[f], side="left") - 1, np.arange(m + 1) + 1)
        lo = np.minimum(np.searchsorted(upper_end, lower_end - r[f], side="right"), np.arange(m + 1) - 1)
        hi, lo = np.minimum(hi, m), np.maximum(lo, 0)
        slabs = [op(np.take(out, np.arange(lo[c], hi[c] + 1), axis=f), axis=f) for c in range(m + 1)]
        out = np.stack(slabs, axis=f)
    return out


def _resolution(C, reading, r, movable):
    M = _window_extreme(C, reading, r, movable, np.max)
    jump = M - C
    best = int(jump.max())
    counts = {}
    _count(counts, M, C)
    if best < 2:
        return best, None, counts
    ci = np.array(np.unravel_index(np.argmax(jump), C.shape))
    cj = _partner(C, reading, r, movable, ci, int(M[tuple(ci)]))
    return best, (ci, cj, "resolution", None), counts


def _partner(C, reading, r, movable, ci, target):
    """A cell r-close to ``ci`` holding class ``target``."""
    ranges = []
    for f in range(C.ndim):
        t = reading.thresholds[f]
        m = t.shape[0]
        c = int(ci[f])
        if m == 0 or not movable[f]:
            ranges.append(np.array([c]))
            continue
        upper_c = t[c] if c < m else np.inf
        lower_c = t[c - 1] if c > 0 else -np.inf
        lows = np.concatenate(([-np.inf], t))
        ups = np.concatenate((t, [np.inf]))
        ok = (lows < upper_c + r[f]) & (ups > lower_c - r[f])
        ok[max(c - 1, 0):c + 2] = True
        ranges.append(np.flatnonzero(ok))
    sub = C[np.ix_(*ranges)]
    k = np.unravel_index(np.argmax(sub == target), sub.shape)
    return np.array([ranges[f][k[f]] for f in range(C.ndim)])


def _falls(C, cst):
    """Worst fall along constrained features: a larger class at a lower value of an increasing feature."""
    best, where = 0, None
    for f in np.flatnonzero(cst):
        A = C if cst[f] > 0 else np.flip(C, axis=f)
        run = np.maximum.accumulate(A, axis=f)
        fall = run - A
        if fall.max() > best:
            i = np.array(np.unravel_index(np.argmax(fall), fall.shape))
            line = tuple(list(i[:f]) + [slice(None)] + list(i[f + 1:]))
            prof = A[line]
            j = i.copy()
            j[f] = int(np.argmax(prof[: i[f] + 1]))
            if cst[f] < 0:
                n = C.shape[f] - 1
                i[f], j[f] = n - i[f], n - j[f]
            best, where = int(fall.max()), (j, i, "order", None)
    return best, where


def grid_audit(reading, notion: str, r: NDArray | None, grid_values: list, cst: NDArray | None, predict,
               grid_labels=None) -> dict:
    """Exact largest jump (and monotone fall) on the threshold grid, with the two cells reaching them.

    The grid's classes are ``predict`` at one point of every cell, or ``grid_labels(thresholds,
    axes)`` when given (a reader of the whole grid at once; ``axes``: the cells' points).
    """
    axes = [cell_points(t, v) for t, v in zip(reading.thresholds, grid_values, strict=True)]
    C = (on_mesh(axes, predict) if grid_labels is None else grid_labels(reading.thresholds, axes)).astype(np.int64)
    movable = ~reading.categorical
    best, where, counts = _pointwise(C, movable)
    if notion == "data":
        b2, w2, c2 = _gap_moves(C, reading, grid_values, movable)
        for key, n in c2.items():
            counts[key] = counts.get(key, 0) + n
        if b2 > best:
            best, where = b2, w2
    elif notion == "resolution":
        b2, w2, c2 = _resolution(C, reading, r, movable)
        counts = c2 if b2 >= best else counts
        if b2 > best:
            best, where = b2, w2
    out = {"jump": best, "where": where, "counts": counts, "n_cells": int(C.size)}
    if cst is not None:
        out["fall"], out["fall_where"] = _falls(C, cst)
    return out
