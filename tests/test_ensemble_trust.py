"""Claims a user can check: units do not matter, odd values do not crash, certificates have no holes.

Issue 23's reproductions, each now a test that fails on the code before the fix.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relabel
from ensemble import ConsistentForestClassifier, OTreeBagger, RankRules
from ensemble.forest import _forest
from ensemble.certificates._certificates import exact_jump, is_certified, sum_certificate, tree_nodes
from ensemble.base._voting import cut_spacing
from ensemble.metrics import mean_absolute_error
from trees import OrdinalTreeClassifier, leaf_boxes
from trees._labels import ClassOrderWarning

from oracles import adjacent_floats, exact_consistency, exact_monotone


def _data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.digitize(X[:, 0] + X[:, 1], [0.5, 1.0, 1.5]) + 1
    return X, y


def _quiet(model, X, y, **fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return model.fit(X, y, **fit)


ESTIMATORS = {
    "forest": lambda: ConsistentForestClassifier(random_state=0),
    "forest-ogini": lambda: ConsistentForestClassifier(criterion="ogini", random_state=0),
    "otreebagger-pls": lambda: OTreeBagger(n_estimators=12, random_state=0),
    "otreebagger": lambda: OTreeBagger(n_estimators=12, projection="none", max_depth=4, random_state=0),
    "tree": lambda: OrdinalTreeClassifier(random_state=0),
    "rankrules": lambda: RankRules(n_rules=60, random_state=0),
}


def test_issue_reproduction_forest_on_tiny_units_is_not_a_one_class_model():
    """Check the issue's reproduction: the forest on features times 1e-10 predicts several classes, as unscaled."""
    r = np.random.default_rng(0)
    X = r.random((200, 3))
    y = np.digitize(X[:, 0] + X[:, 1], [.5, 1, 1.5]) + 1
    plain = ConsistentForestClassifier(random_state=0).fit(X, y)
    tiny = ConsistentForestClassifier(random_state=0).fit(X * 1e-10, y)
    assert np.unique(tiny.predict(X * 1e-10)).shape[0] == 4
    assert np.array_equal(tiny.predict(X * 1e-10), plain.predict(X))
    assert tiny.is_consistent()


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@settings(max_examples=6)
@given(exponents=st.lists(st.integers(-12, 50), min_size=6, max_size=6),
       offsets=st.lists(st.sampled_from([0.0, 1.0, -1e3, 1e6, 1e9]), min_size=6, max_size=6))
def test_predictions_do_not_depend_on_units(name, exponents, offsets):
    """Check that fitting on a*X + b (a in 1e-12..1e50, b/a up to 1e9) predicts a*X_test + b as the plain fit."""
    X, y = _data(300, 6)
    train, test = slice(0, 200), slice(200, None)
    a = 10.0 ** np.array(exponents, dtype=np.float64)
    b = a * np.array(offsets)
    plain = _quiet(ESTIMATORS[name](), X[train], y[train])
    scaled = _quiet(ESTIMATORS[name](), X[train] * a + b, y[train])
    expected = plain.predict(X[test])
    got = scaled.predict(X[test] * a + b)
    # Float ties: a test value within rounding of a threshold may fall on its other side.
    assert np.mean(got != expected) <= 0.02
    if hasattr(scaled, "is_consistent") and name != "tree" and name != "rankrules":
        assert scaled.is_consistent() == plain.is_consistent()


@pytest.mark.parametrize("a, b", [(2e300, -1e300), (1.7e308, -0.85e308), (1e-300, 0.0), (1e-310, 0.0)])
def test_extreme_values_neither_crash_nor_change_the_model(a, b):
    """Check that features near the float64 limits (1e300, 1.7e308, 1e-300, subnormal) fit and predict as unscaled."""
    X, y = _data(200, 3)
    plain = ConsistentForestClassifier(random_state=0).fit(X, y)
    model = ConsistentForestClassifier(random_state=0).fit(X * a + b, y)
    assert np.array_equal(model.predict(X * a + b), plain.predict(X))
    assert model.is_consistent()
    otb = OTreeBagger(n_estimators=6, random_state=0).fit(np.column_stack([X, X]) * a + b, y)
    assert otb.is_consistent()


def test_tiny_values_with_few_trees_and_learned_cuts_do_not_divide_by_zero():
    """Check the issue's 0/0 reproduction: values near 1e-300, 5 trees, cut_points='oob'."""
    X, y = _data(200, 3)
    model = _quiet(ConsistentForestClassifier(n_estimators=5, cut_points="oob", random_state=0), X * 1e-300, y)
    assert np.isfinite(model.consistency_bound_)
    assert np.unique(model.predict(X * 1e-300)).shape[0] > 1


