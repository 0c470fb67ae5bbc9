"""Monotone constraints: scikit-learn's ``monotonic_cst`` resolved to one int8 per feature."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["bound_children", "resolve_monotonic_cst"]


def _is_constraint_value(value: Any) -> bool:
    return isinstance(value, (Integral, Real)) and not isinstance(value, (bool, np.bool_)) and value in (-1, 0, 1)


def resolve_monotonic_cst(
    monotonic_cst: Any, n_features: int, feature_names: NDArray | None = None
) -> NDArray[np.int8]:
    """The monotone constraints as an int8 array of -1 / 0 / +1 per feature.

    scikit-learn's convention (``DecisionTreeRegressor``, ``HistGradientBoosting*``):
    +1 means the model must not decrease when the feature grows, -1 not increase,
    0 no constraint.

    Parameters
    ----------
    monotonic_cst : None, array-like of int of shape (n_features,) or dict
        ``None`` (no constraint), one value in {-1, 0, 1} per feature, or a dict
        ``{feature name: -1/0/1}`` whose missing features are unconstrained (only
        when ``X`` had string column names, i.e. ``feature_names`` is given).
    n_features : int
        Number of features of ``X``.
    feature_names : ndarray of str, optional
        ``feature_names_in_`` of the estimator.

    Returns
    -------
    ndarray of shape (n_features,), int8

    Raises
    ------
    ValueError
        Naming ``monotonic_cst``: wrong length or shape, values outside {-1, 0, 1}
        (booleans included), a dict without feature names, or a dict naming an
        unknown feature.

    Examples
    --------
    >>> import numpy as np
    >>> from trees import resolve_monotonic_cst
    >>> resolve_monotonic_cst([1, 0, -1], 3).tolist()
    [1, 0, -1]
    >>> resolve_monotonic_cst({"age": -1}, 2, np.array(["income", "age"])).tolist()
    [0, -1]
    >>> resolve_monotonic_cst([1, 2], 2)
    Traceback (most recent call last):
    ...
    ValueError: monotonic_cst must hold only -1, 0 or +1 per feature; got [1, 2]
    """
    cst = np.zeros(n_features, dtype=np.int8)
    if monotonic_cst is None:
        return cst
    if isinstance(monotonic_cst, dict):
        if feature_names is None:
            raise ValueError(
                "monotonic_cst is a dict by feature name but X has no feature names (fit on a "
                "DataFrame with string column names, or pass an array of -1, 0, +1 per feature)"
            )
        index = {str(name): i for i, name in enumerate(feature_names)}
        unknown = sorted(str(name) for name in monotonic_cst if str(name) not in index)
        if unknown:
            raise ValueError(f"monotonic_cst names unknown features: {unknown}; known: {list(index)}")
        for name, value in monotonic_cst.items():
            if not _is_constraint_value(value):
                raise ValueError(f"monotonic_cst[{name!r}] must be -1, 0 or +1; got {value!r}")
            cst[index[str(name)]] = int(value)
        return cst
    if isinstance(monotonic_cst, (str, bytes)):
        raise ValueError(
            f"monotonic_cst must be an array-like of -1, 0, +1 per feature or a dict by feature name; "
            f"got {monotonic_cst!r}"
        )
    values = np.asarray(monotonic_cst)
    if values.ndim != 1 or values.shape[0] != n_features:
        raise ValueError(
            f"monotonic_cst must have one entry per feature (length {n_features}); got shape {values.shape}"
        )
    if values.dtype.kind not in "iuf":
        raise ValueError(f"monotonic_cst must hold -1, 0 or +1 per feature; got dtype {values.dtype}")
    if not np.all(np.isin(values, (-1, 0, 1))):
        raise ValueError(f"monotonic_cst must hold only -1, 0 or +1 per feature; got {values.tolist()}")
    cst[:] = values
    return cst


def bound_children(child_value: NDArray, split_cst: NDArray, lower: NDArray, upper: NDArray) -> None:
    """Narrow, in place, the bounds of the children of splits on constrained features.

    ``child_value`` holds the (left, right) class counts of every split, ``lower`` /
    ``upper`` the bounds inherited from the parents (two per split, left first).
    For +1 the left child's upper and the right child's lower bound become the
    middle of the two children's mean class indices (mirrored for -1); the middle
    is clipped into the parent's bounds so that bounds always nest. This is
    scikit-learn's rule for monotone regression trees, with the mean class index
    as the value.
    """
    w = child_value.sum(axis=1)
    mean = (child_value @ np.arange(child_value.shape[1])) / w
    mid = mean[0::2] / 2.0 + mean[1::2] / 2.0
    mid = np.minimum(np.maximum(mid, lower[0::2]), upper[0::2])
    up, down = split_cst == 1, split_cst == -1
    # Strided views: the assignments below write into ``lower`` and ``upper``.
    left_lower, right_lower = lower[0::2], lower[1::2]
    left_upper, right_upper = upper[0::2], upper[1::2]
    left_upper[up] = mid[up]
    right_lower[up] = mid[up]
    left_lower[down] = mid[down]
    right_upper[down] = mid[down]
