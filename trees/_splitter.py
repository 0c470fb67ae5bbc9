"""Split search of one tree level: candidate thresholds, their scores, each node's best split.

The rows of the level's nodes are kept, for every feature, in one order grouped
by node (node ``s`` holds positions ``seg[s]:seg[s+1]``, sorted by the feature
inside). The phases, one function each:

* :func:`node_statistics`: each node's encoded counts, ``n * I`` and tie tolerance;
* :func:`candidate_features`: the features a node may split on (``max_features``);
* :func:`is_candidate`: whether the gap after a position is a candidate threshold
  (and :func:`n_missing_at_end`: a node's rows with the feature missing, which
  the presort puts last);
* :func:`scan_feature`: the score of every candidate of one feature for every
  node: running class counts along the order give the left counts, the
  criterion (:mod:`trees._criterion`) the gain, the monotone rule may reject it;
  with missing values, each gap twice (missing values left or right) and the
  real values against the missing ones;
* :func:`keep_best`: each node's best candidate under the tie rule;
* :func:`find_splits`: all of it for one level, features in memory-bounded blocks.

The floating-point operations are those of the numpy level pass this replaced
(cumulative sums restarted at every node by subtracting the previous node's
total, gains as ``(mass(parent) - mass(left)) - mass(right)`` times
``1 / w(parent)``), so the trees did not change.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.extending import overload
from numpy.typing import NDArray

from trees._compile import compiled
from trees._criterion import (RANKING, WIG, candidate_gain, children_counts, kernel_variant, node_mass, node_mean,
                              split_gains, uses_tables, wig_norms)

__all__ = ["GrowParams", "Level", "TrainingData", "find_splits"]

# Gains within this share of the parent's impurity tie (the accumulation order's rounding).
TIE_RTOL = 1e-11


class GrowParams(NamedTuple):
    """The growth parameters, resolved (a numba-compatible tuple)."""

    min_samples_leaf: int
    min_samples_split: int  # already at least 2 * min_samples_leaf
    max_depth: int  # a huge number for "no limit"
    max_features: int
    min_impurity_decrease: float
    total_weight: float
    exact: bool  # integer weights: every sum of counts is exact, in any order
    block_elements: int  # bounds the (features x rows) score block of one pass


class TrainingData(NamedTuple):
    """The training rows as the kernels read them (a numba-compatible tuple)."""

    XT: NDArray[np.float64]  # (n_features, n_rows), features contiguous
    YW: NDArray[np.float64]  # (n_rows, K): a row's encoded one-hot weight, classes contiguous
    y: NDArray[np.intp]
    w: NDArray[np.float64]


class Level(NamedTuple):
    """The nodes still to split: ``frontier[s]`` owns positions ``seg[s]:seg[s+1]`` of
    ``order[f]``, the rows sorted by feature ``f`` within each node. (Keeping the
    sorted values too, partitioned with the orders, measured slower than reading
    ``XT[f, row]``.)"""

    order: NDArray[np.intp]
    seg: NDArray[np.intp]
    frontier: NDArray[np.intp]


class NodeStats(NamedTuple):
    encoded: NDArray[np.float64]  # (nf, K) encoded class counts
    mass: NDArray[np.float64]  # n * I (I for ranking)
    tol: NDArray[np.float64]  # tie tolerance on the gains
    present: NDArray[np.bool_]  # (nf, K) classes with a positive count (wig's weights)
    weight: NDArray[np.float64]  # total weight


class BestSplits(NamedTuple):
    gain: NDArray[np.float64]
    feature: NDArray[np.intp]
    position: NDArray[np.intp]  # the last position on the left in the feature's order
    missing_left: NDArray[np.bool_]  # the node's missing values of the feature go left


@compiled
def node_statistics(kern, tables, value_of, frontier, parent_w):
    """Encoded counts, ``n * I``, tie tolerance and present classes of the level's nodes."""
    nf = frontier.shape[0]
    K = value_of.shape[1]
    encoded = np.empty((nf, K))
    mass = np.empty(nf)
    tol = np.empty(nf)
    present = np.empty((nf, K), dtype=np.bool_)
    for s in range(nf):
        node = frontier[s]
        acc = 0.0
        for k in range(K):
            present[s, k] = value_of[node, k] > 0
            if kern.cumulative:
                acc = value_of[node, k] if k == 0 else acc + value_of[node, k]
                encoded[s, k] = acc
            else:
                encoded[s, k] = value_of[node, k]
        mass[s] = node_mass(kern, tables, encoded[s], present[s])
        impurity = mass[s] / parent_w[s] if kern.weighted else mass[s]
        tol[s] = TIE_RTOL * abs(impurity)
    return NodeStats(encoded, mass, tol, present, parent_w)


