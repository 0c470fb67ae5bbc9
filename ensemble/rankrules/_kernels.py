"""Compiled kernels of RankRules: the candidate sweep of section 3.2 and the growth of one rule.

The formulas are those of :mod:`ensemble.rankrules._core`, whose
``candidate_rank_sums`` and ``IMPURITIES`` call the kernels below, so that the
tests of those functions against brute force check the code ``fit`` runs.

One attribute's covered examples, in its sorted order, form a row. The running
sums are per threshold ``k`` (``W_k^+`` takes ``a`` when ``code > k``, ``W_k^-``
takes ``b`` otherwise), accumulated in position order; the sums over the
examples after a cut are accumulated from the row's end, never taken as a total
minus a prefix (that would cancel when the prefix holds nearly all the weight).
Thresholds are taken four at a time so that the eight running sums are
independent chains held in registers, and the masks (read from a small table by
class code) multiply rather than branch (the codes are in random order along a
row): ``x * 1.0``, ``x * 0.0`` and adding ``0.0`` are exact, so the sums are
those of the entries taken, in order. The impurities are then computed by loops
over whole rows, which the compiler vectorises.
"""

from __future__ import annotations

import math

import numpy as np

from ensemble.base._kernels import compiled

__all__ = ["SM", "GD", "GB", "CS", "impurity", "impurities", "cut_threshold", "cut_thresholds",
           "row_sums", "workspace", "grow"]

#: Technique codes of the compiled impurity.
SM, GD, GB, CS = 0, 1, 2, 3

# Row d of _MASKS, d = code - k0 + 4 clipped to 0..8, holds the masks of the four
# thresholds k0..k0+3: [code > k] (the y > k sums) then [code <= k] (y <= k).
_MASKS = np.array([[1.0 if d - 4 > j else 0.0 for j in range(4)]
                   + [0.0 if d - 4 > j else 1.0 for j in range(4)] for d in range(9)])


@compiled
def impurity(technique, w_gt, w_lt, c_gt, c_lt, beta):
    """Impurity of one candidate (lower is better, 0 for a rule affecting no pair)."""
    if technique == SM:
        # Eq. (10) with its sign corrected: substituting alpha of (9) into (7)
        # gives 2 sqrt(W> W<) + W0 = W - (sqrt(W>) - sqrt(W<))^2.
        return -abs(math.sqrt(w_gt) - math.sqrt(w_lt))
    if technique == GD:
        # Eq. (12): sum_ij Phi(x_i, x_j) w_ij = W> - W< (Theorem 2's proof uses the difference).
        return -abs(w_gt - w_lt)
    if technique == GB:
        # Eq. (19): (12) normalised by the square root of the number of affected pairs.
        n_affected = c_gt + c_lt
        return -abs(w_gt - w_lt) / math.sqrt(n_affected) if n_affected > 0 else 0.0
    # Eq. (20) minimised over alpha in {-beta, beta}; W0 = W - W> - W< and the
    # constant W is dropped so that the empty rule scores 0.
    e_minus, e_plus = math.exp(-beta), math.exp(beta)
    positive = e_minus * w_gt + e_plus * w_lt
    negative = e_plus * w_gt + e_minus * w_lt
    return min(positive, negative) - w_gt - w_lt


@compiled
def impurities(technique, w_gt, w_lt, c_gt, c_lt, beta, out):
    """:func:`impurity` of flat arrays into ``out``."""
    for i in range(out.shape[0]):
        out[i] = impurity(technique, w_gt[i], w_lt[i], c_gt[i], c_lt[i], beta)


@compiled
def cut_threshold(lo, hi, direction):
    """Threshold between adjacent sorted values ``lo < hi`` splitting exactly between them.

    The midpoint of two adjacent floats can round onto either end; "x <= s"
    (direction 0) must exclude ``hi``, "x >= s" (direction 1) must exclude ``lo``.
    A gap wider than the largest float (``hi - lo`` overflows) is halved first.
    """
    mid = lo + (hi - lo) / 2.0
    if not math.isfinite(mid):
        mid = lo / 2.0 + hi / 2.0
    if direction == 0:
        return lo if mid >= hi else mid
    return hi if mid <= lo else mid


# ---------------------------------------------------------------------------
# The sweep of one row


