"""Pieces every ensemble of the package shares: targets, bootstrap samples, feature kinds."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import relabel
from trees._labels import encode_labels
from trees._monotone import resolve_monotonic_cst

__all__ = ["MAX_SEED", "bootstrap_weights", "categorical_mask", "encode_target", "monotonic_array"]

MAX_SEED = np.iinfo(np.int32).max
_MAX_REDRAWS = 1000


def encode_target(estimator: Any, y: NDArray, categories: NDArray | None) -> NDArray[np.intp]:
    """Set ``classes_`` and ``n_classes_`` on ``estimator`` and return ``y`` as indices 0..K-1.

    The order is the estimator's ``classes`` parameter, else the categories of a
    pandas ordered Categorical ``y``, else the sorted labels (docs/design.md section 2).

    Raises
    ------
    ValueError
        If ``y`` holds a single class, or ``classes`` does not fit ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> est = SimpleNamespace(classes=["lo", "hi"])
    >>> encode_target(est, np.array(["hi", "lo", "hi"]), None).tolist(), est.classes_.tolist()
    ([1, 0, 1], ['lo', 'hi'])
    """
    classes = getattr(estimator, "classes", None)
    estimator.classes_, y_idx = encode_labels(y, classes if classes is not None else categories)
    present = np.unique(y_idx)
    if present.size < 2:
        raise ValueError(
            f"y has one class ({np.asarray(estimator.classes_[present[0]]).tolist()!r}); "
            f"{type(estimator).__name__} needs samples of at least 2 classes"
        )
    estimator.n_classes_ = len(estimator.classes_)
    return y_idx


def bootstrap_weights(
    n_samples: int, seed: int, bootstrap: bool, sample_weight: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Multiplicities of one bootstrap sample, drawn from ``seed`` alone (reproducible in any worker).

    With ``sample_weight`` the sample is redrawn (from the same stream) until it holds
    a row of positive weight, since a tree cannot grow on zero total weight; without
    weights the first draw is kept, so unweighted fits are unchanged.

    Examples
    --------
    >>> bootstrap_weights(5, 0, True).tolist()
    [1.0, 0.0, 0.0, 3.0, 1.0]
    >>> bootstrap_weights(3, 0, False).tolist()
    [1.0, 1.0, 1.0]
    """
    if not bootstrap:
        return np.ones(n_samples)
    rng = np.random.RandomState(seed)
    for _ in range(_MAX_REDRAWS):
        counts = np.bincount(rng.randint(0, n_samples, n_samples), minlength=n_samples).astype(np.float64)
        if sample_weight is None or np.any(counts * sample_weight > 0):
            return counts
    raise ValueError(
        f"sample_weight: {_MAX_REDRAWS} bootstrap samples in a row drew only rows of weight 0; "
        "give more rows a positive weight or use bootstrap=False"
    )


def _names_to_indices(values: Any, feature_names: NDArray | None, parameter: str) -> list[int]:
    """Indices of the named features, with errors naming ``parameter``."""
    if feature_names is None:
        raise ValueError(
            f"{parameter} names features but X has no feature names (fit on a DataFrame with string "
            "column names, or give indices)"
        )
    known = {str(name): i for i, name in enumerate(feature_names)}
    unknown = [str(v) for v in values if str(v) not in known]
    if unknown:
        raise ValueError(f"{parameter} names unknown features: {unknown}")
    return [known[str(v)] for v in values]


def categorical_mask(
    categorical_features: ArrayLike | None, n_features: int, feature_names: NDArray | None = None
) -> NDArray[np.bool_]:
    """Boolean mask of the categorical features, from scikit-learn's conventions.

    Parameters
    ----------
    categorical_features : array-like of int, bool or str, or None
        Feature indices, a boolean mask of length ``n_features``, or feature names
        (when ``X`` had string column names); ``None`` means no categorical feature.
    n_features : int
        Number of features of ``X``.
    feature_names : ndarray of str, optional
        ``feature_names_in_`` of the estimator.

    Returns
    -------
    ndarray of shape (n_features,), bool

    Raises
    ------
    ValueError
        On an index out of range, a mask of the wrong length, an unknown name or
        names without feature names; every message names ``categorical_features``.

    Notes
    -----
    Names are resolved here; indices and masks are checked by
    :func:`relabel.check_categorical_features`, the one rule for both packages.

    Examples
    --------
    >>> categorical_mask([0, 2], 3).tolist()
    [True, False, True]
    >>> import numpy as np
    >>> categorical_mask(["b"], 2, np.array(["a", "b"])).tolist()
    [False, True]
    """
    if categorical_features is not None:
        values = np.asarray(categorical_features)
        if values.ndim == 1 and values.dtype.kind in "UO":
            categorical_features = _names_to_indices(values, feature_names, "categorical_features")
    return relabel.check_categorical_features(categorical_features, n_features)


def monotonic_array(
    monotonic_cst: Any, n_features: int, feature_names: NDArray | None = None,
    categorical: NDArray[np.bool_] | None = None,
) -> NDArray[np.int8]:
    """Monotone constraints as -1/0/+1 per feature, from scikit-learn's conventions.

    Parameters
    ----------
    monotonic_cst : array-like of int, dict or None
        One of -1, 0, +1 per feature, or a dict ``{feature name: -1 / +1}`` (the
        others unconstrained), as in :class:`~sklearn.ensemble.HistGradientBoostingClassifier`.
    n_features : int
        Number of features of ``X``.
    feature_names : ndarray of str, optional
        ``feature_names_in_`` of the estimator (needed for a dict).
    categorical : ndarray of bool, optional
        Categorical features, which cannot be constrained.

    Returns
    -------
    ndarray of shape (n_features,), int8

    Raises
    ------
    ValueError
        Naming ``monotonic_cst``: a wrong length, values outside {-1, 0, 1}, an
        unknown name, a dict without feature names, a constrained categorical feature.

    Examples
    --------
    >>> import numpy as np
    >>> monotonic_array({"b": -1}, 2, np.array(["a", "b"])).tolist()
    [0, -1]
    """
    # Names and values are resolved by the trees' own rule; relabel adds the categorical conflict.
    monotonic_cst = resolve_monotonic_cst(monotonic_cst, n_features, feature_names)
    return relabel.check_monotonic_cst(monotonic_cst, n_features, categorical_features=categorical)


def constraint_to_check(estimator: Any, monotonic_cst: Any) -> NDArray[np.int8] | None:
    """The constraint a fitted estimator's ``is_monotone(monotonic_cst)`` checks.

    Its own constraint for ``None``, else ``monotonic_cst`` resolved against its
    features (names, categorical conflict); ``None`` when nothing is constrained,
    which every model satisfies.
    """
    if monotonic_cst is None:
        cst = estimator._monotonic
    else:
        names = getattr(estimator, "feature_names_in_", None)
        cst = monotonic_array(monotonic_cst, estimator.n_features_in_, names, estimator._categorical)
    return cst if cst is not None and np.any(cst) else None