@compiled(inline=True)
def is_candidate(x_left, x_right, n_left, n_node, min_samples_leaf):
    """Whether the gap between two consecutive values of a node's sorted feature is a
    candidate threshold: the values differ, and each side keeps at least
    ``min_samples_leaf`` of the node's ``n_node`` rows (``n_left`` on the left)."""
    return n_left >= min_samples_leaf and n_node - n_left >= min_samples_leaf and x_left < x_right


@compiled
def _kth_smallest(values, k):
    """The k-th smallest value (1-based), as ``np.sort(values)[k - 1]`` (no numba sort: see
    :func:`trees._compile.compiled`)."""
    work = values.copy()
    for i in range(1, work.shape[0]):
        v = work[i]
        j = i - 1
        while j >= 0 and work[j] > v:
            work[j + 1] = work[j]
            j -= 1
        work[j + 1] = v
    return work[k - 1]


@compiled(inline=True)
def n_missing_at_end(XT, order, f, start, end):
    """How many of the node's rows ``[start, end)`` have feature ``f`` missing: they sit
    at the end of its segment (numpy sorts NaN last and the partitions keep the order)."""
    count = 0
    while count < end - start and XT[f, order[f, end - 1 - count]] != XT[f, order[f, end - 1 - count]]:
        count += 1
    return count


@compiled(inline=True)
def _has_candidate(XT, order, f, start, end, min_samples_leaf):
    """Whether the node ``[start, end)`` has a candidate split on feature ``f`` (a gap between
    distinct values with its missing values on either side, or real values against
    missing ones)."""
    n_node = end - start
    n_missing = n_missing_at_end(XT, order, f, start, end)
    n_real = n_node - n_missing
    if n_missing > 0 and n_real >= min_samples_leaf and n_missing >= min_samples_leaf and n_real > 0:
        return True
    for p in range(start, start + n_real - 1):
        n_left = p - start + 1
        a, b = XT[f, order[f, p]], XT[f, order[f, p + 1]]
        if (is_candidate(a, b, n_left, n_node, min_samples_leaf)
                or (n_missing > 0 and is_candidate(a, b, n_left + n_missing, n_node,
                                                   min_samples_leaf))):
            return True
    return False


@compiled
def candidate_features(data, level, keys, params):
    """Which features each node may split on: all of them, or the ``max_features`` with
    the smallest random ``keys`` among those with a candidate in the node (as in
    scikit-learn, features without one are skipped and do not count)."""
    XT, order, seg = data.XT, level.order, level.seg
    d = order.shape[0]
    nf = seg.shape[0] - 1
    chosen = np.ones((nf, d), dtype=np.bool_)
    if params.max_features >= d:
        return chosen
    key_row = np.empty(d)
    has = np.zeros(d, dtype=np.bool_)
    for s in range(nf):
        start, end = seg[s], seg[s + 1]
        for f in range(d):
            has[f] = _has_candidate(XT, order, f, start, end, params.min_samples_leaf)
            key_row[f] = keys[s, f] if has[f] else 2.0
        kth = _kth_smallest(key_row, params.max_features)
        for f in range(d):
            chosen[s, f] = key_row[f] <= kth and has[f]
    return chosen


