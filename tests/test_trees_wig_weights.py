"""Tests of the weighted information gain (wig) with sample weights: weights are repeated rows."""

import math

import numpy as np
import pytest

from trees import OrdinalTreeClassifier


def _brute_wig(labels, n_classes, power, mode_from=None):
    """WIG of a list of labels by its definition; the mode comes from ``mode_from`` (default: the labels)."""
    counts = [labels.count(k) for k in range(n_classes)]
    source = counts if mode_from is None else [list(mode_from).count(k) for k in range(n_classes)]
    mode = max(range(n_classes), key=lambda k: (source[k], -k))  # lowest class on ties
    present = [k for k in range(n_classes) if counts[k] > 0]
    norm = sum(abs(u - mode) ** power for u in present)
    if norm == 0:
        return 0.0
    n = len(labels)
    return -sum(abs(k - mode) ** power / norm * (counts[k] / n) * math.log2(counts[k] / n) for k in present)


@pytest.mark.parametrize("power", [1.0, 2.0])
def test_wig_tree_with_integer_weights_equals_repeated_rows(power):
    """Check that a wig tree fitted with integer weights is the tree fitted on the rows repeated."""
    rng = np.random.default_rng(5)
    X = np.round(rng.random((60, 2)), 2)
    y = rng.integers(0, 4, size=60)
    w = rng.integers(1, 4, size=60)
    params = dict(criterion="wig", wig_power=power, max_depth=5, random_state=0)
    weighted = OrdinalTreeClassifier(**params).fit(X, y, sample_weight=w)
    repeated = OrdinalTreeClassifier(**params).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    a, b = weighted.tree_, repeated.tree_
    assert a.node_count == b.node_count
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_allclose(a.threshold, b.threshold)
    np.testing.assert_allclose(a.value, b.value)
    np.testing.assert_allclose(a.impurity, b.impurity, atol=1e-12)
    grid = rng.random((400, 2))
    np.testing.assert_array_equal(weighted.predict(grid), repeated.predict(grid))


def test_wig_takes_the_mode_from_weighted_counts():
    """Check that a node's wig mode is that of the weighted counts (repeated rows), not of the unweighted rows."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 2])
    w = np.array([1, 1, 3, 1])  # unweighted mode 0, weighted mode 1
    tree = OrdinalTreeClassifier(criterion="wig", max_depth=1).fit(X, y, sample_weight=w)
    repeated = np.repeat(y, w).tolist()
    ours = _brute_wig(repeated, 3, 1.0)
    unweighted_mode = _brute_wig(repeated, 3, 1.0, mode_from=y)
    assert tree.tree_.impurity[0] == pytest.approx(ours, abs=1e-12)
    assert ours != pytest.approx(unweighted_mode)