@compiled
def row_sums(codes, a, b, n, out_plus, out_minus, suffix, w):
    """``W_>, W_<`` of the ``2 (n - 1)`` cuts of one sorted row (its first ``n`` entries).

    ``suffix`` is scratch of shape (>= n - 1, 8); ``w`` gets shape (4, >= n - 1):
    ``W_>`` and ``W_<`` of "x <= s" (the first ``t`` positions, cut ``t - 1``),
    then those of "x >= s".
    """
    n_thresholds = out_plus.shape[0]
    masks = _MASKS
    for k0 in range(0, n_thresholds, 4):
        _suffix_block(codes, a, b, n, k0, masks, suffix)
        _prefix_block(codes, a, b, n, k0, min(4, n_thresholds - k0), masks, out_plus,
                      out_minus, suffix, w)


@compiled
def _suffix_block(codes, a, b, n, k0, masks, suffix):
    """Sums over the positions after each cut, from the row's end, for thresholds k0..k0+3.

    A lane past the last threshold has an all-zero ``y > k`` mask (codes are at
    most ``K - 1``) and is never read.
    """
    plus0 = plus1 = plus2 = plus3 = 0.0
    minus0 = minus1 = minus2 = minus3 = 0.0
    for t in range(n - 1, 0, -1):
        mask = masks[min(max(codes[t] - k0 + 4, 0), 8)]
        a_t = a[t]
        b_t = b[t]
        plus0 += a_t * mask[0]
        plus1 += a_t * mask[1]
        plus2 += a_t * mask[2]
        plus3 += a_t * mask[3]
        minus0 += b_t * mask[4]
        minus1 += b_t * mask[5]
        minus2 += b_t * mask[6]
        minus3 += b_t * mask[7]
        suffix[t - 1, 0] = plus0
        suffix[t - 1, 1] = plus1
        suffix[t - 1, 2] = plus2
        suffix[t - 1, 3] = plus3
        suffix[t - 1, 4] = minus0
        suffix[t - 1, 5] = minus1
        suffix[t - 1, 6] = minus2
        suffix[t - 1, 7] = minus3


@compiled
def _term(prefix_plus, prefix_minus, rest_plus, rest_minus, o_plus, o_minus, sums):
    """Add one threshold's terms; "x <= s" covers the prefix, "x >= s" the rest.

    The other end joins the outside set: ``W_> = sum_k W_k^+ (O_k^- + R_k^-)``.
    """
    return (
        sums[0] + prefix_plus * (o_minus + rest_minus),
        sums[1] + prefix_minus * (o_plus + rest_plus),
        sums[2] + rest_plus * (o_minus + prefix_minus),
        sums[3] + rest_minus * (o_plus + prefix_plus),
    )


@compiled
def _prefix_block(codes, a, b, n, k0, lanes, masks, out_plus, out_minus, suffix, w):
    """Add thresholds k0..k0+lanes-1 to the ``W`` of every cut (the first block starts at 0)."""
    o_plus0, o_minus0 = out_plus[k0], out_minus[k0]
    o_plus1 = out_plus[k0 + 1] if lanes > 1 else 0.0
    o_minus1 = out_minus[k0 + 1] if lanes > 1 else 0.0
    o_plus2 = out_plus[k0 + 2] if lanes > 2 else 0.0
    o_minus2 = out_minus[k0 + 2] if lanes > 2 else 0.0
    o_plus3 = out_plus[k0 + 3] if lanes > 3 else 0.0
    o_minus3 = out_minus[k0 + 3] if lanes > 3 else 0.0
    plus0 = plus1 = plus2 = plus3 = 0.0
    minus0 = minus1 = minus2 = minus3 = 0.0
    for t in range(1, n):
        mask = masks[min(max(codes[t - 1] - k0 + 4, 0), 8)]
        a_t = a[t - 1]
        b_t = b[t - 1]
        plus0 += a_t * mask[0]
        plus1 += a_t * mask[1]
        plus2 += a_t * mask[2]
        plus3 += a_t * mask[3]
        minus0 += b_t * mask[4]
        minus1 += b_t * mask[5]
        minus2 += b_t * mask[6]
        minus3 += b_t * mask[7]
        r = t - 1
        # 0.0 + x is exactly x: the first threshold starts every sum.
        sums = (0.0, 0.0, 0.0, 0.0) if k0 == 0 else (w[0, r], w[1, r], w[2, r], w[3, r])
        sums = _term(plus0, minus0, suffix[r, 0], suffix[r, 4], o_plus0, o_minus0, sums)
        if lanes > 1:
            sums = _term(plus1, minus1, suffix[r, 1], suffix[r, 5], o_plus1, o_minus1, sums)
        if lanes > 2:
            sums = _term(plus2, minus2, suffix[r, 2], suffix[r, 6], o_plus2, o_minus2, sums)
        if lanes > 3:
            sums = _term(plus3, minus3, suffix[r, 3], suffix[r, 7], o_plus3, o_minus3, sums)
        w[0, r], w[1, r], w[2, r], w[3, r] = sums


