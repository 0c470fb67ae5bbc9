"""Independent oracles the tests share: the exact fused partition of a model's trees.

Every model of the package predicts a function of its trees' leaves (a relabelled
group looks its region up by the leaf tuple; the forest and boosting sum leaf
values), compared with the raw float64 thresholds. Fusing all the trees *without
snapping* therefore gives regions on each of which ``predict`` is constant, and
labelling each region by ``predict`` at a point inside it gives exactly the
function the model computes, thin leaves and float slivers included.

A forest read through monotone envelopes is not constant on its trees' leaves,
only on the cells of the grid of all its thresholds (an envelope jumps only
across its own tree's thresholds): :func:`threshold_grid` is that partition.
"""

import numpy as np

import relabel
from trees import leaf_boxes


def inside_points(lower, upper):
    """A float64 point inside every half-open box ``lower < x <= upper``, however thin.

    The upper end belongs to the box; an unbounded side takes the next float
    above the lower end, or 0 on a line unbounded both ways.
    """
    above = np.where(np.isfinite(lower), np.nextafter(lower, np.inf), 0.0)
    return np.where(np.isfinite(upper), upper, above)


def box_centres(lower, upper):
    """A point well inside every half-open box ``lower < x <= upper``: the midpoint, 1 inside a finite
    bound on an unbounded side, 0 on a line unbounded both ways.

    Away from every bound, so the trees route it to the region's own leaves even when
    the partition snapped bounds a few ulps apart (:func:`inside_points` sits on the
    upper bound, exactly on the raw partition).
    """
    lo = np.where(np.isfinite(lower), lower, np.where(np.isfinite(upper), upper - 1.0, -1.0))
    hi = np.where(np.isfinite(upper), upper, lo + 2.0)
    return (lo + hi) / 2.0


def fused_partition(trees, spaces=None):
    """The partition of all the given trees (scikit-learn's or ours), raw thresholds, no snapping."""
    return relabel.fuse([leaf_boxes(tree) for tree in trees], snap=False)


def threshold_grid(trees, n_features):
    """The grid cut by every finite threshold of the given trees on every feature, raw bounds, no snapping.

    Each feature is one "tree" splitting it at all the thresholds; fusing the d of
    them gives the grid's cells as a partition.
    """
    boxes = []
    for f in range(n_features):
        cuts = np.unique(np.concatenate([
            t.tree_.threshold[(t.tree_.children_left >= 0) & (t.tree_.feature == f)] for t in trees]))
        cuts = cuts[np.isfinite(cuts)]
        edges = np.concatenate([[-np.inf], cuts, [np.inf]])
        lower = np.full((edges.shape[0] - 1, n_features), -np.inf)
        upper = np.full((edges.shape[0] - 1, n_features), np.inf)
        lower[:, f], upper[:, f] = edges[:-1], edges[1:]
        boxes.append((np.arange(edges.shape[0] - 1), lower, upper))
    return relabel.fuse(boxes, snap=False)


def grid_consistent_and_monotone(model, monotonic_cst):
    """Whether ``model.predict`` is consistent and follows ``monotonic_cst`` on :func:`threshold_grid`.

    A forest on a monotone index (``space_``) is a function of ``z = space_.transform(x)``:
    its grid is cut in z and labelled by the forest's cut sum of tree values at each
    cell's point, and the constraints are carried to z by ``GroupSpace.constraints``
    (itself checked against a brute force in test_ensemble_monotone.py); a component
    asked both ways must then be constant (checked rising and falling).
    """
    space = getattr(model, "space_", None)
    if space is None:
        grid = threshold_grid(model.estimators_, model.n_features_in_)
        labels = class_ranks(model, inside_points(grid.lower, grid.upper))
        checks = [np.asarray(monotonic_cst)]
    else:
        grid = threshold_grid(model.estimators_, space.n_components + space.kept.shape[0])
        sums = model._sums(inside_points(grid.lower, grid.upper))
        labels = np.searchsorted(model._cuts, sums, side="right")
        checks = [space.constraints(np.asarray(monotonic_cst), conflict=sign) for sign in (1, -1)]
    monotone = all(relabel.is_monotone(relabel.monotone_pairs(grid, cst), labels) for cst in checks)
    edges = relabel.adjacency_edges(grid).edges
    return monotone, relabel.is_consistent(edges, labels)


def class_ranks(model, X):
    """Class index of ``model.predict(X)`` in ``model.classes_``."""
    return np.searchsorted(model.classes_, model.predict(X))


def exact_consistency(model, trees=None):
    """Whether ``model.predict`` is consistent, checked on the exact fused partition of its trees.

    Returns ``(consistent, partition, labels)``: every closure contact of the
    fused partition must join classes at most one apart.
    """
    trees = model.estimators_ if trees is None else trees
    partition = fused_partition(trees)
    labels = class_ranks(model, inside_points(partition.lower, partition.upper))
    edges = relabel.adjacency_edges(partition).edges
    return relabel.is_consistent(edges, labels), partition, labels


def exact_monotone(model, monotonic_cst, trees=None):
    """Whether ``model.predict`` follows ``monotonic_cst`` across every face of the exact fused partition."""
    trees = model.estimators_ if trees is None else trees
    partition = fused_partition(trees)
    labels = class_ranks(model, inside_points(partition.lower, partition.upper))
    pairs = relabel.monotone_pairs(partition, np.asarray(monotonic_cst))
    return relabel.is_monotone(pairs, labels)


