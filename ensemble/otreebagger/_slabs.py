"""Slab groups: OTreeBagger's voters with ``thresholds="slab"`` (docs/design.md section 5, "Slabs").

A slab group's trees put one place in each gap of the group's values, so its fused
partition P has aligned faces. Every threshold t of a feature gets a slab (t, t'],
t' = nextafter(t, +inf): one float wide, no training value inside. P is relabelled with
its face contacts held to one class and its other closure contacts (edges and corners)
to two, and the group predicts P's label except at a point whose feature f equals the
slab top t' of a threshold of f: there it predicts floor((min + max) / 2) of P's labels
at the corners of the point's slab coordinates (each set to t or to t'). Theorem 5.2 of
the design document: that function is consistent, pointwise and at the data's
resolution, when every threshold has its slab inside its gap and distinct thresholds lie
in distinct gaps. The relabelling holds the corners to two classes exactly, with one
helper region of zero cost per corner a labelling breaks by three or more, added round
by round (a labelling optimal with some of them that breaks none of the others is
optimal with all).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import relabel
from ensemble.certificates._thresholds import thresholds_of

__all__ = ["MAX_SLAB_FEATURES", "check_slab_group", "relabel_slabs", "shifted_trees", "slab_labels", "slab_tops"]

#: A point on s slab tops reads P at 2^s corners: groups splitting more features keep no slabs.
MAX_SLAB_FEATURES = 16


def _thresholds(trees: list, n_features: int) -> list[NDArray[np.float64]]:
    """Per feature, the sorted distinct thresholds of the group's trees."""
    feature, threshold, _ = thresholds_of(trees)
    # One sort of (feature, threshold) pairs for all features (a unique per feature cost more on 54 one-hot columns).
    pairs = np.unique(np.column_stack([feature.astype(np.float64), threshold.astype(np.float64)]), axis=0)
    bounds = np.searchsorted(pairs[:, 0], np.arange(n_features + 1), side="left")
    return [pairs[bounds[f]:bounds[f + 1], 1] for f in range(n_features)]


def slab_tops(trees: list, n_features: int, grid: relabel.DataGrid | None,
              categorical: NDArray[np.bool_] | None) -> tuple | None:
    """Per feature, the slab tops t' = nextafter(t) of the trees' thresholds, or None where slabs cannot be placed.

    Categorical features get none (moving to another category is no small move). None
    when more than :data:`MAX_SLAB_FEATURES` other features are split, or when some slab
    has no room: t' must lie below the next threshold of its feature and, with a ``grid``
    (the data's resolution), in the gap of t, and distinct thresholds must lie in
    distinct gaps (a move inside one gap then crosses one threshold and its slab at most).
    """
    per_feature = _thresholds(trees, n_features)
    if categorical is not None:
        per_feature = [t[:0] if categorical[f] else t for f, t in enumerate(per_feature)]
    if sum(t.shape[0] > 0 for t in per_feature) > MAX_SLAB_FEATURES:
        return None
    tops = []
    for f, t in enumerate(per_feature):
        if t.shape[0] == 0:
            tops.append(t)
            continue
        top = np.nextafter(t, np.inf)
        if not np.all(np.isfinite(top)) or np.any(top[:-1] >= t[1:]):
            return None
        if grid is not None and grid.values[f] is not None:
            gap, top_gap = grid.threshold_gaps(f, t), grid.threshold_gaps(f, top)
            if np.any(gap[1:] == gap[:-1]) or np.any(top_gap != gap):
                return None
        tops.append(top)
    return tuple(tops)