@compiled
def _impurity_loop(technique, w, counts, count, beta, scores):
    for direction in range(2):
        for r in range(count):
            scores[direction, r] = impurity(
                technique, w[2 * direction, r], w[2 * direction + 1, r],
                counts[2 * direction, r], counts[2 * direction + 1, r], beta)


@compiled
def _row_scores(values, codes, a, b, weight, n, outside, counts_outside, technique, beta,
                need_counts, suffix, w, counts, scores, row_min, ge_allowed):
    """Impurity of the ``2 (n - 1)`` cuts of one row into ``scores`` (inf where no cut).

    ``row_min`` gets the smallest impurity of each direction; without ``ge_allowed``
    the ``>=`` direction has none (its suffix would hold the row's missing values).
    """
    row_sums(codes, a, b, n, outside[0], outside[1], suffix, w)
    if need_counts:
        row_sums(codes, weight, weight, n, counts_outside[0], counts_outside[1], suffix, counts)
    # One loop per technique with a constant code: branch-free bodies that the
    # compiler vectorises.
    if technique == SM:
        _impurity_loop(SM, w, counts, n - 1, beta, scores)
    elif technique == GD:
        _impurity_loop(GD, w, counts, n - 1, beta, scores)
    elif technique == GB:
        _impurity_loop(GB, w, counts, n - 1, beta, scores)
    else:
        _impurity_loop(CS, w, counts, n - 1, beta, scores)
    low_le = np.inf
    low_ge = np.inf
    for r in range(n - 1):
        if values[r] < values[r + 1]:
            low_le = min(low_le, scores[0, r])
            low_ge = min(low_ge, scores[1, r])
        else:
            scores[0, r] = np.inf
            scores[1, r] = np.inf
    row_min[0] = low_le
    row_min[1] = low_ge if ge_allowed else np.inf


@compiled
def cut_thresholds(values, n, out):
    """Thresholds of both directions of the ``n - 1`` cuts of one sorted row, ``out[direction, cut]``."""
    for i in range(n - 1):
        out[0, i] = cut_threshold(values[i], values[i + 1], 0)
        out[1, i] = cut_threshold(values[i], values[i + 1], 1)


# ---------------------------------------------------------------------------
# Growing one rule


@compiled
def workspace(n_features, n_sub, need_counts):
    """Arrays :func:`grow` fills for a subsample of ``n_sub`` rows (allocated once per fit).

    Fresh arrays for every rule cost more in page faults than the gathering itself.
    """
    width = n_sub + 1  # a spare column for the branch-free gathering
    cuts = max(n_sub - 1, 0)
    return (
        np.empty((n_features, width), dtype=np.int64),
        np.empty((n_features, width)),
        np.empty((n_features, width), dtype=np.int64),
        np.empty((n_features, width)),
        np.empty((n_features, width)),
        np.empty((n_features, width if need_counts else 0)),
        np.empty((cuts, 8)),
        np.zeros((4, cuts)),
        np.zeros((4, cuts)),
        np.empty((2, cuts)),
    )


