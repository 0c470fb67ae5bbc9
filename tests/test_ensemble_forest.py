"""Tests of the certified consistent forest (docs/design.md section 9)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ensemble import ConsistentForestClassifier
from ensemble.forest._forest import UNIT_BITS, forest_certificate
from ensemble.certificates._thresholds import Gaps as _Gaps, separate_thresholds as _separate_thresholds, set_thresholds as _set_thresholds
from ensemble.certificates._certificates import threshold_multiplicity
from ensemble.base._voting import learn_cut_points
from trees import leaf_boxes

from oracles import exact_consistency


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "not certified" is expected for small B
        return ConsistentForestClassifier(**params).fit(X, y)


def _fused_oracle(model):
    """Exact check of pointwise consistency: fuse all trees (raw thresholds), label regions, test every contact."""
    consistent, partition, _ = exact_consistency(model)
    return consistent, partition


def _force_threshold(model, tree_index, node, value):
    """Move one split threshold of a fitted forest's tree (what predict and the certificate read)."""
    tree = model.estimators_[tree_index]
    threshold = np.asarray(tree.tree_.threshold, dtype=np.float64).copy()
    threshold[node] = value
    _set_thresholds(tree, threshold)
    model._build_predictor()  # predict walks a flat copy of the trees, built once they are final


def _all_thresholds(model):
    return np.concatenate([np.asarray(t.tree_.threshold) for t in model.estimators_])


def _brute_jump(tree, n_features, value):
    """J_t by testing every pair of leaves for intersecting closed boxes."""
    boxes = leaf_boxes(tree, n_features)
    lo, hi, ids = boxes.lower, boxes.upper, boxes.leaf_ids
    best = 0
    for a in range(ids.shape[0]):
        for b in range(ids.shape[0]):
            if np.all(lo[a] <= hi[b]) and np.all(lo[b] <= hi[a]):
                best = max(best, abs(int(value[ids[a]]) - int(value[ids[b]])))
    return best


def _brute_multiplicity(model, f):
    """Largest number of trees sharing one threshold on feature f, by comparing every pair."""
    pairs = []
    for t, tree in enumerate(model.estimators_):
        s = tree.tree_
        inner = np.asarray(s.children_left) >= 0
        pairs += [(float(v), t) for v in np.asarray(s.threshold)[inner & (np.asarray(s.feature) == f)]]
    best = 0
    for v, _ in pairs:
        close = {t for w, t in pairs if abs(w - v) <= 4 * np.spacing(max(abs(v), abs(w)))}
        best = max(best, len(close))
    return best


def _step_data(n=40, seed=0):
    """Two features, classes 0 and 2 only (K = 3 with ``classes``): a jump of two across x0 = 0.5."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    return X, np.where(X[:, 0] > 0.5, 2, 0)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_certified_models_pass_the_fused_oracle(d, seed):
    """Check that a model whose bound certifies it has no closure contact two classes apart."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(18, d))
    y = np.clip(np.floor(X.sum(axis=1) * 4 / d + rng.normal(scale=0.3, size=18)), 0, 3).astype(int)
    model = _fit(X, y, n_estimators=d * 3 + 1, max_depth=3, random_state=seed)
    assert model.is_consistent()
    consistent, partition = _fused_oracle(model)
    assert consistent
    assert partition.n_regions > model.n_estimators_  # the oracle saw a real fused partition


def test_coinciding_thresholds_fail_the_certificate_and_the_oracle():
    """Check that forcing two trees onto one threshold is reported and really breaks consistency."""
    X, y = _step_data()
    # The pointwise notion's mechanism (distinct thresholds); the data's resolution caps the steps too.
    model = _fit(X, y, n_estimators=2, bootstrap=False, classes=[0, 1, 2], random_state=0, consistency="pointwise")
    assert model.is_consistent()  # distinct thresholds: the mean steps 0 -> 1 -> 2
    assert _fused_oracle(model)[0]
    roots = [int(np.flatnonzero(np.asarray(t.tree_.feature) == 0)[0]) for t in model.estimators_]
    shared = float(model.estimators_[0].tree_.threshold[roots[0]])
    _force_threshold(model, 1, roots[1], shared)
    assert not model.is_consistent()
    consistent, _ = _fused_oracle(model)
    assert not consistent
    assert model.predict([[np.nextafter(shared, -1), 0.5], [np.nextafter(shared, 2), 0.5]]).tolist() == [0, 2]


