"""Histogram trees: features binned once, trees grown from gradient histograms in compiled code.

The numerical core of certified gradient boosting (docs/design.md section 10), laid
out as scikit-learn's histogram gradient boosting is: binning (:func:`bin_features`),
histograms (``_build_histogram``), split finding (``_find_split``) and growth
(:func:`grow_tree`) are separate phases. No estimator lives here.

Binning keeps what the certificate needs: for a split between bins b and b + 1 of
feature f, the *gap* ``[lo, hi)`` between the largest training value of bin b and
the smallest of bin b + 1. Any threshold in that gap sends every training row to the
side its bin sends it, so a tree grown on bins can be moved onto raw thresholds
chosen freely inside the gaps (distinct across trees).

Missing values (NaN) have a bin of their own, ``n_bins[f]``, after the real ones, as
in scikit-learn's histogram gradient boosting: every split tries them on both sides
(``missing_left``), and the split at the last real bin sends all real values left
and the missing ones right (a threshold of ``+inf``). A split learnt on a node
without missing values sends them to the child with more rows (right on a tie), as
scikit-learn's trees do.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trees._compile import compiled as _compiled

__all__ = ["Bins", "HistTree", "bin_features", "grow_tree", "MIN_GAP_ULPS"]

#: Two consecutive distinct training values closer than this many units in the last
#: place of the larger magnitude share a bin: their gap could not hold distinct
#: thresholds for the many trees of a boosted model (each needs a few ulps of room).
MIN_GAP_ULPS = 1 << 10


class Bins(NamedTuple):
    """Binned training data and the gaps between consecutive bins.

    ``binned`` (n_samples, n_features) uint8, column-major; ``n_bins`` per feature
    (real values; a missing value has bin ``n_bins[f]``); ``gap_lo[f, b]`` /
    ``gap_hi[f, b]`` the largest training value of bin b and the smallest of bin
    b + 1 (b < n_bins[f] - 1); ``merged`` the features where distinct values closer
    than :data:`MIN_GAP_ULPS` ulps were kept in one bin; ``has_missing`` the
    features with missing training values.
    """

    binned: NDArray[np.uint8]
    n_bins: NDArray[np.int64]
    gap_lo: NDArray[np.float64]
    gap_hi: NDArray[np.float64]
    merged: NDArray[np.int64]
    has_missing: NDArray[np.bool_]


def _gap_room(lower: NDArray[np.float64], upper: NDArray[np.float64], ulps: int = MIN_GAP_ULPS) -> NDArray[np.float64]:
    """``ulps`` units in the last place of the larger magnitude of each gap's ends ``(lower, upper)``:
    a gap no wider has no room for the distinct thresholds of many trees (NaN at an infinite end)."""
    return ulps * np.spacing(np.maximum(np.abs(lower), np.abs(upper)))


def _bin_edges(distinct: NDArray[np.float64], counts: NDArray[np.int64], max_bins: int) -> NDArray[np.int64]:
    """Index of the first distinct value of every bin after the first (equal-count bins).

    Only the order of the values is used, so the bins do not depend on the units of
    the feature. Distinct values closer than :data:`MIN_GAP_ULPS` ulps never start a bin.
    """
    m = distinct.shape[0]
    roomy = np.diff(distinct) > _gap_room(distinct[:-1], distinct[1:])
    candidates = np.flatnonzero(roomy) + 1  # distinct values that may start a bin
    if candidates.shape[0] + 1 <= max_bins:
        return candidates
    # Equal-count bins: cut where the cumulative count crosses k * n / max_bins,
    # at the nearest allowed start, never twice at one place.
    cumulative = np.cumsum(counts)[:-1]  # rows at or below each distinct value
    total = cumulative[-1] + counts[-1] if m > 1 else counts.sum()
    targets = total * np.arange(1, max_bins) / max_bins
    where = np.searchsorted(cumulative[candidates - 1], targets, side="left")
    where = np.unique(np.clip(where, 0, candidates.shape[0] - 1))
    return candidates[where]


def bin_features(X: ArrayLike, max_bins: int = 255, sample_weight: ArrayLike | None = None) -> Bins:
    """Bin every feature by equal-count quantiles of its training values.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training values (the rows the trees are grown on; rows of weight 0
        excluded by the caller). Float64, NaN for a missing value.
    max_bins : int, default=255
        At most this many bins per feature (2 to 256; 255 for a feature with
        missing values, whose bin is the 256th).
    sample_weight : array-like of shape (n_samples,), optional
        Row weights for the equal-count quantiles (integer weights act as
        repeated rows).

    Returns
    -------
    Bins
        The binned data and the gaps between consecutive bins.

    Raises
    ------
    ValueError
        If ``max_bins`` is outside 2..256.

    Notes
    -----
    A feature with at most ``max_bins`` distinct values gets one bin per value;
    otherwise bins hold about equal numbers of rows. Distinct values less than
    :data:`MIN_GAP_ULPS` ulps apart share a bin (reported in ``merged``). Bins use
    only the order of the values, so ``a * X + b`` (a > 0) gives the same bins up
    to float ties. O(n_features n log n).

    Examples
    --------
    >>> import numpy as np
    >>> bins = bin_features(np.array([[0.0], [1.0], [1.0], [3.0]]))
    >>> bins.binned.ravel().tolist(), bins.n_bins.tolist()
    ([0, 1, 1, 2], [3])
    >>> bins.gap_lo[0, :2].tolist(), bins.gap_hi[0, :2].tolist()
    ([0.0, 1.0], [1.0, 3.0])
    """
    if not 2 <= int(max_bins) <= 256:
        raise ValueError(f"max_bins must be in 2..256; got {max_bins}")
    X = np.asarray(X, dtype=np.float64)
    n_samples, n_features = X.shape
    binned = np.empty((n_samples, n_features), dtype=np.uint8, order="F")
    n_bins = np.ones(n_features, dtype=np.int64)
    gap_lo = np.full((n_features, max_bins), np.nan)
    gap_hi = np.full((n_features, max_bins), np.nan)
    merged = []
    has_missing = np.isnan(X).any(axis=0)
    weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    for f in range(n_features):
        column = X[:, f]
        present = ~np.isnan(column)
        distinct, inverse, counts = np.unique(column[present], return_inverse=True, return_counts=True)
        if weight is not None:
            counts = np.bincount(inverse.ravel(), weights=weight[present], minlength=distinct.shape[0])
        if distinct.shape[0] < 2:
            binned[:, f] = np.where(present, 0, 1)
            continue
        starts = _bin_edges(distinct, counts, int(max_bins) - int(has_missing[f] and max_bins == 256))
        if np.any(np.diff(distinct) <= _gap_room(distinct[:-1], distinct[1:])):
            merged.append(f)
        bin_of = np.zeros(distinct.shape[0], dtype=np.int64)
        bin_of[starts] = 1
        bin_of = np.cumsum(bin_of)
        n_bins[f] = starts.shape[0] + 1
        binned[present, f] = bin_of[inverse.ravel()]
        binned[~present, f] = n_bins[f]
        gap_lo[f, : starts.shape[0]] = distinct[starts - 1]
        gap_hi[f, : starts.shape[0]] = distinct[starts]
    return Bins(binned, n_bins, gap_lo, gap_hi, np.asarray(merged, dtype=np.int64), has_missing)


class HistTree(NamedTuple):
    """A tree grown on bins: node arrays, leaf values and the rows of every leaf.

    ``left``/``right`` (-1 at leaves), ``feature``, ``bin`` (a row goes left when its
    bin is at most ``bin``), ``value`` (the raw leaf value, 0 at internal nodes);
    ``rows[start[n]:stop[n]]`` are the training rows of node n (leaves included);
    ``gain`` is the loss decrease of every split (twice the second-order decrease
    ``G^2/(H + l2)`` of the children minus the parent's, bounded values; 0 at leaves);
    ``missing_left`` is 1 where missing values go left. A split at the last real bin
    (``bin == n_bins[feature] - 1``) sends all real values left, missing ones right.
    """

    left: NDArray[np.int64]
    right: NDArray[np.int64]
    feature: NDArray[np.int64]
    bin: NDArray[np.int64]
    value: NDArray[np.float64]
    start: NDArray[np.int64]
    stop: NDArray[np.int64]
    rows: NDArray[np.int64]
    gain: NDArray[np.float64]
    missing_left: NDArray[np.uint8]


def closed_cuts(bins: Bins, blocked: NDArray[np.bool_] | None, width: int) -> tuple[NDArray, NDArray]:
    """The cuts a tree may not make, ``(n_features, width)``, and the features it can split at all.

    A feature can be split when it has two bins or missing values, and some cut between
    its real values is open or it has missing values to split off (that split is never
    blocked). The others get no histograms: certified boosting closes most features of
    wide data once its budget is spent.
    """
    closed = np.zeros((bins.n_bins.shape[0], width), dtype=np.bool_)
    if blocked is not None:
        blocked = np.asarray(blocked, dtype=np.bool_)
        closed[:, :min(blocked.shape[1], width)] = blocked[:, :width]
    real_cut = np.arange(width)[None, :] < (bins.n_bins - 1)[:, None]
    ok = ~np.all(closed | ~real_cut, axis=1) | bins.has_missing
    return closed, ok


def grow_tree(bins: Bins, gradient: NDArray[np.float64], hessian: NDArray[np.float64], rows: NDArray[np.int64],
              *, sample_weight: NDArray[np.float64] | None = None, max_leaf_nodes: int | None = 31, max_depth: int | None = None, min_samples_leaf: int = 20,
              l2_regularization: float = 0.0, monotonic_cst: NDArray[np.int64] | None = None,
              allowed: NDArray[np.bool_] | None = None, blocked: NDArray[np.bool_] | None = None,
              workspace: dict | None = None) -> HistTree:
    """Grow one regression tree best-first from gradient histograms.

    Parameters
    ----------
    bins : Bins
        The binned training data (:func:`bin_features`).
    gradient, hessian : ndarray of shape (n_samples,)
        First and second derivatives of the loss at the current prediction
        (times the sample weights).
    rows : ndarray of int64
        The training rows to grow on, distinct (rows of weight 0 left out; weigh
        a row to repeat it). Reordered in place into the leaves' order; the
        returned tree refers to it.
    max_leaf_nodes : int or None, default=31
        Largest number of leaves (None: no limit but ``max_depth``).
    max_depth : int or None, default=None
        Largest depth (the root has depth 0).
    min_samples_leaf : int, default=20
        Fewest rows in a leaf, counted by their weights (a row of weight w counts w rows).
    l2_regularization : float, default=0.0
        Added to the hessian sum of every leaf value ``-G / (H + l2)``.
    monotonic_cst : ndarray of int64, optional
        -1/0/+1 per feature. scikit-learn's rule: a split on a constrained feature
        needs ordered child values, and the children's values are bounded by
        their mid-point for the whole subtree, so the tree is monotone.
    allowed : ndarray of bool, optional
        Features the tree may split.
    blocked : ndarray of bool of shape (n_features, n_bins), optional
        Cuts the tree may not make: True at ``[f, b]`` forbids the split of
        feature f between bins b and b + 1 (certified boosting blocks the gaps
        between training values whose consistency budget is spent). The split of
        all real values from the missing ones is never blocked.
    workspace : dict, optional
        Buffers reused across trees of one fit (histograms, node arrays).

    Returns
    -------
    HistTree

    Notes
    -----
    Histograms of (gradient, hessian, weight) per feature and bin; the smaller child
    of every split is histogrammed, its sibling is the parent minus it (not after the
    last split, nor where neither child can split: no search reads them). The split
    gain is scikit-learn's (the loss decrease of the bounded leaf values). Rows
    are partitioned stably, so each node's rows stay in increasing order (cache
    friendly). O(n d) per level of the tree at most, plus O(d max_bins) per node.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(8.0).reshape(-1, 1); y = (X[:, 0] > 3).astype(float)
    >>> tree = grow_tree(bin_features(X), -y, np.ones(8), np.arange(8), min_samples_leaf=1)
    >>> int(tree.feature[0]), int(tree.bin[0]), tree.value[tree.left == -1].tolist()
    (0, 3, [0.0, 1.0])
    """
    d = bins.binned.shape[1]
    max_leaves = np.iinfo(np.int32).max if max_leaf_nodes is None else int(max_leaf_nodes)
    depth_cap = np.iinfo(np.int32).max if max_depth is None else int(max_depth)
    if max_leaf_nodes is None:
        max_leaves = min(max_leaves, 1 << min(depth_cap, 30), max(rows.shape[0], 1))
    cst = np.zeros(d, dtype=np.int64) if monotonic_cst is None else np.asarray(monotonic_cst, dtype=np.int64)
    n_slots = min(max_leaves, rows.shape[0]) + 1
    n_bins_max = max(int(bins.n_bins.max()), 1) + 1  # the missing-value bin last
    workspace = {} if workspace is None else workspace
    key = (n_slots, d, n_bins_max)
    if workspace.get("key") != key:
        workspace.clear()
        workspace.update(key=key, hist=np.empty((n_slots, d, n_bins_max, 3)), buffer=np.empty(0, np.int64))
    if workspace["buffer"].shape[0] < rows.shape[0] or "ordered" not in workspace:
        workspace["buffer"] = np.empty(rows.shape[0], dtype=np.int64)
        workspace["ordered"] = np.empty((rows.shape[0], 3))
    weight = np.ones(gradient.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if not _distinct_rows(rows, bins.binned.shape[0]):
        # A node of every row is histogrammed in row order, without ``rows``: repeats would be lost.
        raise ValueError(f"rows must be distinct indices of the {bins.binned.shape[0]} binned rows; "
                         "weigh a row with sample_weight to count it more than once")
    closed, ok = closed_cuts(bins, blocked, n_bins_max)
    if allowed is not None:
        ok = ok & np.asarray(allowed, dtype=np.bool_)
    out = _grow(bins.binned, bins.n_bins, gradient, hessian, weight, rows, workspace["buffer"], workspace["ordered"],
                workspace["hist"], ok, closed, cst, max_leaves, depth_cap, int(min_samples_leaf),
                float(l2_regularization))
    left, right, feature, split_bin, value, start, stop, split_gain, missing_left, n_nodes = out
    return HistTree(left[:n_nodes], right[:n_nodes], feature[:n_nodes], split_bin[:n_nodes], value[:n_nodes],
                    start[:n_nodes], stop[:n_nodes], rows, split_gain[:n_nodes], missing_left[:n_nodes])


@_compiled
def _distinct_rows(rows, n):
    """Whether every entry of ``rows`` is an index in [0, n), none twice."""
    seen = np.zeros(n, dtype=np.bool_)
    for i in rows:
        if i < 0 or i >= n or seen[i]:
            return False
        seen[i] = True
    return True


@_compiled
def _build_histogram(binned, gradient, hessian, weight, rows, start, stop, ok, hist, ordered):
    """Sum gradient, hessian and weight per bin of every allowed feature over ``rows[start:stop]``.

    A node holding every row (the root) reads the columns in row order, without
    ``rows``. Any other node gathers its (gradient, hessian, weight) once into
    ``ordered`` (as scikit-learn's ordered gradients), so each feature's pass reads
    them in sequence. Four features share each pass over the rows: the gathers are
    read once for four histograms, which also interleaves four independent chains
    of additions (about 20% faster than one feature a pass; 40% at the root).
    Boosting's gradients are multiples of a quantum (:func:`ensemble.boosting._loss.quantize`),
    so these sums are exact in any order.
    """
    n = stop - start
    n_features = binned.shape[1]
    features = np.empty(n_features, dtype=np.int64)
    m = 0
    for f in range(n_features):
        if ok[f]:
            hist[f, :, :] = 0.0
            features[m] = f
            m += 1
    root = n == binned.shape[0]
    if not root:
        for j in range(n):
            i = rows[start + j]
            ordered[j, 0] = gradient[i]
            ordered[j, 1] = hessian[i]
            ordered[j, 2] = weight[i]
    for k in range(0, m - m % 4, 4):
        f0, f1, f2, f3 = features[k], features[k + 1], features[k + 2], features[k + 3]
        if root:
            _four_at_root(binned[:, f0], binned[:, f1], binned[:, f2], binned[:, f3], hist[f0], hist[f1], hist[f2],
                          hist[f3], gradient, hessian, weight)
        else:
            _four_in_node(binned[:, f0], binned[:, f1], binned[:, f2], binned[:, f3], hist[f0], hist[f1], hist[f2],
                          hist[f3], rows, start, n, ordered)
    for k in range(m - m % 4, m):
        f = features[k]
        column = binned[:, f]
        h = hist[f]
        for j in range(n):
            if root:
                h[column[j], 0] += gradient[j]
                h[column[j], 1] += hessian[j]
                h[column[j], 2] += weight[j]
            else:
                b = column[rows[start + j]]
                h[b, 0] += ordered[j, 0]
                h[b, 1] += ordered[j, 1]
                h[b, 2] += ordered[j, 2]


@_compiled
def _four_at_root(c0, c1, c2, c3, h0, h1, h2, h3, gradient, hessian, weight):
    """Histograms of four columns in one pass over every row, in row order."""
    for i in range(c0.shape[0]):
        g = gradient[i]
        h = hessian[i]
        w = weight[i]
        _add(h0, c0[i], g, h, w)
        _add(h1, c1[i], g, h, w)
        _add(h2, c2[i], g, h, w)
        _add(h3, c3[i], g, h, w)


@_compiled
def _four_in_node(c0, c1, c2, c3, h0, h1, h2, h3, rows, start, n, ordered):
    """Histograms of four columns in one pass over a node's rows (their sums gathered in ``ordered``)."""
    for j in range(n):
        i = rows[start + j]
        g = ordered[j, 0]
        h = ordered[j, 1]
        w = ordered[j, 2]
        _add(h0, c0[i], g, h, w)
        _add(h1, c1[i], g, h, w)
        _add(h2, c2[i], g, h, w)
        _add(h3, c3[i], g, h, w)


@_compiled
def _add(hist, b, g, h, w):
    """One row's (g, h, w) into bin b of a feature's histogram."""
    hist[b, 0] += g
    hist[b, 1] += h
    hist[b, 2] += w


@_compiled
def _leaf_value(g, h, l2, lo, hi):
    """The bounded Newton step ``-g / (h + l2)`` clipped to ``[lo, hi]``."""
    denominator = h + l2
    v = -g / denominator if denominator > 0 else 0.0
    return min(max(v, lo), hi)


@_compiled
def _find_split(hist, n_bins, ok, closed, cst, g_sum, h_sum, count, lo, hi, l2, min_leaf):
    """Best split of a node from its histogram: (gain, feature, bin, left value, right value, missing left).

    The gain is ``loss(parent) - loss(left) - loss(right)`` with the loss of a leaf
    of value v being ``2 G v + (H + l2) v^2`` (v bounded), as scikit-learn's. Where
    the node has missing values (bin ``n_bins[f]``) each real cut is tried with them
    on either side, and the last real bin (all real values left, missing right).
    Candidates are taken in the order (feature, bin, side); a later one wins only
    by more than a relative 1e-12.
    """
    best_gain = 0.0
    best_f = -1
    best_b = -1
    best_ml = 0
    vp = _leaf_value(g_sum, h_sum, l2, lo, hi)
    parent = 2.0 * g_sum * vp + (h_sum + l2) * vp * vp
    tiny = 1e-12 * max(abs(parent), 1e-300)
    below = np.empty((3, hist.shape[1]))  # the sums over bins 0..b of the node's rows
    gains = np.empty((2, hist.shape[1]))  # per side and bin; -inf where the split is not allowed
    for f in range(hist.shape[0]):
        if not ok[f]:
            continue
        m = n_bins[f]
        mg = hist[f, m, 0]
        mh = hist[f, m, 1]
        mc = hist[f, m, 2]
        sides = 2 if mc > 0.0 else 1
        last = m if mc > 0.0 else m - 1
        _prefix_sums(hist[f], last, below)
        for side in range(sides):
            # side 0: missing values right (they are in the right sums); side 1: left. Every bin is
            # evaluated without a branch (about twice as fast as skipping the invalid ones), then
            # the gains are read in order below.
            for b in range(last):
                gains[side, b] = _split_gain(below[0, b] + mg * side, below[1, b] + mh * side,
                                             below[2, b] + mc * side, g_sum, h_sum, count, parent, lo, hi, l2,
                                             min_leaf, cst[f])
        for b in range(last):
            if b < m - 1 and closed[f, b]:
                continue  # a blocked cut between two real bins
            for side in range(sides if b < m - 1 else 1):
                if gains[side, b] > best_gain + tiny:
                    best_gain = gains[side, b]
                    best_f = f
                    best_b = b
                    best_ml = side
    if best_f < 0:
        return best_gain, best_f, best_b, 0.0, 0.0, best_ml
    h = hist[best_f]
    m = n_bins[best_f]
    g_left = _below(h, best_b, 0) + h[m, 0] * best_ml  # the sums the gains were computed from
    h_left = _below(h, best_b, 1) + h[m, 1] * best_ml
    return (best_gain, best_f, best_b, _leaf_value(g_left, h_left, l2, lo, hi),
            _leaf_value(g_sum - g_left, h_sum - h_left, l2, lo, hi), best_ml)


@_compiled(inline=True)
def _prefix_sums(h, last, below):
    """``below[k, b]``: column k of a feature's histogram summed over the bins 0..b, for b < last."""
    g = 0.0
    w = 0.0
    c = 0.0
    for b in range(last):
        g += h[b, 0]
        w += h[b, 1]
        c += h[b, 2]
        below[0, b] = g
        below[1, b] = w
        below[2, b] = c


@_compiled(inline=True)
def _split_gain(g_left, h_left, c_left, g_sum, h_sum, count, parent, lo, hi, l2, min_leaf, sign):
    """The gain of the split sending (g_left, h_left, c_left) left, or -inf where it is not allowed."""
    g_right = g_sum - g_left
    h_right = h_sum - h_left
    vl = _leaf_value(g_left, h_left, l2, lo, hi)
    vr = _leaf_value(g_right, h_right, l2, lo, hi)
    gain = (parent - (2.0 * g_left * vl + (h_left + l2) * vl * vl)
            - (2.0 * g_right * vr + (h_right + l2) * vr * vr))
    bad = ((c_left < min_leaf) | (count - c_left < min_leaf) | (h_left <= 0.0) | (h_right <= 0.0)
           | ((sign == 1) & (vl > vr)) | ((sign == -1) & (vl < vr)))
    return -np.inf if bad else gain


@_compiled
def _partition(binned, rows, buffer, start, stop, f, b, missing_bin, missing_left):
    """Stable partition of ``rows[start:stop]``: bins at most b first (the missing bin as
    ``missing_left`` says). Returns the split position.

    One pass: the rows going left move down in place (never past the one being
    read), the others wait in ``buffer`` and follow them.
    """
    column = binned[:, f]
    a = start
    c = start
    for j in range(start, stop):
        i = rows[j]
        v = column[i]
        if (v == missing_bin and missing_left) or (v != missing_bin and v <= b):
            rows[a] = i
            a += 1
        else:
            buffer[c] = i
            c += 1
    for j in range(c - start):
        rows[a + j] = buffer[start + j]
    return a


@_compiled
def _root_sums(gradient, hessian, weight, rows, out):
    """Gradient, hessian and weight summed over ``rows`` into ``out``."""
    for j in range(rows.shape[0]):
        i = rows[j]
        out[0] += gradient[i]
        out[1] += hessian[i]
        out[2] += weight[i]


@_compiled
def _best_candidate(gain, n_nodes):
    """The node of largest positive gain among the first ``n_nodes`` (-1 for none; the first on a tie)."""
    node = -1
    top = -1.0
    for m in range(n_nodes):
        if gain[m] > top:
            top = gain[m]
            node = m
    return node


@_compiled
def _below(h, b, k):
    """Column k of a feature's histogram summed over the bins 0..b (the rows going left of bin b)."""
    acc = 0.0
    for bb in range(b + 1):
        acc += h[bb, k]
    return acc


@_compiled
def _child_bounds(lo, hi, node, lc, rc, sign, value_left, value_right):
    """The children's value bounds: the parent's, cut at the mid-point of their values under a constraint."""
    lo[lc] = lo[node]
    hi[lc] = hi[node]
    lo[rc] = lo[node]
    hi[rc] = hi[node]
    if sign != 0:
        # scikit-learn's basic rule: the children's values stay on their side of the mid-point.
        mid = 0.5 * (value_left + value_right)
        if sign == 1:
            hi[lc] = mid
            lo[rc] = mid
        else:
            lo[lc] = mid
            hi[rc] = mid


@_compiled
def _subtract(large, small, ok, n_bins):
    """The larger child's histogram: the parent's (held in ``large``) minus the smaller child's."""
    for ff in range(large.shape[0]):
        if ok[ff]:
            for bb in range(n_bins[ff] + 1):
                for k in range(3):
                    large[ff, bb, k] -= small[ff, bb, k]


@_compiled
def _may_split(node, depth, sums, max_depth, min_leaf):
    """Whether a node is searched for a split: above the depth limit, with room for two leaves."""
    return depth[node] < max_depth and sums[node, 2] >= 2 * min_leaf


@_compiled
def _grow(binned, n_bins, gradient, hessian, weight, rows, buffer, ordered, hist, ok, closed, cst, max_leaves, max_depth,
          min_leaf, l2):
    """Best-first growth; returns the node arrays (oversized) and the number of nodes."""
    n_max = 2 * max_leaves - 1 if max_leaves < rows.shape[0] else 2 * rows.shape[0] + 1
    left = np.full(n_max, -1, dtype=np.int64)
    right = np.full(n_max, -1, dtype=np.int64)
    feature = np.full(n_max, -2, dtype=np.int64)
    split_bin = np.full(n_max, -1, dtype=np.int64)
    value = np.zeros(n_max)
    start = np.zeros(n_max, dtype=np.int64)
    stop = np.zeros(n_max, dtype=np.int64)
    depth = np.zeros(n_max, dtype=np.int64)
    lo = np.full(n_max, -np.inf)
    hi = np.full(n_max, np.inf)
    sums = np.zeros((n_max, 3))
    gain = np.full(n_max, -1.0)  # -1: not a candidate
    split_gain = np.zeros(n_max)
    missing_left = np.zeros(n_max, dtype=np.uint8)
    best_ml = np.zeros(n_max, dtype=np.uint8)
    best = np.zeros((n_max, 2), dtype=np.int64)  # feature, bin
    child_values = np.zeros((n_max, 2))
    slot = np.full(n_max, -1, dtype=np.int64)
    free = list(range(hist.shape[0] - 1, -1, -1))

    stop[0] = rows.shape[0]
    _root_sums(gradient, hessian, weight, rows, sums[0])
    n_nodes = 1
    slot[0] = free.pop()
    _build_histogram(binned, gradient, hessian, weight, rows, 0, stop[0], ok, hist[slot[0]], ordered)
    candidates = np.zeros(2, dtype=np.int64)
    n_candidates = 1
    n_leaves = 1
    while True:
        # Evaluate new candidates; a node that cannot split gives its histogram back.
        for c in range(n_candidates):
            node = candidates[c]
            if _may_split(node, depth, sums, max_depth, min_leaf):
                g, f, b, vl, vr, ml = _find_split(hist[slot[node]], n_bins, ok, closed, cst, sums[node, 0], sums[node, 1],
                                                  sums[node, 2], lo[node], hi[node], l2, min_leaf)
                if f >= 0:
                    gain[node] = g
                    best[node, 0] = f
                    best[node, 1] = b
                    best_ml[node] = ml
                    child_values[node, 0] = vl
                    child_values[node, 1] = vr
            if gain[node] < 0.0:
                free.append(slot[node])
                slot[node] = -1
        n_candidates = 0
        if n_leaves >= max_leaves:
            break
        node = _best_candidate(gain, n_nodes)
        if node < 0:
            break
        f = best[node, 0]
        b = best[node, 1]
        h = hist[slot[node], f]
        ml = best_ml[node]
        if h[n_bins[f], 2] == 0.0:
            # No missing value here: they will go to the child with more rows (right on a tie).
            ml = 1 if _below(h, b, 2) > sums[node, 2] - _below(h, b, 2) else 0
        middle = _partition(binned, rows, buffer, start[node], stop[node], f, b, n_bins[f], ml)
        lc = n_nodes
        rc = n_nodes + 1
        n_nodes += 2
        left[node] = lc
        right[node] = rc
        feature[node] = f
        split_bin[node] = b
        split_gain[node] = gain[node]
        missing_left[node] = ml
        gain[node] = -1.0
        start[lc] = start[node]
        stop[lc] = middle
        start[rc] = middle
        stop[rc] = stop[node]
        depth[lc] = depth[node] + 1
        depth[rc] = depth[node] + 1
        _child_bounds(lo, hi, node, lc, rc, cst[f], child_values[node, 0], child_values[node, 1])
        # Sums of the children from the parent's histogram on the split feature.
        for k in range(3):
            acc = _below(h, b, k) + (h[n_bins[f], k] if ml else 0.0)
            sums[lc, k] = acc
            sums[rc, k] = sums[node, k] - acc
        n_leaves += 1
        if n_leaves >= max_leaves or not (_may_split(lc, depth, sums, max_depth, min_leaf)
                                          or _may_split(rc, depth, sums, max_depth, min_leaf)):
            # Neither child will be searched (the last split, or both too small or too deep): no histogram.
            free.append(slot[node])
            slot[node] = -1
            continue
        # Histogram the child with fewer rows; the other is the parent minus it.
        small, large = (lc, rc) if middle - start[node] <= stop[node] - middle else (rc, lc)
        slot[large] = slot[node]
        slot[node] = -1
        slot[small] = free.pop()
        _build_histogram(binned, gradient, hessian, weight, rows, start[small], stop[small], ok, hist[slot[small]],
                         ordered)
        _subtract(hist[slot[large]], hist[slot[small]], ok, n_bins)
        candidates[0] = lc
        candidates[1] = rc
        n_candidates = 2
    for m in range(n_nodes):
        if left[m] == -1:
            value[m] = _leaf_value(sums[m, 0], sums[m, 1], l2, lo[m], hi[m]) + 0.0  # no -0.0
    return left, right, feature, split_bin, value, start, stop, split_gain, missing_left, n_nodes
