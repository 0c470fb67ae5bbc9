"""A 2D classifier on a grid, and its jumps decided exactly between neighbouring cells.

A grid sees a model at its cell centres only. Where two neighbouring centres
are two or more classes apart, the model may still pass through every class in
between, in a band thinner than a cell that no centre falls into: a consistent
model can look inconsistent on any grid. :func:`find_jumps` decides each such
pair on the straight segment between the two centres: a **jump** when the class
changes by more than one at a single point of the segment, a **thin band**
when every change is by one class at most. The guarantee of a consistent model
is pointwise (docs/design.md section 4), so it has no jump, whatever the grid.

Tree models are piecewise constant between their split thresholds, so the walk
is exact: it evaluates the model at every point where a threshold crosses the
segment and once inside every piece between two consecutive crossings. Other
models are bisected (see :func:`find_jumps`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_array, check_is_fitted

from trees.utils import check_classes

__all__ = ["GridJumps", "count_jumps", "find_jumps", "segment_jumps"]

# Side and corner neighbours, each pair once: (row step, column step).
_OFFSETS = ((0, 1), (1, 0), (1, 1), (1, -1))
# Bisection stops at this fraction of a segment (models whose boundaries are unknown).
_BISECTION_TOL = 1e-9
# Points per predict call of the walk: bounds the memory of a fine grid.
_CHUNK = 200_000


@dataclass(frozen=True)
class GridJumps:
    """Neighbouring grid cells two or more classes apart, sorted by what lies between them.

    Attributes
    ----------
    jumps : ndarray of shape (n_jumps, 4)
        Grid indices ``(i0, j0, i1, j1)`` (row, column of each cell) of the pairs
        whose class changes by more than one at a single point of the segment
        between the two centres: an inconsistency, proven by two points as close
        as one likes.
    thin_bands : ndarray of shape (n_thin_bands, 4)
        Pairs whose segment passes through the intermediate classes, in bands
        thinner than a cell: not a jump, only too thin for the grid.
    exact : bool
        True when the walk met every boundary of the model (its trees'
        thresholds); False when the segments were bisected.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble.plots._grid import GridJumps
    >>> found = GridJumps(np.zeros((0, 4), int), np.array([[0, 0, 0, 1]]), True)
    >>> found.n_jumps, found.n_thin_bands, found.summary()
    (0, 1, '0 jumps (1 band thinner than a cell)')
    """

    jumps: NDArray[np.intp]
    thin_bands: NDArray[np.intp]
    exact: bool = True

    @property
    def n_jumps(self) -> int:
        return int(self.jumps.shape[0])

    @property
    def n_thin_bands(self) -> int:
        return int(self.thin_bands.shape[0])

    def summary(self) -> str:
        """``"N jumps"``, followed by the thin bands in brackets when there are any."""
        return _summary(self.n_jumps, self.n_thin_bands)


def _summary(n_jumps: int, n_thin: int) -> str:
    text = f"{n_jumps} jump{'' if n_jumps == 1 else 's'}"
    if n_thin:
        text += f" ({n_thin} band{'' if n_thin == 1 else 's'} thinner than a cell)"
    return text


def check_class_order(classes: Any, fitted_classes: NDArray[Any]) -> NDArray[Any]:
    """Return the ordinal class order: the estimator's ``classes_`` or a validated list."""
    if classes is None:
        return np.asarray(fitted_classes)
    order = check_classes(classes, "classes")
    listed = set(order.tolist())
    missing = [c for c in np.asarray(fitted_classes).tolist() if c not in listed]
    if missing:
        raise ValueError(
            f"classes must list every class of the estimator; missing {missing!r}"
        )
    return order


def class_ranks(values: NDArray[Any], classes: NDArray[Any], name: str) -> NDArray[np.intp]:
    """Position of each value in ``classes`` (the ordinal rank), or ValueError naming ``name``."""
    position = {c: i for i, c in enumerate(classes.tolist())}
    flat = values.ravel().tolist()
    try:
        ranks = np.fromiter((position[v] for v in flat), dtype=np.intp, count=len(flat))
    except (KeyError, TypeError):
        unknown = sorted({repr(v) for v in flat if v not in position})[:5]
        raise ValueError(
            f"{name} contains classes that are not in the class order "
            f"{classes.tolist()!r}: {', '.join(unknown)}"
        ) from None
    return ranks.reshape(values.shape)


