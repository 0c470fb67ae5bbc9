"""Pure numerical kernels of RankRules (Dembczyński & Kotłowski, 2009).

Every function here works on integer class codes ``0..K-1`` (the ordinal order)
and on the two per-example weight vectors of section 3.2 of the paper,
``a_i = exp(-f(x_i))`` (the paper's ``w_i``) and ``b_i = exp(f(x_i))`` (its
``w_i^-``). Nothing here knows about estimators, so the tests can compare each
kernel with an independent brute-force computation over pairs.

Sample weights ``v_i`` need no separate code path: the rank loss with a pair
``y_i > y_j`` weighted by ``v_i v_j`` is the same sum with ``a_i = v_i exp(-f(x_i))``
and ``b_i = v_i exp(f(x_i))``, so callers fold the weights into ``a`` and ``b``
and every per-class sum below, hence every O(KN) formula, stays as it is.

Conventions
-----------
* "above threshold k" means ``y > k`` in the paper's 1-based labels, i.e.
  ``code >= k`` for ``k = 1..K-1``; the vectors below are indexed by ``k - 1``.
* Pairs are counted as in the O(KN) decomposition of section 3.2: a pair with
  ``y_i > y_j`` enters once per threshold separating the two labels, i.e. with
  multiplicity ``y_i - y_j``. For ``K = 2`` this is exactly the pairwise rank
  loss (7); for ``K > 2`` it is the sum over the ``K - 1`` bipartite ranking
  problems ``{y <= k}`` versus ``{y > k}`` (the paper's equation (7) omits the
  multiplicity, its fast implementation and therefore its experiments have it).
* Impurities are written so that lower is better and the empty rule (which
  covers every example, so that no pair is affected) scores exactly 0.

The loops over examples are compiled in :mod:`ensemble.rankrules._kernels`;
the functions here are their interface (and the tests' entry points).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ensemble.rankrules import _kernels

__all__ = [
    "IMPURITIES",
    "class_threshold_sums",
    "rank_sums",
    "candidate_rank_sums",
    "response_closed_form",
    "fit_thresholds",
    "cumulative_proba",
    "grow_rule",
    "presort",
]


def class_threshold_sums(
    codes: ArrayLike, a: ArrayLike, b: ArrayLike, covered: ArrayLike, n_classes: int
) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Per-threshold weight sums ``W_k^+, W_k^-, W_k^{0+}, W_k^{0-}`` of section 3.2.

    Parameters
    ----------
    codes : array-like of int, shape (n_samples,)
        Class codes in ``0..n_classes-1``.
    a : array-like of shape (n_samples,)
        Weights ``exp(-f(x_i))`` (up to a common positive factor).
    b : array-like of shape (n_samples,)
        Weights ``exp(f(x_i))`` (up to a common positive factor).
    covered : array-like of bool, shape (n_samples,)
        ``Phi(x_i)``, whether the rule covers example ``i``.
    n_classes : int
        Number of classes ``K``.

    Returns
    -------
    w_plus, w_minus, w0_plus, w0_minus : ndarray of shape (n_classes - 1,)
        Entry ``k - 1`` holds, for ``k = 1..K-1``: the sum of ``a`` over covered
        examples with ``y > k``; of ``b`` over covered examples with ``y <= k``;
        and the same two sums over the examples not covered.

    Notes
    -----
    RankRules paper, section 3.2. Complexity O(N + K).

    Examples
    --------
    >>> import numpy as np
    >>> wp, wm, w0p, w0m = class_threshold_sums(
    ...     [0, 1, 2], np.ones(3), np.ones(3), [True, False, True], 3)
    >>> wp.tolist(), wm.tolist(), w0p.tolist(), w0m.tolist()
    ([1.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0])
    """
    codes = np.asarray(codes, dtype=np.intp)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    covered = np.asarray(covered, dtype=bool)
    # Per-class totals first, then cumulative over classes: O(N + K), no N x K array.
    a_cov = np.bincount(codes, weights=np.where(covered, a, 0.0), minlength=n_classes)
    a_unc = np.bincount(codes, weights=np.where(covered, 0.0, a), minlength=n_classes)
    b_cov = np.bincount(codes, weights=np.where(covered, b, 0.0), minlength=n_classes)
    b_unc = np.bincount(codes, weights=np.where(covered, 0.0, b), minlength=n_classes)
    # "y > k" sums are suffix sums over classes k..K-1; "y <= k" prefix sums 0..k-1.
    w_plus = np.cumsum(a_cov[::-1])[::-1][1:]
    w0_plus = np.cumsum(a_unc[::-1])[::-1][1:]
    w_minus = np.cumsum(b_cov)[:-1]
    w0_minus = np.cumsum(b_unc)[:-1]
    return w_plus, w_minus, w0_plus, w0_minus


