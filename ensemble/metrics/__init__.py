"""Ordinal classification metrics and a scikit-learn scorer that keeps the class order.

Errors: MAE, its per-class average and maximum (AMAE, MMAE), zero-one error and
the ranked probability score (RPS). Agreement: weighted kappa (quadratic, QWK,
or linear), Kendall's tau-b, Spearman's rho, one-off accuracy, the correct
classification rate (CCR) and the per-class sensitivities' geometric mean (GM)
and minimum (MS), the metric set of the ORCA tools. :func:`ordinal_scorer`
wraps any of them for ``GridSearchCV`` and friends.

Every metric works on ranks: each label is replaced by its position in an
explicit ordered ``labels`` list (lowest class first), so string labels such as
``"low" < "mid" < "high"`` are measured as 0, 1, 2. By default ``labels`` is the
sorted set of the labels that occur, which is the natural order for integer
classes; pass ``labels`` whenever a class may be absent from the data or the
sorted order is not the ordinal one (docs/design.md section 6).

On the lowest floor of ``ensemble`` (docs/design.md section 1): it imports no other
sub-package.
"""

from __future__ import annotations

import logging
import warnings
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.exceptions import UndefinedMetricWarning

from trees.utils import check_classes, check_sample_weight

from ensemble.metrics._inputs import _as_1d_labels, _default_labels, _encode, _prepare_pair
from ensemble.metrics._per_class import (
    average_mean_absolute_error,
    geometric_mean_sensitivity,
    maximum_mean_absolute_error,
    minimum_sensitivity,
)

logger = logging.getLogger(__name__)

__all__ = [
    "average_mean_absolute_error",
    "correct_classification_rate",
    "geometric_mean_sensitivity",
    "kendall_tau",
    "maximum_mean_absolute_error",
    "mean_absolute_error",
    "mean_zero_one_error",
    "minimum_sensitivity",
    "one_off_accuracy",
    "ordinal_scorer",
    "quadratic_weighted_kappa",
    "ranked_probability_score",
    "spearman_rho",
    "weighted_kappa",
]

# Rows of a probability matrix may be off by rounding (float32 models, softmax);
# this is loose enough for those and tight enough to catch unnormalised scores.
_PROBA_SUM_ATOL = 1e-6