def grid_pairs(ranks: NDArray[np.intp]) -> NDArray[np.intp]:
    """``(i0, j0, i1, j1)`` of every side or corner neighbour pair whose ranks differ by more than one."""
    n0, n1 = ranks.shape
    found = []
    for di, dj in _OFFSETS:
        lo, hi = max(0, -dj), n1 - max(0, dj)
        a = ranks[: n0 - di, lo:hi]
        b = ranks[di:, lo + dj : hi + dj]
        i, j = np.nonzero(np.abs(a - b) > 1)
        j = j + lo
        found.append(np.column_stack([i, j, i + di, j + dj]))
    return np.concatenate(found).astype(np.intp).reshape(-1, 4)


class _Ranker:
    """The estimator's predicted ranks at float64 points (a frame with its column names if it had them)."""

    def __init__(self, estimator: Any, order: NDArray[Any], columns: Any) -> None:
        self.estimator, self.order, self.columns = estimator, order, columns

    def __call__(self, points: NDArray[np.float64]) -> NDArray[np.intp]:
        out = np.empty(points.shape[0], dtype=np.intp)
        for start in range(0, points.shape[0], _CHUNK):
            chunk = points[start : start + _CHUNK]
            if self.columns is not None:
                import pandas as pd

                chunk = pd.DataFrame(chunk, columns=list(self.columns))
            predicted = np.asarray(self.estimator.predict(chunk))
            out[start : start + _CHUNK] = class_ranks(predicted, self.order, "the estimator's predictions")
        return out


def grid_response(estimator: Any, X: Any, grid_resolution: Any, eps: Any, classes: Any):
    """Validate the inputs and evaluate ``estimator`` on a grid over ``X``.

    Returns ``xx0, xx1, response, order, points, ranker``: the grid, the ranks
    predicted on it, the class order, the validated ``X`` and the rank function
    (which keeps a DataFrame's column names).
    """
    check_is_fitted(estimator)
    fitted_classes = getattr(estimator, "classes_", None)
    if fitted_classes is None or not hasattr(estimator, "predict"):
        raise ValueError(
            "estimator must be a fitted classifier with predict and classes_, got "
            f"{type(estimator).__name__}"
        )
    if (
        isinstance(grid_resolution, bool)
        or not isinstance(grid_resolution, numbers.Integral)
        or grid_resolution < 2
    ):
        raise ValueError(f"grid_resolution must be an integer >= 2, got {grid_resolution!r}")
    if eps is not None and (
        isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not eps >= 0
    ):
        raise ValueError(f"eps must be a non-negative number or None, got {eps!r}")
    columns = getattr(X, "columns", None)
    points = check_array(X, dtype=np.float64, input_name="X")
    if points.shape[1] != 2:
        raise ValueError(
            f"X must have exactly 2 features (columns) to draw 2D regions, got "
            f"{points.shape[1]}"
        )
    order = check_class_order(classes, fitted_classes)

    low, high = points.min(axis=0), points.max(axis=0)
    if eps is None:
        span = high - low
        margin = np.where(span > 0, 0.05 * span, 0.5)
    else:
        margin = np.full(2, float(eps))
    axis0 = np.linspace(low[0] - margin[0], high[0] + margin[0], grid_resolution)
    axis1 = np.linspace(low[1] - margin[1], high[1] + margin[1], grid_resolution)
    xx0, xx1 = np.meshgrid(axis0, axis1)
    ranker = _Ranker(estimator, order, columns)
    response = ranker(np.column_stack([xx0.ravel(), xx1.ravel()])).reshape(xx0.shape)
    return xx0, xx1, response, order, points, ranker


# --------------------------------------------------------------------------- boundaries


@dataclass(frozen=True)
class _Lines:
    """Boundary lines ``w . x = c`` sharing one normal ``w``; ``axis`` >= 0 when ``w`` is that unit vector."""

    w: NDArray[np.float64]
    c: NDArray[np.float64]
    axis: int