def test_coinciding_cut_points_report_a_finite_or_infinite_ratio_never_a_crash():
    """Check that a bound of 0 over cut points that coincide reads 0 and certifies; any other bound reads inf."""
    from ensemble.certificates._certificates import bound_ratio

    assert bound_ratio(0, 0) == 0.0 and is_certified(0, 0)
    assert bound_ratio(3, 0) == np.inf and not is_certified(3, 0)


def test_read_only_worker_results_are_accepted(monkeypatch):
    """Check that the forest accepts read-only results from its workers, as joblib's Ray backend returns them."""
    real = _forest.run_jobs

    def frozen(jobs, **kwargs):
        # Ray hands results back from its object store zero-copy: numpy arrays are read-only.
        out = real(jobs, **kwargs)
        for result in out:
            for item in result:
                for array in (item if isinstance(item, tuple) else (item,)):
                    if isinstance(array, np.ndarray):
                        array.flags.writeable = False
        return out

    monkeypatch.setattr(_forest, "run_jobs", frozen)
    X, y = _data(150, 3)
    model = ConsistentForestClassifier(n_estimators=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.fit(X, y)
    monkeypatch.undo()
    plain = _quiet(ConsistentForestClassifier(n_estimators=20, random_state=0), X, y)
    assert np.array_equal(model.predict(X), plain.predict(X))


def test_forest_under_ray_if_installed():
    """Check the issue's reproduction under joblib's Ray backend, where Ray is installed."""
    ray = pytest.importorskip("ray")
    from joblib import parallel_backend
    from ray.util.joblib import register_ray

    register_ray()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        X, y = _data(150, 3)
        with parallel_backend("ray"):
            model = ConsistentForestClassifier(n_estimators=20, n_jobs=2, random_state=0).fit(X, y)
        assert model.predict(X).shape == (150,)
    finally:
        ray.shutdown()


# Certificate holes: leaves thinner than 4 ulps.

def _ulp_data():
    X = adjacent_floats(1.0, 6)[:, None]
    return X, np.array([0, 0, 2, 1, 1, 1])


@pytest.mark.parametrize("seed, n_estimators", [(9, 3), (11, 30), (13, 5), (14, 3), (0, 30), (1, 30)])
def test_forest_is_monotone_sees_leaves_thinner_than_four_ulps(seed, n_estimators):
    """Check the issue's reproduction: is_monotone([1]) is True only if predict is monotone on adjacent floats.

    The first four cases predict a non-monotone sequence such as [0, 0, 2, 1, ...] on
    floats one ulp apart; snapped geometry called them monotone.
    """
    X, y = _ulp_data()
    model = _quiet(ConsistentForestClassifier(criterion="ogini", n_estimators=n_estimators, random_state=seed), X, y)
    probe = adjacent_floats(np.nextafter(1.0, -np.inf), 9)[:, None]
    monotone = bool(np.all(np.diff(model.predict(probe)) >= 0))
    if model.is_monotone([1]):
        assert monotone and exact_monotone(model, [1])
    assert monotone or not model.is_monotone([1])


@pytest.mark.parametrize("relabel_groups", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_otreebagger_certificates_see_leaves_thinner_than_four_ulps(relabel_groups, seed):
    """Check that OTreeBagger's is_consistent and is_monotone agree with predict on every adjacent float."""
    X, y = _ulp_data()
    model = _quiet(OTreeBagger(n_estimators=3, group_size=3 if relabel_groups else 1, relabel=relabel_groups,
                               random_state=seed), X, y)
    probe = adjacent_floats(np.nextafter(1.0, -np.inf), 9)[:, None]
    ranks = np.searchsorted(model.classes_, model.predict(probe))
    if model.is_consistent():
        assert np.abs(np.diff(ranks)).max() <= 1
    assert model.is_consistent() <= exact_consistency(model)[0]  # a certificate never lies
    if model.is_monotone([1]):
        assert np.all(np.diff(ranks) >= 0)


@settings(max_examples=25)
@given(labels=st.lists(st.integers(0, 3), min_size=5, max_size=9), seed=st.integers(0, 100))
def test_certificates_equal_the_exact_oracle_on_adjacent_floats(labels, seed):
    """Check every certificate against the exact fused oracle on data of consecutive floats."""
    y = np.array(labels)
    if np.unique(y).shape[0] < 2:
        y[0] = 1 - min(y[0], 1)
    X = adjacent_floats(1.0, y.shape[0])[:, None]
    for model in (OTreeBagger(n_estimators=2, group_size=1, relabel=False, random_state=seed),
                  OTreeBagger(n_estimators=3, group_size=3, random_state=seed),
                  ConsistentForestClassifier(n_estimators=10, criterion="ogini", random_state=seed)):
        _quiet(model, X, y)
        assert model.is_consistent() <= exact_consistency(model)[0]  # a certificate never lies
        assert model.is_monotone([1]) <= exact_monotone(model, [1])


# Planted bugs the suite did not notice (issue 23 item 4): each test fails under its mutation.

@pytest.mark.slow
def test_forest_is_monotone_checks_every_constrained_feature():
    """Check that is_monotone fails on the second constrained feature alone (not only the first is checked)."""
    rng = np.random.RandomState(0)
    # 120 rows: the exact oracle fuses 100 trees, a partition quadratic in the rows (300 took 25 s).
    X = rng.uniform(size=(120, 2))
    y = np.digitize(X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=120), [-0.4, 0.0, 0.4])
    # The leaf certificate (an envelope forest is monotone in its own constraints by construction).
    # On the features' axes: the exact oracle fuses the trees in x.
    model = ConsistentForestClassifier(monotonic_cst=[1, -1], monotonic_method="isotonic", monotonic_space="axes",
                                       random_state=0).fit(X, y)
    assert model.is_monotone() and model.is_monotone([1, -1])
    assert not model.is_monotone([1, 1])
    assert not model.is_monotone([0, 1])
    assert exact_monotone(model, [1, 1]) is False


def _corner_tree():
    """Split x0 at 0.5, both halves split x1 at 0.5: leaves LL and RR meet only at the corner (0.5, 0.5)."""
    left = np.array([1, 3, 5, -1, -1, -1, -1])
    right = np.array([2, 4, 6, -1, -1, -1, -1])
    feature = np.array([0, 1, 1, -2, -2, -2, -2])
    threshold = np.array([0.5, 0.5, 0.5, -2.0, -2.0, -2.0, -2.0])
    value = np.array([0, 0, 0, 0, 3, 3, 6])  # LL = 0, LR = RL = 3, RR = 6
    return (left, right, feature, threshold), value


def _brute_jump(nodes, value, n_features, resolution=None):
    """Largest value difference over leaf pairs whose closed boxes (dilated by r) meet, every pair tested."""
    from ensemble.certificates._certificates import NodeArrays

    r = np.zeros(n_features) if resolution is None else np.asarray(resolution)
    boxes = leaf_boxes(NodeArrays(*nodes, n_features), n_features)
    best = 0
    for a in range(boxes.leaf_ids.shape[0]):
        for b in range(boxes.leaf_ids.shape[0]):
            gap = np.maximum(boxes.lower[a], boxes.lower[b]) - np.minimum(boxes.upper[a], boxes.upper[b])
            if np.all(gap <= r):
                best = max(best, abs(int(value[boxes.leaf_ids[a]]) - int(value[boxes.leaf_ids[b]])))
    return best


def test_jump_counts_corner_contacts():
    """Check that J_t includes leaves touching only at a corner (face contacts alone give 3, the corner 6)."""
    nodes, value = _corner_tree()
    assert exact_jump(nodes, value, 2) == 6 == _brute_jump(nodes, value, 2)
    partition = relabel.fuse([leaf_boxes(_forest_nodes(nodes))], snap=False)
    kinds = relabel.adjacency_edges(partition).contact
    assert "corner" in set(np.asarray(kinds).tolist())


def _forest_nodes(nodes):
    from ensemble.certificates._certificates import NodeArrays

    return NodeArrays(*nodes, 2)


@pytest.mark.parametrize("gap, resolution, touching", [(0.25, 0.25, True), (0.25, 0.125, False),
                                                       (0.5, 0.5, True)])
def test_resolution_window_edge_is_closed(gap, resolution, touching):
    """Check that leaves exactly r apart are r-neighbours (<= at the window's edge, not <)."""
    left = np.array([1, -1, 3, -1, -1])
    right = np.array([2, -1, 4, -1, -1])
    feature = np.array([0, -2, 0, -2, -2])
    threshold = np.array([0.5, -2.0, 0.5 + gap, -2.0, -2.0])
    value = np.array([0, 0, 0, 2, 9])  # x <= 0.5: 0; (0.5, 0.5 + gap]: 2; above: 9
    r = np.array([resolution])
    expected = 9 if touching else 7
    assert exact_jump((left, right, feature, threshold), value, 1, r) == expected
    assert _brute_jump((left, right, feature, threshold), value, 1, r) == expected


def test_certified_exactly_at_the_cut_spacing():
    """Check the cut-spacing comparison: a bound equal to the spacing certifies, one unit more does not."""
    assert is_certified(10, 10) and not is_certified(11, 10)
    X, y = _data(200, 3)
    model = ConsistentForestClassifier(random_state=0).fit(X, y)
    bound = sum_certificate([tree_nodes(t) for t in model.estimators_], [v.value for v in model._voters], 3,
                            np.ones(3, bool), spacing=cut_spacing(model._cuts), exact=True).bound
    assert 0 < bound <= cut_spacing(model._cuts)
    # Move the cut points so that their spacing equals the bound, then one unit less.
    base = model._cuts[0]
    model._cuts = base + np.arange(model.n_classes_ - 1, dtype=np.int64) * bound
    assert model.is_consistent(notion="pointwise")
    model._cuts = base + np.arange(model.n_classes_ - 1, dtype=np.int64) * (bound - 1)
    assert not model.is_consistent(notion="pointwise")


# Text classes and confusing errors.

# Labels cycling over the rows carry no signal: the forest learns nothing, and says so besides the order warning.
@pytest.mark.filterwarnings("ignore:.* predicts the single class .*:UserWarning")
def test_estimators_and_metrics_warn_when_text_classes_are_sorted_alphabetically():
    """Check that text labels without an order raise a ClassOrderWarning naming the order and the parameter."""
    X, _ = _data(120, 3)
    y = np.array(["poor", "fair", "good", "excellent"])[np.arange(120) % 4]
    for model in (ConsistentForestClassifier(n_estimators=10), OTreeBagger(n_estimators=3),
                  OrdinalTreeClassifier(), RankRules(n_rules=5)):
        with pytest.warns(ClassOrderWarning, match="'excellent' < 'fair' < 'good' < 'poor'.*classes="):
            model.fit(X, y)
    with pytest.warns(ClassOrderWarning, match="labels="):
        mean_absolute_error(y, y[::-1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClassOrderWarning)
        ConsistentForestClassifier(n_estimators=10, classes=["poor", "fair", "good", "excellent"]).fit(X, y)
        mean_absolute_error(y, y[::-1], labels=["poor", "fair", "good", "excellent"])
        OrdinalTreeClassifier().fit(X, pd.Series(pd.Categorical(y, ["poor", "fair", "good", "excellent"],
                                                                ordered=True)))


def test_cross_val_predict_error_names_the_reencoding():
    """Check that cross_val_predict(method='predict_proba') with classes= explains scikit-learn's re-encoding."""
    from sklearn.model_selection import cross_val_predict

    X, y = _data(120, 3)
    with pytest.raises(ValueError, match="cross_val_predict.*re-encodes y"):
        cross_val_predict(ConsistentForestClassifier(n_estimators=10, classes=[1, 2, 3, 4]), X, y, cv=2,
                          method="predict_proba")


def test_text_column_error_names_the_column():
    """Check that a text column not declared categorical is an error naming the column, not a float conversion."""
    X, y = _data(80, 2)
    frame = pd.DataFrame({"size": X[:, 0], "region": np.where(X[:, 1] > 0.5, "east", "west")})
    with pytest.raises(ValueError, match="column 'region' holds text.*categorical_features"):
        ConsistentForestClassifier(n_estimators=5, categorical_features=None).fit(frame, y)
    with pytest.raises(ValueError, match="column 'region' holds text.*categorical_features"):
        ConsistentForestClassifier(n_estimators=5, categorical_features=[0]).fit(frame, y)


def test_single_class_predictions_warn():
    """Check that a model predicting one class on its training data of several classes warns."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(60, 2))
    y = rng.randint(1, 4, size=60)
    y[:50] = 2  # one dominant class and noise: bagged median trees predict it everywhere
    with pytest.warns(UserWarning, match="predicts the single class 2"):
        OTreeBagger(n_estimators=3, max_depth=1, random_state=0).fit(X, y)


# 20 trees are too few to certify this data; the ulps warning is what is tested.
@pytest.mark.filterwarnings("ignore:.* is not certified consistent.*:UserWarning")
def test_values_float64_barely_separates_are_named():
    """Check that a feature whose training values are a few ulps apart (1e9 + tiny x) is named in a warning."""
    X, y = _data(200, 3)
    X[:, 1] = 1e9 + X[:, 1] * 1e-6
    with pytest.warns(UserWarning, match=r"feature\(s\) 1: training values closer than 64 units in the last place"):
        ConsistentForestClassifier(n_estimators=20, random_state=0).fit(X, y)