@compiled
def grow(order, sorted_values, sorted_codes, in_sub, codes, a, b, weight, n_classes, technique,
         beta, need_counts, tolerance, work, ge_allowed):
    """Greedy growth of one rule on the subsample ``in_sub``; see ``ensemble.rankrules._core.grow_rule``.

    ``ge_allowed[p]``: whether attribute ``p`` may take a ``>=`` condition.

    ``work`` is :func:`workspace` for this subsample size. Returns
    ``(lower, upper, covered, n_conditions)``.
    """
    n_features = order.shape[0]
    ids, values, row_codes, row_a, row_b, row_w, suffix, w, counts, scores = work
    n = _gather(order, sorted_values, sorted_codes, in_sub, a, b, weight, need_counts, ids,
                values, row_codes, row_a, row_b, row_w)
    members = np.flatnonzero(in_sub)
    outside = np.zeros((2, n_classes - 1))
    counts_outside = np.zeros((2, n_classes - 1))
    row_min = np.empty((n_features, 2))
    lower = np.full(n_features, -np.inf)
    upper = np.full(n_features, np.inf)
    covered = in_sub.copy()  # the empty rule covers the whole subsample
    current = 0.0  # every impurity scores the empty rule 0
    n_conditions = 0
    while n >= 2:
        _outside_sums(members, covered, codes, a, b, outside)
        if need_counts:
            _outside_sums(members, covered, codes, weight, weight, counts_outside)
        for p in range(n_features):
            _row_scores(values[p], row_codes[p], row_a[p], row_b[p], row_w[p], n, outside,
                        counts_outside, technique, beta, need_counts, suffix, w,
                        counts, scores, row_min[p], ge_allowed[p])
        best = row_min.min()
        if not best < current - tolerance * abs(current):
            break
        # The first candidate (attribute, direction "<=" before ">=", cut) within the
        # tolerance of the best wins; only its row is scored again.
        limit = best + tolerance * abs(best)
        p, direction = _first_candidate(row_min, limit)
        _row_scores(values[p], row_codes[p], row_a[p], row_b[p], row_w[p], n, outside,
                    counts_outside, technique, beta, need_counts, suffix, w,
                    counts, scores, row_min[p], ge_allowed[p])
        t = 1
        while not scores[direction, t - 1] <= limit:
            t += 1
        s = cut_threshold(values[p, t - 1], values[p, t], direction)
        start, stop = (0, t) if direction == 0 else (t, n)
        if direction == 0:
            upper[p] = min(upper[p], s)
        else:
            lower[p] = max(lower[p], s)
        for j in range(n):
            covered[ids[p, j]] = False
        for j in range(start, stop):
            covered[ids[p, j]] = True
        for q in range(n_features):
            _compact(covered, n, ids[q], values[q], row_codes[q], row_a[q], row_b[q], row_w[q],
                     need_counts)
        n = stop - start
        current = best
        n_conditions += 1
    return lower, upper, covered, n_conditions


@compiled
def _gather(order, sorted_values, sorted_codes, in_sub, a, b, weight, need_counts, ids, values,
            row_codes, row_a, row_b, row_w):
    """Fill the subsample's rows (each attribute's presorted order, filtered to ``in_sub``).

    Every entry is written and the write position advances only past the
    subsample's (no branch on the random membership; the last write may fall
    on the spare column). Returns the subsample size.
    """
    n_features, n_samples = order.shape
    n = 0
    for i in range(n_samples):
        n += in_sub[i]
    for p in range(n_features):
        j = 0
        for r in range(n_samples):
            i = order[p, r]
            ids[p, j] = i
            values[p, j] = sorted_values[p, r]
            row_codes[p, j] = sorted_codes[p, r]
            row_a[p, j] = a[i]
            row_b[p, j] = b[i]
            if need_counts:
                row_w[p, j] = weight[i]
            j = min(j + in_sub[i], n)
    return n


@compiled
def _first_candidate(row_min, limit):
    for p in range(row_min.shape[0]):
        for direction in range(2):
            if row_min[p, direction] <= limit:
                return p, direction
    return -1, -1


@compiled
def _compact(covered, n, ids, values, codes, a, b, w, need_counts):
    """Keep the covered entries of one row, in order, at its front."""
    kept = 0
    for j in range(n):
        i = ids[j]
        ids[kept] = i
        values[kept] = values[j]
        codes[kept] = codes[j]
        a[kept] = a[j]
        b[kept] = b[j]
        if need_counts:
            w[kept] = w[j]
        kept += covered[i]


@compiled
def _outside_sums(members, covered, codes, a, b, out):
    """``out[0]``: sum of ``a`` over ``y > k``, ``out[1]``: of ``b`` over ``y <= k``, outside the rule.

    Over the subsample ``members`` (increasing indices) not covered: summed per
    class in index order, then over classes (from the top for ``y > k``), as
    ``class_threshold_sums`` does.
    """
    n_classes = out.shape[1] + 1
    per_class_a = np.zeros(n_classes)
    per_class_b = np.zeros(n_classes)
    for i in members:
        if not covered[i]:
            per_class_a[codes[i]] += a[i]
            per_class_b[codes[i]] += b[i]
    run = per_class_a[n_classes - 1]
    out[0, n_classes - 2] = run
    for k in range(n_classes - 3, -1, -1):
        run += per_class_a[k + 1]
        out[0, k] = run
    run = per_class_b[0]
    out[1, 0] = run
    for k in range(1, n_classes - 1):
        run += per_class_b[k]
        out[1, k] = run
