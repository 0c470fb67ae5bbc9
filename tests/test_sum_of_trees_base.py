"""The base of the certified sums of trees: a new estimator on it reuses every certificate.

The maintainer exercise of docs/design.md section 10 ("One base for every sum of
trees"): an estimator defined here, in one class, on :class:`ensemble.certificates._sums.SumOfTrees`
(scikit-learn regression trees with integer leaf values, their mean cut half-way) gets
``predict``, ``is_consistent``, ``is_monotone`` and the rest from the base; its
certificates are checked against brute-force oracles that use ``predict`` alone. Then
the forest and boosting: what a file saved before the base holds is enough to predict.
"""

import pickle
from numbers import Integral, Real

import numpy as np
import pytest
from sklearn.base import _fit_context
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils._param_validation import Interval

from ensemble import ConsistentForestClassifier, ConsistentGradientBoostingClassifier
from ensemble.base._estimator import OrdinalEnsemble
from ensemble.certificates._certificates import tree_nodes
from ensemble.certificates._sums import SumOfTrees
from ensemble.certificates._thresholds import set_thresholds
from ensemble.base._voting import cut_spacing
from oracles import gap_walk_spans

UNIT_BITS = 10


class ShiftedTrees(SumOfTrees, OrdinalEnsemble):
    """``n_trees`` copies of one regression tree on the class index, tree t's thresholds moved by ``t * shift``.

    The class is the mean of the copies' leaf values cut half-way. With ``shift=0``
    the copies share every threshold and the mean jumps as far as the tree does;
    with a small shift each copy crosses on its own and the mean steps by a
    ``1 / n_trees`` share of the tree's jump at a time.
    """

    _parameter_constraints: dict = {
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "shift": [Interval(Real, 0, None, closed="left")],
        **OrdinalEnsemble._parameter_constraints,
    }

    def __init__(self, *, n_trees=4, max_depth=2, shift=0.0, categorical_features=None, monotonic_cst=None,
                 resolution=None, consistency="pointwise", classes=None, class_weight=None, n_jobs=None,
                 random_state=None, verbose=0):
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.shift = shift
        self.categorical_features = categorical_features
        self.monotonic_cst = monotonic_cst
        self.resolution = resolution
        self.consistency = consistency
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # What an estimator on the base supplies: its trees, their integer values, one class's sum.
    def _trees_nodes(self):
        return [tree_nodes(tree) for tree in self.estimators_]

    def _trees_values(self):
        return self._values

    @property
    def _sum_scale(self):
        return self.n_trees << UNIT_BITS

    def _axis_importances(self):
        return np.mean([tree.feature_importances_ for tree in self.estimators_], axis=0)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        data = self._validate_training(X, y, sample_weight)
        self._grid = data.grid
        self.estimators_, self._values = [], []
        for t in range(self.n_trees):
            tree = DecisionTreeRegressor(max_depth=self.max_depth, random_state=0).fit(data.X, data.y)
            threshold = np.asarray(tree.tree_.threshold, dtype=np.float64).copy()
            threshold[tree.tree_.children_left >= 0] += t * self.shift
            set_thresholds(tree, threshold)
            self.estimators_.append(tree)
            self._values.append(np.rint(tree.tree_.value[:, 0, 0] * (1 << UNIT_BITS)).astype(np.int64))
        self._set_cuts(self._choose_cuts(self._sum_scale), self._sum_scale)
        self._proba_scale = float(self._sum_scale) / 4
        half = self._choose_cuts(self._sum_scale)
        self._store_certificate(self._certificate(cut_spacing(half), data.resolution, grid=self._grid))
        return self


def _breakpoints(model, f):
    """Every threshold of the model's trees on feature f and the float above it: one point of every cell."""
    cuts = np.unique(np.concatenate([tree.tree_.threshold[(tree.tree_.children_left >= 0)
                                                          & (tree.tree_.feature == f)] for tree in model.estimators_]))
    return np.unique(np.concatenate([[0.0], cuts, np.nextafter(cuts, np.inf)]))


def _classes_on_grid(model):
    """Class index of ``predict`` on the product of the breakpoints of the two features."""
    a, b = _breakpoints(model, 0), _breakpoints(model, 1)
    grid = np.array([[u, v] for u in a for v in b])
    return np.searchsorted(model.classes_, model.predict(grid)).reshape(a.shape[0], b.shape[0])


