"""Validation of the per-feature options shared by adjacency, monotone pairs and the estimators.

One home for the three per-feature vocabularies of docs/design.md sections 4b and 4c:
``categorical_features`` (scikit-learn's convention: a boolean mask or indices),
``monotonic_cst`` (-1 / 0 / +1 per feature) and ``resolution`` (r_f >= 0). Feature
names are resolved by the estimators, which hold ``feature_names_in_``; here every
option is positional.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["check_categorical_features", "check_monotonic_cst", "check_resolution"]


def _check_n_features(n_features: Any) -> int:
    if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or n_features < 1:
        raise ValueError(f"n_features must be a positive integer; got {n_features!r}")
    return int(n_features)


def check_categorical_features(categorical_features: Any, n_features: int) -> NDArray[np.bool_]:
    """The categorical features as a boolean mask of length ``n_features``.

    Parameters
    ----------
    categorical_features : None, array-like of bool of shape (n_features,) or array-like of int
        scikit-learn's convention without names: a boolean mask, or the indices
        ``0 .. n_features - 1`` of the categorical features (duplicates allowed).
        ``None`` or an empty list means none.
    n_features : int
        Number of features d.

    Returns
    -------
    ndarray of shape (n_features,), bool

    Raises
    ------
    ValueError
        Naming ``categorical_features``: a mask of the wrong length, indices out of
        range, or anything else (feature names must be resolved to indices by the
        caller, as the estimators do from ``feature_names_in_``).

    Examples
    --------
    >>> from relabel import check_categorical_features
    >>> check_categorical_features([2, 0], 3).tolist()
    [True, False, True]
    >>> check_categorical_features([False, True, False], 3).tolist()
    [False, True, False]
    """
    n_features = _check_n_features(n_features)
    mask = np.zeros(n_features, dtype=bool)
    if categorical_features is None:
        return mask
    if isinstance(categorical_features, (str, bytes, dict)):
        raise ValueError(
            "categorical_features must be a boolean mask of length n_features or integer feature "
            f"indices (names are resolved by the estimators); got {categorical_features!r}"
        )
    values = np.asarray(categorical_features)
    if values.size == 0:
        return mask
    if values.ndim != 1:
        raise ValueError(f"categorical_features must be 1-d (a mask or indices); got shape {values.shape}")
    if values.dtype == bool:
        if values.shape[0] != n_features:
            raise ValueError(
                f"categorical_features as a boolean mask must have length n_features={n_features}; "
                f"got {values.shape[0]}"
            )
        return values.copy()
    if not np.issubdtype(values.dtype, np.integer):
        raise ValueError(
            "categorical_features must be a boolean mask of length n_features or integer feature "
            f"indices (names are resolved by the estimators); got dtype {values.dtype}"
        )
    if values.min() < 0 or values.max() >= n_features:
        raise ValueError(
            f"categorical_features indices must lie in 0..{n_features - 1}; got {values.tolist()}"
        )
    mask[values] = True
    return mask


def check_monotonic_cst(
    monotonic_cst: Any, n_features: int, categorical_features: Any = None
) -> NDArray[np.int8]:
    """The monotone constraints as an int8 array of -1 / 0 / +1 of length ``n_features``.

    Parameters
    ----------
    monotonic_cst : None or array-like of int of shape (n_features,)
        scikit-learn's convention: +1 increasing, -1 decreasing, 0 unconstrained.
        ``None`` means no constraint.
    n_features : int
        Number of features d.
    categorical_features : optional
        As :func:`check_categorical_features`; a categorical feature cannot be
        constrained (its categories have no order).

    Returns
    -------
    ndarray of shape (n_features,), int8

    Raises
    ------
    ValueError
        Naming ``monotonic_cst``: wrong length, values outside {-1, 0, 1}, a dict
        (names are resolved by the estimators), or a constrained categorical feature.

    Examples
    --------
    >>> from relabel import check_monotonic_cst
    >>> check_monotonic_cst([1, 0, -1], 3).tolist()
    [1, 0, -1]
    >>> check_monotonic_cst([1, 0], 2, categorical_features=[0])
    Traceback (most recent call last):
    ...
    ValueError: monotonic_cst constrains feature(s) [0], which categorical_features declares categorical; ...
    """
    n_features = _check_n_features(n_features)
    categorical = check_categorical_features(categorical_features, n_features)
    if monotonic_cst is None:
        return np.zeros(n_features, dtype=np.int8)
    if isinstance(monotonic_cst, (str, bytes, dict)):
        raise ValueError(
            "monotonic_cst must be an array-like of -1, 0, +1 per feature here (a dict by feature "
            f"name is resolved by the estimators); got {monotonic_cst!r}"
        )
    values = np.asarray(monotonic_cst)
    if values.ndim != 1 or values.shape[0] != n_features:
        raise ValueError(
            f"monotonic_cst must have one entry per feature (length {n_features}); got shape {values.shape}"
        )
    if values.dtype == bool or not np.issubdtype(values.dtype, np.number):
        raise ValueError(f"monotonic_cst must hold -1, 0 or +1; got dtype {values.dtype}")
    if not np.all(np.isin(values, (-1, 0, 1))):
        raise ValueError(f"monotonic_cst must hold only -1, 0 or +1; got {values.tolist()}")
    cst = values.astype(np.int8)
    both = np.flatnonzero(categorical & (cst != 0))
    if both.size:
        raise ValueError(
            f"monotonic_cst constrains feature(s) {both.tolist()}, which categorical_features declares "
            "categorical; a categorical feature cannot be monotone (set its constraint to 0)"
        )
    return cst


def check_resolution(resolution: Any, n_features: int) -> NDArray[np.float64]:
    """The resolution r_f of every feature as a float array (zeros for ``None``).

    Parameters
    ----------
    resolution : None, float or array-like of shape (n_features,)
        Finite r_f >= 0, one for all features or one per feature; ``None`` means 0.
    n_features : int
        Number of features d.

    Returns
    -------
    ndarray of shape (n_features,), float64

    Raises
    ------
    ValueError
        Naming ``resolution``: negative, NaN or infinite values, or a wrong length.

    Examples
    --------
    >>> from relabel import check_resolution
    >>> check_resolution(0.5, 2).tolist(), check_resolution([0, 0.1], 2).tolist()
    ([0.5, 0.5], [0.0, 0.1])
    """
    n_features = _check_n_features(n_features)
    if resolution is None:
        return np.zeros(n_features)
    if isinstance(resolution, (bool, np.bool_)):
        raise ValueError(f"resolution must be a number or an array of numbers >= 0; got {resolution!r}")
    try:
        values = np.asarray(resolution, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"resolution must be a number or an array of numbers >= 0; got {resolution!r}") from None
    if values.ndim == 0:
        values = np.full(n_features, float(values))
    if values.shape != (n_features,):
        raise ValueError(
            f"resolution must be a scalar or have one entry per feature (length {n_features}); "
            f"got shape {values.shape}"
        )
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"resolution must be finite and >= 0; got {values.tolist()}")
    return values
