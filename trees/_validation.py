"""Input checks shared by the estimators of ``trees`` and ``ensemble``.

``relabel`` does not import ``trees`` (docs/design.md section 1), so it keeps its own
minimal check of region-count weights.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils.validation import validate_data

__all__ = ["check_sample_weight", "validate_rows"]


def validate_rows(estimator: Any, *args: Any, **kwargs: Any) -> Any:
    """scikit-learn's ``validate_data``, without its spurious overflow warning near float64's limits.

    Its finiteness check first sums ``X``: finite values near 1.7e308 overflow that
    sum to inf (or nan) and numpy warns, although the exact per-value check that
    follows accepts them. Arguments and result are ``validate_data``'s.

    Examples
    --------
    >>> import numpy as np, warnings
    >>> from trees import OrdinalTreeClassifier
    >>> X = np.array([[1.7e308], [-1.7e308], [1.7e308]])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error")
    ...     OrdinalTreeClassifier().fit(X, [0, 1, 0]).predict(X).tolist()
    [0, 1, 0]
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return validate_data(estimator, *args, **kwargs)


def check_sample_weight(sample_weight: Any, n_samples: int, *, allow_all_zero: bool = False) -> NDArray[np.float64]:
    """Return ``sample_weight`` as a new float64 array of finite, non-negative weights.

    The one sample-weight validator of the estimators (scikit-learn's is private
    and its keywords change between releases).

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), scalar or None
        The weights. ``None`` gives unit weights; a scalar is repeated for every
        sample, as in scikit-learn.
    n_samples : int
        The number of samples the weights belong to.
    allow_all_zero : bool, default=False
        Whether weights that are all zero are accepted (a caller that needs a
        positive total says False).

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,), dtype float64
        A fresh array: the caller may modify it without touching the input.

    Raises
    ------
    ValueError
        If the weights are not numbers, not one-dimensional, of a length other
        than ``n_samples``, NaN or infinite, negative, or all zero (unless
        ``allow_all_zero``). Every message names ``sample_weight``.

    Notes
    -----
    One pass over the weights: O(n_samples).

    Examples
    --------
    >>> from trees.utils import check_sample_weight
    >>> check_sample_weight([1, 0, 2.5], 3).tolist()
    [1.0, 0.0, 2.5]
    >>> check_sample_weight(None, 2).tolist()
    [1.0, 1.0]
    >>> check_sample_weight([0, 0], 2)
    Traceback (most recent call last):
        ...
    ValueError: sample_weight must contain at least one non-zero weight; all 2 are zero
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 0:
        raise ValueError(f"n_samples must be a non-negative integer; got {n_samples!r}")
    n_samples = int(n_samples)
    if sample_weight is None:
        weights = np.ones(n_samples, dtype=np.float64)
    elif isinstance(sample_weight, Real):
        weights = np.full(n_samples, float(sample_weight), dtype=np.float64)
    else:
        raw = np.asarray(sample_weight)
        if raw.dtype.kind == "O":
            try:
                raw = raw.astype(np.float64)
            except (TypeError, ValueError):
                pass
        if raw.dtype.kind not in "biuf":
            raise ValueError(f"sample_weight must hold real numbers; got an array of dtype {raw.dtype}")
        if raw.ndim != 1:
            raise ValueError(
                f"sample_weight must be a 1D array of shape (n_samples,) = ({n_samples},) or a scalar; "
                f"got an array of shape {raw.shape}"
            )
        if raw.shape[0] != n_samples:
            raise ValueError(f"sample_weight has {raw.shape[0]} entries but there are {n_samples} samples")
        weights = np.array(raw, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(weights)):
        raise ValueError("sample_weight must be finite; got NaN or infinite values")
    if np.any(weights < 0):
        raise ValueError(f"sample_weight must be non-negative; got a minimum of {float(weights.min())!r}")
    if not allow_all_zero and n_samples > 0 and not np.any(weights > 0):
        raise ValueError(
            f"sample_weight must contain at least one non-zero weight; all {n_samples} are zero"
        )
    return weights
