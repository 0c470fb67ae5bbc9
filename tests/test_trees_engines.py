"""The compiled grower against the numpy grower: the same trees, array for array."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trees._grow
from trees import OrdinalTreeClassifier
from trees._grow import _COMPILED, _grow_compiled, _grow_numpy

FIELDS = ("children_left", "children_right", "feature", "threshold", "value", "n_node_samples",
          "weighted_n_node_samples", "impurity", "depth", "lower_bound", "upper_bound", "mean_index")


def random_case(rng):
    """A random small data set, weights and growth parameters (ties, noise, constraints)."""
    n = int(rng.integers(2, 300))
    d = int(rng.integers(1, 6))
    K = int(rng.integers(2, 7))
    X = rng.random((n, d))
    if rng.random() < 0.5:
        X = np.round(X * rng.integers(2, 10))  # many tied values
    if rng.random() < 0.5:
        y = np.clip((X[:, 0] * K / max(X[:, 0].max(), 1) + rng.normal(0, 1, n)).astype(int), 0, K - 1)
    else:
        y = rng.integers(0, K, n)
    kind = int(rng.integers(0, 3))
    # Unit, integer (bootstrap-like: the all-compiled path) and real weights (numpy reductions).
    w = [np.ones(n), rng.integers(1, 4, n).astype(float), rng.uniform(0.1, 3.0, n)][kind]
    params = dict(
        criterion=str(rng.choice(sorted(_COMPILED))),
        max_depth=[None, 2, 6][int(rng.integers(0, 3))],
        min_samples_split=int(rng.integers(2, 6)),
        min_samples_leaf=int(rng.integers(1, 4)),
        max_features=int(rng.integers(1, d + 1)),
        min_impurity_decrease=[0.0, 0.0, 0.01][int(rng.integers(0, 3))],
        wig_power=1.0,
        monotonic_cst=None if rng.random() < 0.6 else rng.integers(-1, 2, d).astype(np.int8),
    )
    return X, y, w, K, params, int(rng.integers(2**31))


def assert_same_trees(a, b):
    for name in FIELDS:
        left, right = getattr(a, name), getattr(b, name)
        assert left.dtype == right.dtype and left.shape == right.shape, name
        np.testing.assert_array_equal(left, right, err_msg=name)
    assert (a.node_count, a.max_depth, a.n_leaves) == (b.node_count, b.max_depth, b.n_leaves)


@given(st.integers(0, 2**32 - 1))
def test_compiled_grower_builds_the_numpy_tree(seed):
    """Check that the compiled grower gives every array of the numpy grower's tree on random data."""
    X, y, w, K, params, tree_seed = random_case(np.random.default_rng(seed))
    numpy_tree = _grow_numpy(X, y, w, K, rng=np.random.RandomState(tree_seed), **params)
    compiled_tree = _grow_compiled(X, y, w, K, rng=np.random.RandomState(tree_seed), **params)
    assert_same_trees(numpy_tree, compiled_tree)


@pytest.mark.parametrize("block_elements", [1, 2_000, 1 << 22])
def test_compiled_grower_matches_on_many_data_sets(monkeypatch, block_elements):
    """Check that both growers agree on 150 fixed random data sets, whatever the feature blocks."""
    monkeypatch.setattr(trees._grow, "_BLOCK_ELEMENTS", block_elements)
    rng = np.random.default_rng(block_elements)
    for _ in range(150):
        X, y, w, K, params, tree_seed = random_case(rng)
        assert_same_trees(_grow_numpy(X, y, w, K, rng=np.random.RandomState(tree_seed), **params),
                          _grow_compiled(X, y, w, K, rng=np.random.RandomState(tree_seed), **params))


def test_classifier_deep_bootstrap_tree_matches_numpy_grower():
    """Check that a deep tree fitted by the classifier on 3,000 bootstrap-weighted rows is the numpy grower's."""
    rng = np.random.default_rng(3)
    X = rng.random((3000, 3))
    y = np.clip((4 * X[:, 0] * X[:, 1] + rng.normal(0, 0.3, 3000)).astype(int), 0, 4)
    w = np.bincount(rng.integers(0, 3000, 3000), minlength=3000).astype(float)
    for criterion in sorted(_COMPILED):
        clf = OrdinalTreeClassifier(criterion=criterion, random_state=0).fit(X, y, sample_weight=w)
        keep = w > 0
        reference = _grow_numpy(X[keep], y[keep], w[keep], 5, criterion=criterion, max_depth=None,
                                min_samples_split=2, min_samples_leaf=1, max_features=3,
                                min_impurity_decrease=0.0, wig_power=1.0, rng=np.random.RandomState(0))
        assert clf.tree_.max_depth > 10
        assert_same_trees(clf.tree_, reference)


def test_fit_validated_fits_the_same_tree_as_fit():
    """Check that the ensembles' entry _fit_validated leaves the fitted state fit leaves."""
    rng = np.random.default_rng(8)
    X = rng.random((200, 3))
    y = rng.integers(0, 4, 200)
    w = np.bincount(rng.integers(0, 200, 200), minlength=200).astype(float)
    for criterion in ("ogini", "entropy"):
        params = dict(criterion=criterion, classes=np.arange(5), max_features=2, random_state=3)
        fitted = OrdinalTreeClassifier(**params).fit(X, y, sample_weight=w)
        fast = OrdinalTreeClassifier(**params)._fit_validated(X, y, w)
        assert sorted(vars(fitted)) == sorted(vars(fast))
        for name, value in vars(fitted).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(value, getattr(fast, name))
                assert value.dtype == getattr(fast, name).dtype
        assert_same_trees(fitted.tree_, fast.tree_)
        np.testing.assert_array_equal(fitted.predict_proba(X), fast.predict_proba(X))


def test_fit_validated_still_validates_parameters():
    """Check that _fit_validated rejects an invalid parameter with scikit-learn's message."""
    with pytest.raises(ValueError, match="max_depth"):
        OrdinalTreeClassifier(max_depth=0, classes=np.arange(2))._fit_validated(
            np.zeros((2, 1)), np.array([0, 1]), np.ones(2))


def test_compiled_node_statistics_match_numpy():
    """Check that the compiled mass and mean index of single nodes equal the numpy criteria's, empty nodes included."""
    from trees._grow import _COMPILED, _mass_of, _mean_index, _mean_of
    from trees.criteria import _CRITERIA, _encode, _mass_encoded

    rng = np.random.default_rng(5)
    counts = np.vstack([rng.uniform(0, 3, (200, 4)), rng.integers(0, 3, (50, 4)), np.zeros((1, 4))])
    for name, code in _COMPILED.items():
        crit = _CRITERIA[name]
        rows = np.ascontiguousarray(_encode(crit, counts.T))  # (K, nodes)
        masses = _mass_encoded(crit, rows, None, 1.0)
        means = _mean_index(crit, rows)
        for j in range(rows.shape[1]):
            column = np.ascontiguousarray(rows[:, j])
            assert _mass_of(code, column) == masses[j]
            np.testing.assert_array_equal(_mean_of(code, column), means[j])
        # Rounding residues can leave class counts beside a zero total: numpy gives an infinity.
        odd = np.array([0.5, -0.5, 0.0, 0.0]) if name == "gini" else np.array([0.5, 0.5, 0.5, 0.0])
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = _mean_index(crit, odd[:, None])[0]
        assert np.isinf(expected) or np.isnan(expected)
        np.testing.assert_array_equal(_mean_of(code, odd), expected)