def _largest_neighbour_jump(classes):
    """The largest class difference between grid points one step apart along either axis or both (corners).

    Consecutive breakpoints are either in one cell or in cells whose closures meet, so
    the eight neighbours of every point reach every cell whose closure touches its own.
    """
    n, m = classes.shape
    worst = 0
    for di, dj in ((1, 0), (0, 1), (1, 1), (1, -1)):
        here = classes[:n - di, max(-dj, 0):m - max(dj, 0)]
        there = classes[di:, max(dj, 0):m - max(-dj, 0)]
        worst = max(worst, int(np.abs(here - there).max(initial=0)))
    return worst


def _step_data(n=200, seed=0):
    """Two features; the class steps 0 -> 2 where x0 crosses 0.5 and by one where x1 crosses 0.5 (right half)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    y = 2 * (X[:, 0] > 0.5) + ((X[:, 0] <= 0.5) & (X[:, 1] > 0.5))
    return X, y


def test_the_oracle_sees_a_corner():
    """Check the grid oracle on a hand-made grid: a jump of two only across a corner is found."""
    classes = np.array([[0, 1], [1, 2]])
    assert _largest_neighbour_jump(classes) == 2
    assert _largest_neighbour_jump(np.array([[0, 1], [1, 1]])) == 1


def test_distinct_thresholds_certify_and_the_oracle_agrees():
    """Check that shifted copies are certified pointwise and that predict has no jump of two on the grid."""
    X, y = _step_data()
    model = ShiftedTrees(n_trees=4, shift=1e-3).fit(X, y)
    assert model.is_consistent() and model.consistency_notion_ is not None
    assert model.n_boundaries_ == 2 and model.consistency_bound_ <= 1
    assert _largest_neighbour_jump(_classes_on_grid(model)) <= 1
    # The base's other services read the same trees.
    np.testing.assert_array_equal(model.predict_value(X) * 4 * (1 << UNIT_BITS), model._sums(X))
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.isclose(model.feature_importances_.sum(), 1.0)


def test_shared_thresholds_fail_the_certificate_and_the_oracle_finds_the_jump():
    """Check that copies on one threshold are not certified and that predict really jumps two classes."""
    X, y = _step_data()
    model = ShiftedTrees(n_trees=4, shift=0.0).fit(X, y)
    assert not model.is_consistent()
    assert model.threshold_multiplicity_.tolist() == [4, 4] and model.n_boundaries_ == 8
    assert _largest_neighbour_jump(_classes_on_grid(model)) == 2


def test_the_data_notion_agrees_with_moves_inside_one_gap():
    """Check is_consistent(notion="data") against moving one feature inside one gap between training values.

    The shifted copies put all their thresholds in one gap: crossing the gap crosses
    them all, so the class moves by two there though every single threshold moves it
    by one at most.
    """
    X, y = _step_data()
    model = ShiftedTrees(n_trees=4, shift=1e-6).fit(X, y)
    assert model.is_consistent(notion="pointwise")
    assert not model.is_consistent(notion="data")
    worst, _ = gap_walk_spans(model, X, X)
    assert worst == 2
    # One tree stepping by one class at two thresholds in different gaps: certified, and no gap moves it by two.
    steps = (X[:, 0] > 0.5).astype(int) + (X[:, 0] > 0.8)
    single = ShiftedTrees(n_trees=1, max_depth=2).fit(X, steps)
    assert single.is_consistent(notion="data") and gap_walk_spans(single, X, X)[0] <= 1


def test_monotone_certificate_and_resolution_come_from_the_base():
    """Check is_monotone against the grid (the class never falls along x0) and a resolution on a categorical axis."""
    X, y = _step_data()
    model = ShiftedTrees(n_trees=4, shift=1e-3).fit(X, y)
    classes = _classes_on_grid(model)
    rises_along_x0 = bool(np.all(np.diff(classes, axis=0) >= 0))
    assert model.is_monotone([1, 0]) == rises_along_x0 and rises_along_x0
    assert not model.is_monotone([-1, 0]) and not np.all(np.diff(classes, axis=0) <= 0)
    assert model.is_monotone([0, 1]) == bool(np.all(np.diff(classes, axis=1) >= 0)) is True
    with pytest.raises(ValueError):
        model.is_consistent(notion="nearby")


def test_two_classes_are_consistent_under_every_notion():
    """Check the base's two-class rule: one cut point, no two classes two apart, whatever the trees."""
    X, y = _step_data()
    model = ShiftedTrees(n_trees=4, shift=0.0).fit(X, (y > 0).astype(int))
    assert model.is_consistent() and model.is_consistent(notion="data") and model.is_consistent(resolution=0.5)
    assert model.consistency_bound_ == 0.0 and model.consistency_notion_ == "data"


