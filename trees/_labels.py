"""Ordered class labels: one encoding shared by every estimator of the project."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ClassOrderWarning", "check_classes", "encode_labels", "ordered_categories", "warn_text_order"]


class ClassOrderWarning(UserWarning):
    """Text class labels were ordered alphabetically because no order was given.

    Ordinal models and metrics read the class order as the order of the labels:
    ``["poor", "fair", "good"]`` sorted alphabetically is ``fair < good < poor``,
    which silently changes every prediction and score. Give the order with
    ``classes=`` (estimators) or ``labels=`` (metrics).
    """


def warn_text_order(classes: NDArray, parameter: str = "classes", stacklevel: int = 3) -> None:
    """Warn (:class:`ClassOrderWarning`) when text labels were ordered as numpy sorts them.

    Parameters
    ----------
    classes : ndarray
        The classes in the order used (sorted).
    parameter : str, default="classes"
        The parameter that gives an explicit order (``"labels"`` for metrics).
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`.

    Examples
    --------
    >>> import warnings, numpy as np
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_text_order(np.array(["fair", "good", "poor"]))
    >>> print(str(caught[0].message).split(":")[0])
    text class labels without an order are sorted alphabetically
    """
    if not any(isinstance(c, (str, bytes, np.str_, np.bytes_)) for c in np.asarray(classes).tolist()):
        return
    shown = " < ".join(repr(c) for c in np.asarray(classes).tolist()[:8])
    more = " < ..." if len(classes) > 8 else ""
    warnings.warn(
        f"text class labels without an order are sorted alphabetically: {shown}{more}. If that is not "
        f"their order, pass {parameter}=[lowest, ..., highest]",
        ClassOrderWarning,
        stacklevel=stacklevel,
    )


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


def check_classes(classes: ArrayLike, name: str = "classes") -> NDArray:
    """Validate an explicit class order and return it as an array.

    The one check of an ordinal class order shared by the estimators
    (``classes=``), the metrics (``labels=``) and the displays.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        The classes in ordinal order, lowest first.
    name : str, default="classes"
        Parameter name used in the error messages.

    Returns
    -------
    ndarray of shape (n_classes,)
        ``classes`` as an array, in the given order.

    Raises
    ------
    ValueError
        If ``classes`` is not a non-empty 1-d list, holds a missing value (NaN
        or None), holds values that cannot be compared with each other, or
        holds a label twice.

    Notes
    -----
    One stable sort: O(n_classes log n_classes).

    Examples
    --------
    >>> from trees.utils import check_classes
    >>> check_classes(["low", "mid", "high"]).tolist()
    ['low', 'mid', 'high']
    >>> check_classes([1, 2, 1], name="labels")
    Traceback (most recent call last):
    ...
    ValueError: labels must not contain duplicates, got [1, 2, 1]
    """
    if classes is None:
        raise ValueError(f"{name} must be a non-empty 1-d list of labels, got None")
    arr = np.asarray(classes)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty 1-d list of labels; got shape {arr.shape}")
    if arr.dtype.kind in "fc":
        missing = bool(np.isnan(arr).any())
    elif arr.dtype.kind == "O":
        missing = any(v is None or (isinstance(v, float) and v != v) for v in arr.tolist())
    else:
        missing = False
    if missing:
        raise ValueError(f"{name} contains missing values (NaN or None): {arr.tolist()!r}")
    try:
        ordered = arr[np.argsort(arr, kind="stable")]
        duplicated = bool(np.any(ordered[1:] == ordered[:-1]))
    except TypeError as exc:
        raise ValueError(f"{name} must be mutually comparable labels: {exc}") from None
    if duplicated:
        raise ValueError(f"{name} must not contain duplicates, got {arr.tolist()!r}")
    return arr


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
        If ``classes`` fails :func:`check_classes`, cannot be compared with
        ``y``, or misses a label of ``y``.

    Warns
    -----
    ClassOrderWarning
        Text labels without ``classes``: they are sorted alphabetically.

    Notes
    -----
    A sort and a binary search: O((n_samples + n_classes) log n_classes).

    Examples
    --------
    >>> from trees.utils import encode_labels
    >>> classes, idx = encode_labels(["mid", "low", "high"], ["low", "mid", "high"])
    >>> classes.tolist(), idx.tolist()
    (['low', 'mid', 'high'], [1, 0, 2])
    """
    y = np.asarray(y)
    if classes is None:
        classes_, y_idx = np.unique(y, return_inverse=True)
        warn_text_order(classes_, stacklevel=4)
        return classes_, y_idx.astype(np.intp)
    classes = check_classes(classes)
    try:
        sorter = np.argsort(classes, kind="stable")
        ordered = classes[sorter]
        pos = np.clip(np.searchsorted(ordered, y), 0, ordered.shape[0] - 1)
        found = ordered[pos] == y
    except TypeError as exc:
        raise ValueError(f"classes and the labels of y cannot be compared: {exc}") from None
    if not np.all(found):
        missing = np.unique(y[~found])
        hint = ""
        codes = np.unique(y)
        if codes.dtype.kind in "iu" and np.array_equal(codes, np.arange(codes.shape[0])):
            # scikit-learn's cross_val_predict(method="predict_proba") fits on y re-encoded as
            # 0..K-1 in sorted order, which no class order can be checked against.
            hint = (" y holds the codes 0..K-1: scikit-learn's cross_val_predict(method='predict_proba') "
                    "re-encodes y that way before fitting; encode y as class indices in your order "
                    "(and drop classes=) or use cross_validate/your own folds")
        raise ValueError(f"classes is missing label(s) present in y: {missing.tolist()!r} "
                         f"(classes={classes.tolist()!r}).{hint}")
    return classes, sorter[pos].astype(np.intp)
