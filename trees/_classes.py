"""The ordinal decision tree classifier."""

from __future__ import annotations

import logging
from math import ceil
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from trees._grower import grow_tree
from trees.criteria import _CRITERIA
from trees._labels import check_classes, encode_labels, ordered_categories
from trees._monotone import MONOTONIC_METHODS, monotone_leaf_labels, resolve_monotonic_cst, tree_leaf_order
from trees._tree import OrdinalTree
from trees._validation import check_sample_weight, validate_rows
from trees._weights import class_weight_factors, tree_feature_importances

__all__ = ["OrdinalTreeClassifier", "OrdinalDecisionTreeClassifier"]

logger = logging.getLogger(__name__)


def _leaf_proba(value: NDArray[np.float64]) -> NDArray[np.float64]:
    """Class shares of every node's weighted counts (zeros for an empty node)."""
    total = value.sum(axis=1, keepdims=True)
    return value / np.where(total > 0, total, 1.0)


def _leaf_labels(value: NDArray[np.float64], how: str) -> NDArray[np.intp]:
    """Class index of every node: weighted lower median or lowest mode of its counts."""
    if how == "mode":
        return np.argmax(value, axis=1).astype(np.intp)
    total = value.sum(axis=1, keepdims=True)
    # A relative tolerance keeps exact halves (e.g. weights 0.1 + 0.2 vs 0.3) on the lower class.
    reached = np.cumsum(value, axis=1) >= 0.5 * total * (1.0 - 1e-12)
    return np.argmax(reached, axis=1).astype(np.intp)