def relabel_slabs(partition, counts: NDArray[np.float64], prior: NDArray[np.float64] | None, job,
                  categorical: NDArray[np.bool_] | None, solve):
    """P's labels: face contacts one class apart, other closure contacts two apart (exactly).

    ``solve(problem, start)`` solves one problem from labels ``start`` (or None) and returns
    ``(result, the problem's pairs)``. Returns ``(labels, held, result, problem)``: the labels
    of P's regions, the region pairs held (face contacts, then the corners given a helper),
    the last solver result and the problem of P without helpers.
    """
    faces, _ = relabel.adjacency_edges(partition, contact="face", max_edges=job.max_edges,
                                       categorical_features=categorical)
    n, k = counts.shape
    base = problem = relabel.ConsistencyProblem.from_counts(counts, faces, C1=job.C1, C2=job.C2, prior=prior)
    held_wide = np.empty((0, 2), np.intp)
    labels = None
    while True:
        result, _ = solve(problem, labels)
        labels = np.asarray(result.labels, dtype=np.int64)
        # Without a grid or a resolution, a closure contact is a face exactly when the adjacency says so.
        jumps = relabel.adjacency_edges(partition, contact="closure", categorical_features=categorical,
                                        jumps_of=labels[:n])
        if jumps.is_face.any():
            raise RuntimeError("a face contact of a slab group broke its labels: the solver's constraints were not met")
        broken = jumps.edges[np.abs(labels[jumps.edges[:, 0]] - labels[jumps.edges[:, 1]]) >= 3]
        if broken.shape[0] == 0:
            break
        # One helper region per broken corner, of zero cost, joined to both ends by unpenalised
        # pairs: the two ends are then at most two apart, exactly.
        held_wide = np.concatenate([held_wide, broken])
        helpers = n + np.arange(held_wide.shape[0])
        moves = np.concatenate([np.column_stack([held_wide[:, 0], helpers]),
                                np.column_stack([helpers, held_wide[:, 1]])])
        zeros = np.zeros((held_wide.shape[0], k))
        # P's own penalties (their defaults depend on the number of regions, which helpers must not change).
        problem = relabel.ConsistencyProblem.from_counts(
            np.vstack([counts, zeros]), faces, C1=base.C1, C2=base.C2, moves=moves,
            prior=None if prior is None else np.vstack([prior, zeros]))
        labels = np.concatenate([labels[:n], (labels[held_wide[:, 0]] + labels[held_wide[:, 1]]) // 2])
    return labels[:n].astype(np.intp), np.concatenate([faces, held_wide]), result, base


def slab_labels(tops: tuple, X: NDArray[np.float64], labels: NDArray[np.intp], label_of) -> NDArray[np.intp]:
    """The group's classes on rows ``X`` given P's classes ``labels`` there: the rows on slab tops read their corners.

    ``label_of(Z)``: P's class of every row of Z. A row whose feature f equals a slab top
    t' of f lies in the slab (t, t']; its class is floor((min + max) / 2) of P's classes
    at the points that set each such feature to t (below the threshold) or keep t' (above).

    Examples
    --------
    One threshold at 0.5: its slab is the float above it, where the class is the
    midpoint of the classes on either side.

    >>> import numpy as np
    >>> tops = (np.nextafter(np.array([0.5]), np.inf),)
    >>> label_of = lambda Z: np.where(Z[:, 0] <= 0.5, 0, 2)
    >>> X = np.array([[0.25], [tops[0][0]], [0.75]])
    >>> slab_labels(tops, X, label_of(X), label_of).tolist()
    [0, 1, 2]
    """
    hit = np.zeros(X.shape, dtype=bool)
    for f, top in enumerate(tops):
        if top.shape[0]:
            hit[:, f] = np.isin(X[:, f], top)
    count = hit.sum(axis=1)
    if not count.any():
        return labels
    out = labels.copy()
    # Rows on as many slab tops at once share one batch of corners: 2^s a row.
    for s in np.unique(count[count > 0]):
        rows = np.flatnonzero(count == s)
        on = np.nonzero(hit[rows])[1].reshape(rows.shape[0], s)
        above = X[rows[:, None], on]
        below = np.nextafter(above, -np.inf)
        choice = ((np.arange(1 << s)[:, None] >> np.arange(s)) & 1).astype(bool)
        corners = np.repeat(X[rows][:, None, :], 1 << s, axis=1)
        for j in range(s):
            corners[np.arange(rows.shape[0])[:, None], np.arange(1 << s)[None, :], on[:, j:j + 1]] = np.where(
                choice[None, :, j], above[:, j:j + 1], below[:, j:j + 1])
        read = np.asarray(label_of(corners.reshape(-1, X.shape[1]))).reshape(rows.shape[0], 1 << s)
        out[rows] = (read.min(axis=1) + read.max(axis=1)) // 2
    return out


def slab_grid_labels(tops: tuple, thresholds: list, axes: list, labels: NDArray[np.int64]) -> NDArray[np.int64]:
    """The group's classes on a grid, from P's classes ``labels`` there: :func:`slab_labels` a feature at a time.

    The grid is the product of ``axes``, a point of each cell ``(t_{c-1}, t_c]`` of
    ``thresholds`` (per feature), which must hold P's thresholds and their slab tops:
    the cell of a slab top t' is {t'} and its point is t'. A grid point on slab tops
    reads floor((min + max) / 2) of P's classes at its corners (Lemma 5.4). The corners
    of several slab features are the product of each feature's two choices (t' kept, or
    t = the float below it), so the min and max over them are taken one feature at a
    time; P's class at t is read at the point of t's cell, in the same region of P
    (no threshold of P lies between them). The cost is one read of P per grid point
    instead of 2^s for a point on s slab tops.

    Examples
    --------
    One slab top on an axis of three cells: the slab's point reads the midpoint of the
    classes on either side.

    >>> import numpy as np
    >>> top = np.nextafter(0.5, np.inf)
    >>> slab_grid_labels((np.array([top]),), [np.array([0.5, top])], [np.array([0.5, top, 1.0])],
    ...                  np.array([0, 2, 2])).tolist()
    [0, 1, 2]
    """
    low, high = labels.copy(), labels.copy()
    for f, top in enumerate(tops):
        on = np.flatnonzero(np.isin(axes[f], top)) if top.shape[0] else np.zeros(0, np.intp)
        if on.shape[0] == 0:
            continue
        below = np.searchsorted(thresholds[f], np.nextafter(axes[f][on], -np.inf), side="left")
        # Read both sides before writing: a cell below is never itself a slab's (slabs have room).
        low_on, low_below = np.take(low, on, axis=f), np.take(low, below, axis=f)
        high_on, high_below = np.take(high, on, axis=f), np.take(high, below, axis=f)
        at = (slice(None),) * f + (on,)
        low[at], high[at] = np.minimum(low_on, low_below), np.maximum(high_on, high_below)
    return (low + high) // 2


def check_slab_group(group, partition, labels: NDArray[np.intp], grid: relabel.DataGrid | None,
                     categorical: NDArray[np.bool_] | None) -> bool:
    """Theorem 5.2's conditions, re-derived from the group's trees, partition and labels.

    The slabs the group predicts with are the trees' thresholds' (with room in their gaps),
    nothing was snapped (P's bounds are the trees' thresholds), and every closure contact
    whose labels differ by two or more is an edge or corner contact (closures meeting on
    two or more touching features) two apart. With one threshold per gap (checked with
    the slabs' room) every grid pair is a face contact (Lemma 5.3): no grid search.
    """
    d = partition.n_features
    tops = slab_tops(group.trees, d, grid, categorical)
    if tops is None or group.slabs is None or len(tops) != len(group.slabs):
        return False
    if not np.array_equal(np.concatenate(tops), np.concatenate(group.slabs)) or not all(
            a.shape == b.shape for a, b in zip(tops, group.slabs, strict=True)):
        return False
    if partition.exact_region is not None:
        return False  # snapped bounds: the regions are not the thresholds' cells
    jumps = relabel.adjacency_edges(partition, contact="closure", categorical_features=categorical, jumps_of=labels)
    apart = np.abs(labels[jumps.edges[:, 0]] - labels[jumps.edges[:, 1]])
    return bool(np.all(~jumps.is_face & (apart == 2)))


def shifted_trees(group, max_copies: int = 64) -> list | None:
    """Copies of the group's trees with the thresholds of each subset B of its slab features moved to their tops.

    The group's class at x is a function of these copies' leaves (design section 5,
    "Slabs", Lemma 5.4): a copy for B routes x as the group's trees route the corner of
    x that sets every slab coordinate on B to its threshold, and the corners of x are
    those of its own slab features. ``2^k`` copies of each tree for k slab features;
    None past ``max_copies`` of them.
    """
    import copy

    features = [f for f, top in enumerate(group.slabs) if top.shape[0]]
    if 1 << len(features) > max_copies:
        return None
    out = []
    for mask in range(1 << len(features)):
        moved = [features[i] for i in range(len(features)) if mask >> i & 1]
        for tree in group.trees:
            twin = copy.deepcopy(tree)
            threshold = np.array(twin.tree_.threshold, dtype=np.float64)
            at = (twin.tree_.children_left >= 0) & np.isin(twin.tree_.feature, moved)
            threshold[at] = np.nextafter(threshold[at], np.inf)
            twin.tree_.set_thresholds(threshold)
            out.append(twin)
    return out