@compiled
def _monotone_filter(kern, left_rows, n_rows, parent, exact, sign, lower, upper, gains):
    """scikit-learn's monotone rule on a batch of candidates: a candidate whose children's
    (unclipped) mean class indices leave the node's bounds or go against the constraint
    (``sign * (right - left) < 0``) gets gain ``-inf``."""
    K = parent.shape[0]
    lv = np.empty(K)
    rv = np.empty(K)
    for i in range(n_rows):
        children_counts(left_rows[i], parent, exact, lv, rv)
        mean_left = node_mean(kern, lv)
        mean_right = node_mean(kern, rv)
        if not ((mean_right - mean_left) * sign >= 0 and mean_left >= lower and mean_left <= upper
                and mean_right >= lower and mean_right <= upper):
            gains[i] = -np.inf


# Candidates scored per call of the criterion: a few kilobytes of left counts.
_BATCH = 64


class Batch(NamedTuple):
    """Candidates of one node and feature waiting to be scored (work arrays)."""

    left: NDArray[np.float64]  # (_BATCH, K) encoded left counts, missing values excluded
    shifted: NDArray[np.float64]  # (_BATCH, K) the same plus the node's missing rows
    position: NDArray[np.intp]  # last position on the left
    right_ok: NDArray[np.bool_]  # valid with the missing values sent right
    left_ok: NDArray[np.bool_]  # valid with the missing values sent left
    scores: NDArray[np.float64]
    missing: NDArray[np.float64]  # (K,) encoded counts of the node's missing rows


@compiled
def scan_feature(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of):
    """Write the gain of every candidate of feature ``f`` (one per position) into ``gains``
    (missing values sent right) and ``gains_left`` (sent left; empty if the level has none).

    One pass along ``f``'s order: ``run`` holds the running encoded counts of the
    rows so far, restarted at every node by subtracting the previous node's total
    (numpy's cumulative sum over the whole order, exactly); the left child of the
    gap after position ``p - 1`` holds ``run`` before row ``p`` is added (the gap is
    judged when the value after it is read). A node's rows with ``f`` missing come
    last: each gap between real values is scored with them on either side, and
    one more candidate sends every real value left and the missing ones right
    (threshold ``+inf``, at the last real position), as scikit-learn's trees do.
    Each candidate is scored by :func:`trees._criterion.candidate_gain` and may be
    rejected by the monotone rule; other positions keep their value (``-inf``). A
    feature without missing values in the level takes a lean loop compiled per
    criterion (:func:`_scan_real_as`); one with missing values scores its candidates
    in batches (:func:`_scan_missing`), compiled only for kernels of data with
    missing values (``kern``'s class, :class:`trees._criterion.CriterionKernel`).
    """
    if gains_left.shape[0] == 0 or not _feature_has_missing(data.XT, level.order, level.seg, f):
        _scan_real_for(gains, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of)
    else:
        _scan_missing_for(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of,
                          upper_of)


def _scan_real_for(gains, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of):
    raise NotImplementedError("called in compiled code only")


@overload(_scan_real_for)
def _scan_real_variant(gains, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of):
    # The loop of _scan_real_as for kern's criterion only, chosen at typing (see
    # trees._criterion._gains_for_variant): one variant compiles in about 5 s, all seven
    # took 36 s.
    code, _ = kernel_variant(kern)

    def impl(gains, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of):
        _scan_real_as(code, uses_tables(tables), gains, f, data, level, stats, chosen, tables, params, cst, lower_of,
                      upper_of, kern)

    return impl


def _scan_missing_for(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of,
                      upper_of):
    raise NotImplementedError("called in compiled code only")


