"""Per-row class weights and impurity-decrease importances: one definition for the trees and the ensembles.

``trees`` does not import ``ensemble``; the ensembles import these from :mod:`trees.utils`.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["class_weight_factors", "tree_feature_importances"]


def class_weight_factors(class_weight: Any, y_idx: NDArray[np.intp], classes: NDArray) -> NDArray[np.float64] | None:
    """Per-row weight factors of ``class_weight``, as scikit-learn defines it.

    Parameters
    ----------
    class_weight : "balanced", dict or None
        ``"balanced"``: ``n_samples / (n_classes_present * count of the row's class)``;
        a dict: ``{class label: weight}`` (classes not named weigh 1); ``None``: no
        factors.
    y_idx : ndarray of shape (n_samples,)
        Class index of every row.
    classes : ndarray of shape (n_classes,)
        The ordered classes (the dict's keys are labels of these).

    Returns
    -------
    ndarray of shape (n_samples,) or None
        Multiply them into ``sample_weight`` (scikit-learn's convention: the balanced
        weights count rows, not their sample weights).

    Raises
    ------
    ValueError
        If a dict names a label that is not a class, or a weight that is negative or
        not finite.

    Examples
    --------
    >>> import numpy as np
    >>> class_weight_factors("balanced", np.array([0, 0, 0, 1]), np.array(["a", "b"])).tolist()
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0]
    >>> class_weight_factors({"b": 3.0}, np.array([0, 1]), np.array(["a", "b"])).tolist()
    [1.0, 3.0]
    """
    if class_weight is None:
        return None
    counts = np.bincount(y_idx, minlength=classes.shape[0]).astype(np.float64)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be 'balanced', a dict or None; got {class_weight!r}")
        per_class = np.where(counts > 0, y_idx.shape[0] / (np.count_nonzero(counts) * np.maximum(counts, 1)), 0.0)
        return per_class[y_idx]
    per_class = np.ones(classes.shape[0])
    known = {label: i for i, label in enumerate(classes.tolist())}
    for label, weight in class_weight.items():
        key = label.item() if isinstance(label, np.generic) else label
        if key not in known:
            raise ValueError(f"class_weight names {label!r}, which is not a class; the classes are "
                             f"{classes.tolist()!r}")
        if not (isinstance(weight, Real) and np.isfinite(weight) and weight >= 0):
            raise ValueError(f"class_weight[{label!r}] must be a finite non-negative number; got {weight!r}")
        per_class[known[key]] = float(weight)
    return per_class[y_idx]


def tree_feature_importances(tree: Any, n_features: int) -> NDArray[np.float64]:
    """Impurity-decrease importances of one fitted tree (scikit-learn's or ours), summing to 1.

    The decrease of a split is ``w_node I(node) - w_left I(left) - w_right I(right)``
    (weighted sample counts ``w``, impurities ``I`` as the tree stored them; the
    ranking criterion's impurities are counts already, so its decrease is
    ``I(node) - I(left) - I(right)``), summed per split feature and normalised, as
    scikit-learn's ``feature_importances_``. A tree without splits gives zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> tree = DecisionTreeRegressor(max_depth=2, random_state=0).fit([[0, 1], [1, 0], [2, 1], [3, 0]], [0, 0, 1, 1])
    >>> tree_feature_importances(tree, 2).tolist()
    [1.0, 0.0]
    """
    s = tree.tree_
    left, right = np.asarray(s.children_left), np.asarray(s.children_right)
    internal = np.flatnonzero(left >= 0)
    impurity = np.asarray(s.impurity, dtype=np.float64)
    weight = np.asarray(s.weighted_n_node_samples, dtype=np.float64)
    if getattr(tree, "criterion", None) == "ranking":
        weight = np.ones_like(weight)
    l, r = left[internal], right[internal]
    decrease = weight[internal] * impurity[internal] - weight[l] * impurity[l] - weight[r] * impurity[r]
    out = np.bincount(np.asarray(s.feature)[internal], weights=np.maximum(decrease, 0.0), minlength=n_features)
    total = out.sum()
    return out / total if total > 0 else out