def mean_absolute_error(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Mean absolute error measured in rank positions of the ordered labels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first. A label's rank is its
        position in this list, so the error between ``labels[i]`` and
        ``labels[j]`` is ``abs(i - j)`` whatever the label values are. ``None``
        uses the sorted union of ``y_true`` and ``y_pred`` (or the categories of
        a pandas ordered Categorical). With integer labels ``1..K`` and
        ``labels=None`` the result equals the plain mean of ``abs(y_true - y_pred)``
        only when no class in between is absent from both: pass
        ``labels=range(1, K + 1)`` to measure on the full scale.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    float
        The (weighted) mean of ``abs(rank(y_true) - rank(y_pred))``; 0 is best.

    Raises
    ------
    ValueError
        If ``y_true`` and ``y_pred`` differ in length, are empty or hold NaN; if a
        label is not in ``labels`` or ``labels`` has duplicates; if
        ``sample_weight`` is malformed.

    Notes
    -----
    Equation (13) of the splitting-criteria study (docs/design.md section 6), computed on
    ranks. Cost O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import mean_absolute_error
    >>> mean_absolute_error(["low", "high", "mid"], ["mid", "low", "mid"],
    ...                     labels=["low", "mid", "high"])
    1.0
    >>> mean_absolute_error([1, 5], [1, 3])  # ranks of the sorted set {1, 3, 5}
    0.5
    >>> mean_absolute_error([1, 5], [1, 3], labels=[1, 2, 3, 4, 5])
    1.0
    """
    rt, rp, _, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return float(np.average(np.abs(rt - rp), weights=w))


def mean_zero_one_error(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Share of misclassified samples (1 - accuracy), with the same checks as the other metrics.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The admissible classes; a label outside them is an error. ``None``
        accepts the union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    float
        The (weighted) share of samples with ``y_pred != y_true``; 0 is best.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Cost O((n + K) log K). Unlike MAE it ignores the order of the classes.

    Examples
    --------
    >>> from ensemble.metrics import mean_zero_one_error
    >>> mean_zero_one_error([1, 2, 3, 4], [1, 2, 4, 4])
    0.25
    """
    rt, rp, _, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return float(np.average(rt != rp, weights=w))


def quadratic_weighted_kappa(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Quadratic weighted kappa (QWK) between true and predicted ordinal labels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first. The quadratic weights
        ``(i - j)**2 / (K - 1)**2`` use positions in this list, so a class absent
        from both ``y_true`` and ``y_pred`` still widens the scale when listed.
        ``None`` uses the sorted union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.
    replace_undefined_by : float, default=np.nan
        Value returned when kappa is undefined (0/0), which happens when both
        raters put every sample in one and the same class, or when there is a
        single class. An :class:`~sklearn.exceptions.UndefinedMetricWarning` is
        issued in that case. This mirrors scikit-learn's ``cohen_kappa_score``.

    Returns
    -------
    float
        ``1 - sum(W * O) / sum(W * E)`` where ``O`` is the confusion matrix, ``E``
        the outer product of its marginals divided by the total, and ``W`` the
        quadratic weights. 1 is perfect agreement, 0 chance level, negative
        values worse than chance (down to -1).

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Equation (14) of the splitting-criteria study (docs/design.md section 6). The result
    does not depend on the scaling of ``W``, so the division by ``(K - 1)**2`` only
    matters for readability. Cost O(n + K^2) after the O((n + K) log K) encoding.

    Examples
    --------
    >>> from ensemble.metrics import quadratic_weighted_kappa
    >>> quadratic_weighted_kappa(["a", "b", "c", "c"], ["a", "b", "c", "c"], labels=["a", "b", "c"])
    1.0
    >>> round(quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 4, 3]), 4)
    0.8
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return _kappa(rt, rp, k, w, 2, replace_undefined_by, "quadratic")


