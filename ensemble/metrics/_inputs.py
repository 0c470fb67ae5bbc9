"""Validation and rank encoding shared by the metrics of :mod:`ensemble.metrics`.

Every metric works on ranks: each label is replaced by its position in an
explicit ordered ``labels`` list (docs/design.md section 6).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from trees.utils import check_classes, check_sample_weight, ordered_categories, warn_text_order

__all__: list[str] = []


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


def _check_same_length(a: NDArray[Any], b: NDArray[Any], name_a: str, name_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{name_a} and {name_b} have different lengths ({a.shape[0]} and {b.shape[0]})"
        )


def _default_labels(*ys: NDArray[Any], originals: tuple[Any, ...] = ()) -> NDArray[Any]:
    """The sorted union of the labels, or the order of a pandas ordered Categorical."""
    for y in originals:
        cats = ordered_categories(y)
        if cats is not None:
            return cats
    try:
        labels = np.unique(np.concatenate(ys))
    except TypeError as exc:
        raise ValueError(
            f"the labels cannot be sorted ({exc}); pass an explicit labels order"
        ) from None
    # Text labels sorted alphabetically are rarely in their ordinal order: say so.
    warn_text_order(labels, "labels", stacklevel=5)
    return labels


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
        lab = check_classes(labels, "labels")
    rt = _encode(t, lab, "y_true")
    rp = _encode(p, lab, "y_pred")
    w = check_sample_weight(sample_weight, t.shape[0])
    return rt, rp, lab.shape[0], w