def rank_sums(
    codes: ArrayLike, a: ArrayLike, b: ArrayLike, covered: ArrayLike, n_classes: int
) -> tuple[float, float, float]:
    """Weights ``W_>``, ``W_<`` and ``W`` of the pairs affected by a rule, in O(KN).

    Parameters
    ----------
    codes, a, b, covered, n_classes
        As in :func:`class_threshold_sums`.

    Returns
    -------
    w_gt : float
        ``W_> = sum_k W_k^+ W_k^{0-}``: weight of the pairs ``y_i > y_j`` with
        ``x_i`` covered and ``x_j`` not (the rule ranks them correctly when
        ``alpha > 0``).
    w_lt : float
        ``W_< = sum_k W_k^- W_k^{0+}``: pairs with ``x_j`` covered and ``x_i`` not.
    w_total : float
        ``W``, the weight of all pairs, ``sum_k (W_k^+ + W_k^{0+})(W_k^- + W_k^{0-})``.

    Notes
    -----
    RankRules paper, section 3.2; a pair ``y_i > y_j`` has weight
    ``a_i b_j = exp(-(f(x_i) - f(x_j)))`` and multiplicity ``y_i - y_j`` (see the
    module notes). Complexity O(N + K) instead of the O(N^2) of a sum over pairs.

    Examples
    --------
    >>> import numpy as np
    >>> rank_sums([0, 1, 2], np.ones(3), np.ones(3), [False, False, True], 3)
    (3.0, 0.0, 4.0)
    """
    wp, wm, w0p, w0m = class_threshold_sums(codes, a, b, covered, n_classes)
    w_gt = float(wp @ w0m)
    w_lt = float(wm @ w0p)
    w_total = float((wp + w0p) @ (wm + w0m))
    return w_gt, w_lt, w_total