def weighted_kappa(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    weights: str = "quadratic",
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Cohen's weighted kappa with linear or quadratic disagreement weights.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    weights : {"quadratic", "linear"}, default="quadratic"
        Disagreement weights ``W[i, j] = |i - j| ** 2`` or ``|i - j|`` on the
        positions ``i``, ``j`` in ``labels``. ``"quadratic"`` is
        :func:`quadratic_weighted_kappa`.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first; a class absent from
        the data still widens the scale when listed. ``None`` uses the sorted
        union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights (they weigh the cells of the confusion
        matrix, so integer weights equal repeated rows).
    replace_undefined_by : float, default=np.nan
        Value returned, with an :class:`~sklearn.exceptions.UndefinedMetricWarning`,
        when kappa is undefined (0/0): both raters put every sample in one and
        the same class.

    Returns
    -------
    float
        ``1 - sum(W * O) / sum(W * E)``, ``O`` the (weighted) confusion matrix
        and ``E`` the outer product of its marginals over its total; 1 is
        perfect agreement, 0 chance level.

    Raises
    ------
    ValueError
        If ``weights`` is not ``"linear"`` or ``"quadratic"``; on the same
        malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Cohen (1968). Equals scikit-learn's ``cohen_kappa_score(weights=...)``
    with the same ``labels``. Linear weights penalise an error in proportion
    to its distance, as MAE does; quadratic weights (QWK) penalise large
    errors more. Cost O(n + K^2) after the O((n + K) log K) encoding.

    Examples
    --------
    >>> from ensemble.metrics import weighted_kappa
    >>> round(weighted_kappa([1, 2, 3, 4], [1, 2, 4, 3], weights="linear"), 4)
    0.6
    >>> round(weighted_kappa([1, 2, 3, 4], [1, 2, 4, 3], weights="quadratic"), 4)
    0.8
    """
    powers = {"linear": 1, "quadratic": 2}
    if not isinstance(weights, str) or weights not in powers:
        raise ValueError(f"weights must be 'linear' or 'quadratic', got {weights!r}")
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return _kappa(rt, rp, k, w, powers[weights], replace_undefined_by, weights)


def _kappa(rt, rp, k, w, power, replace_undefined_by, name):
    """Weighted kappa of encoded labels with disagreement weights ``|i - j| ** power``."""
    confusion = np.bincount(rt * k + rp, weights=w, minlength=k * k).reshape(k, k)
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    ranks = np.arange(k, dtype=np.float64)
    weights = np.abs(ranks[:, None] - ranks[None, :]) ** power
    denominator = float((weights * expected).sum())
    if denominator <= 0.0:
        warnings.warn(
            f"{name} weighted kappa is undefined when both y_true and y_pred put every "
            f"sample in the same single class; returning {replace_undefined_by}",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return float(replace_undefined_by)
    return float(1.0 - (weights * confusion).sum() / denominator)


def ranked_probability_score(
    y_true: ArrayLike,
    proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    normalize: bool = False,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Ranked probability score (RPS) of predicted class probabilities.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    proba : array-like of shape (n_samples, n_classes)
        Predicted probabilities; column ``j`` belongs to ``labels[j]`` (the
        ``classes_`` order of an estimator's ``predict_proba``). Rows must be
        non-negative and sum to 1 (tolerance 1e-6).
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, one per column of ``proba``. ``None``
        uses the sorted unique labels of ``y_true``, which is only allowed when
        their number equals the number of columns; otherwise pass ``labels``.
    normalize : bool, default=False
        If True, divide by ``K - 1`` so that the score lies in ``[0, 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    float
        The (weighted) mean over samples of
        ``sum_{k=1}^{K-1} (Fhat_k - [y <= k])**2``, where ``Fhat_k`` is the
        predicted cumulative probability of the first ``k`` classes; 0 is best.
        A one-hot forecast ``d`` classes away from the truth scores ``d``
        (``d / (K - 1)`` when normalised). With a single class the score is 0.

    Raises
    ------
    ValueError
        If ``proba`` is not 2-D, has the wrong number of rows or columns, holds
        NaN, negative values or rows not summing to 1; if ``y_true`` is malformed
        or holds labels outside ``labels``; if ``normalize`` is not a bool.

    Notes
    -----
    docs/design.md section 6, equation (16) of the splitting-criteria study: the squared
    distance between the predicted and the observed cumulative distributions. The
    term ``k = K`` is always 0 and is left out. Cost O(n K).

    Examples
    --------
    >>> from ensemble.metrics import ranked_probability_score
    >>> ranked_probability_score([1, 3], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    ...                          labels=[1, 2, 3])
    0.5
    >>> ranked_probability_score(["lo", "hi"], [[0.5, 0.5], [0.0, 1.0]],
    ...                          labels=["lo", "hi"], normalize=True)
    0.125
    """
    if not isinstance(normalize, (bool, np.bool_)):
        raise ValueError(f"normalize must be a bool, got {normalize!r}")
    t = _as_1d_labels(y_true, "y_true")
    if proba is None:
        raise ValueError("proba must be an array-like of shape (n_samples, n_classes), got None")
    try:
        p = np.asarray(proba, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("proba must contain numbers") from None
    if p.ndim != 2:
        raise ValueError(
            f"proba must be 2-dimensional (n_samples, n_classes), got shape {p.shape}"
        )
    if p.shape[0] != t.shape[0]:
        raise ValueError(
            f"y_true and proba have different lengths ({t.shape[0]} and {p.shape[0]})"
        )
    if labels is None:
        lab = _default_labels(t, originals=(y_true,))
        if lab.shape[0] != p.shape[1]:
            raise ValueError(
                f"proba has {p.shape[1]} columns but y_true holds {lab.shape[0]} distinct "
                "labels; pass labels (one per column of proba, in ordinal order)"
            )
    else:
        lab = check_classes(labels, "labels")
        if lab.shape[0] != p.shape[1]:
            raise ValueError(
                f"proba has {p.shape[1]} columns but labels has {lab.shape[0]} entries"
            )
    if not np.isfinite(p).all():
        raise ValueError("proba contains NaN or infinite values")
    if (p < -_PROBA_SUM_ATOL).any():
        raise ValueError("proba contains negative values")
    row_sums = p.sum(axis=1)
    bad = np.flatnonzero(np.abs(row_sums - 1.0) > _PROBA_SUM_ATOL)
    if bad.size:
        raise ValueError(
            f"proba rows must sum to 1; row {int(bad[0])} sums to {row_sums[bad[0]]!r}"
            + (f" ({bad.size} rows in all)" if bad.size > 1 else "")
        )
    rt = _encode(t, lab, "y_true")
    w = check_sample_weight(sample_weight, t.shape[0])
    k = lab.shape[0]
    if k == 1:
        return 0.0
    predicted_cdf = np.cumsum(p, axis=1)[:, :-1]
    observed_cdf = rt[:, None] <= np.arange(k - 1)[None, :]
    per_sample = ((predicted_cdf - observed_cdf) ** 2).sum(axis=1)
    score = float(np.average(per_sample, weights=w))
    return score / (k - 1) if normalize else score


def one_off_accuracy(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Share of predictions at most one class away from the truth.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first; "one class away" is
        one step in this list, so a class absent from the data but listed
        between two others makes them two steps apart. ``None`` uses the sorted
        union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    float
        The (weighted) share of samples with ``abs(rank(y_true) - rank(y_pred)) <= 1``;
        1 is best.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Also called 1-off accuracy or accuracy within one class. Cost
    O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import one_off_accuracy
    >>> one_off_accuracy([1, 2, 3, 4], [2, 2, 1, 4], labels=[1, 2, 3, 4])
    0.75
    """
    rt, rp, _, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return float(np.average(np.abs(rt - rp) <= 1, weights=w))


def correct_classification_rate(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Correct classification rate (CCR): the share of exact predictions (accuracy).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The admissible classes; a label outside them is an error. ``None``
        accepts the union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    float
        The (weighted) share of samples with ``y_pred == y_true``; 1 is best.
        Equal to ``1 - mean_zero_one_error(...)``.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    The name used in the ordinal-regression literature (Gutiérrez et al.,
    2016) for scikit-learn's ``accuracy_score``. Cost O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import correct_classification_rate
    >>> correct_classification_rate(["a", "b", "c", "c"], ["a", "b", "b", "c"], labels=["a", "b", "c"])
    0.75
    """
    rt, rp, _, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return float(np.average(rt == rp, weights=w))


def _undefined(what: str, replace_undefined_by: float) -> float:
    warnings.warn(
        f"{what} is undefined when y_true or y_pred puts every sample in one class; "
        f"returning {replace_undefined_by}",
        UndefinedMetricWarning,
        stacklevel=3,
    )
    return float(replace_undefined_by)


def kendall_tau(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Kendall's tau-b rank correlation between true and predicted classes.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first (only the order
        matters: tau-b is invariant to the spacing of the classes). ``None``
        uses the sorted union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; a pair of samples counts with the product
        of their weights, so integer weights equal repeated rows.
    replace_undefined_by : float, default=np.nan
        Value returned, with an :class:`~sklearn.exceptions.UndefinedMetricWarning`,
        when tau-b is undefined: ``y_true`` or ``y_pred`` holds a single class.

    Returns
    -------
    float
        ``(P - Q) / sqrt((n0 - n1)(n0 - n2))`` with ``P`` and ``Q`` the
        concordant and discordant pairs, ``n0`` all pairs and ``n1``, ``n2``
        the pairs tied in ``y_true``, ``y_pred``; in [-1, 1], 1 is best.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Kendall (1945), the tau-b of :func:`scipy.stats.kendalltau`, computed on the
    K x K (weighted) contingency table: with ``W`` the total weight and ``T_i``,
    ``U_j`` its margins, ``n0 - n1 = (W**2 - sum T_i**2) / 2`` and likewise for
    ``n2``. Cost O(n + K^2) after the O((n + K) log K) encoding.

    Examples
    --------
    >>> from ensemble.metrics import kendall_tau
    >>> kendall_tau(["lo", "mid", "hi"], ["lo", "hi", "hi"], labels=["lo", "mid", "hi"])
    0.816...
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    table = np.bincount(rt * k + rp, weights=w, minlength=k * k).reshape(k, k)
    # above[i, j]: weight of the cells strictly below-right of (i, j), i.e. i' > i and j' > j.
    tail = table[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]
    above = np.zeros((k, k))
    above[:-1, :-1] = tail[1:, 1:]
    # left[i, j]: weight of the cells with i' > i and j' < j.
    down_left = table[::-1, :].cumsum(axis=0)[::-1, :].cumsum(axis=1)
    left = np.zeros((k, k))
    left[:-1, 1:] = down_left[1:, :-1]
    concordant = float((table * above).sum())
    discordant = float((table * left).sum())
    total = table.sum()
    untied_true = total**2 - float((table.sum(axis=1) ** 2).sum())
    untied_pred = total**2 - float((table.sum(axis=0) ** 2).sum())
    if untied_true <= 0 or untied_pred <= 0:
        return _undefined("Kendall's tau-b", replace_undefined_by)
    tau = 2.0 * (concordant - discordant) / np.sqrt(untied_true * untied_pred)
    return float(np.clip(tau, -1.0, 1.0))


def spearman_rho(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Spearman's rank correlation between true and predicted classes (ties get mid-ranks).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first (only the order
        matters). ``None`` uses the sorted union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; integer weights equal repeated rows (a
        class's mid-rank counts the weight below it).
    replace_undefined_by : float, default=np.nan
        Value returned, with an :class:`~sklearn.exceptions.UndefinedMetricWarning`,
        when rho is undefined: ``y_true`` or ``y_pred`` holds a single class.

    Returns
    -------
    float
        The Pearson correlation of the mid-ranks of ``y_true`` and ``y_pred``;
        in [-1, 1], 1 is best.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Spearman (1904), the rho of :func:`scipy.stats.spearmanr`. Every sample of
    class ``k`` gets the mid-rank ``C_{k-1} + (T_k + 1) / 2``, where ``T_k`` is
    the (weighted) count of class ``k`` and ``C_{k-1}`` that of the classes
    below it; the correlation is then weighted by ``sample_weight``. Cost
    O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import spearman_rho
    >>> spearman_rho([1, 2, 3, 4], [1, 3, 2, 4])
    0.8
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)

    def mid_ranks(r: NDArray[np.intp]) -> NDArray[np.float64]:
        counts = np.bincount(r, weights=w, minlength=k)
        return (np.cumsum(counts) - counts + (counts + 1.0) / 2.0)[r]

    weighted = w > 0
    if np.ptp(rt[weighted]) == 0 or np.ptp(rp[weighted]) == 0:
        # Decided on the classes, not on a variance that rounding may leave at 1e-17.
        return _undefined("Spearman's rho", replace_undefined_by)
    a, b = mid_ranks(rt), mid_ranks(rp)
    a = a - np.average(a, weights=w)
    b = b - np.average(b, weights=w)
    var_a, var_b = np.average(a * a, weights=w), np.average(b * b, weights=w)
    rho = np.average(a * b, weights=w) / np.sqrt(var_a * var_b)
    return float(np.clip(rho, -1.0, 1.0))


# name -> (metric, sign making greater better, estimator method giving its second argument)
_SCORERS: dict[str, tuple[Any, int, str]] = {
    "mae": (mean_absolute_error, -1, "predict"),
    "amae": (average_mean_absolute_error, -1, "predict"),
    "mmae": (maximum_mean_absolute_error, -1, "predict"),
    "zero_one": (mean_zero_one_error, -1, "predict"),
    "qwk": (quadratic_weighted_kappa, 1, "predict"),
    "linear_kappa": (partial(weighted_kappa, weights="linear"), 1, "predict"),
    "gm": (geometric_mean_sensitivity, 1, "predict"),
    "ms": (minimum_sensitivity, 1, "predict"),
    "kendall_tau": (kendall_tau, 1, "predict"),
    "spearman_rho": (spearman_rho, 1, "predict"),
    "one_off_accuracy": (one_off_accuracy, 1, "predict"),
    "ccr": (correct_classification_rate, 1, "predict"),
    "rps": (ranked_probability_score, -1, "predict_proba"),
}


class _OrdinalScorer:
    """A scikit-learn scoring callable that measures in the fitted estimator's class order."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, estimator: Any, X: Any, y_true: Any, sample_weight: Any = None) -> float:
        metric, sign, method = _SCORERS[self.name]
        classes = getattr(estimator, "classes_", None)
        if classes is None:
            raise ValueError(
                f"{self!r} needs a fitted classifier with classes_, got {type(estimator).__name__}"
            )
        response = getattr(estimator, method)(X)
        classes = np.asarray(classes)
        unseen = np.setdiff1d(np.unique(np.asarray(y_true)), classes)
        if unseen.shape[0]:
            # A test fold holding a class its training folds lacked (a rare class): the metric raised, and a
            # search scored every candidate NaN and kept the first. Numeric classes in increasing order have
            # a place for it; text classes do not.
            if classes.dtype.kind not in "biuf" or unseen.dtype.kind not in "biuf" or np.any(np.diff(classes) <= 0):
                raise ValueError(
                    f"{self!r}: y_true holds {unseen[:5].tolist()}, classes the estimator was not fitted on, "
                    f"whose place among its classes {classes.tolist()} is unknown; give the estimator every "
                    "class in order (classes=[...])")
            labels = np.union1d(classes, unseen)
            if method == "predict_proba":  # no probability on a class the estimator never saw
                full = np.zeros((response.shape[0], labels.shape[0]))
                full[:, np.searchsorted(labels, classes)] = response
                response = full
            classes = labels
        return sign * metric(y_true, response, labels=classes, sample_weight=sample_weight)

    def __repr__(self) -> str:
        return f"ordinal_scorer({self.name!r})"


def ordinal_scorer(name: str) -> _OrdinalScorer:
    """A scikit-learn scorer for an ordinal metric, in the fitted estimator's class order.

    Parameters
    ----------
    name : str
        One of ``"mae"``, ``"amae"``, ``"mmae"``, ``"zero_one"`` (losses),
        ``"qwk"``, ``"linear_kappa"``, ``"kendall_tau"``, ``"spearman_rho"``,
        ``"one_off_accuracy"``, ``"ccr"``, ``"gm"``, ``"ms"`` (scores), or
        ``"rps"`` (a loss on ``predict_proba``).

    Returns
    -------
    callable
        ``scorer(estimator, X, y_true, sample_weight=None) -> float``, usable
        as ``scoring=`` in :class:`~sklearn.model_selection.GridSearchCV`,
        :func:`~sklearn.model_selection.cross_validate` and the like. Losses
        are negated so that greater is always better, as scikit-learn's
        ``"neg_mean_absolute_error"``.

    Raises
    ------
    ValueError
        If ``name`` is unknown; when called, if the estimator has no
        ``classes_``.

    Notes
    -----
    The metric gets ``labels=estimator.classes_``: the ordinal order the
    estimator was fitted with (``classes=[...]`` of this project's
    estimators), not the alphabetical order of string labels. scikit-learn's
    ``"neg_mean_absolute_error"`` subtracts the labels themselves and returns
    NaN on string classes. The scorer is picklable, so ``n_jobs`` in a search
    works.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from ensemble import OTreeBagger
    >>> from ensemble.metrics import ordinal_scorer
    >>> X = [[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]] * 3
    >>> y = ["low", "low", "mid", "mid", "high", "high"] * 3
    >>> model = OTreeBagger(n_estimators=1, group_size=1, bootstrap=False,
    ...                     classes=["low", "mid", "high"])
    >>> search = GridSearchCV(model, {"max_depth": [1, 2]}, scoring=ordinal_scorer("mae"), cv=3)
    >>> search.fit(X, y).cv_results_["mean_test_score"].round(3).tolist()
    [-0.333, 0.0]
    """
    if not isinstance(name, str) or name not in _SCORERS:
        raise ValueError(f"name must be one of {sorted(_SCORERS)}, got {name!r}")
    return _OrdinalScorer(name)
