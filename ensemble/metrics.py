"""Ordinal classification metrics: MAE, zero-one error, quadratic weighted kappa and RPS.

Every metric works on ranks: each label is replaced by its position in an
explicit ordered ``labels`` list (lowest class first), so string labels such as
``"low" < "mid" < "high"`` are measured as 0, 1, 2. By default ``labels`` is the
sorted set of the labels that occur, which is the natural order for integer
classes; pass ``labels`` whenever a class may be absent from the data or the
sorted order is not the ordinal one (DESIGN.md section 6).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.exceptions import UndefinedMetricWarning

logger = logging.getLogger(__name__)

__all__ = [
    "mean_absolute_error",
    "mean_zero_one_error",
    "quadratic_weighted_kappa",
    "ranked_probability_score",
]

# Rows of a probability matrix may be off by rounding (float32 models, softmax);
# this is loose enough for those and tight enough to catch unnormalised scores.
_PROBA_SUM_ATOL = 1e-6


def _as_1d_labels(y: Any, name: str) -> NDArray[Any]:
    """Return ``y`` as a 1-D array after checking it is non-empty and has no NaN."""
    if y is None:
        raise ValueError(f"{name} must be an array-like of labels, got None")
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got an array of shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required")
    if arr.dtype.kind in "fc":
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN")
    elif arr.dtype.kind == "O":
        # Object arrays (pandas, mixed input) may hide float NaN or None among the labels.
        bad = [v for v in arr if v is None or (isinstance(v, float) and np.isnan(v))]
        if bad:
            raise ValueError(f"{name} contains missing values (NaN or None)")
    return arr


def _ordered_categories(y: Any) -> NDArray[Any] | None:
    """Return the categories of a pandas ordered Categorical, else None (duck-typed)."""
    dtype = getattr(y, "dtype", None)
    if getattr(dtype, "ordered", False) and hasattr(dtype, "categories"):
        return np.asarray(dtype.categories)
    return None


def _check_same_length(a: NDArray[Any], b: NDArray[Any], name_a: str, name_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{name_a} and {name_b} have different lengths ({a.shape[0]} and {b.shape[0]})"
        )


def _check_labels(labels: Any) -> NDArray[Any]:
    """Validate an explicit ``labels`` order: 1-D, non-empty, no NaN, no duplicates."""
    arr = _as_1d_labels(labels, "labels")
    try:
        uniq = np.unique(arr)
    except TypeError as exc:
        raise ValueError(f"labels must be mutually comparable values: {exc}") from None
    if uniq.shape[0] != arr.shape[0]:
        raise ValueError(f"labels must not contain duplicates, got {arr.tolist()!r}")
    return arr


def _default_labels(*ys: NDArray[Any], originals: tuple[Any, ...] = ()) -> NDArray[Any]:
    """The sorted union of the labels, or the order of a pandas ordered Categorical."""
    for y in originals:
        cats = _ordered_categories(y)
        if cats is not None:
            return cats
    try:
        return np.unique(np.concatenate(ys))
    except TypeError as exc:
        raise ValueError(
            f"the labels cannot be sorted ({exc}); pass an explicit labels order"
        ) from None


def _encode(y: NDArray[Any], labels: NDArray[Any], name: str) -> NDArray[np.intp]:
    """Map every value of ``y`` to its rank (position) in ``labels``.

    Raises ValueError naming ``name`` when some value of ``y`` is not in ``labels``.
    Cost O((n + K) log K) through one sort of ``labels`` and a binary search.
    """
    try:
        order = np.argsort(labels, kind="stable")
        sorted_labels = labels[order]
        pos = np.searchsorted(sorted_labels, y)
    except TypeError:
        # Values of incomparable types (e.g. strings against integers) cannot be in labels.
        pos = None
    if pos is not None:
        clipped = np.minimum(pos, labels.shape[0] - 1)
        found = sorted_labels[clipped] == y
        found = np.asarray(found, dtype=bool)
        if found.shape == y.shape and found.all():
            return order[clipped].astype(np.intp, copy=False)
        missing = np.unique(y[~found]) if found.shape == y.shape else np.unique(y)
    else:
        missing = np.unique(y.astype(str))
    shown = ", ".join(repr(v) for v in missing[:5].tolist())
    more = "" if missing.shape[0] <= 5 else f" and {missing.shape[0] - 5} more"
    raise ValueError(
        f"{name} contains labels that are not in labels={labels.tolist()!r}: {shown}{more}"
    )


def _check_sample_weight(sample_weight: Any, n_samples: int) -> NDArray[np.float64]:
    """Return non-negative finite float weights of length ``n_samples`` (ones if None)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    w = np.asarray(sample_weight)
    if w.ndim == 0:
        w = np.full(n_samples, w, dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-dimensional, got shape {w.shape}")
    try:
        w = w.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("sample_weight must contain numbers") from None
    if w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {w.shape[0]} entries but there are {n_samples} samples"
        )
    if not np.isfinite(w).all():
        raise ValueError("sample_weight contains NaN or infinite values")
    if (w < 0).any():
        raise ValueError("sample_weight must be non-negative")
    if w.sum() <= 0:
        raise ValueError("sample_weight must have a positive sum")
    return w