def candidate_rank_sums(
    values: NDArray,
    codes: NDArray,
    a: NDArray,
    b: NDArray,
    total_plus: NDArray,
    total_minus: NDArray,
    *,
    outside_plus: NDArray | None = None,
    outside_minus: NDArray | None = None,
) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """``W_>`` and ``W_<`` of every candidate condition, from running sums.

    The examples covered by the current rule are given sorted by each attribute
    (one row per attribute). Cutting a row after its first ``t`` examples gives
    the candidate ``x_p <= s`` (the first ``t`` stay covered) and the candidate
    ``x_p >= s`` (the last ``n - t`` stay covered), ``t = 1..n-1``. Moving ``t``
    by one moves one example across the cut, so all the sums ``W_k^+, W_k^-``
    follow from running sums along the row (section 3.2 of the paper).

    Parameters
    ----------
    values : ndarray of shape (n_attributes, n)
        Attribute values of the covered examples, each row sorted increasingly.
    codes : ndarray of int, shape (n_attributes, n)
        Class codes ``0..K-1`` in the same order.
    a, b : ndarray of shape (n_attributes, n)
        Weights ``exp(-f)`` and ``exp(f)`` in the same order.
    total_plus : ndarray of shape (K - 1,)
        ``sum of a over y > k`` over the whole (sub)sample the rule is grown on,
        covered or not.
    total_minus : ndarray of shape (K - 1,)
        ``sum of b over y <= k`` over the same set.
    outside_plus, outside_minus : ndarray of shape (K - 1,) or None, default=None
        The same two sums over the examples of that set *not* covered by the
        current rule, i.e. not in ``values``. ``None`` derives them as the totals
        minus the sums over the row, which cancels when the rule holds nearly all
        the weight; callers that have them (:class:`ensemble.RankRules` does)
        should pass them, and then every ``W`` is a sum of non-negative terms.

    Returns
    -------
    w_gt, w_lt : ndarray of shape (n_attributes, 2, n - 1)
        ``W_>`` and ``W_<`` of the rule with the candidate condition added; axis 1
        is the direction (0: ``x_p <= s``, 1: ``x_p >= s``), axis 2 is ``t - 1``.
    valid : ndarray of bool, shape (n_attributes, n - 1)
        Whether a threshold exists between positions ``t - 1`` and ``t`` (the two
        values differ).
    thresholds : ndarray of shape (n_attributes, 2, n - 1)
        The threshold ``s`` of each candidate: the midpoint of the two values,
        nudged so that the condition splits the row exactly at ``t``.

    Notes
    -----
    Complexity O(n_attributes * n * K) time, with compiled loops (the kernel
    :class:`ensemble.RankRules` grows its rules with); ``rank_sums`` applied to
    each candidate's covered set would cost O(n_attributes * n^2). The
    uncovered side of a candidate is the outside set plus the other end of the
    row, so ``W_> = sum_k W_k^+ (O_k^- + R_k^-)`` is accumulated from
    non-negative terms (the other end's sums ``R`` are summed from that end,
    not taken as total minus prefix, which would cancel for small covered sets):
    candidates that cover the same examples (through different attributes) or
    complementary ones (while the rule covers the whole set) then agree to a few
    ulps, and their ties are broken by their order, not by rounding.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.array([[0.0, 1.0, 2.0]])
    >>> codes = np.array([[0, 1, 2]])
    >>> ones = np.ones((1, 3))
    >>> w_gt, w_lt, valid, s = candidate_rank_sums(
    ...     values, codes, ones, ones, np.array([2.0, 1.0]), np.array([1.0, 2.0]))
    >>> w_gt[0].tolist(), w_lt[0].tolist(), s[0].tolist()
    ([[0.0, 0.0], [3.0, 3.0]], [[3.0, 3.0], [0.0, 0.0]], [[0.5, 1.5], [0.5, 1.5]])
    """
    values = np.asarray(values, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n_classes = np.shape(total_plus)[0] + 1
    if outside_plus is None or outside_minus is None:
        row_plus, row_minus = _set_sums(codes[0], a[0], b[0], n_classes)
        outside_plus = np.maximum(np.asarray(total_plus, dtype=float) - row_plus, 0.0)
        outside_minus = np.maximum(np.asarray(total_minus, dtype=float) - row_minus, 0.0)
    out_plus = np.ascontiguousarray(outside_plus, dtype=float)
    out_minus = np.ascontiguousarray(outside_minus, dtype=float)
    n_attributes, n = values.shape
    n_cuts = max(n - 1, 0)
    w_gt = np.zeros((n_attributes, 2, n_cuts))
    w_lt = np.zeros_like(w_gt)
    thresholds = np.zeros_like(w_gt)
    suffix = np.empty((n_cuts, 8))
    sums = np.empty((4, n_cuts))
    for p in range(n_attributes):
        # The kernels the estimator grows its rules with.
        _kernels.row_sums(np.ascontiguousarray(codes[p]), np.ascontiguousarray(a[p]),
                          np.ascontiguousarray(b[p]), n, out_plus, out_minus, suffix, sums)
        w_gt[p], w_lt[p] = sums[0::2], sums[1::2]
        _kernels.cut_thresholds(np.ascontiguousarray(values[p]), n, thresholds[p])
    valid = values[:, :-1] < values[:, 1:]
    return w_gt, w_lt, valid, thresholds


def _set_sums(codes, a, b, n_classes):
    """``sum a over y > k`` and ``sum b over y <= k`` over one set (the totals of a row)."""
    covered = np.ones(codes.shape[0], dtype=bool)
    w_plus, w_minus, _, _ = class_threshold_sums(codes, a, b, covered, n_classes)
    return w_plus, w_minus


class _Impurity:
    """One technique of the registry: the compiled impurity over broadcast arrays."""

    def __init__(self, technique: int, name: str):
        self.technique = technique
        self.__name__ = f"impurity_{name}"

    def __call__(self, w_gt, w_lt, pair_counts, beta):
        c_gt, c_lt = (0.0, 0.0) if pair_counts is None else pair_counts
        arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (w_gt, w_lt, c_gt, c_lt)))
        flat = [np.ascontiguousarray(v).ravel() for v in arrays]
        out = np.empty(flat[0].shape[0])
        _kernels.impurities(self.technique, *flat, float(beta), out)
        return out.reshape(arrays[0].shape)