@overload(_scan_missing_for)
def _scan_missing_variant(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of,
                          upper_of):
    # Kernels of data without a missing value never reach this call: the batched loop
    # (8 s of compilation) is left out of them.
    if not kernel_variant(kern)[1]:
        def skip(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of):
            pass

        return skip

    def impl(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of):
        K = data.YW.shape[1]
        batch = Batch(np.empty((_BATCH, K)), np.empty((_BATCH, K)), np.empty(_BATCH, dtype=np.intp),
                      np.empty(_BATCH, dtype=np.bool_), np.empty(_BATCH, dtype=np.bool_), np.empty(_BATCH),
                      np.empty(K))
        _scan_missing(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of,
                      upper_of, batch)

    return impl


@compiled
def _feature_has_missing(XT, order, seg, f):
    for s in range(seg.shape[0] - 1):
        if seg[s + 1] > seg[s] and XT[f, order[f, seg[s + 1] - 1]] != XT[f, order[f, seg[s + 1] - 1]]:
            return True
    return False


@compiled(inline=True)
def _add_row(run, YW, row, p, start, s, encoded):
    """Add row ``row`` (position ``p``, node ``s`` starting at ``start``) to the running counts."""
    for k in range(run.shape[0]):
        x = YW[row, k]
        if p == start and s > 0:
            x = x - encoded[s - 1, k]
        run[k] = x if p == 0 else run[k] + x


@compiled(inline=True)
def _scan_real_as(code, use_table, gains, f, data, level, stats, chosen, tables, params, cst, lower_of, upper_of,
                  kern):
    # Arrays read out of their tuples once: reading them per candidate costs reference counting.
    YW, order, XT, seg, frontier = data.YW, level.order, data.XT, level.seg, level.frontier
    encoded, mass, weight, present = stats.encoded, stats.mass, stats.weight, stats.present
    xlogx, log, wig_weights = tables.xlogx, tables.log, tables.wig_weights
    msl, exact = params.min_samples_leaf, params.exact
    sign = cst[f]
    K = YW.shape[1]
    run = np.empty(K)
    lv = np.empty(K)
    rv = np.empty(K)
    norms = np.zeros(K)
    for s in range(seg.shape[0] - 1):
        start, end = seg[s], seg[s + 1]
        use = chosen[s, f]
        parent = encoded[s]
        scale = 1.0 if code == RANKING else 1.0 / weight[s]
        if code == WIG and use:
            norms = wig_norms(present[s], wig_weights)
        lower, upper = lower_of[frontier[s]], upper_of[frontier[s]]
        previous = 0.0
        for p in range(start, end):
            row = order[f, p]
            if use:
                value = XT[f, row]
                if p > start and is_candidate(previous, value, p - start, end - start, msl):
                    gain = candidate_gain(code, use_table, run, parent, exact, mass[s], scale, norms, xlogx, log,
                                          wig_weights, lv, rv)
                    if sign == 0 or _monotone_ok(kern, lv, rv, sign, lower, upper):
                        gains[p - 1] = gain
                previous = value
            _add_row(run, YW, row, p, start, s, encoded)


@compiled(inline=True)
def _monotone_ok(kern, left, right, sign, lower, upper):
    """scikit-learn's monotone rule: the children's (unclipped) mean class indices lie in the
    node's bounds and go the constraint's way (``sign * (right - left) >= 0``)."""
    mean_left = node_mean(kern, left)
    mean_right = node_mean(kern, right)
    return ((mean_right - mean_left) * sign >= 0 and mean_left >= lower and mean_left <= upper
            and mean_right >= lower and mean_right <= upper)


