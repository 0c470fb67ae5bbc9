"""Tests of trees.leaf_boxes for our trees and scikit-learn's."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from trees import CRITERIA, LeafBoxes, OrdinalTreeClassifier, leaf_boxes


def _data(seed, n=400, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.digitize(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n), [-1.0, 0.0, 1.0])
    return X, y


def _fitted_trees(X, y):
    models = [OrdinalTreeClassifier(criterion=c, max_depth=6).fit(X, y) for c in CRITERIA]
    models.append(OrdinalTreeClassifier(min_samples_leaf=4, max_features=2, random_state=0).fit(X, y))
    models.append(DecisionTreeClassifier(max_depth=7, random_state=0).fit(X, y))
    models.append(DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y.astype(float)))
    return models


def _box_of_points(boxes, X):
    """Brute force: for each point, the list of boxes (half-open lower < x <= upper) containing it."""
    inside = np.all((X[:, None, :] > boxes.lower[None]) & (X[:, None, :] <= boxes.upper[None]), axis=2)
    return inside


@pytest.mark.parametrize("seed", [0, 1])
def test_points_lie_in_the_box_of_their_leaf(seed):
    """Check that every training and test point lies in exactly one box: that of its apply leaf."""
    X, y = _data(seed)
    X_test = np.random.default_rng(seed + 10).normal(scale=1.5, size=(600, 3))
    for model in _fitted_trees(X, y):
        boxes = leaf_boxes(model)
        assert isinstance(boxes, LeafBoxes)
        leaves = np.flatnonzero(model.tree_.children_left == -1)
        np.testing.assert_array_equal(boxes.leaf_ids, leaves)
        for points in (X, X_test):
            inside = _box_of_points(boxes, points)
            assert np.all(inside.sum(axis=1) == 1), type(model).__name__
            np.testing.assert_array_equal(boxes.leaf_ids[inside.argmax(axis=1)], model.apply(points))


def test_points_on_thresholds_follow_the_half_open_convention():
    """Check that a point exactly on a threshold belongs to the left box (x <= threshold)."""
    X, y = _data(3)
    clf = OrdinalTreeClassifier(max_depth=4).fit(X, y)
    t = clf.tree_
    internal = np.flatnonzero(t.children_left != -1)
    boxes = leaf_boxes(clf)
    points = np.repeat(X[:1], internal.size, axis=0)
    points[np.arange(internal.size), t.feature[internal]] = t.threshold[internal]
    inside = _box_of_points(boxes, points)
    assert np.all(inside.sum(axis=1) == 1)
    np.testing.assert_array_equal(boxes.leaf_ids[inside.argmax(axis=1)], clf.apply(points))


@given(seed=st.integers(0, 10_000), depth=st.integers(1, 6), d=st.integers(1, 4))
def test_boxes_match_a_per_leaf_path_walk(seed, depth, d):
    """Check every box against the bounds collected along the root-to-leaf path."""
    rng = np.random.default_rng(seed)
    X = rng.random((60, d))
    y = rng.integers(0, 3, size=60)
    if np.unique(y).size < 2:
        y[0], y[1] = 0, 1
    clf = OrdinalTreeClassifier(criterion="ranking", max_depth=depth).fit(X, y)
    t = clf.tree_
    boxes = leaf_boxes(clf)
    parent = {}
    for node in np.flatnonzero(t.children_left != -1):
        parent[t.children_left[node]] = (node, True)
        parent[t.children_right[node]] = (node, False)
    for leaf, lo, hi in zip(boxes.leaf_ids, boxes.lower, boxes.upper):
        exp_lo, exp_hi = np.full(d, -np.inf), np.full(d, np.inf)
        node = leaf
        while node in parent:
            node, went_left = parent[node]
            f, thr = t.feature[node], t.threshold[node]
            if went_left:
                exp_hi[f] = min(exp_hi[f], thr)
            else:
                exp_lo[f] = max(exp_lo[f], thr)
        np.testing.assert_array_equal(lo, exp_lo)
        np.testing.assert_array_equal(hi, exp_hi)


def test_single_leaf_tree_is_the_whole_space():
    """Check that a tree without splits has one unbounded box."""
    clf = OrdinalTreeClassifier(classes=[0, 1]).fit(np.zeros((3, 2)), [1, 1, 1])
    boxes = leaf_boxes(clf)
    assert boxes.leaf_ids.tolist() == [0]
    assert np.all(np.isneginf(boxes.lower)) and np.all(np.isposinf(boxes.upper))


def test_leaf_boxes_accepts_the_structure_and_rejects_non_trees():
    """Check that tree_ structures are accepted with n_features and bad inputs raise clear errors."""
    X, y = _data(4)
    clf = OrdinalTreeClassifier(max_depth=3).fit(X, y)
    from_structure = leaf_boxes(clf.tree_)
    np.testing.assert_array_equal(from_structure.lower, leaf_boxes(clf).lower)
    sk = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    assert leaf_boxes(sk.tree_, n_features=3).lower.shape == (sk.get_n_leaves(), 3)
    with pytest.raises(TypeError, match="without attribute 'children_left'"):
        leaf_boxes(OrdinalTreeClassifier())
    with pytest.raises(ValueError, match="n_features=1"):
        leaf_boxes(clf, n_features=1)