IMPURITIES: dict[str, Callable] = {
    name: _Impurity(technique, name)
    for name, technique in (
        ("sm", _kernels.SM), ("gd", _kernels.GD), ("gb", _kernels.GB), ("cs", _kernels.CS)
    )
}
"""Registry of single-rule impurities, keyed by technique name.

``"sm"`` simultaneous minimisation (eq. 10), ``"gd"`` gradient descent (eq. 12),
``"gb"`` gradient boosting (eq. 19), ``"cs"`` constant-step minimisation (eq. 20).
Each maps ``(w_gt, w_lt, pair_counts, beta)`` (arrays, broadcast together) to an
impurity (lower is better, 0 for the empty rule); ``pair_counts`` is the pair
``(C_>, C_<)`` of pair counts, used by ``"gb"`` only (``None`` for the others).
The estimator calls the same compiled formula inside its rule-growing kernel.
"""


def response_closed_form(w_gt: float, w_lt: float, eps: float) -> float:
    """Rule response ``alpha = 1/2 ln((W_> + eps) / (W_< + eps))``, eq. (9).

    Parameters
    ----------
    w_gt, w_lt : float
        ``W_>`` and ``W_<`` of the rule, computed on all training examples.
    eps : float
        Positive regulariser added to both sums (the paper adds "a small positive
        value"); :class:`ensemble.RankRules` uses the weight of one average pair.

    Returns
    -------
    float
        The response minimising ``e^{-alpha} W_> + e^{alpha} W_< + W_0``.

    Raises
    ------
    ValueError
        If ``eps`` is not positive or a sum is negative.

    Examples
    --------
    >>> round(response_closed_form(3.0, 1.0, 1.0), 6)
    0.346574
    """
    if not eps > 0:
        raise ValueError(f"eps must be positive; got {eps!r}.")
    if w_gt < 0 or w_lt < 0:
        raise ValueError(f"W sums must be non-negative; got W>={w_gt!r}, W<={w_lt!r}.")
    return 0.5 * float(np.log((w_gt + eps) / (w_lt + eps)))


def fit_thresholds(
    scores: ArrayLike,
    codes: ArrayLike,
    n_classes: int,
    sample_weight: ArrayLike | None = None,
) -> NDArray:
    """Thresholds ``theta_1..theta_{K-1}`` minimising the exponential threshold loss (8).

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        ``f(x_i)`` on the training examples.
    codes : array-like of int, shape (n_samples,)
        Class codes ``0..K-1``; every class must occur.
    n_classes : int
        ``K``.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Non-negative weights ``w_i`` of the terms of (8); ``None`` means 1. An
        integer weight counts as that many copies of the example, and scaling
        every weight by the same factor leaves the thresholds unchanged.

    Returns
    -------
    ndarray of shape (n_classes - 1,)
        ``theta_k = 1/2 ln( sum_{y_i <= k} w_i e^{f_i} / sum_{y_i > k} w_i e^{-f_i} )``,
        the stationary point of the convex sum ``sum_i w_i exp(-y_ik (f_i - theta_k))``
        for each k separately. It is non-decreasing in ``k`` (the numerator grows,
        the denominator shrinks), so constraint (3) holds without being imposed.

    Raises
    ------
    ValueError
        If the lowest or the highest class has no example of positive weight.

    Notes
    -----
    RankRules paper, eq. (8). The closed form printed below (8) in the team's
    copy of the paper pairs ``[y_ik > 0]`` with ``e^{f}`` and ``[y_ik < 0]`` with
    ``e^{-f}``; that agrees with the minimiser only when each side holds one
    example, so the form above (checked against a numerical minimisation in the
    tests) is used. Computed with a per-class log-sum-exp, so large scores do
    not overflow. Complexity O(N + K).

    Examples
    --------
    >>> fit_thresholds([-1.0, 3.0], [0, 1], 2).tolist()
    [1.0]
    >>> w = [1.0, 2.0, 0.0]  # the same as repeating the second example once more
    >>> fit_thresholds([-1.0, 3.0, 3.0], [0, 1, 1], 2, sample_weight=w).round(6).tolist()
    [0.653426]
    >>> fit_thresholds([-1.0, 3.0, 3.0], [0, 1, 1], 2).round(6).tolist()
    [0.653426]
    """
    scores = np.asarray(scores, dtype=float)
    codes = np.asarray(codes, dtype=np.intp)
    log_weight = np.zeros_like(scores)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=float)
        # A zero-weight example is no example: dropping it keeps log(0) out of the sums.
        keep = sample_weight > 0
        scores, codes, log_weight = scores[keep], codes[keep], np.log(sample_weight[keep])
    counts = np.bincount(codes, minlength=n_classes)
    if counts[0] == 0 or counts[-1] == 0:
        raise ValueError("fit_thresholds needs examples of the lowest and the highest class.")
    # log sum_{class c} w exp(+-f), then cumulative log-sum-exp over classes; the
    # weights enter as log w so that extreme weights cannot overflow either.
    log_pos = _log_class_sums(log_weight + scores, codes, n_classes)
    log_neg = _log_class_sums(log_weight - scores, codes, n_classes)
    log_below = np.logaddexp.accumulate(log_pos)[:-1]  # y <= k: exp(f)
    log_above = np.logaddexp.accumulate(log_neg[::-1])[::-1][1:]  # y > k: exp(-f)
    return 0.5 * (log_below - log_above)