@compiled
def _scan_missing(gains, gains_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of,
                  batch):
    """:func:`scan_feature` for a feature with missing values in the level."""
    YW, order, XT, seg = data.YW, level.order, data.XT, level.seg
    encoded = stats.encoded
    msl = params.min_samples_leaf
    K = YW.shape[1]
    run = np.empty(K)
    real_total = np.empty(K)
    batch_left, batch_position, batch_right_ok, batch_left_ok = (batch.left, batch.position, batch.right_ok,
                                                                 batch.left_ok)
    for s in range(seg.shape[0] - 1):
        start, end = seg[s], seg[s + 1]
        use = chosen[s, f]
        n_node = end - start
        n_missing = n_missing_at_end(XT, order, f, start, end) if use else 0
        last_real = end - 1 - n_missing
        if n_missing > 0:
            _missing_counts(YW, order, f, last_real + 1, end, batch.missing)
        n_batch = 0
        previous = 0.0
        for p in range(start, end):
            row = order[f, p]
            if use and p <= last_real:
                value = XT[f, row]
                if p > start:
                    right_ok = is_candidate(previous, value, p - start, n_node, msl)
                    left_ok = n_missing > 0 and is_candidate(previous, value, p - start + n_missing, n_node, msl)
                    if right_ok or left_ok:
                        for k in range(K):
                            batch_left[n_batch, k] = run[k]
                        batch_position[n_batch] = p - 1
                        batch_right_ok[n_batch] = right_ok
                        batch_left_ok[n_batch] = left_ok
                        n_batch += 1
                        if n_batch == _BATCH:
                            _score(gains, gains_left, batch, np.intp(n_batch), np.intp(n_missing), s, f, stats, kern,
                                   tables, params, cst, lower_of, upper_of, level.frontier)
                            n_batch = 0
                previous = value
            _add_row(run, YW, row, p, start, s, encoded)
            if p == last_real and n_missing > 0:
                real_total[:] = run
        if n_batch > 0:
            _score(gains, gains_left, batch, np.intp(n_batch), np.intp(n_missing), s, f, stats, kern, tables,
                   params, cst, lower_of, upper_of, level.frontier)
        if n_missing > 0 and n_missing >= msl and n_node - n_missing >= max(msl, 1):
            # Every real value left, the missing ones right.
            batch_left[0] = real_total
            batch_position[0] = last_real
            batch_right_ok[0] = True
            batch_left_ok[0] = False
            # The counts as np.intp, never as numba literals: each literal value would compile
            # _score (and its criterion loop) once more.
            _score(gains, gains_left, batch, np.intp(1), np.intp(0), s, f, stats, kern, tables, params, cst,
                   lower_of, upper_of, level.frontier)


@compiled
def _missing_counts(YW, order, f, first, end, out):
    """Encoded counts of the rows at positions ``[first, end)`` of ``f``'s order."""
    out[:] = 0.0
    for p in range(first, end):
        for k in range(out.shape[0]):
            out[k] += YW[order[f, p], k]


@compiled
def _score(gains, gains_left, batch, n_batch, n_missing, s, f, stats, kern, tables, params, cst, lower_of,
           upper_of, frontier):
    """Score a batch of candidates of node ``s``, with the node's ``n_missing`` missing rows
    on the right, then on the left, and write the valid gains at their positions."""
    lower, upper = lower_of[frontier[s]], upper_of[frontier[s]]
    left, shifted, position, scores = batch.left, batch.shifted, batch.position, batch.scores
    right_ok, left_ok, missing = batch.right_ok, batch.left_ok, batch.missing
    parent, present = stats.encoded[s], stats.present[s]
    for side in range(2 if n_missing > 0 else 1):
        rows = left
        if side == 1:
            rows = shifted
            for i in range(n_batch):
                for k in range(rows.shape[1]):
                    rows[i, k] = left[i, k] + missing[k]
        split_gains(kern, tables, rows, n_batch, parent, present, stats.mass[s], 1.0 / stats.weight[s],
                    params.exact, scores)
        if cst[f] != 0:
            _monotone_filter(kern, rows, n_batch, parent, params.exact, cst[f], lower, upper, scores)
        if side == 0:
            for i in range(n_batch):
                if right_ok[i]:
                    gains[position[i]] = scores[i]
        else:
            for i in range(n_batch):
                if left_ok[i]:
                    gains_left[position[i]] = scores[i]


