"""The certified forest's monotone envelopes (monotonic_method="envelope"), against independent oracles."""

# These tests are about the pointwise machinery of projected (or monotone) models, which the data's
# resolution (docs/design.md section 13) does not certify: their models are fitted for the pointwise notion.

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

from ensemble import ConsistentForestClassifier
from ensemble.certificates._certificates import tree_nodes
from ensemble.base._kernels import tree_envelope
from trees import leaf_boxes

from oracles import grid_consistent_and_monotone, threshold_grid


def _brute_envelope(tree, value, X, cst, upper):
    """Max (min) of the leaf values over every leaf whose box meets {z: z_f on x's lower (upper) side along cst}."""
    ids, lower, upper_ = leaf_boxes(tree)
    out = []
    reach = cst if upper else -cst
    for x in X:
        held = (lower < x) & (x <= upper_)
        below = np.where(reach > 0, lower < x, np.where(reach < 0, upper_ >= x, held))
        meets = np.all(np.where(reach == 0, held, below), axis=1)
        out.append(value[ids[meets]].max() if upper else value[ids[meets]].min())
    return np.array(out)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 4), depth=st.integers(1, 7), upper=st.booleans())
def test_tree_envelope_equals_the_brute_force_over_leaf_boxes(seed, d, depth, upper):
    """Check the compiled envelope against a max (min) over the leaves whose boxes meet x's lower orthant."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(80, d))
    tree = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, rng.normal(size=80))
    value = np.rint(tree.tree_.value[:, 0, 0] * 1000).astype(np.int64)
    cst = rng.randint(-1, 2, size=d)
    probe = np.vstack([rng.uniform(-0.2, 1.2, size=(60, d)), X[:20]])
    reach = cst if upper else -cst
    got = tree_envelope(probe, *tree_nodes(tree), value, reach.astype(np.int64), upper)
    np.testing.assert_array_equal(got, _brute_envelope(tree, value, probe, cst, upper))
    # Without constraints the envelope is the tree itself.
    plain = tree_envelope(probe, *tree_nodes(tree), value, np.zeros(d, np.int64), upper)
    np.testing.assert_array_equal(plain, value[tree.apply(probe.astype(np.float32))])


def _data(n, seed, d=2):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    score = 2 * X[:, 0] - 1.5 * X[:, 1] + 0.4 * np.sin(6 * X[:, -1]) + rng.normal(scale=0.4, size=n)
    return X, np.digitize(score, np.quantile(score, [0.2, 0.4, 0.6, 0.8]))


# Forests of 4-14 trees need not be certified (they warn); the test checks the ones that are.
@pytest.mark.filterwarnings("ignore:.* is not certified consistent.*:UserWarning")
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), n_trees=st.integers(4, 14), cut_points=st.sampled_from(["half", "oob"]))
def test_certified_envelope_forests_are_consistent_and_monotone_on_the_threshold_grid(seed, n_trees, cut_points):
    """Check soundness: whenever is_consistent() holds, the exact grid oracle finds no jump of two classes."""
    X, y = _data(60, seed)
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=n_trees, monotonic_cst=[1, -1], cut_points=cut_points,
                                       random_state=seed % 101).fit(X, y)
    monotone, consistent = grid_consistent_and_monotone(model, [1, -1])
    assert model.is_monotone() and monotone
    if model.is_consistent():
        assert consistent


def test_envelope_certificate_counts_value_ranges_not_exact_jumps():
    """Check that an envelope forest's certificate uses every tree's value range as its jump."""
    from ensemble.forest._forest import forest_certificate

    X, y = _data(150, 0)
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=20, monotonic_cst=[1, -1], random_state=0).fit(X, y)
    certificate = forest_certificate(model.estimators_, model._voters, 2, np.ones(2, bool), exact=True,
                                     envelopes=True)
    ranges = [np.ptp(v.value[t.tree_.children_left < 0]) for t, v in zip(model.estimators_, model._voters)]
    np.testing.assert_array_equal(certificate.jumps, ranges)
    assert not certificate.exact.any()


def test_a_forest_read_without_its_envelopes_goes_the_wrong_way_and_every_check_says_so():
    """Check a model built to fail: the same trees read by their leaves are not monotone, by every check."""
    X, y = _data(200, 3)
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=12, monotonic_cst=[1, -1], random_state=0).fit(X, y)
    assert model.is_monotone() and all(grid_consistent_and_monotone(model, [1, -1]))
    model._envelope = None  # read every tree by its own leaf values
    assert not model.is_monotone()
    assert not grid_consistent_and_monotone(model, [1, -1])[0]


def test_envelope_forest_is_monotone_in_other_features_only_where_its_trees_are():
    """Check is_monotone on a feature outside the envelope's constraints against the grid oracle."""
    X, y = _data(150, 1)
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=12, monotonic_cst=[1, 0], random_state=0).fit(X, y)
    for cst in ([1, -1], [0, -1], [0, 1], [-1, 0]):
        claimed = model.is_monotone(cst)
        monotone, _ = grid_consistent_and_monotone(model, cst)
        assert not claimed or monotone  # sound: a certified direction holds exactly
    assert model.is_monotone([1, 0])
    assert not model.is_monotone([-1, 0])  # against its own direction: the leaves rise with x0


@pytest.mark.parametrize("method", ["envelope", "isotonic"])
def test_monotone_forest_on_monotone_data_costs_little(method):
    """Check that on data monotone in the constraints the constrained forest is within 0.02 MAE of the free one."""
    X, y = _data(600, 5, d=4)
    Xt, yt = _data(3000, 6, d=4)
    free = ConsistentForestClassifier(consistency="pointwise", random_state=0).fit(X, y)
    model = ConsistentForestClassifier(consistency="pointwise", monotonic_cst=[1, -1, 0, 0], monotonic_method=method,
                                       random_state=0).fit(X, y)
    assert model.is_monotone() and model.is_consistent()
    mae = lambda m: np.abs(m.predict(Xt) - yt).mean()  # noqa: E731
    assert mae(model) <= mae(free) + 0.02


def test_unknown_monotonic_method_is_refused_by_name():
    """Check that a monotonic_method outside the three is a clear error naming the parameter."""
    X, y = _data(60, 0)
    with pytest.raises(ValueError, match="monotonic_method"):
        ConsistentForestClassifier(consistency="pointwise", monotonic_cst=[1, -1], monotonic_method="lattice").fit(X, y)


# 5 trees need not be certified: the grid oracle's cells are what is tested.
@pytest.mark.filterwarnings("ignore:.* is not certified consistent.*:UserWarning")
def test_threshold_grid_cells_hold_every_threshold():
    """Check the grid oracle's partition: one cell per pair of consecutive thresholds on every feature."""
    X, y = _data(100, 2)
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=5, random_state=0).fit(X, y)
    grid = threshold_grid(model.estimators_, 2)
    counts = []
    for f in range(2):
        cuts = {float(t.tree_.threshold[i]) for t in model.estimators_
                for i in np.flatnonzero((t.tree_.children_left >= 0) & (t.tree_.feature == f))}
        counts.append(len(cuts) + 1)
    assert grid.lower.shape[0] == counts[0] * counts[1]