def _splits(tree: Any) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Feature and threshold of every internal node of a fitted tree (``left == -1`` at a leaf)."""
    structure = tree.tree_
    internal = np.asarray(structure.children_left) != -1
    return (np.asarray(structure.feature)[internal].astype(np.intp),
            np.asarray(structure.threshold, dtype=np.float64)[internal])


def _tree_lines(estimator: Any) -> list | None:
    """``(normals, offsets)`` of the boundaries of a tree model in its input, or None if unknown.

    The place to teach the walk a new tree model: OTreeBagger's groups (trees in
    the group's space, ``z = offset + x @ weights`` on the projected features and
    the kept features as they are), the certified forest on its monotone index
    (``space_``, the same map), and any model whose trees read the features
    themselves: a tree (``tree_``), or trees in ``estimators_`` (the certified
    forest, scikit-learn's forests, bagging with ``estimators_features_``, and
    gradient boosting).
    """
    n = int(getattr(estimator, "n_features_in_", 2))
    pieces = []

    def axis_lines(tree, features):
        feature, threshold = _splits(tree)
        normals = np.zeros((feature.shape[0], n))
        normals[np.arange(feature.shape[0]), np.asarray(features)[feature]] = 1.0
        pieces.append((normals, threshold))

    def space_lines(tree, space):
        k = space.n_components
        feature, threshold = _splits(tree)
        normals = np.zeros((feature.shape[0], n))
        offsets = threshold.copy()
        on_component = feature < k
        weights, offset = space.affine()
        for r in np.nonzero(on_component)[0]:  # a component: offset + x[projected] @ weights[:, j] = t
            normals[r, space.projected] = weights[:, feature[r]]
            offsets[r] = threshold[r] - offset[feature[r]]
        kept = np.nonzero(~on_component)[0]
        normals[kept, space.kept[feature[kept] - k]] = 1.0
        pieces.append((normals, offsets))

    groups = getattr(estimator, "groups_", None)
    if groups is not None and all(hasattr(g, "trees") for g in groups):
        if any(getattr(getattr(g, "space", None), "additive", None) is not None
               or getattr(getattr(g, "space", None), "ranks", None) is not None for g in groups):
            return None  # a score's level sets are curves, ranks bend lines: the walk bisects instead
        for group in groups:
            space = getattr(group, "space", None)
            for tree in group.trees:
                if space is None:
                    axis_lines(tree, np.arange(n))
                else:
                    space_lines(tree, space)
        return pieces
    space = getattr(estimator, "space_", None)  # the certified forest's trees on its monotone index
    if space is not None:
        for tree in estimator.estimators_:
            space_lines(tree, space)
        return pieces
    if hasattr(estimator, "tree_"):
        axis_lines(estimator, np.arange(n))
        return pieces
    members = getattr(estimator, "estimators_", None)
    if members is None:
        return None
    members = np.asarray(members, dtype=object).ravel()
    if members.size == 0 or not all(hasattr(m, "tree_") for m in members):
        return None
    subsets = getattr(estimator, "estimators_features_", None)
    for k, tree in enumerate(members):
        axis_lines(tree, np.arange(n) if subsets is None else subsets[k])
    return pieces


def _group_lines(pieces: list) -> list[_Lines]:
    """Boundary lines grouped by normal, offsets sorted and unique."""
    normals = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros((0, 2))
    offsets = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0)
    if normals.shape[0] == 0:
        return []
    unique, inverse = np.unique(normals, axis=0, return_inverse=True)
    lines = []
    for g, w in enumerate(unique):
        nonzero = np.nonzero(w)[0]
        axis = int(nonzero[0]) if nonzero.shape[0] == 1 and w[nonzero[0]] == 1.0 else -1
        if nonzero.shape[0] == 0:
            continue
        lines.append(_Lines(w, np.unique(offsets[inverse.ravel() == g]), axis))
    return lines


# --------------------------------------------------------------------------- the walk


def _crossings(P, Q, lines):
    """Every crossing of a boundary with a segment: pair, parameter s in [0, 1], axis, offset."""
    n = P.shape[0]
    pair, s, axis, offset = [np.zeros(0, np.intp)], [np.zeros(0)], [np.zeros(0, np.intp)], [np.zeros(0)]
    for line in lines:
        a = P[:, line.axis] if line.axis >= 0 else P @ line.w
        b = Q[:, line.axis] if line.axis >= 0 else Q @ line.w
        start = np.searchsorted(line.c, np.minimum(a, b), side="left")
        stop = np.searchsorted(line.c, np.maximum(a, b), side="right")
        # A segment along a boundary line crosses none of its lines: the model is constant across it.
        count = np.where(a != b, stop - start, 0)
        ids = np.repeat(np.arange(n), count)
        first = np.cumsum(count) - count
        c = line.c[start[ids] + np.arange(ids.shape[0]) - first[ids]]
        pair.append(ids)
        s.append(np.clip((c - a[ids]) / (b - a)[ids], 0.0, 1.0))
        axis.append(np.full(ids.shape[0], line.axis, dtype=np.intp))
        offset.append(c)
    return (np.concatenate(pair), np.concatenate(s), np.concatenate(axis), np.concatenate(offset))


def _walk_exact(P, Q, lines, ranker) -> NDArray[np.bool_]:
    """Whether each segment PQ holds a jump, the model being constant between the ``lines`` crossing it.

    Anchors are P, the crossing points (in order; crossings at the same s are one
    point, snapped onto every axis-parallel threshold met there) and Q; the model
    is evaluated at the anchors and at the midpoint of every two consecutive
    anchors (one point inside each piece). A jump: two consecutive values more
    than one class apart, or a crossing whose value and the pieces on both sides
    span more than one class (a point every neighbourhood of which sees both).
    """
    n = P.shape[0]
    pair, s, axis, offset = _crossings(P, Q, lines)
    order = np.lexsort((s, pair))
    pair, s, axis, offset = pair[order], s[order], axis[order], offset[order]
    new = np.ones(pair.shape[0], dtype=bool)
    new[1:] = (pair[1:] != pair[:-1]) | (s[1:] != s[:-1])
    event = np.cumsum(new) - 1
    e_pair, e_s = pair[new], s[new]
    points = P[e_pair] + e_s[:, None] * (Q - P)[e_pair]
    snap = axis >= 0
    points[event[snap], axis[snap]] = offset[snap]
    # Anchors of pair k: P_k, its crossing points, Q_k, contiguous and in order.
    per_pair = np.bincount(e_pair, minlength=n)
    start = np.arange(n) + np.concatenate(([0], np.cumsum(per_pair + 1)[:-1]))
    anchors = np.empty((n + e_pair.shape[0] + n, 2))
    anchor_pair = np.empty(anchors.shape[0], dtype=np.intp)
    anchors[start] = P
    anchors[start + per_pair + 1] = Q
    inner = np.ones(anchors.shape[0], dtype=bool)
    inner[start] = inner[start + per_pair + 1] = False
    anchors[inner] = points
    anchor_pair[:] = np.repeat(np.arange(n), per_pair + 2)
    # The sequence: anchor, midpoint, anchor, ..., anchor within each pair.
    same = anchor_pair[1:] == anchor_pair[:-1]
    mids = (anchors[:-1][same] + anchors[1:][same]) / 2.0
    slot = np.arange(anchors.shape[0]) * 2 - np.concatenate(([0], np.cumsum(~same)))
    seq = np.empty((anchors.shape[0] + mids.shape[0], 2))
    seq[slot] = anchors
    is_mid = np.ones(seq.shape[0], dtype=bool)
    is_mid[slot] = False
    seq[is_mid] = mids
    seq_pair = np.empty(seq.shape[0], dtype=np.intp)
    seq_pair[slot] = anchor_pair
    seq_pair[is_mid] = anchor_pair[:-1][same]
    values = ranker(seq)
    step = (seq_pair[1:] == seq_pair[:-1]) & (np.abs(np.diff(values)) > 1)
    jump = np.zeros(n, dtype=bool)
    jump[seq_pair[1:][step]] = True
    centre = np.arange(1, seq.shape[0] - 1)
    centre = centre[(seq_pair[centre - 1] == seq_pair[centre + 1]) & ~is_mid[centre]]
    window = np.stack([values[centre - 1], values[centre], values[centre + 1]])
    jump[seq_pair[centre][window.max(axis=0) - window.min(axis=0) > 1]] = True
    return jump


def segment_jumps(P: ArrayLike, Q: ArrayLike, r0: ArrayLike, r1: ArrayLike, ranker: Callable,
                  tol: float = _BISECTION_TOL) -> NDArray[np.bool_]:
    """Whether each segment PQ holds a jump of two classes or more, found by bisection.

    Intervals whose ends are two or more classes apart are halved until shorter
    than ``tol`` times the segment: one left then is a jump. Approximate: a band
    thinner than ``tol`` counts as a jump, and a detour inside a half whose ends
    are at most one class apart (1, 3, 2) is not looked for.

    Parameters
    ----------
    P, Q : array-like of shape (n, d)
        The segments' ends.
    r0, r1 : array-like of shape (n,)
        The class indices (ranks) at P and at Q.
    ranker : callable
        Class index of every row of an (m, d) array of points (for example a
        model's ``predict`` mapped to ranks).
    tol : float, default=1e-9
        Shortest interval bisected, as a fraction of the segment.

    Returns
    -------
    ndarray of bool, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble import segment_jumps
    >>> step = lambda X: np.where(X[:, 0] < 0.5, 0, 2)  # 0 then 2: a jump at 0.5
    >>> ramp = lambda X: np.digitize(X[:, 0], [0.3, 0.6])  # 0, 1, 2: no jump
    >>> P, Q = np.array([[0.0]]), np.array([[1.0]])
    >>> segment_jumps(P, Q, [0], [2], step).tolist(), segment_jumps(P, Q, [0], [2], ramp).tolist()
    ([True], [False])
    """
    P, Q = np.asarray(P, dtype=np.float64), np.asarray(Q, dtype=np.float64)
    n = P.shape[0]
    jump = np.zeros(n, dtype=bool)
    pair = np.arange(n)
    s0, s1 = np.zeros(n), np.ones(n)
    v0, v1 = np.asarray(r0), np.asarray(r1)
    D = Q - P
    while pair.shape[0]:
        done = s1 - s0 <= tol
        jump[pair[done]] = True
        pair, s0, s1, v0, v1 = pair[~done], s0[~done], s1[~done], v0[~done], v1[~done]
        m = (s0 + s1) / 2.0
        vm = ranker(P[pair] + m[:, None] * D[pair])
        left, right = np.abs(v0 - vm) > 1, np.abs(vm - v1) > 1
        pair = np.concatenate((pair[left], pair[right]))
        s0, s1 = np.concatenate((s0[left], m[right])), np.concatenate((m[left], s1[right]))
        v0, v1 = np.concatenate((v0[left], vm[right])), np.concatenate((vm[left], v1[right]))
    return jump


def walk_grid(estimator: Any, xx0, xx1, response, ranker) -> GridJumps:
    """Sort the grid's neighbouring pairs two or more classes apart into jumps and thin bands."""
    pairs = grid_pairs(response)
    if pairs.shape[0] == 0:
        return GridJumps(pairs, pairs, True)
    P = np.column_stack([xx0[pairs[:, 0], pairs[:, 1]], xx1[pairs[:, 0], pairs[:, 1]]])
    Q = np.column_stack([xx0[pairs[:, 2], pairs[:, 3]], xx1[pairs[:, 2], pairs[:, 3]]])
    pieces = _tree_lines(estimator)
    if pieces is not None:
        jump = _walk_exact(P, Q, _group_lines(pieces), ranker)
    else:
        r0 = response[pairs[:, 0], pairs[:, 1]]
        r1 = response[pairs[:, 2], pairs[:, 3]]
        jump = segment_jumps(P, Q, r0, r1, ranker)
    return GridJumps(pairs[jump], pairs[~jump], pieces is not None)


def find_jumps(
    estimator: Any,
    X: ArrayLike,
    *,
    grid_resolution: int = 200,
    eps: float | None = None,
    classes: ArrayLike | None = None,
) -> GridJumps:
    """Find where a 2D classifier jumps more than one class between neighbouring grid cells.

    Every pair of cells that touch by a side or a corner and whose centres are
    two or more classes apart is decided on the segment between the centres: a
    jump if the class changes by more than one at a single point of it, a thin
    band if it passes through the classes in between (a band thinner than a
    cell, which the grid cannot show).

    Parameters
    ----------
    estimator : fitted classifier
        Anything with ``predict`` and ``classes_`` fitted on two features.
    X : array-like of shape (n_samples, 2)
        Data that set the extent of the grid.
    grid_resolution : int, default=200
        Grid points along each axis (at least 2).
    eps : float, default=None
        Margin around the range of ``X``; ``None`` uses 5 % of each axis' range,
        as :meth:`RegionDisplay.from_estimator`.
    classes : array-like, default=None
        The classes in ordinal order; ``None`` uses ``estimator.classes_``.

    Returns
    -------
    GridJumps
        The jumps and the thin bands, as grid index pairs, and whether the walk
        was exact.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``estimator`` is not fitted.
    ValueError
        As :meth:`RegionDisplay.from_estimator`.

    Notes
    -----
    Exact for tree models: OTreeBagger (every tree of every group, through the
    group's PLS projection, a linear map that takes a segment to a segment),
    the certified forest, and scikit-learn's trees, forests, bagging and
    gradient boosting. They are constant between their thresholds, so the model
    is evaluated at every crossing of a threshold with the segment and once
    inside every piece between two crossings, up to the rounding of these
    points to floats (and scikit-learn's trees compare in float32). A model
    without trees (a pipeline, k-nearest neighbours, ...) is bisected: an
    interval whose ends are two or more classes apart is halved until it is
    shorter than 1e-9 of the segment, and then counts as a jump (``exact`` is
    False).

    One ``predict`` on the ``grid_resolution**2`` grid, then one on the points
    of the walk: O(crossings) for the pairs two classes apart.

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from ensemble.plots._grid import find_jumps
    >>> X = [[0, 0], [1, 0], [2, 0]]
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, [1, 3, 2])  # 1 next to 3
    >>> found = find_jumps(tree, X, grid_resolution=10)
    >>> found.n_jumps > 0, found.exact
    (True, True)
    """
    xx0, xx1, response, _, _, ranker = grid_response(estimator, X, grid_resolution, eps, classes)
    return walk_grid(estimator, xx0, xx1, response, ranker)


def count_jumps(
    estimator: Any,
    X: ArrayLike,
    *,
    grid_resolution: int = 200,
    eps: float | None = None,
    classes: ArrayLike | None = None,
) -> int:
    """Count the places where a 2D classifier jumps more than one class between neighbouring grid cells.

    Parameters
    ----------
    estimator : fitted classifier
        Anything with ``predict`` and ``classes_`` fitted on two features.
    X : array-like of shape (n_samples, 2)
        Data that set the extent of the grid.
    grid_resolution : int, default=200
        Grid points along each axis (at least 2).
    eps : float, default=None
        Margin around the range of ``X``; ``None`` uses 5 % of each axis' range,
        as :meth:`RegionDisplay.from_estimator`.
    classes : array-like, default=None
        The classes in ordinal order; ``None`` uses ``estimator.classes_``.

    Returns
    -------
    int
        Pairs of grid cells that touch by a side or a corner, whose centres are
        two or more classes apart and whose segment holds a change of more than
        one class at a single point: a consistent model gives 0 on any grid, and
        a positive count proves an inconsistency. Pairs whose segment passes
        through the classes in between (bands thinner than a cell) are not
        counted; :func:`find_jumps` lists them.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``estimator`` is not fitted.
    ValueError
        As :meth:`RegionDisplay.from_estimator`.

    Notes
    -----
    :func:`find_jumps`'s count, on the grid of :meth:`RegionDisplay.from_estimator`
    with the same arguments (whose ``n_jumps`` is the same number); exact for
    tree models, by bisection for the others (see :func:`find_jumps`).

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from ensemble.plots._grid import count_jumps
    >>> X = [[0, 0], [1, 0], [2, 1]]
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, [1, 3, 2])  # 1 next to 3
    >>> count_jumps(tree, X, grid_resolution=10) > 0
    True
    """
    return find_jumps(
        estimator, X, grid_resolution=grid_resolution, eps=eps, classes=classes
    ).n_jumps