def _log_class_sums(values: NDArray, codes: NDArray, n_classes: int) -> NDArray:
    """``log sum_{i in class c} exp(values_i)`` per class, shifted per class (no underflow)."""
    shift = np.full(n_classes, -np.inf)
    np.maximum.at(shift, codes, values)
    sums = np.bincount(codes, weights=np.exp(values - shift[codes]), minlength=n_classes)
    with np.errstate(divide="ignore"):
        return np.log(sums) + shift


def cumulative_proba(scores: ArrayLike, thresholds: ArrayLike) -> NDArray:
    """Class probabilities from the exponential-loss link ``P(y > k | x) = sigmoid(2(f - theta_k))``.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        ``f(x)``.
    thresholds : array-like of shape (K - 1,)
        Non-decreasing thresholds of eq. (8).

    Returns
    -------
    ndarray of shape (n_samples, K)
        ``p_k = P(y > k - 1) - P(y > k)``; rows are non-negative and sum to 1.

    Notes
    -----
    The population minimiser of the exponential loss ``E exp(-y (f - theta))`` is
    half the log-odds, ``f - theta_k = 1/2 ln(P(y > k) / P(y <= k))`` (Friedman,
    Hastie & Tibshirani 2000), so inverting it gives the cumulative model above;
    since the thresholds are non-decreasing the cumulative probabilities are
    non-increasing in ``k`` and every ``p_k`` is non-negative. The median of this
    distribution is the class the thresholds give (``P(y > k) >= 1/2`` iff
    ``f >= theta_k``). Complexity O(N K).

    Examples
    --------
    >>> cumulative_proba([0.0], [0.0]).tolist()
    [[0.5, 0.5]]
    """
    from scipy.special import expit

    scores = np.asarray(scores, dtype=float)
    thresholds = np.asarray(thresholds, dtype=float)
    above = expit(2.0 * (scores[:, None] - thresholds[None, :]))
    ones = np.ones((scores.shape[0], 1))
    zeros = np.zeros((scores.shape[0], 1))
    cumulative = np.hstack([ones, above, zeros])
    return np.clip(cumulative[:, :-1] - cumulative[:, 1:], 0.0, None)


# ---------------------------------------------------------------------------
# Growing one rule (compiled): the greedy loop of RankRules over presorted rows


def presort(X_t: NDArray, codes: NDArray) -> tuple[NDArray, NDArray, NDArray]:
    """The one presort of section 3.2: each attribute's order, and its values and codes in it.

    Parameters
    ----------
    X_t : ndarray of shape (n_features, n_samples)
        The training data, one row per attribute.
    codes : ndarray of int, shape (n_samples,)
        Class codes.

    Returns
    -------
    order : ndarray of int64, shape (n_features, n_samples)
        Each row of ``X_t`` argsorted, stably (equal values keep their index order).
    sorted_values : ndarray of shape (n_features, n_samples)
        ``X_t`` in that order.
    sorted_codes : ndarray of int64, shape (n_features, n_samples)
        ``codes`` in that order.

    Examples
    --------
    >>> order, values, codes = presort(np.array([[2.0, 0.0, 1.0]]), np.array([2, 0, 1]))
    >>> order.tolist(), values.tolist(), codes.tolist()
    ([[1, 2, 0]], [[0.0, 1.0, 2.0]], [[0, 1, 2]])
    """
    X_t = np.asarray(X_t, dtype=float)
    order = np.ascontiguousarray(np.argsort(X_t, axis=1, kind="stable"), dtype=np.int64)
    sorted_values = np.ascontiguousarray(np.take_along_axis(X_t, order, axis=1))
    sorted_codes = np.ascontiguousarray(np.asarray(codes, dtype=np.int64)[order])
    return order, sorted_values, sorted_codes


