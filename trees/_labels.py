"""Ordered class labels: one encoding shared by every estimator of the project."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["encode_labels", "ordered_categories"]


def ordered_categories(y: Any) -> NDArray | None:
    """The categories of a pandas ordered Categorical ``y`` (its own class order), else None.

    Examples
    --------
    >>> ordered_categories([1, 2]) is None
    True
    """
    dtype = getattr(y, "dtype", None)
    if getattr(dtype, "ordered", False) and hasattr(dtype, "categories"):
        return np.asarray(dtype.categories)
    return None


def encode_labels(y: ArrayLike, classes: ArrayLike | None = None) -> tuple[NDArray, NDArray[np.intp]]:
    """Return the ordered classes and the class index of every label.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels.
    classes : array-like of shape (n_classes,), optional
        The classes in ordinal order (lowest first); may hold classes absent from
        ``y``. ``None`` orders the labels as :func:`numpy.unique` sorts them.

    Returns
    -------
    classes_ : ndarray of shape (n_classes,)
        The ordered classes.
    y_idx : ndarray of shape (n_samples,)
        Index of each label in ``classes_``.

    Raises
    ------
    ValueError
        If ``classes`` is not a non-empty 1-d list of distinct labels, cannot be
        compared with ``y``, or misses a label of ``y``.

    Notes
    -----
    A sort and a binary search: O((n_samples + n_classes) log n_classes).

    Examples
    --------
    >>> from trees._labels import encode_labels
    >>> classes, idx = encode_labels(["mid", "low", "high"], ["low", "mid", "high"])
    >>> classes.tolist(), idx.tolist()
    (['low', 'mid', 'high'], [1, 0, 2])
    """
    y = np.asarray(y)
    if classes is None:
        classes_, y_idx = np.unique(y, return_inverse=True)
        return classes_, y_idx.astype(np.intp)
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.shape[0] < 1:
        raise ValueError(f"classes must be a non-empty 1-d list of labels; got shape {classes.shape}")
    try:
        sorter = np.argsort(classes, kind="stable")
        ordered = classes[sorter]
        if np.any(ordered[1:] == ordered[:-1]):
            raise ValueError("classes must not contain duplicate labels")
        pos = np.clip(np.searchsorted(ordered, y), 0, ordered.shape[0] - 1)
        found = ordered[pos] == y
    except TypeError as exc:
        raise ValueError(f"classes and the labels of y cannot be compared: {exc}") from None
    if not np.all(found):
        missing = np.unique(y[~found])
        raise ValueError(f"classes is missing label(s) present in y: {missing.tolist()!r}")
    return classes, sorter[pos].astype(np.intp)