@compiled
def keep_best(G, G_left, f0, seg, tol, best):
    """Update each node's best split from the gains of features ``f0, f0 + 1, ...``
    (``G_left``: missing values sent left; empty when the level has none).

    The tie rule: gains within the node's tolerance of the best are ties, and the
    lowest feature, then the lowest position, then missing values sent right wins;
    an earlier block keeps its split unless this block's best exceeds it by more
    than the tolerance.
    """
    c = G.shape[0]
    has_left = G_left.shape[0] > 0
    for s in range(seg.shape[0] - 1):
        start, end = seg[s], seg[s + 1]
        top = -np.inf
        for fi in range(c):
            for p in range(start, end):
                if G[fi, p] > top:
                    top = G[fi, p]
        if has_left:
            for fi in range(c):
                for p in range(start, end):
                    if G_left[fi, p] > top:
                        top = G_left[fi, p]
        if not top > best.gain[s] + tol[s]:
            continue
        cut = top - tol[s]
        if has_left:
            _first_at_least_both(G, G_left, f0, s, start, end, cut, best)
        else:
            _first_at_least(G, f0, s, start, end, cut, best)


@compiled
def _first_at_least(G, f0, s, start, end, cut, best):
    """Record the first gain of node ``s`` at least ``cut``: lowest feature, then position."""
    for fi in range(G.shape[0]):
        for p in range(start, end):
            if G[fi, p] >= cut:
                best.gain[s] = G[fi, p]
                best.feature[s] = f0 + fi
                best.position[s] = p
                best.missing_left[s] = False
                return


@compiled
def _first_at_least_both(G, G_left, f0, s, start, end, cut, best):
    """As :func:`_first_at_least`, a position's missing-right candidate before its missing-left one."""
    for fi in range(G.shape[0]):
        for p in range(start, end):
            for side in range(2):
                gain = G[fi, p] if side == 0 else G_left[fi, p]
                if gain >= cut:
                    best.gain[s] = gain
                    best.feature[s] = f0 + fi
                    best.position[s] = p
                    best.missing_left[s] = side == 1
                    return


@compiled
def _level_has_missing(XT, order, seg):
    """Whether some node of the level has a missing value in some feature (at a segment's end)."""
    for f in range(order.shape[0]):
        if _feature_has_missing(XT, order, seg, f):
            return True
    return False


@compiled
def find_splits(data, level, stats, chosen, kern, tables, params, cst, lower_of, upper_of):
    """Each node's best split (gain ``-inf`` and feature ``-1`` where there is none).

    Features are scored in blocks of at most ``params.block_elements / (rows * K)``
    features, which bounds the memory of the gain block.
    """
    d, m = level.order.shape
    nf = level.frontier.shape[0]
    K = data.YW.shape[1]
    best = BestSplits(np.full(nf, -np.inf), np.full(nf, -1, dtype=np.intp), np.full(nf, -1, dtype=np.intp),
                      np.zeros(nf, dtype=np.bool_))
    has_missing = _level_has_missing(data.XT, level.order, level.seg)
    block = max(1, params.block_elements // max(1, m * K * (2 if has_missing else 1)))
    for f0 in range(0, d, block):
        f1 = min(d, f0 + block)
        G = np.full((f1 - f0, m), -np.inf)
        G_left = np.full((f1 - f0, m) if has_missing else (0, 0), -np.inf)
        for f in range(f0, f1):
            row_left = G_left[f - f0] if has_missing else np.empty(0)
            scan_feature(G[f - f0], row_left, f, data, level, stats, chosen, kern, tables, params, cst, lower_of,
                         upper_of)
        keep_best(G, G_left, f0, level.seg, stats.tol, best)
    return best