class OrdinalTreeClassifier(ClassifierMixin, BaseEstimator):
    """A decision tree for ordered classes with ordinal splitting criteria.

    The classes are ordered: by default ``classes_`` is ``np.unique(y)`` and its
    sorted order *is* the ordinal order; pass ``classes`` for another order
    (e.g. string labels ``["low", "mid", "high"]``). A pandas ordered
    Categorical ``y`` carries its own order (all its categories become
    ``classes_``, as if passed as ``classes``). The tree is grown
    breadth-first, all nodes of a level at once (a compiled pass per level for
    ``gini``, ``ogini`` and ``ranking``, vectorised numpy for ``entropy`` and
    ``wig``: the same trees either way), and every leaf
    predicts the median of its class distribution by default.

    Parameters
    ----------
    criterion : {"gini", "entropy", "ogini", "wig", "ranking"}, default="ogini"
        Splitting criterion (docs/design.md section 3, :data:`trees.CRITERIA`).
    max_depth : int, default=None
        Maximum depth; ``None`` grows until the leaves are pure or too small.
    min_samples_split : int or float, default=2
        Minimum number of rows (with positive weight) to split a node; a float
        is a fraction of those rows (rounded up).
    min_samples_leaf : int or float, default=1
        Minimum number of rows (with positive weight) in each child; a float is
        a fraction of those rows (rounded up).
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Number of features drawn at random for each node (a float is a fraction
        of the features). Features with no candidate split in the node are
        skipped and do not count, as in scikit-learn.
    min_impurity_decrease : float, default=0.0
        A node is split only if ``N_t / N * gain >= min_impurity_decrease``
        (weights, as in scikit-learn; for ``ranking`` the gain is in count units).
    leaf_label : {"median", "mode"}, default="median"
        Label of a leaf: the weighted lower median of its class counts (the
        lowest class whose cumulative share reaches 0.5; minimises the absolute
        error) or the mode (lowest class on ties).
    wig_power : float, default=1.0
        Exponent ``a`` of the weights of the ``wig`` criterion.
    classes : array-like of shape (n_classes,), default=None
        Explicit ordinal order of the labels. It may contain labels absent from
        ``y`` (all trees of an ensemble then share the same columns) but must
        contain every label of ``y``.
    random_state : int, RandomState instance or None, default=None
        Draws the feature subsets of ``max_features``; fixes the tree for a
        given seed.
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default=None
        Monotone constraints in scikit-learn's convention: per feature, +1
        non-decreasing, -1 non-increasing, 0 unconstrained; or a dict
        ``{feature name: -1/0/+1}`` when ``X`` has string column names (missing
        features unconstrained). ``predict`` and the leaves' mean class index
        (``tree_.mean_index``) are then monotone (certified by :meth:`is_monotone`);
        ``predict_proba`` is not constrained. Needs ``leaf_label="median"``. See the
        Notes.
    monotonic_method : {"basic", "intermediate", "isotonic"}, default="isotonic"
        How the tree respects ``monotonic_cst`` (ignored without constraints):
        ``"basic"`` restricts the splits as scikit-learn's regression trees do
        (bounds halfway between siblings, inherited); ``"intermediate"``
        recomputes each node's bounds at every level from the values of the
        leaves it touches (looser); ``"isotonic"`` grows the tree freely and
        projects the leaves' values onto the constraints exactly (measured the
        most accurate: benchmarks/monotone_trees.py).
    class_weight : "balanced", dict or None, default=None
        Weights of the classes, as scikit-learn's ``DecisionTreeClassifier``:
        ``{class label: weight}`` (classes not named weigh 1), or ``"balanced"``,
        ``n_samples / (n_classes_present * count of the row's class)`` (rows
        counted, not their weights). Multiplied into ``sample_weight`` in ``fit``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels in their ordinal order.
    n_classes_ : int
        Number of classes.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.
    tree_ : trees.OrdinalTree
        The fitted structure (``children_left``, ``children_right``,
        ``feature``, ``threshold``, ``value`` (weighted class counts),
        ``n_node_samples``, ``weighted_n_node_samples``, ``impurity``,
        ``node_count``, ``max_depth``, ``n_features``), breadth-first node ids.
        Also ``mean_index``, the weighted mean class index of every node (under
        ``monotonic_cst``, the monotone value of the leaves: clipped into
        ``lower_bound``/``upper_bound``, or projected for ``"isotonic"``).
    leaf_label_ : ndarray of shape (node_count,)
        The class index each node would predict (used at the leaves): the lower
        weighted median (or the mode) of its class counts, and under
        ``monotonic_cst`` the monotone labels of least absolute error.
    max_features_ : int
        The resolved number of features drawn per node.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Impurity-decrease importances, as scikit-learn's trees: the weighted
        decrease of every split (count units for ``ranking``) summed per feature
        and normalised to sum to 1 (all zero for a tree without splits).

    Notes
    -----
    Split search: per level, the per-feature presorted orders are grouped by
    node; cumulative weighted class counts give every candidate's left and right
    counts, and each criterion scores them all at once in O(K). Candidates lie
    between distinct consecutive values (threshold at the midpoint) and respect
    ``min_samples_leaf``; ties go to the lowest feature, then the lowest
    threshold (gains within ``1e-11`` times the node's impurity count as ties,
    and a best gain that close to zero counts as zero when ``min_impurity_decrease``
    decides whether to split, so neither depends on the rounding of the cumulative
    sums). Fit costs O(p n log n) for the presort plus O(p n K) per level;
    ``apply``/``predict`` cost O(n depth). Rows with zero weight are ignored.

    Missing values (NaN in ``X``), as in scikit-learn's trees: at every split the
    rows whose feature is missing go left or right, whichever scores better
    (``tree_.missing_go_to_left``), and one more candidate sends all the real
    values left and the missing ones right (threshold ``+inf``). On a tie the
    lower feature, then the lower threshold, then missing values sent right wins.
    A split whose feature had no missing value among the node's training rows
    sends them, at predict time, to the child with more training rows (the right
    one on a tie), as scikit-learn does. :func:`trees.leaf_boxes` with
    ``missing=True`` says which leaves hold the missing values of each feature.

    Monotone constraints. The leaves of a tree are partially ordered: a leaf lies
    below another when they share a face across a constrained feature and the
    other is on the side where the prediction may only grow (docs/design.md
    section 4b: along any line parallel to a constrained feature, consecutive
    leaves share such a face). The leaf labels are the class indices of least
    weighted absolute error on the training rows subject to that order (exact:
    one minimum cut per class threshold, :mod:`trees._isotonic`), so ``predict``
    is monotone; without constraints they are the leaf medians. The growth rule
    (``monotonic_method``) decides the partition and the monotone mean class
    index ``tree_.mean_index`` (classes 0..K-1, weighted) that forests average:
    ``"basic"`` and ``"intermediate"`` reject a split on a constrained feature
    whose children's means go the wrong way or leave the node's bounds and clip
    every node's mean into its bounds; ``"isotonic"`` takes the free tree and
    replaces the leaves' means by their weighted least-squares projection onto
    the leaf order. Only ``"basic"`` keeps ``mean_index`` monotone whatever the
    thresholds (two points that differ in feature f only are separated by a split
    on f, and the leaves below its two sides are bounded by the same midpoint),
    which matters to callers that move thresholds after fitting
    (``tree_.set_thresholds``); the labels and the other rules hold for the
    thresholds they were computed with, and :meth:`is_monotone` checks the
    current ones. ``tree_.value`` stays the class counts and ``predict_proba``
    is not constrained. As in scikit-learn, ``max_features`` draws the features
    before the monotone rule rejects candidates. Costs: the leaf order is a
    sweep over the faces of the leaves, O(n_features * n_leaves log n_leaves)
    plus the touching pairs; the labels take K - 1 minimum cuts on it, the
    ``"isotonic"`` values at most 2 n_leaves; ``"intermediate"`` recomputes the
    order of the current leaves at every level.

    Examples
    --------
    >>> import numpy as np
    >>> from trees import OrdinalTreeClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> y = np.array([1, 1, 2, 2, 3, 3])
    >>> clf = OrdinalTreeClassifier(max_depth=2).fit(X, y)
    >>> clf.predict([[0.5], [2.5], [4.5]]).tolist()
    [1, 2, 3]
    >>> clf.get_n_leaves(), clf.get_depth()
    (3, 2)

    With ``monotonic_cst=[1]`` the predictions and the leaves' mean class index
    never decrease in x:

    >>> y_bumpy = np.array([2, 3, 1, 1, 3, 3])
    >>> free = OrdinalTreeClassifier(max_depth=2).fit(X, y_bumpy)
    >>> free.predict(X).tolist(), free.tree_.mean_index[free.apply(X)].tolist()
    ([2, 2, 1, 1, 3, 3], [1.5, 1.5, 0.0, 0.0, 2.0, 2.0])
    >>> mono = OrdinalTreeClassifier(max_depth=2, monotonic_cst=[1]).fit(X, y_bumpy)
    >>> mono.predict(X).tolist(), mono.tree_.mean_index[mono.apply(X)].tolist()
    ([1, 1, 1, 1, 3, 3], [0.75, 0.75, 0.75, 0.75, 2.0, 2.0])
    >>> mono.is_monotone(), free.is_monotone(monotonic_cst=[1])
    (True, False)
    """

    _parameter_constraints: dict = {
        "criterion": [StrOptions(set(_CRITERIA))],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_split": [
            Interval(Integral, 2, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
        ],
        "min_samples_leaf": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="neither"),
        ],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "min_impurity_decrease": [Interval(Real, 0.0, None, closed="left")],
        "leaf_label": [StrOptions({"median", "mode"})],
        "wig_power": [Interval(Real, 0.0, None, closed="neither")],
        "classes": ["array-like", None],
        "random_state": ["random_state"],
        "monotonic_cst": ["array-like", dict, None],
        "monotonic_method": [StrOptions(set(MONOTONIC_METHODS))],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    def __init__(
        self,
        *,
        criterion: str = "ogini",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        max_features: int | float | str | None = None,
        min_impurity_decrease: float = 0.0,
        leaf_label: str = "median",
        wig_power: float = 1.0,
        classes: ArrayLike | None = None,
        random_state: int | np.random.RandomState | None = None,
        monotonic_cst: ArrayLike | dict | None = None,
        monotonic_method: str = "isotonic",
        class_weight: str | dict | None = None,
    ) -> None:
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.min_impurity_decrease = min_impurity_decrease
        self.leaf_label = leaf_label
        self.wig_power = wig_power
        self.classes = classes
        self.random_state = random_state
        self.monotonic_cst = monotonic_cst
        self.monotonic_method = monotonic_method
        self.class_weight = class_weight

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "OrdinalTreeClassifier":
        """Grow the tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data: finite values, or NaN for a missing value (see the Notes).
        y : array-like of shape (n_samples,)
            Ordinal labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative finite weights (e.g. bootstrap multiplicities). Rows
            with zero weight are ignored entirely.

        Returns
        -------
        self : OrdinalTreeClassifier
            The fitted tree.

        Raises
        ------
        ValueError
            On infinite values in ``X``, inconsistent lengths, a single class without
            ``classes``, ``classes`` missing a label of ``y``, negative or
            non-finite weights, or invalid parameters (``monotonic_cst``: wrong
            length, values outside {-1, 0, 1}, a dict without feature names in
            ``X`` or naming an unknown feature), or a ``class_weight`` dict naming a
            label that is not a class or a weight that is negative or not finite.
        """
        categories = ordered_categories(y)
        X, y = validate_rows(self, X, y, dtype=np.float64, order="C", ensure_all_finite="allow-nan")
        check_classification_targets(y)
        self.classes_, y_idx = encode_labels(y, self.classes if self.classes is not None else categories)
        if self.classes is None and categories is None and self.classes_.shape[0] < 2:
            raise ValueError(
                "OrdinalTreeClassifier needs samples of at least 2 classes in y; got 1 class "
                f"({self.classes_[0]!r}). Pass `classes` to fit a single-leaf tree."
            )
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        return self._grow(X, y_idx, self._class_weighted(sample_weight, y_idx))

    def _class_weighted(self, sample_weight: NDArray[np.float64], y_idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """``sample_weight`` times the ``class_weight`` factors of the rows (unchanged without)."""
        factors = class_weight_factors(self.class_weight, y_idx, self.classes_)
        if factors is None:
            return sample_weight
        sample_weight = sample_weight * factors
        if not np.any(sample_weight > 0):
            raise ValueError("sample_weight times class_weight is zero for every row")
        return sample_weight

    def _fit_validated(self, X: NDArray[np.float64], y_idx: NDArray[np.intp],
                       sample_weight: NDArray[np.float64], *,
                       validate_params: bool = True) -> "OrdinalTreeClassifier":
        """Fit on arrays an ensemble has already validated: the same tree as :meth:`fit`.

        For ensembles that grow many trees on one validated data set (OTreeBagger),
        where repeating :meth:`fit`'s checks cost more than growing a small tree.
        Needs ``classes`` (``classes_`` is then that order). ``X`` is a float64 (finite or NaN)
        array without column names, ``y_idx`` the class indices into ``classes``, and
        ``sample_weight`` finite non-negative float64 weights with a positive total.
        The parameters are validated unless ``validate_params=False`` (for trees that
        differ from an already validated one only in their integer ``random_state``).
        """
        if validate_params:
            self._validate_params()
        X = np.ascontiguousarray(X, dtype=np.float64)
        self.n_features_in_ = X.shape[1]
        self.classes_ = check_classes(self.classes)
        y_idx = np.asarray(y_idx, dtype=np.intp)
        return self._grow(X, y_idx, self._class_weighted(np.asarray(sample_weight, dtype=np.float64), y_idx))

    def _grow(self, X: NDArray[np.float64], y_idx: NDArray[np.intp],
              sample_weight: NDArray[np.float64]) -> "OrdinalTreeClassifier":
        """Everything of :meth:`fit` after validation (``classes_`` and ``n_features_in_`` set)."""
        self.n_classes_ = int(self.classes_.shape[0])
        keep = sample_weight > 0
        n_pos = int(keep.sum())
        if not keep.all():
            X, y_idx, sample_weight = X[keep], y_idx[keep], sample_weight[keep]

        n_features = X.shape[1]
        monotonic_cst = resolve_monotonic_cst(
            self.monotonic_cst, n_features, getattr(self, "feature_names_in_", None)
        )
        constrained = bool(monotonic_cst.any())
        if constrained and self.leaf_label != "median":
            raise ValueError(
                f"monotonic_cst needs leaf_label='median' (the monotone labels of least absolute error); "
                f"got leaf_label={self.leaf_label!r}"
            )
        self.max_features_ = max_features = self._resolve_max_features(n_features)

        msl = self.min_samples_leaf
        min_samples_leaf = int(msl) if isinstance(msl, Integral) else int(ceil(msl * n_pos))
        mss = self.min_samples_split
        min_samples_split = int(mss) if isinstance(mss, Integral) else max(2, int(ceil(mss * n_pos)))

        self.tree_: OrdinalTree = grow_tree(
            X,
            y_idx,
            sample_weight,
            self.n_classes_,
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            max_features=max_features,
            min_impurity_decrease=float(self.min_impurity_decrease),
            wig_power=float(self.wig_power),
            # Only feature subsets draw from it: seeding a RandomState costs more than
            # growing a small tree, so it is made only when max_features needs it.
            rng=check_random_state(self.random_state) if max_features < n_features else None,
            monotonic_cst=monotonic_cst,
            monotonic_method=self.monotonic_method,
        )
        self.leaf_label_ = _leaf_labels(self.tree_.value, self.leaf_label)
        if constrained:
            leaves, labels = monotone_leaf_labels(self.tree_, monotonic_cst)
            self.leaf_label_[leaves] = labels
        self._proba = _leaf_proba(self.tree_.value)
        logger.debug(
            "grew a %s tree: %d nodes, %d leaves, depth %d",
            self.criterion,
            self.tree_.node_count,
            self.tree_.n_leaves,
            self.tree_.max_depth,
        )
        return self

    def __getstate__(self) -> dict:
        state = dict(super().__getstate__())  # a copy: object.__getstate__ may return __dict__ itself
        # Derived from tree_.value, so rebuilt on load: a model file reads each array on its own.
        state.pop("_proba", None)
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "tree_" in self.__dict__ and "_proba" not in self.__dict__:
            self._proba = _leaf_proba(self.tree_.value)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """Impurity-decrease importances of the features, summing to 1 (see the class's Attributes).

        Examples
        --------
        >>> from trees import OrdinalTreeClassifier
        >>> X = [[0.0, 5.0], [1.0, 5.0], [2.0, 6.0], [3.0, 6.0]]
        >>> OrdinalTreeClassifier().fit(X, [1, 1, 2, 3]).feature_importances_.tolist()
        [1.0, 0.0]
        """
        check_is_fitted(self)
        return tree_feature_importances(self, self.n_features_in_)

    def _resolve_max_features(self, n_features: int) -> int:
        mf = self.max_features
        if mf is None:
            return n_features
        if mf == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if mf == "log2":
            return max(1, int(np.log2(n_features)))
        if isinstance(mf, Integral):
            if mf > n_features:
                raise ValueError(f"max_features must be at most n_features={n_features}; got {mf}")
            return int(mf)
        return max(1, int(mf * n_features))

    def is_monotone(self, monotonic_cst: ArrayLike | dict | None = None) -> bool:
        """Certify that ``predict`` follows monotone constraints.

        Parameters
        ----------
        monotonic_cst : array-like of int, dict or None, default=None
            The constraints to check (scikit-learn's convention, as the
            parameter); ``None`` checks the tree's own ``monotonic_cst``.

        Returns
        -------
        bool
            True when, for every pair of leaves that share a face across a
            constrained feature, the leaf on the side where the prediction may
            only grow predicts a class at least as high. True without constraints.

        Raises
        ------
        ValueError
            If ``monotonic_cst`` is invalid.

        Notes
        -----
        The leaf boxes come from the fitted thresholds exactly as ``predict``
        uses them (no snapping), missing values included; along any line parallel
        to a constrained feature, consecutive leaves share such a face
        (docs/design.md section 4b), so the check is exact. Cost of the leaf
        order: O(n_features * n_leaves log n_leaves) plus the touching pairs.

        Examples
        --------
        >>> import numpy as np
        >>> from trees import OrdinalTreeClassifier
        >>> X = np.arange(6.0)[:, None]; y = [2, 3, 1, 1, 3, 3]
        >>> OrdinalTreeClassifier(monotonic_cst=[1]).fit(X, y).is_monotone()
        True
        >>> OrdinalTreeClassifier().fit(X, y).is_monotone(monotonic_cst=[1])
        False
        """
        check_is_fitted(self)
        if monotonic_cst is None:
            cst = self.tree_.monotonic_cst
        else:
            cst = resolve_monotonic_cst(monotonic_cst, self.n_features_in_, getattr(self, "feature_names_in_", None))
        if not cst.any():
            return True
        leaves, below, above = tree_leaf_order(self.tree_, cst)
        labels = self.leaf_label_[leaves]
        return bool(np.all(labels[below] <= labels[above]))

    def _validate_X_predict(self, X: ArrayLike) -> NDArray[np.float64]:
        check_is_fitted(self)
        return validate_rows(self, X, reset=False, dtype=np.float64, order="C", ensure_all_finite="allow-nan")

    def apply(self, X: ArrayLike) -> NDArray[np.intp]:
        """Return the id of the leaf each sample falls into.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data (NaN for a missing value).

        Returns
        -------
        ndarray of shape (n_samples,)
            Leaf node ids, matching ``trees.leaf_boxes(self).leaf_ids``.

        Examples
        --------
        >>> from trees import OrdinalTreeClassifier
        >>> clf = OrdinalTreeClassifier().fit([[0.0], [1.0]], [0, 1])
        >>> clf.apply([[0.2], [0.9]]).tolist()
        [1, 2]
        """
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    def predict(self, X: ArrayLike) -> NDArray:
        """Predict the leaf label (median or mode) of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data (NaN for a missing value).

        Returns
        -------
        ndarray of shape (n_samples,)
            Members of ``classes_``.

        Examples
        --------
        >>> from trees import OrdinalTreeClassifier
        >>> clf = OrdinalTreeClassifier(classes=["low", "mid", "high"])
        >>> clf.fit([[0.0], [1.0], [2.0]], ["low", "mid", "high"]).predict([[1.9]]).tolist()
        ['high']
        """
        leaves = self.apply(X)
        return self.classes_.take(self.leaf_label_.take(leaves))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class distribution of the leaf of each sample (rows sum to 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data (NaN for a missing value).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Weighted class shares of the training rows in each sample's leaf,
            columns in the order of ``classes_``.

        Examples
        --------
        >>> from trees import OrdinalTreeClassifier
        >>> clf = OrdinalTreeClassifier(max_depth=1).fit([[0.0], [1.0], [2.0]], [0, 0, 1])
        >>> clf.predict_proba([[0.0]]).tolist()
        [[1.0, 0.0]]
        """
        leaves = self.apply(X)
        return self._proba.take(leaves, axis=0)

    def get_depth(self) -> int:
        """Return the depth of the tree (a single leaf has depth 0).

        Examples
        --------
        >>> from trees import OrdinalTreeClassifier
        >>> OrdinalTreeClassifier().fit([[0.0], [1.0]], [0, 1]).get_depth()
        1
        """
        check_is_fitted(self)
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        """Return the number of leaves.

        Examples
        --------
        >>> from trees import OrdinalTreeClassifier
        >>> OrdinalTreeClassifier().fit([[0.0], [1.0]], [0, 1]).get_n_leaves()
        2
        """
        check_is_fitted(self)
        return self.tree_.n_leaves


#: Alias kept for the name used in early versions of the documentation.
OrdinalDecisionTreeClassifier = OrdinalTreeClassifier