def test_too_few_trees_fail_the_certificate_and_the_oracle():
    """Check that a single tree jumping two classes is not certified, warns, and is inconsistent."""
    X, y = _step_data()
    with pytest.warns(UserWarning, match="not certified consistent"):
        model = ConsistentForestClassifier(n_estimators=1, classes=[0, 1, 2], random_state=0,
                                           consistency="pointwise").fit(X, y)
    assert model.consistency_bound_ > 1
    assert not model.is_consistent()
    assert not _fused_oracle(model)[0]


def test_auto_grows_until_certified():
    """Check that n_estimators='auto' adds trees when 100 do not certify, and that the result is certified."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 30))
    y = np.clip(np.floor(X[:, :10].sum(axis=1) - 1), 0, 7).astype(int)  # K = 8: 30 * 7 > 100
    model = ConsistentForestClassifier(max_depth=4, random_state=0).fit(X, y)
    assert model.is_consistent()
    assert model.consistency_bound_ <= 1
    assert model.n_estimators_ >= 100
    certificate = forest_certificate(model.estimators_, model._voters, 30, np.ones(30, bool), exact=True)
    # Smallest B for the exact jumps of the grown trees is not more than what was grown.
    assert certificate.bound <= certificate.spacing


@pytest.mark.parametrize("criterion", ["squared_error", "ogini"])
def test_bound_equals_brute_force(criterion):
    """Check that the jumps and multiplicities of the certificate equal brute-force recomputations."""
    rng = np.random.RandomState(1)
    X = np.round(rng.uniform(size=(40, 3)) * 4) / 4  # a lattice: many shared gaps
    y = np.clip(np.floor(X.sum(axis=1) * 1.5), 0, 4).astype(int)
    # The trees as grown (consistency="pointwise"): the brute force below ignores the slices of
    # missing values scikit-learn's trees route (missing_go_to_left) and the certificate counts,
    # which the capped values of the data's resolution happened to make matter.
    model = _fit(X, y, n_estimators=6, max_depth=4, criterion=criterion, random_state=3, consistency="pointwise")
    certificate = forest_certificate(model.estimators_, model._voters, 3, np.ones(3, bool), exact=True)
    for t, tree in enumerate(model.estimators_):
        value = model._voters[t].value
        assert certificate.jumps[t] == _brute_jump(tree, 3, value)
    for f in range(3):
        assert certificate.multiplicity[f] == _brute_multiplicity(model, f)
    top = np.sort(certificate.jumps)[::-1][: certificate.n_boundaries].sum()
    assert certificate.bound == top
    # The lazy certificate (exact jumps only where they can matter) reaches the same bound.
    lazy = forest_certificate(model.estimators_, model._voters, 3, np.ones(3, bool), spacing=0)
    assert lazy.bound == certificate.bound and lazy.exact.sum() <= certificate.exact.sum()
    assert certificate.n_boundaries == sum(_brute_multiplicity(model, f) for f in range(3))


def test_collision_is_detected_and_redrawn():
    """Check that thresholds a few ulps apart in different trees are redrawn apart, and unavoidable ones counted."""
    rng = np.random.RandomState(0)
    none = (np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64))
    new = _Gaps(feature=np.array([0, 1, 0, 1]), threshold=np.array([0.325, 0.5, 0.32500000000000007, 0.9]),
                lo=np.zeros(4), hi=np.ones(4), owner=np.array([0, 0, 1, 1]))
    assert _separate_thresholds(new, *none, rng, np.ones(2, bool)) >= 1
    assert abs(new.threshold[0] - new.threshold[2]) > 4 * np.spacing(0.325)
    assert new.threshold[1] == 0.5 and new.threshold[3] == 0.9  # distinct thresholds stay
    # A threshold of an earlier batch never moves: the new one does.
    new = _Gaps(np.array([0]), np.array([0.7]), np.zeros(1), np.ones(1), np.array([5]))
    _separate_thresholds(new, np.array([0]), np.array([np.nextafter(0.7, 1)]), np.array([2]), rng, np.ones(1, bool))
    assert abs(new.threshold[0] - 0.7) > 4 * np.spacing(0.7)
    # Thresholds of one tree may coincide (two branches split at the same value): no redraw.
    new = _Gaps(np.array([0, 0]), np.array([0.4, 0.4]), np.zeros(2), np.ones(2), np.array([3, 3]))
    assert _separate_thresholds(new, *none, rng, np.ones(1, bool)) == 0
    # A gap with no room between two floats: the collision stays and the certificate counts it.
    a = 0.3
    tight = _Gaps(np.array([0, 0]), np.array([a, a]), np.array([a, a]), np.full(2, np.nextafter(a, 1)), np.array([0, 1]))
    _separate_thresholds(tight, *none, rng, np.ones(1, bool))
    assert tight.threshold.tolist() == [a, a]
    assert threshold_multiplicity(tight.threshold, tight.owner) == 2
    # Categorical features are left alone.
    cat = _Gaps(np.array([0, 0]), np.array([0.5, 0.5]), np.zeros(2), np.ones(2), np.array([0, 1]))
    assert _separate_thresholds(cat, *none, rng, np.zeros(1, bool)) == 0


def test_fitted_thresholds_are_distinct_and_keep_the_training_partition():
    """Check that no two trees share a threshold and that every tree still splits its rows as grown."""
    rng = np.random.RandomState(0)
    X = rng.randint(0, 3, size=(200, 4)).astype(float)  # integer data: every tree splits in the same gaps
    y = np.clip(X.sum(axis=1).astype(int) - 2, 0, 4)
    model = ConsistentForestClassifier(n_estimators=40, bootstrap=False, max_features=0.5, random_state=0).fit(X, y)
    assert model.threshold_multiplicity_.max() == 1
    assert _brute_multiplicity(model, 0) == 1
    leaves = model.apply(X)
    for t, tree in enumerate(model.estimators_):
        s = tree.tree_
        inner = np.asarray(s.children_left) >= 0
        moved = np.asarray(s.threshold)[inner]
        assert np.all(moved != np.round(moved * 2) / 2)  # not the midpoints 0.5, 1.5 any more
        # Rows per leaf were recorded while the tree grew (all weights 1 without bootstrap):
        # the moved thresholds send every training row to the same leaf.
        counts = np.bincount(leaves[:, t], minlength=s.node_count)
        np.testing.assert_array_equal(counts[~inner], np.asarray(s.n_node_samples)[~inner])
        np.testing.assert_array_equal(tree.apply(X), leaves[:, t])


def _probe_around(model, X, rng, n_points=6, n_signs=32):
    """Largest class gap among points a hair's breadth around spots where many trees have boundaries."""
    feature = np.concatenate([np.asarray(t.tree_.feature) for t in model.estimators_])
    threshold = _all_thresholds(model)
    inner = np.concatenate([np.asarray(t.tree_.children_left) >= 0 for t in model.estimators_])
    d = X.shape[1]
    worst = 0
    for _ in range(n_points):
        x = X[rng.randint(X.shape[0])].copy()
        # Put x on a threshold of a different random tree for every feature it can.
        nodes = rng.permutation(np.flatnonzero(inner))
        taken = set()
        for node in nodes:
            f = int(feature[node])
            if f not in taken:
                x[f] = threshold[node]
                taken.add(f)
        eps = 1e-9 * np.maximum(1.0, np.abs(x))
        signs = rng.choice([-1.0, 0.0, 1.0], size=(n_signs, d))
        probes = np.vstack([x, x + signs * eps])
        idx = np.searchsorted(model.classes_, model.predict(probes))
        worst = max(worst, int(idx.max() - idx.min()))
    return worst