def adjacent_floats(start, n):
    """``n`` consecutive float64 values from ``start`` (one ulp apart)."""
    out = [float(start)]
    for _ in range(n - 1):
        out.append(float(np.nextafter(out[-1], np.inf)))
    return np.array(out)


def line_breakpoints(trees, f, lo, hi):
    """Every point where a function of the trees' leaves can change along feature f inside ``[lo, hi]``.

    The trees route ``x_f <= t`` left, so along a line parallel to f their leaves (and any
    function of them) are constant on every interval ``(t_i, t_{i+1}]`` between consecutive
    thresholds on f: the ends, each threshold inside and the float just above it hold every
    value the function takes on ``[lo, hi]``.
    """
    cuts = np.unique(np.concatenate([
        np.asarray(t.tree_.threshold)[(np.asarray(t.tree_.children_left) >= 0) & (np.asarray(t.tree_.feature) == f)]
        for t in trees]))
    cuts = cuts[(cuts >= lo) & (cuts < hi)]
    return np.unique(np.concatenate([[lo, hi], cuts, np.nextafter(cuts, np.inf)]))


def gap_walk_spans(model, X_train, rows, trees=None):
    """The largest class span along every move of one feature inside one gap between training values.

    For every given row and every feature with at least two distinct training values,
    the row's value is moved through each of the (at most two) closed gaps
    ``[v_{k-1}, v_k]`` ending at it, and through the end gaps beyond the smallest and the
    largest value, by :func:`line_breakpoints` of the model's trees: exact, whatever the
    thinnest band between two thresholds. Returns the largest ``max - min`` of the class
    indices met, and one witness ``(row, feature, lo, hi)`` reaching it.
    """
    trees = model.estimators_ if trees is None else trees
    worst, witness = 0, None
    for f in range(X_train.shape[1]):
        values = np.unique(X_train[:, f][~np.isnan(X_train[:, f])])
        if values.shape[0] < 2:
            continue
        span = max(1.0, float(values[-1] - values[0]))
        for x in rows:
            i = int(np.searchsorted(values, x[f]))
            gaps = []
            if i > 0:
                gaps.append((values[i - 1], values[min(i, values.shape[0] - 1)]))
            if i < values.shape[0] - 1:
                gaps.append((values[i], values[i + 1]))
            if i == 0:
                gaps.append((values[0] - span, values[0]))
            if i >= values.shape[0] - 1:
                gaps.append((values[-1], values[-1] + span))
            for lo, hi in gaps:
                points = line_breakpoints(trees, f, lo, hi)
                P = np.repeat(x[None, :], points.shape[0], axis=0)
                P[:, f] = points
                classes = class_ranks(model, P)
                if classes.max() - classes.min() > worst:
                    worst, witness = int(classes.max() - classes.min()), (x, f, lo, hi)
    return worst, witness


def _walk_gap(model, x, f, lo, hi, samples=17):
    """Every class ``model`` predicts along x_f in [lo, hi] that sampling and bisection to adjacent floats find."""
    t = np.unique(np.concatenate([np.linspace(lo, hi, samples), [lo, hi, np.nextafter(lo, hi), np.nextafter(hi, lo)]]))
    t = t[(t >= lo) & (t <= hi)]

    def classes(points):
        P = np.repeat(x[None, :], points.shape[0], axis=0)
        P[:, f] = points
        return np.searchsorted(model.classes_, model.predict(P))

    c = classes(t)
    seen = set(c.tolist())
    pending = [(t[i], t[i + 1], c[i], c[i + 1]) for i in range(t.shape[0] - 1) if c[i] != c[i + 1]]
    steps = 0
    while pending and steps < 400:
        a, b, ca, cb = pending.pop()
        steps += 1
        if np.nextafter(a, b) >= b:
            continue  # adjacent floats: both classes are in ``seen``
        mid = a + (b - a) / 2
        if not a < mid < b:
            mid = np.nextafter(a, b)
        cm = int(classes(np.array([mid]))[0])
        seen.add(cm)
        if cm != ca:
            pending.append((a, mid, ca, cm))
        if cm != cb:
            pending.append((mid, b, cm, cb))
    return seen


def bisected_gap_walk(model, X_train, rows, weight=None):
    """The largest class span inside one gap of any feature, over ``rows``, and a witness.

    For any model (its trees may split another space than x): each row's feature is
    moved through the gaps of the training values (of positive ``weight``) below and
    above its value, sampled evenly and bisected down to adjacent floats wherever the
    class changes (:func:`_walk_gap`).
    """
    Xw = X_train if weight is None else X_train[weight > 0]
    worst, witness = 0, None
    categorical = getattr(model, "is_categorical_", np.zeros(X_train.shape[1], bool))
    for f in range(X_train.shape[1]):
        if categorical[f]:
            continue
        values = np.unique(Xw[:, f][~np.isnan(Xw[:, f])])
        if values.shape[0] < 2:
            continue
        for x in rows:
            if np.isnan(x[f]):
                continue
            i = int(np.clip(np.searchsorted(values, x[f]), 1, values.shape[0] - 1))
            for lo, hi in ((values[i - 1], values[i]), (values[max(i - 2, 0)], values[i - 1])):
                seen = _walk_gap(model, x.copy(), f, lo, hi)
                if max(seen) - min(seen) > worst:
                    worst, witness = max(seen) - min(seen), (x, f, lo, hi)
    return worst, witness
