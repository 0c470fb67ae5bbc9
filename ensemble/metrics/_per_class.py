"""Per-class ordinal metrics: AMAE, MMAE and the sensitivities GM and MS.

Each true class gets its own score (its MAE, or its sensitivity: the share of
its samples predicted in it), which the metric then averages, maximises or
minimises, so that a minority class weighs as much as a majority one. Public
through :mod:`ensemble.metrics`.

Classes absent from ``y_true``: a class listed in ``labels`` (or predicted)
without true samples, or whose samples all have weight 0, has no score of its
own. AMAE, MMAE and MS leave it out, as the ORCA tools do (``AMAE.m`` and
``MMAE.m`` skip empty rows of the confusion matrix, ``MS.m`` skips their NaN
sensitivity). ``GM.m`` skips its factor but keeps it in the root, i.e. counts
its sensitivity as 1 (skordinal does the same); :func:`geometric_mean_sensitivity`
follows it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ensemble.metrics._inputs import _prepare_pair

__all__ = [
    "average_mean_absolute_error",
    "geometric_mean_sensitivity",
    "maximum_mean_absolute_error",
    "minimum_sensitivity",
]


def _per_class_mae(
    rt: NDArray[np.intp], rp: NDArray[np.intp], k: int, w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """MAE of the samples of each class present in ``rt`` (positive total weight), lowest class first."""
    errors = np.bincount(rt, weights=w * np.abs(rt - rp), minlength=k)
    totals = np.bincount(rt, weights=w, minlength=k)
    present = totals > 0
    return errors[present] / totals[present]


def average_mean_absolute_error(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Average over the true classes of each class's MAE (AMAE, macro-averaged MAE).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first; errors are rank
        distances in this list, as in :func:`mean_absolute_error`. ``None``
        uses the sorted union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights. They weigh the samples inside each class;
        every class present still counts once in the average.

    Returns
    -------
    float
        ``mean_k MAE_k`` over the classes ``k`` present in ``y_true``, where
        ``MAE_k`` is the (weighted) MAE of the samples whose true class is
        ``k``; 0 is best.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Baccianella, Esuli and Sebastiani (2009); the AMAE of the splitting-criteria
    study. A class listed in ``labels`` but absent from ``y_true`` (or present
    only with weight 0) has no samples, hence no MAE of its own, and is left out
    of the average, as in the ORCA tools (which drop the classes whose row of
    the confusion matrix is empty); it still widens the rank scale when listed. Integer
    weights give the same value as repeated rows. Cost O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import average_mean_absolute_error
    >>> y_true = ["low", "low", "low", "high"]
    >>> y_pred = ["low", "low", "low", "low"]
    >>> average_mean_absolute_error(y_true, y_pred, labels=["low", "mid", "high"])
    1.0
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return float(np.mean(_per_class_mae(rt, rp, k, w)))


def maximum_mean_absolute_error(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Largest MAE of a true class (MMAE): the error on the worst-predicted class.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes in their ordinal order, lowest first. ``None`` uses the
        sorted union of ``y_true`` and ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights, used inside each class.

    Returns
    -------
    float
        ``max_k MAE_k`` over the classes present in ``y_true``; 0 is best.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Cruz-Ramírez et al. (2014). Classes absent from ``y_true`` are left out, as
    in :func:`average_mean_absolute_error`. Cost O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import maximum_mean_absolute_error
    >>> maximum_mean_absolute_error([1, 1, 2, 3], [1, 2, 2, 1])
    2.0
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    return float(np.max(_per_class_mae(rt, rp, k, w)))


def _sensitivities(
    rt: NDArray[np.intp], rp: NDArray[np.intp], k: int, w: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Sensitivity of every class (0 where absent) and whether it has true samples of positive weight."""
    hits = np.bincount(rt, weights=w * (rt == rp), minlength=k)
    totals = np.bincount(rt, weights=w, minlength=k)
    present = totals > 0
    sensitivity = np.zeros(k)
    sensitivity[present] = hits[present] / totals[present]
    return sensitivity, present


def geometric_mean_sensitivity(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Geometric mean of the per-class sensitivities (GM).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    labels : array-like of shape (n_classes,), default=None
        The classes, lowest first; their number ``K`` is the root of the mean.
        ``None`` uses the sorted union of ``y_true`` and ``y_pred`` (the classes
        of ORCA's confusion matrix).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights, used inside each class: the sensitivity of
        class ``k`` is the weight of its samples predicted ``k`` over the
        weight of its samples, so integer weights equal repeated rows.

    Returns
    -------
    float
        ``(prod_k S_k) ** (1 / K)`` over the ``K`` classes, ``S_k`` the
        sensitivity of class ``k``; a class without true samples (or with only
        zero weights) counts as ``S_k = 1``. In [0, 1], 1 is best; 0 as soon as
        one class present in ``y_true`` is never predicted right.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Sánchez-Monedero et al. (2011) and the ORCA review of Gutiérrez et al.
    (2016). The convention for a class absent from ``y_true`` is that of
    ORCA's ``GM.m`` (and skordinal): its factor is skipped but it stays in the
    root ``K``, so listing an unobserved class raises GM. Leave it out of
    ``labels`` to take the mean over the observed classes only. The class
    order does not matter. Cost O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import geometric_mean_sensitivity
    >>> round(geometric_mean_sensitivity([1, 1, 2, 2], [1, 2, 2, 2]), 4)  # sqrt(0.5 * 1)
    0.7071
    >>> round(geometric_mean_sensitivity([1, 1, 2, 2], [1, 2, 2, 2], labels=[1, 2, 3]), 4)
    0.7937
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    sensitivity, present = _sensitivities(rt, rp, k, w)
    if (sensitivity[present] == 0).any():
        return 0.0
    # Logarithms: a product of many small sensitivities would underflow.
    return float(np.exp(np.log(sensitivity[present]).sum() / k))


def minimum_sensitivity(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Smallest per-class sensitivity (MS): the recall of the worst-recognised true class.

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
        Non-negative sample weights, used inside each class as in
        :func:`geometric_mean_sensitivity`.

    Returns
    -------
    float
        ``min_k S_k`` over the classes present in ``y_true`` (with positive
        weight); in [0, 1], 1 is best.

    Raises
    ------
    ValueError
        On the same malformed inputs as :func:`mean_absolute_error`.

    Notes
    -----
    Cruz-Ramírez et al. (2014); ORCA's ``MS.m``, whose loop skips the NaN
    sensitivity of a class without true samples: such a class is left out (a
    class only predicted, never true, does not make MS 0, unlike scikit-learn's
    ``recall_score`` with ``zero_division=0``). Cost O((n + K) log K).

    Examples
    --------
    >>> from ensemble.metrics import minimum_sensitivity
    >>> minimum_sensitivity([1, 1, 2, 2, 3], [1, 2, 2, 2, 3], labels=[1, 2, 3, 4])
    0.5
    """
    rt, rp, k, w = _prepare_pair(y_true, y_pred, labels, sample_weight)
    sensitivity, present = _sensitivities(rt, rp, k, w)
    return float(sensitivity[present].min())