# Random draws of 20 rows may hold nothing to learn (the forest says so); the certificate is what is tested.
@pytest.mark.filterwarnings("ignore:.* predicts the single class .*:UserWarning")
# 8 draws a run (fresh seeds every run): 15 took 31 s, the suite's third longest test.
@settings(max_examples=8)
@given(
    n_features=st.integers(1, 50),
    n_classes=st.integers(2, 6),
    n_samples=st.integers(20, 120),
    seed=st.integers(0, 2**31 - 1),
    integer_data=st.booleans(),
)
@pytest.mark.slow
def test_auto_model_is_certified_in_any_dimension(n_features, n_classes, n_samples, seed, integer_data):
    """Check that the default model is certified on random data up to 50 features, and that probes agree."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 4, size=(n_samples, n_features)).astype(float) if integer_data else rng.normal(
        size=(n_samples, n_features))
    y = rng.randint(0, n_classes, size=n_samples)
    y[:2] = [0, n_classes - 1]
    model = ConsistentForestClassifier(max_depth=6, random_state=seed % 1000).fit(X, y)
    assert model.is_consistent()
    assert model.consistency_bound_ <= 1
    assert model.n_boundaries_ <= n_features
    assert _probe_around(model, X, rng) <= 1


def test_probe_oracle_sees_a_broken_model():
    """Check that the local probe oracle used above detects a forced jump of two classes."""
    X, y = _step_data()
    model = _fit(X, y, n_estimators=2, bootstrap=False, classes=[0, 1, 2], random_state=0, consistency="pointwise")
    root = [int(np.flatnonzero(np.asarray(t.tree_.feature) == 0)[0]) for t in model.estimators_]
    _force_threshold(model, 1, root[1], float(model.estimators_[0].tree_.threshold[root[0]]))
    assert _probe_around(model, X, np.random.RandomState(0), n_points=20) == 2


def test_predictions_are_the_exact_rounded_mean():
    """Check predict (half-way cuts) against the rounded mean of the trees' own leaf values, halves up."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(150, 5))
    y = np.clip(np.floor(X[:, 0] * 5), 0, 4).astype(int)
    model = ConsistentForestClassifier(n_estimators=30, cut_points="half", random_state=0).fit(X, y)
    values = np.column_stack([t.tree_.value[:, 0, 0][model.apply(X)[:, i]] for i, t in enumerate(model.estimators_)])
    expected = np.clip(np.floor(values.mean(axis=1) + 0.5), 0, 4)
    np.testing.assert_array_equal(np.searchsorted(model.classes_, model.predict(X)), expected)
    np.testing.assert_allclose(model.predict_value(X), values.mean(axis=1), atol=2.0**-UNIT_BITS)