def test_a_pickled_sum_keeps_its_trees_not_its_flat_copy():
    """Check that the base saves the trees only and rebuilds the walk on load, predicting the same."""
    X, y = _step_data()
    model = ShiftedTrees(n_trees=3, shift=1e-3).fit(X, y)
    assert "_flat" in vars(model) and "_flat" not in model.__getstate__()
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.is_consistent() == model.is_consistent()


#: The fitted attributes a model held before the sum-of-trees base (main at 26305a3): what a file
#: saved then holds. A model given only these must predict and certify as one fitted today.
FOREST_STATE = ['_bool_columns', '_categorical', '_certified', '_constrained', '_cut_rule', '_cuts', '_envelope',
                '_given_up_resolution', '_grid', '_isotonic', '_monotonic', '_proba_scale', '_split_mask', '_text',
                '_too_many_pairs', '_voters', 'bootstrap', 'categorical_features', 'categorical_features_',
                'class_weight', 'classes', 'classes_', 'consistency', 'consistency_bound_', 'consistency_notion_',
                'criterion', 'cut_points', 'cut_points_', 'estimators_', 'max_depth', 'max_features',
                'min_samples_leaf', 'monotonic_cst', 'monotonic_method', 'monotonic_space', 'monotonic_space_',
                'monotonic_space_scores_', 'n_boundaries_', 'n_classes_', 'n_estimators', 'n_estimators_',
                'n_features_in_', 'n_jobs', 'random_state', 'resolution', 'space_', 'threshold_multiplicity_',
                'verbose']
BOOSTING_STATE = ['_bool_columns', '_categorical', '_certified', '_cut_rule', '_cuts', '_f0', '_grid', '_monotonic',
                  '_proba_scale', '_rate', '_resolution', '_stopped_by_bound', '_text', 'categorical_features',
                  'categorical_features_', 'class_weight', 'classes', 'classes_', 'consistency', 'consistency_bound_',
                  'consistency_notion_', 'cut_points', 'cut_points_', 'do_early_stopping_', 'early_stopping',
                  'estimators_', 'l2_regularization', 'learning_rate', 'learning_rate_', 'loss', 'max_bins',
                  'max_depth', 'max_iter', 'max_leaf_nodes', 'min_samples_leaf', 'monotonic_cst', 'n_boundaries_',
                  'n_classes_', 'n_features_in_', 'n_iter_', 'n_iter_no_change', 'random_state', 'resolution',
                  'step_sizes_', 'threshold_multiplicity_', 'tol', 'validation_fraction', 'validation_score_',
                  'verbose']


@pytest.mark.parametrize("model, names", [
    (ConsistentForestClassifier(random_state=0, n_estimators=20, consistency="pointwise"), FOREST_STATE),
    (ConsistentForestClassifier(random_state=0, monotonic_cst=[1, 0]), FOREST_STATE),
    (ConsistentGradientBoostingClassifier(random_state=0, max_iter=30), BOOSTING_STATE),
], ids=["forest", "forest-envelope", "boosting"])
def test_the_state_saved_before_the_base_is_enough(model, names):
    """Check that a model holding only the attributes saved before the base predicts and certifies the same."""
    import warnings

    X, y = _step_data(300, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.fit(X, y)
    state = {k: v for k, v in model.__getstate__().items() if k in names or k == "_sklearn_version"}
    assert set(state) - {"_sklearn_version"} == set(names)  # no saved attribute was renamed or dropped
    old = type(model).__new__(type(model))
    old.__setstate__(state)
    np.testing.assert_array_equal(old.predict(X), model.predict(X))
    np.testing.assert_array_equal(old.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(old.predict_value(X), model.predict_value(X))
    assert old.is_consistent() == model.is_consistent() and old.is_monotone() == model.is_monotone()