def grow_rule(
    presorted: tuple[NDArray, NDArray, NDArray],
    in_sub: NDArray,
    codes: NDArray,
    a: NDArray,
    b: NDArray,
    n_classes: int,
    *,
    technique: str = "sm",
    beta: float = 0.1,
    tolerance: float = 1e-12,
    weight: NDArray | None = None,
    work: tuple | None = None,
    ge_allowed: NDArray | None = None,
) -> tuple[NDArray, NDArray, NDArray, int]:
    """Grow one rule greedily on a subsample: add the best condition while the impurity drops.

    Parameters
    ----------
    presorted : tuple of ndarray
        :func:`presort` of the training data, computed once for the whole fit.
    in_sub : ndarray of bool, shape (n_samples,)
        The subsample the conditions are chosen on.
    codes : ndarray of int, shape (n_samples,)
        Class codes ``0..n_classes-1``.
    a, b : ndarray of shape (n_samples,)
        ``w exp(-f)`` and ``w exp(f)`` (read on the subsample only).
    n_classes : int
        ``K``.
    technique : {"sm", "gd", "gb", "cs"}, default="sm"
        Impurity of :data:`IMPURITIES`.
    beta : float, default=0.1
        Step of ``"cs"``.
    tolerance : float, default=1e-12
        Relative tolerance of ties: a condition must lower the impurity by more
        than ``tolerance * |impurity|``, and among candidates within that much
        of the best the first one wins (attribute, direction ``<=`` before
        ``>=``, cut).
    weight : ndarray of shape (n_samples,) or None, default=None
        Sample weights, whose pair counts ``"gb"`` needs (``None``: all 1).
    work : tuple of ndarray or None, default=None
        Scratch arrays from ``ensemble.rankrules._kernels.workspace`` for this
        number of features, subsample size and technique, reused across the
        rules of a fit; ``None`` allocates them.
    ge_allowed : ndarray of bool, shape (n_features,), or None, default=None
        Attributes that may take a ``>=`` condition (``None``: all). An attribute
        with missing values (NaN, sorted last) may not: its ``>=`` cuts would cover
        them. ``RankRules`` gives it a negated copy instead, whose ``<=`` is ``>=``.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
        The rule's box (``-inf``/``inf`` where a feature has no condition).
    covered : ndarray of bool, shape (n_samples,)
        The subsample examples the rule covers.
    n_conditions : int
        Number of conditions added (0: no condition lowered the impurity).

    Notes
    -----
    Each step scores the ``2 (n - 1)`` cuts of every attribute with
    :func:`candidate_rank_sums`'s running sums, in O(P n K) for the ``n``
    covered examples, without sorting: the presorted rows are filtered once to
    the subsample and then compacted to the covered examples after every
    condition. The outside sums are recomputed from the examples, in index
    order, at every step (O(N)), so that no ``W`` is a difference that cancels.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([0, 0, 1, 1])
    >>> presorted = presort(np.array([[0.0, 1.0, 2.0, 3.0]]), codes)
    >>> ones = np.ones(4)
    >>> lower, upper, covered, n = grow_rule(presorted, ones > 0, codes, ones, ones, 2)
    >>> lower.tolist(), upper.tolist(), covered.tolist(), n  # "x <= s" wins the tie with ">="
    ([-inf], [1.5], [True, True, False, False], 1)
    """
    need_counts = technique == "gb"
    in_sub = np.ascontiguousarray(in_sub, dtype=np.bool_)
    if weight is None:
        weight = np.ones(codes.shape[0])
    if work is None:
        work = _kernels.workspace(presorted[0].shape[0], int(in_sub.sum()), need_counts)
    return _kernels.grow(
        *presorted, in_sub, np.ascontiguousarray(codes, dtype=np.int64),
        np.ascontiguousarray(a, dtype=float), np.ascontiguousarray(b, dtype=float),
        np.ascontiguousarray(weight, dtype=float), int(n_classes), IMPURITIES[technique].technique,
        float(beta), need_counts, float(tolerance), work,
        np.ones(presorted[0].shape[0], dtype=np.bool_) if ge_allowed is None
        else np.ascontiguousarray(ge_allowed, dtype=np.bool_),
    )