def test_predict_proba_is_the_mean_of_leaf_distributions():
    """Check that predict_proba rows sum to 1, have the forest's mean value as mean, and match a recount."""
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(120, 3))
    y = np.clip(np.floor(X[:, 0] * 4 + rng.normal(scale=0.4, size=120)), 0, 3).astype(int)
    # The trees' own values (under consistency="data" the values are capped across the gaps,
    # while predict_proba stays the mean of the leaf distributions).
    model = ConsistentForestClassifier(n_estimators=20, bootstrap=False, max_features=0.5, random_state=0,
                                       consistency="pointwise").fit(X, y)
    proba = model.predict_proba(X[:30])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba @ np.arange(4), model.predict_value(X[:30]), atol=1e-5)
    # Without bootstrap every tree's leaf distribution is the class share of its training rows.
    leaves = model.apply(X)
    recount = np.zeros((30, 4))
    for t in range(model.n_estimators_):
        for i in range(30):
            same = leaves[:, t] == leaves[i, t]
            recount[i] += np.bincount(y[same], minlength=4) / same.sum()
    np.testing.assert_allclose(proba, recount / model.n_estimators_)


def test_strings_pandas_and_categorical_names():
    """Check string classes in a given order, DataFrame input and categorical features by name."""
    rng = np.random.RandomState(0)
    frame = pd.DataFrame({"income": rng.uniform(size=120), "region": rng.randint(0, 4, 120).astype(float)})
    grade = np.array(["poor", "fair", "good"])[np.clip((frame.income * 3).astype(int), 0, 2)]
    model = ConsistentForestClassifier(classes=["poor", "fair", "good"], categorical_features=["region"],
                                       random_state=0).fit(frame, grade)
    assert model.classes_.tolist() == ["poor", "fair", "good"]
    assert model.threshold_multiplicity_[1] == 0  # the categorical feature does not count
    assert set(model.predict(frame)) <= {"poor", "fair", "good"}
    assert np.mean(model.predict(frame) == grade) > 0.9
    assert model.is_consistent()


