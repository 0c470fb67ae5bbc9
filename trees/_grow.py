"""Former home of the tree grower, kept for code that imports from it.

The grower now lives in phases: :mod:`trees._splitter` (split search),
:mod:`trees._partition` (children), :mod:`trees._grower` (the builder) and
:mod:`trees._tree` (the fitted structure); the numba decorator is
:func:`trees.utils.compiled`.
"""

from trees._compile import compiled as _compiled
from trees._grower import grow_tree
from trees._tree import OrdinalTree

__all__ = ["OrdinalTree", "grow_tree"]
