"""Ordinal decision trees: splitting criteria for ordered classes and leaf boxes.

Public API: :class:`OrdinalTreeClassifier` (alias ``OrdinalDecisionTreeClassifier``),
:data:`CRITERIA`, :func:`leaf_boxes` / :class:`LeafBoxes` / :class:`LeafBoxesWithMissing`, the fitted structure
:class:`OrdinalTree`, :func:`resolve_monotonic_cst` (scikit-learn's ``monotonic_cst``,
names resolved), the pure criterion functions in :mod:`trees.criteria` and the
shared helpers in :mod:`trees.utils` (labels, weights, the numba decorator).
"""

from trees import criteria, utils
from trees._boxes import LeafBoxes, LeafBoxesWithMissing, leaf_boxes
from trees._classes import OrdinalDecisionTreeClassifier, OrdinalTreeClassifier
from trees._tree import OrdinalTree
from trees._monotone import resolve_monotonic_cst
from trees.criteria import CRITERIA

__all__ = [
    "CRITERIA",
    "LeafBoxes",
    "LeafBoxesWithMissing",
    "OrdinalDecisionTreeClassifier",
    "OrdinalTree",
    "OrdinalTreeClassifier",
    "criteria",
    "leaf_boxes",
    "resolve_monotonic_cst",
    "utils",
]