def _prepare_pair(
    y_true: Any, y_pred: Any, labels: Any, sample_weight: Any
) -> tuple[NDArray[np.intp], NDArray[np.intp], int, NDArray[np.float64]]:
    """Validate a (y_true, y_pred) pair and return their ranks, K and the weights."""
    t = _as_1d_labels(y_true, "y_true")
    p = _as_1d_labels(y_pred, "y_pred")
    _check_same_length(t, p, "y_true", "y_pred")
    if labels is None:
        kinds = {t.dtype.kind, p.dtype.kind}
        if kinds & set("US") and kinds & set("biuf"):
            raise ValueError(
                f"y_true ({t.dtype}) and y_pred ({p.dtype}) mix strings and numbers; "
                "pass labels to say which classes they are"
            )
        lab = _default_labels(t, p, originals=(y_true, y_pred))
    else:
        lab = _check_labels(labels)
    rt = _encode(t, lab, "y_true")
    rp = _encode(p, lab, "y_pred")
    w = _check_sample_weight(sample_weight, t.shape[0])
    return rt, rp, lab.shape[0], w


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
    Equation (13) of the splitting-criteria study (DESIGN.md section 6), computed on
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
    Equation (14) of the splitting-criteria study (DESIGN.md section 6). The result
    does not depend on the scaling of ``W``, so the division by ``(K - 1)**2`` only
    matters for readability. Cost O(n + K^2) after the O((n + K) log K) encoding.

    Examples
    --------
    >>> from ensemble.metrics import quadratic_weighted_kappa
    >>> quadratic_weighted_kappa(["a", "b", "c", "c"], ["a", "b", "c", "c"])
    1.0
    >>> round(quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 4, 3]), 4)
    0.8
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    confusion = np.bincount(rt * k + rp, weights=w, minlength=k * k).reshape(k, k)
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    ranks = np.arange(k, dtype=np.float64)
    weights = (ranks[:, None] - ranks[None, :]) ** 2
    denominator = float((weights * expected).sum())
    if denominator <= 0.0:
        warnings.warn(
            "quadratic weighted kappa is undefined when both y_true and y_pred put every "
            f"sample in the same single class; returning {replace_undefined_by}",
            UndefinedMetricWarning,
            stacklevel=2,
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
    DESIGN.md section 6, equation (16) of the splitting-criteria study: the squared
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
        lab = _check_labels(labels)
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
    w = _check_sample_weight(sample_weight, t.shape[0])
    k = lab.shape[0]
    if k == 1:
        return 0.0
    predicted_cdf = np.cumsum(p, axis=1)[:, :-1]
    observed_cdf = rt[:, None] <= np.arange(k - 1)[None, :]
    per_sample = ((predicted_cdf - observed_cdf) ** 2).sum(axis=1)
    score = float(np.average(per_sample, weights=w))
    return score / (k - 1) if normalize else score
