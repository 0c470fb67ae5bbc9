"""Ordinal decision trees: splitting criteria for ordered classes and leaf boxes."""

from trees._boxes import LeafBoxes, leaf_boxes

__all__ = ["LeafBoxes", "leaf_boxes"]
