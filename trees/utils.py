"""Helpers of ``trees`` that the other packages of the project (and users) may import.

Everything here is public and stable; the private modules behind it may move.

Labels (docs/design.md section 2)
    :func:`check_classes` validates an explicit ordinal class order,
    :func:`encode_labels` returns the ordered classes and the class index of every
    label, :func:`ordered_categories` reads the order of a pandas ordered
    Categorical, :func:`warn_text_order` raises :class:`ClassOrderWarning` when text
    classes were put in alphabetical order without an explicit ``classes``.
Inputs
    :func:`check_sample_weight` validates sample weights with messages naming
    ``sample_weight``; :func:`validate_rows` is scikit-learn's ``validate_data``
    without its spurious overflow warning on values near float64's limits; :func:`resolve_monotonic_cst` resolves scikit-learn's
    ``monotonic_cst`` (array or dict by feature name) to one int8 per feature;
    :func:`class_weight_factors` turns scikit-learn's ``class_weight`` into per-row
    factors of the sample weights.
Importances
    :func:`tree_feature_importances` gives a fitted tree's impurity-decrease
    importances (scikit-learn's definition), for the trees and the ensembles alike.
Histogram trees (docs/design.md section 10)
    :func:`bin_features` bins the features once, :func:`grow_hist_tree` grows one
    regression tree on the bins from gradients, with thresholds inside the training
    gaps at least :data:`MIN_GAP_ULPS` ulps from every training value.
Routing (docs/design.md section 3)
    :func:`apply_trees` and :func:`sum_trees` walk many trees stored as
    concatenated node arrays with the one routing rule of the trees (NaN follows
    ``missing_go_to_left``, else ``x <= threshold`` goes left): the leaves reached,
    and the sum of integer leaf values; :func:`node_gaps` the training values on
    either side of every split, between which its threshold may move.
Compiled kernels
    :func:`compiled` is the project's numba decorator (``njit`` with ``nogil``,
    cached on disk when possible).

Examples
--------
>>> from trees.utils import encode_labels
>>> classes, index = encode_labels(["mid", "low", "mid"], ["low", "mid", "high"])
>>> classes.tolist(), index.tolist()
(['low', 'mid', 'high'], [1, 0, 1])
"""

from trees._compile import compiled
from trees._hist import MIN_GAP_ULPS, bin_features
from trees._hist import grow_tree as grow_hist_tree
from trees._labels import (
    ClassOrderWarning,
    check_classes,
    encode_labels,
    ordered_categories,
    warn_text_order,
)
from trees._monotone import resolve_monotonic_cst
from trees._routing import apply_trees, node_gaps, sum_trees
from trees._validation import check_sample_weight, validate_rows
from trees._weights import class_weight_factors, tree_feature_importances

__all__ = [
    "MIN_GAP_ULPS",
    "ClassOrderWarning",
    "apply_trees",
    "bin_features",
    "check_classes",
    "check_sample_weight",
    "class_weight_factors",
    "compiled",
    "encode_labels",
    "grow_hist_tree",
    "node_gaps",
    "ordered_categories",
    "resolve_monotonic_cst",
    "sum_trees",
    "tree_feature_importances",
    "validate_rows",
    "warn_text_order",
]