def test_n_jobs_and_random_state_reproduce():
    """Check that n_jobs=1 and n_jobs=2 give identical forests, and a seed fixes the model."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 6))
    y = np.clip(np.floor(X[:, :2].sum(axis=1) * 2), 0, 3).astype(int)
    a = ConsistentForestClassifier(n_estimators=30, n_jobs=1, random_state=7).fit(X, y)
    b = ConsistentForestClassifier(n_estimators=30, n_jobs=2, random_state=7).fit(X, y)
    np.testing.assert_array_equal(_all_thresholds(a), _all_thresholds(b))
    np.testing.assert_array_equal(a.predict_value(X), b.predict_value(X))
    c = ConsistentForestClassifier(n_estimators=30, random_state=8).fit(X, y)
    assert not np.array_equal(_all_thresholds(a), _all_thresholds(c))


def test_sample_weight_equals_repeated_rows_without_bootstrap():
    """Check that integer weights equal repeated rows and zero weights equal dropped rows (bootstrap=False)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(60, 3))
    y = np.clip(np.floor(X[:, 0] * 3), 0, 2).astype(int)
    w = rng.randint(0, 3, size=60).astype(float)
    params = dict(n_estimators=10, bootstrap=False, max_features=0.5, random_state=0)
    weighted = ConsistentForestClassifier(**params).fit(X, y, sample_weight=w)
    repeated = ConsistentForestClassifier(**params).fit(np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    grid = rng.uniform(size=(500, 3))
    np.testing.assert_array_equal(weighted.predict_value(grid), repeated.predict_value(grid))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"n_estimators": "many"}, "n_estimators"),
        ({"criterion": "variance"}, "criterion"),
        ({"max_features": 1.5}, "max_features"),
        ({"categorical_features": [5]}, "categorical_features"),
        ({"categorical_features": ["a"]}, "categorical_features"),
        ({"categorical_features": [True, False]}, "categorical_features"),
    ],
)
def test_bad_parameters_name_themselves(params, match):
    """Check that invalid parameters raise errors naming the parameter."""
    X = np.random.RandomState(0).uniform(size=(20, 3))
    y = np.arange(20) % 3
    with pytest.raises(ValueError, match=match):
        ConsistentForestClassifier(**params).fit(X, y)


# Labels alternating over the rows leave the forest nothing to learn (it says so); the errors are what is tested.
@pytest.mark.filterwarnings("ignore:.* predicts the single class .*:UserWarning")
def test_bad_data_and_weights():
    """Check the errors for one class, infinite values, bad sample weights and a wrong number of features."""
    X = np.random.RandomState(0).uniform(size=(20, 2))
    with pytest.raises(ValueError, match="class"):
        ConsistentForestClassifier().fit(X, np.ones(20))
    with pytest.raises(ValueError, match="infinity"):  # NaN is a missing value (tests/test_ensemble_missing.py)
        ConsistentForestClassifier().fit(np.where(X > 0.9, np.inf, X), np.arange(20) % 2)
    with pytest.raises(ValueError, match="sample_weight"):
        ConsistentForestClassifier().fit(X, np.arange(20) % 2, sample_weight=-np.ones(20))
    model = ConsistentForestClassifier(n_estimators=5).fit(X, np.arange(20) % 2)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.ones((2, 3)))



def _best_binary_cut(values, above):
    """Brute force: the fewest errors of the rule 'value >= cut means above', over all cuts."""
    candidates = np.concatenate(([-np.inf], np.unique(values), [np.inf]))
    return min(np.sum((values >= c) != above) for c in candidates)


@settings(max_examples=30)
@given(n=st.integers(5, 40), n_classes=st.integers(2, 5), seed=st.integers(0, 10**6), spacing=st.integers(0, 30))
def test_learned_cut_points_are_optimal_per_class_and_spaced(n, n_classes, seed, spacing):
    """Check each learned cut against brute force, and the spacing after projection."""
    rng = np.random.RandomState(seed)
    y = rng.randint(0, n_classes, size=n)
    values = np.round(y * 10 + rng.normal(scale=8, size=n))
    free = learn_cut_points(values, y, n_classes, 10, spacing=0)
    for k in range(n_classes - 1):
        assert np.sum((values >= free[k]) != (y > k)) == _best_binary_cut(values, y > k)
    spaced = learn_cut_points(values, y, n_classes, 10, spacing=spacing)
    assert np.all(np.diff(spaced) >= (spacing if n_classes > 2 else 0))
    if n_classes > 2 and np.all(np.diff(free) >= spacing):
        np.testing.assert_array_equal(spaced, free)  # nothing to move


def _spaced_errors(values, y, w, cuts):
    """The weighted absolute error of the classes the integer ``cuts`` give (the number of cuts reached)."""
    predicted = np.searchsorted(np.asarray(cuts), values, side="right")
    return float(np.dot(np.abs(predicted - y), w))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 25), n_classes=st.integers(3, 4), seed=st.integers(0, 10**6), spacing=st.integers(1, 6))
