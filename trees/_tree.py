"""The fitted structure of a tree: node arrays shaped like scikit-learn's ``tree_``."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from trees._routing import apply_nodes, traversal_tables

__all__ = ["OrdinalTree"]


class OrdinalTree:
    """Array structure of a fitted tree, shaped like scikit-learn's ``tree_``.

    Node ids are assigned breadth-first, siblings adjacent
    (``children_right == children_left + 1``), so a parent's id is smaller
    than its children's ids.

    Attributes
    ----------
    children_left, children_right : ndarray of shape (node_count,)
        Child ids, ``-1`` at leaves. ``x[feature] <= threshold`` goes left
        (the routing rule of :mod:`trees._routing`).
    feature : ndarray of shape (node_count,)
        Split feature, ``-2`` at leaves.
    threshold : ndarray of shape (node_count,)
        Split threshold, ``-2.0`` at leaves.
    missing_go_to_left : ndarray of shape (node_count,), bool
        Where a missing value (NaN) of the split feature goes; ``False`` at
        leaves. A split learnt without missing values in its feature sends them
        to the child with more training rows (the right one on a tie), as
        scikit-learn's trees do.
    value : ndarray of shape (node_count, n_classes)
        Weighted class counts of the training rows in each node.
    n_node_samples : ndarray of shape (node_count,)
        Number of training rows with positive weight in each node.
    weighted_n_node_samples : ndarray of shape (node_count,)
        Sum of their weights.
    impurity : ndarray of shape (node_count,)
        The node's impurity under the tree's criterion.
    mean_index : ndarray of shape (node_count,)
        Weighted mean class index ``sum_k k n_k / n`` (classes 0..K-1) of every
        node, clipped into the node's monotone bounds (``lower_bound``,
        ``upper_bound``) when the tree was grown with monotone constraints: the
        value that is monotone in every constrained feature.
    lower_bound, upper_bound : ndarray of shape (node_count,)
        The bounds each node inherits from the splits of its ancestors on
        constrained features (``-inf``/``+inf`` without constraints).
    monotonic_cst : ndarray of shape (n_features,), int8
        The constraints the tree was grown with (zeros without constraints).
    depth : ndarray of shape (node_count,)
        Depth of every node (root 0).
    node_count, max_depth, n_features, n_classes, n_leaves : int
        Sizes of the tree.

    Examples
    --------
    >>> import numpy as np
    >>> from trees import OrdinalTreeClassifier
    >>> tree = OrdinalTreeClassifier().fit([[0.0], [1.0], [2.0]], [0, 1, 2]).tree_
    >>> tree.children_left.tolist(), tree.children_right.tolist(), tree.threshold.tolist()
    ([1, -1, 3, -1, -1], [2, -1, 4, -1, -1], [0.5, -2.0, 1.5, -2.0, -2.0])
    >>> tree.apply(np.array([[0.2], [1.7]])).tolist()
    [1, 4]
    """

    def __init__(
        self,
        *,
        children_left,
        feature,
        threshold,
        value,
        n_node_samples,
        impurity,
        depth,
        n_features,
        lower_bound=None,
        upper_bound=None,
        monotonic_cst=None,
        missing_go_to_left=None,
    ):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.where(self.children_left == -1, -1, self.children_left + 1).astype(np.intp)
        self.feature = np.asarray(feature, dtype=np.intp)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.value = np.asarray(value, dtype=np.float64)
        self.n_node_samples = np.asarray(n_node_samples, dtype=np.intp)
        self.weighted_n_node_samples = self.value.sum(axis=1)
        self.impurity = np.asarray(impurity, dtype=np.float64)
        self.depth = np.asarray(depth, dtype=np.intp)
        self.node_count = int(self.children_left.shape[0])
        self.max_depth = int(self.depth.max())
        self.n_features = int(n_features)
        self.n_classes = int(self.value.shape[1])
        is_leaf = self.children_left == -1
        self.n_leaves = int(is_leaf.sum())
        self.lower_bound = (
            np.full(self.node_count, -np.inf) if lower_bound is None else np.asarray(lower_bound, dtype=np.float64)
        )
        self.upper_bound = (
            np.full(self.node_count, np.inf) if upper_bound is None else np.asarray(upper_bound, dtype=np.float64)
        )
        self.monotonic_cst = (
            np.zeros(self.n_features, dtype=np.int8) if monotonic_cst is None else np.asarray(monotonic_cst, np.int8)
        )
        w = self.weighted_n_node_samples
        mean = np.divide(self.value @ np.arange(self.n_classes), w, out=np.zeros(self.node_count), where=w > 0)
        self.mean_index = np.minimum(np.maximum(mean, self.lower_bound), self.upper_bound)
        if missing_go_to_left is None:
            n_left = self.n_node_samples.take(np.where(is_leaf, 0, self.children_left))
            n_right = self.n_node_samples.take(np.where(is_leaf, 0, self.children_right))
            missing_go_to_left = ~is_leaf & (n_left > n_right)
        self.missing_go_to_left = np.asarray(missing_go_to_left, dtype=np.bool_)
        self._tables = traversal_tables(self.children_left, self.feature, self.threshold, self.missing_go_to_left)

    def __getstate__(self) -> dict:
        # A model file reads every array on its own (a header parsed each time): the node
        # arrays travel as two tables, and what __init__ derives from them (children_right,
        # weighted counts, sizes, traversal tables) is rebuilt on load. mean_index is saved:
        # an isotonic projection may have replaced the leaves' means.
        nodes = np.column_stack([self.children_left, self.feature, self.n_node_samples, self.depth,
                                 self.missing_go_to_left]).astype(np.int64)
        node_values = np.column_stack([self.threshold, self.impurity, self.lower_bound, self.upper_bound,
                                       self.mean_index, self.value])
        return {"nodes": nodes, "node_values": node_values, "monotonic_cst": self.monotonic_cst,
                "n_features": self.n_features}

    def __setstate__(self, state: dict) -> None:
        if "nodes" not in state:  # the attributes themselves, as files of earlier versions hold them
            self.__dict__.update(state)
            self._tables = traversal_tables(self.children_left, self.feature, self.threshold,
                                            self.missing_go_to_left)
            return
        nodes, values = np.asarray(state["nodes"]), np.asarray(state["node_values"], dtype=np.float64)
        self.__init__(
            children_left=nodes[:, 0], feature=nodes[:, 1], n_node_samples=nodes[:, 2], depth=nodes[:, 3],
            missing_go_to_left=nodes[:, 4].astype(np.bool_), threshold=values[:, 0], impurity=values[:, 1],
            lower_bound=values[:, 2], upper_bound=values[:, 3], value=values[:, 5:],
            monotonic_cst=state["monotonic_cst"], n_features=state["n_features"],
        )
        self.mean_index = values[:, 4].copy()

    def set_thresholds(self, threshold: NDArray[np.float64]) -> None:
        """Replace the split thresholds (entries of leaves are ignored).

        The certified forest moves every threshold inside the gap between the
        training values it separates.

        Parameters
        ----------
        threshold : ndarray of shape (node_count,)
            New thresholds, finite at internal nodes (or ``+inf``: all real
            values left, missing values right).

        Examples
        --------
        >>> import numpy as np
        >>> from trees import OrdinalTreeClassifier
        >>> tree = OrdinalTreeClassifier().fit([[0.0], [1.0]], [0, 1]).tree_
        >>> tree.set_thresholds(np.array([0.9, -2.0, -2.0]))
        >>> tree.apply(np.array([[0.8]])).tolist()
        [1]
        """
        threshold = np.asarray(threshold, dtype=np.float64)
        if threshold.shape != (self.node_count,):
            raise ValueError(f"threshold must have shape ({self.node_count},); got {threshold.shape}")
        is_leaf = self.children_left == -1
        inner = threshold[~is_leaf]
        if not np.all(np.isfinite(inner) | (inner == np.inf)):
            raise ValueError("threshold must be finite (or +inf) at internal nodes")
        self.threshold = np.where(is_leaf, -2.0, threshold)
        self._tables = traversal_tables(self.children_left, self.feature, self.threshold, self.missing_go_to_left)

    def apply(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """Leaf id of every row of a validated float64 matrix.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Float64 data, NaN for a missing value (the estimator's ``apply``
            validates it).

        Returns
        -------
        ndarray of shape (n_samples,)
            Leaf node ids (intp).

        Notes
        -----
        Compiled passes, one tree level each, with the routing rule of
        :mod:`trees._routing` (NaN follows ``missing_go_to_left``):
        O(n_samples * max_depth).
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        return apply_nodes(X, *self._tables, self.max_depth)