def test_spaced_cut_points_have_the_fewest_errors_of_all_spaced_cuts(n, n_classes, seed, spacing):
    """Check the spaced cuts against every integer cut vector at least ``spacing`` apart (brute force over a
    window that holds every distinct choice): the least weighted absolute error, with the spacing kept."""
    import itertools

    rng = np.random.RandomState(seed)
    y = rng.randint(0, n_classes, size=n)
    values = np.round(y * 3 + rng.uniform(-4, 4, size=n))  # close classes: the spacing binds (integer sums)
    w = rng.uniform(0.1, 3.0, size=n)
    cuts = learn_cut_points(values, y, n_classes, 3, spacing=spacing, sample_weight=w)
    assert np.all(np.diff(cuts) >= spacing)
    top = int(np.ceil(values.max()))
    window = range(int(np.floor(values.min())) - spacing * n_classes, top + spacing * n_classes + 2)
    best = min(_spaced_errors(values, y, w, c) for c in itertools.combinations(window, n_classes - 1)
               if np.all(np.diff(c) >= spacing))
    assert _spaced_errors(values, y, w, cuts) <= best * (1 + 1e-12) + 1e-12


def test_spaced_cuts_keep_the_commonest_class():
    """Check, on sums whose upper classes lie close together and whose lowest class holds most rows, that
    spacing the cuts does not push the first one below every sum (it did: the least-squares projection
    moved every cut alike, and the lowest class, 76% of the rows, was never predicted)."""
    values = np.array([0.0] * 30 + [6.0] * 5 + [7.0] * 3 + [8.0] * 2)
    y = np.array([0] * 30 + [1] * 5 + [2] * 3 + [3] * 2)
    cuts = learn_cut_points(values, y, 4, 10, spacing=10)
    assert np.all(np.diff(cuts) >= 10) and 0 < cuts[0] <= 6
    assert _spaced_errors(values, y, np.ones(40), cuts) == 3 * 1 + 2 * 2  # classes 2 and 3 read as 1


def test_oob_cut_points_are_certified_and_checked_by_the_oracle():
    """Check that learned cut points are certified, and that cuts closer than the bound are caught."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(40, 2))
    y = np.clip(np.floor(X.sum(axis=1) * 2 + rng.normal(scale=0.3, size=40)), 0, 3).astype(int)
    model = _fit(X, y, n_estimators=8, max_depth=3, cut_points="oob", random_state=0)
    assert model.is_consistent() and model.consistency_bound_ <= 1
    assert np.all(np.diff(model.cut_points_) >= model.consistency_bound_ * np.diff(model.cut_points_).min() - 1e-12)
    assert _fused_oracle(model)[0]
    # Squeeze the cuts together: the certificate refuses, and the oracle finds a jump of two.
    model._cuts = np.array([model._cuts[0], model._cuts[0] + 1, model._cuts[0] + 2])
    assert not model.is_consistent()
    assert not _fused_oracle(model)[0]


def test_cut_point_options_and_their_errors():
    """Check that 'auto' learns cut points with bootstrap only, and that 'oob' without bootstrap is refused."""
    X, y = _step_data(60)
    y = np.clip(np.floor(X[:, 0] * 3), 0, 2).astype(int)
    half = ConsistentForestClassifier(n_estimators=20, bootstrap=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(half.cut_points_, [0.5, 1.5])
    learned = ConsistentForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    assert learned.cut_points_.shape == (2,) and learned.is_consistent()
    # The prediction is where the mean value stands among the cut points.
    index = np.searchsorted(learned.cut_points_, learned.predict_value(X), side="right")
    np.testing.assert_array_equal(learned.classes_[index], learned.predict(X))
    with pytest.raises(ValueError, match="cut_points='oob'.*bootstrap=True"):
        ConsistentForestClassifier(cut_points="oob", bootstrap=False).fit(X, y)
    with pytest.raises(ValueError, match="cut_points"):
        ConsistentForestClassifier(cut_points="median").fit(X, y)


def test_resolution_too_coarse_falls_back_to_pointwise_consistency():
    """Check that a resolution as wide as the data's gaps cannot be certified: warned, yet consistent (r = 0)."""
    rng = np.random.RandomState(0)
    X = np.round(rng.uniform(size=(200, 2)) * 20) / 20  # gaps of 0.05 between training values
    y = np.digitize(X.sum(axis=1) + rng.normal(0, 0.2, 200), [0.7, 1.0, 1.3])
    with pytest.warns(UserWarning, match="not certified at the given resolution.*OTreeBagger"):
        model = ConsistentForestClassifier(resolution=0.05, random_state=0).fit(X, y)
    assert model.is_consistent() and not model.is_consistent(resolution=0.05)
    # A resolution well under the gaps divided among the trees is certified, with no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fine = ConsistentForestClassifier(resolution=0.0002, random_state=0).fit(X, y)
    assert fine.is_consistent(resolution=0.0002) and fine.is_consistent()
    with pytest.raises(ValueError, match="resolution"):
        ConsistentForestClassifier(resolution=[-1.0, 0.1]).fit(X, y)
    # Too few trees for the resolution: not certified at r, and it says which notion holds at r = 0 (it said
    # None while is_consistent() was True).
    with pytest.warns(UserWarning, match=r"not certified consistent at this resolution \(at r = 0 it is: "):
        few = ConsistentForestClassifier(resolution=0.01, n_estimators=20, random_state=0).fit(X, y)
    assert not few.is_consistent(resolution=0.01)
    assert few.consistency_notion_ == "data" and few.is_consistent() and few.is_consistent(notion="data")


def test_values_too_close_for_many_thresholds_share_a_rank_and_the_forest_is_certified():
    """Check that training values closer than RANK_GAP_ULPS ulps count as one value for the forest.

    Feature 0 is 1e9 plus consecutive float64 steps, the class changing half-way: every
    tree wants the same one-ulp gap, where float64 has no second threshold, so the
    trees shared it and the default forest was not certified (bound over 1, at the
    cap of trees). Now the values share a rank: no tree splits between them, and the
    forest is certified, splitting feature 1 (in ordinary units) instead.
    """
    from ensemble.certificates._thresholds import RANK_GAP_ULPS

    rng = np.random.RandomState(0)
    n = 300
    steps = rng.randint(0, 40, size=n)
    X = np.column_stack([1e9 + steps * np.spacing(1e9), rng.uniform(size=n)])
    y = (steps >= 20).astype(int) + (X[:, 1] > 0.5).astype(int) + (X[:, 1] > 0.8).astype(int)
    with pytest.warns(UserWarning, match=r"feature\(s\) 0: training values closer than 64 units"):
        model = ConsistentForestClassifier(random_state=0).fit(X, y)
    assert model.is_consistent() and model.consistency_bound_ <= 1
    assert model.threshold_multiplicity_.max() == 1
    values = np.unique(X[:, 0])
    close = np.diff(values) <= RANK_GAP_ULPS * np.spacing(values[1:])
    for tree in model.estimators_:
        s = tree.tree_
        on_0 = (np.asarray(s.children_left) >= 0) & (np.asarray(s.feature) == 0)
        gap = np.searchsorted(values, np.asarray(s.threshold)[on_0], side="right")  # between values[gap - 1], values[gap]
        assert not np.any(close[gap[(gap > 0) & (gap < values.shape[0])] - 1])


def test_ranks_merge_only_values_closer_than_the_gap():
    """Check Ranks' codes against ranks of distinct values, with and without close values merged."""
    from ensemble.certificates._thresholds import Ranks

    rng = np.random.RandomState(1)
    v = np.sort(rng.uniform(size=50))
    X = np.concatenate([v, v[[3, 10]] + 2 * np.spacing(v[[3, 10]])])[:, None]  # two values 2 ulps off
    plain, merged = Ranks.fit(X), Ranks.fit(X, min_gap_ulps=4)
    distinct = np.unique(X[:, 0])
    np.testing.assert_array_equal(plain.transform(X)[:, 0], np.searchsorted(distinct, X[:, 0]))
    codes = merged.transform(X)[:, 0]
    assert merged.crowded().tolist() == [0] and plain.crowded().tolist() == []
    assert np.unique(codes).shape[0] == 50  # the two pairs share codes
    assert codes[50] == codes[3] and codes[51] == codes[10]
    # Order kept; a value between two training values takes the code of the larger.
    between = (v[:-1] + v[1:]) / 2
    np.testing.assert_array_equal(merged.transform(between[:, None])[:, 0], merged.transform(v[1:, None])[:, 0])
    assert merged.transform(np.array([[2.0]]))[0, 0] == codes.max() + 1
