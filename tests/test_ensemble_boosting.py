"""Tests of certified consistent gradient boosting (docs/design.md section 10)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relabel
from ensemble import ConsistentGradientBoostingClassifier
from ensemble.boosting import _boosting
from ensemble.certificates._certificates import sum_certificate
from ensemble.certificates._thresholds import ThresholdBook as _ThresholdBook
from ensemble.base._voting import UNIT_BITS


def boosting_certificate(trees, n_features, countable, spacing, resolution=None, exact=False):
    """The certificate of a sum of boosted trees, as the model computes it."""
    return sum_certificate([t.nodes() for t in trees], [t.value for t in trees], n_features, countable, spacing,
                           resolution, exact=exact)
from ensemble.certificates._certificates import threshold_multiplicity
from ensemble.metrics import ranked_probability_score
from oracles import box_centres
from trees import leaf_boxes


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ConsistentGradientBoostingClassifier(**params).fit(X, y)


def _fused_oracle(model):
    """Exact pointwise check: fuse all trees on their raw thresholds, label every region, test closure contacts."""
    d = model.n_features_in_
    partition = relabel.fuse([leaf_boxes(t, d) for t in model.estimators_], snap=False)
    labels = np.searchsorted(model.classes_, model.predict(box_centres(partition.lower, partition.upper)))
    edges = relabel.adjacency_edges(partition).edges
    return relabel.is_consistent(edges, labels), partition


def _brute_jump(tree, d):
    """J_t by testing every pair of leaves for intersecting closed boxes."""
    boxes = leaf_boxes(tree, d)
    lo, hi, ids = boxes.lower, boxes.upper, boxes.leaf_ids
    best = 0
    for a in range(ids.shape[0]):
        for b in range(ids.shape[0]):
            if np.all(lo[a] <= hi[b]) and np.all(lo[b] <= hi[a]):
                best = max(best, abs(int(tree.value[ids[a]]) - int(tree.value[ids[b]])))
    return best


def _brute_multiplicity(model, f):
    """Largest number of trees sharing one threshold on feature f (a few ulps apart), comparing every pair."""
    pairs = []
    for t, tree in enumerate(model.estimators_):
        inner = tree.children_left >= 0
        pairs += [(float(v), t) for v in tree.threshold[inner & (tree.feature == f)]]
    best = 0
    for v, _ in pairs:
        close = {t for w, t in pairs if abs(w - v) <= 4 * np.spacing(max(abs(v), abs(w)))}
        best = max(best, len(close))
    return best


def _step_data(n=60, seed=0, d=2):
    """Classes 0 and 2 only (K = 3 with ``classes``): a jump of two across x0 = 0.5."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    return X, np.where(X[:, 0] > 0.5, 2, 0)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_certified_models_pass_the_fused_oracle(d, seed):
    """Check that a model whose bound certifies it has no closure contact two classes apart."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(80, d))
    y = np.clip(np.floor(X.sum(axis=1) * 4 / d + rng.normal(scale=0.3, size=80)), 0, 3).astype(int)
    model = _fit(X, y, max_iter=12, max_leaf_nodes=4, min_samples_leaf=3, early_stopping=False,
                 learning_rate=1.0, random_state=seed)
    assert model.is_consistent() and model.consistency_bound_ <= 1
    consistent, partition = _fused_oracle(model)
    assert consistent
    assert partition.n_regions > 4 * model.n_iter_  # the oracle saw a real fused partition


def test_step_rule_disabled_fails_the_certificate_and_the_oracle(monkeypatch):
    """Check that without the step bound a stump jumps two classes: not certified, and the oracle finds it."""
    X, y = _step_data()
    # The pointwise notion's own mechanism (the step rule); the gap budget would block the jump too.
    params = dict(classes=[0, 1, 2], max_iter=3, max_leaf_nodes=2, min_samples_leaf=3, early_stopping=False,
                  learning_rate=1.0, loss="squared_error", cut_points="half", random_state=0,
                  consistency="pointwise")
    certified = _fit(X, y, **params)
    assert certified.is_consistent() and _fused_oracle(certified)[0]
    assert np.all(np.abs(np.diff(certified.predict_value(np.array([[0.2, 0.5], [0.8, 0.5]])))) < 1.5)
    monkeypatch.setattr(_boosting._Budget, "cap", lambda self, n_boundaries: 1 << 40)
    monkeypatch.setattr(_boosting._Budget, "allowance", lambda self, n_boundaries: 1 << 40)
    with pytest.warns(UserWarning, match="not certified consistent"):
        broken = ConsistentGradientBoostingClassifier(**params).fit(X, y)
    assert broken.consistency_bound_ > 1 and not broken.is_consistent()
    assert not _fused_oracle(broken)[0]


def test_coinciding_thresholds_fail_the_certificate_and_the_oracle():
    """Check that forcing the trees onto one threshold is reported and really breaks consistency."""
    X, y = _step_data(d=1)
    model = _fit(X, y, classes=[0, 1, 2], max_iter=40, max_leaf_nodes=2, min_samples_leaf=3,
                 early_stopping=False, loss="squared_error", cut_points="half", random_state=0,
                 consistency="pointwise")
    assert model.is_consistent(notion="pointwise") and _fused_oracle(model)[0]
    thresholds = [float(t.threshold[0]) for t in model.estimators_]
    assert len(set(thresholds)) == len(thresholds)  # distinct across trees
    lo, hi = X[y == 0, 0].max(), X[y == 2, 0].min()
    assert all(lo <= t < hi for t in thresholds)  # all in the one gap between the classes
    shared = thresholds[0]
    for tree in model.estimators_:
        tree.threshold[0] = shared  # still in the gap: the training rows keep their sides
    model._build_predictor()
    assert not model.is_consistent(notion="pointwise")
    assert not _fused_oracle(model)[0]
    below, above = np.nextafter(shared, -1), np.nextafter(shared, 2)
    assert model.predict([[below], [above]]).tolist() == [0, 2]


@pytest.mark.parametrize("loss", ["squared_error", "all_threshold"])
def test_bound_equals_brute_force(loss):
    """Check the certificate's jumps, multiplicities and bound against brute-force recomputations."""
    rng = np.random.RandomState(1)
    X = np.round(rng.uniform(size=(120, 3)) * 4) / 4  # a lattice: every tree splits in the same few gaps
    y = np.clip(np.floor(X.sum(axis=1) * 1.5), 0, 4).astype(int)
    model = _fit(X, y, loss=loss, max_iter=15, max_leaf_nodes=5, min_samples_leaf=2, early_stopping=False,
                 random_state=3, consistency="pointwise")  # consistency_bound_ is then the pointwise bound's
    certificate = boosting_certificate(model.estimators_, 3, np.ones(3, bool), 1 << UNIT_BITS, exact=True)
    for t, tree in enumerate(model.estimators_):
        assert certificate.jumps[t] == _brute_jump(tree, 3)
    for f in range(3):
        assert certificate.multiplicity[f] == _brute_multiplicity(model, f) == 1
    assert certificate.bound == np.sort(certificate.jumps)[::-1][: certificate.n_boundaries].sum()
    lazy = boosting_certificate(model.estimators_, 3, np.ones(3, bool), 0)
    assert lazy.bound == certificate.bound
    # The stored bound uses the value ranges where they certify: an upper bound of the exact one.
    spacing = int(np.diff(model._cuts).min())
    stored = boosting_certificate(model.estimators_, 3, np.ones(3, bool), spacing).bound
    assert model.consistency_bound_ == pytest.approx(stored / spacing) and stored >= certificate.bound
    # Every tree's jump is within its share g / d of the bound (the step rule).
    assert certificate.jumps.max() <= (1 << UNIT_BITS) // 3


def test_thresholds_are_distinct_across_trees_and_keep_the_training_partition():
    """Check that no two trees share a threshold and that F on the training rows is what predict computes."""
    rng = np.random.RandomState(0)
    X = rng.randint(0, 3, size=(300, 4)).astype(float)  # integer data: every tree splits in the same gaps
    y = np.clip(X.sum(axis=1).astype(int) - 2, 0, 4)
    model = _fit(X, y, max_iter=60, early_stopping=False, random_state=0)
    assert model.threshold_multiplicity_.max() == 1
    assert all(_brute_multiplicity(model, f) == 1 for f in range(4))
    inner = np.concatenate([t.threshold[t.children_left >= 0] for t in model.estimators_])
    assert np.all(inner != np.round(inner * 2) / 2)  # moved off the bin edges (0, 1, 2, midpoints)
    assert np.all((inner >= 0) & (inner < 2))
    # The grower's leaves (bins) and the raw thresholds send every training row alike: the loss
    # recorded on the training rows equals the one recomputed from predict_value.
    value = model.predict_value(X)
    assert np.all(np.abs(value * (1 << UNIT_BITS) - np.rint(value * (1 << UNIT_BITS))) == 0)


def test_threshold_book_redraws_and_counts_unavoidable_collisions():
    """Check redraws apart from other trees, reuse within a tree, and collisions counted when a gap is full."""
    rng = np.random.RandomState(0)
    book = _ThresholdBook(2, None)
    first = book.place(0, 0.0, 1.0, 0, rng)
    again = book.place(0, 0.0, 1.0, 0, rng)
    assert book.multiplicity[0] == 1 and first != again
    # A gap exactly around an existing threshold, a few ulps wide: no room, the collision is counted.
    a = first
    tight = book.place(0, a, float(np.nextafter(a, 2)), 1, rng)
    assert abs(tight - a) <= 4 * np.spacing(a) and book.multiplicity[0] == 2
    # With room, many trees in one gap all get their own threshold.
    book = _ThresholdBook(1, None)
    placed = [book.place(0, 0.3, 0.3 + 2000 * np.spacing(0.3), t, rng) for t in range(40)]
    assert threshold_multiplicity(np.array(placed), np.arange(40)) == 1 and book.multiplicity[0] == 1
    # With a resolution, trees keep r apart while the gap allows.
    book = _ThresholdBook(1, np.array([0.1]))
    placed = [book.place(0, 0.0, 1.0, t, rng) for t in range(5)]
    assert np.diff(np.sort(placed)).min() > 0.1 and book.multiplicity[0] == 1


def _probe_around(model, X, rng, n_points=6, n_signs=32):
    """Largest class gap among points a hair's breadth around spots where many trees have boundaries."""
    trees = model.estimators_
    feature = np.concatenate([t.feature for t in trees])
    threshold = np.concatenate([t.threshold for t in trees])
    inner = np.concatenate([t.children_left >= 0 for t in trees])
    d = X.shape[1]
    worst = 0
    for _ in range(n_points):
        x = X[rng.randint(X.shape[0])].copy()
        taken = set()
        for node in rng.permutation(np.flatnonzero(inner)):
            f = int(feature[node])
            if f not in taken:
                x[f] = threshold[node]
                taken.add(f)
        eps = 1e-9 * np.maximum(1.0, np.abs(x))
        probes = np.vstack([x, x + rng.choice([-1.0, 0.0, 1.0], size=(n_signs, d)) * eps])
        idx = np.searchsorted(model.classes_, model.predict(probes))
        worst = max(worst, int(idx.max() - idx.min()))
    return worst


@settings(max_examples=12)
@given(n_features=st.integers(1, 50), n_classes=st.integers(2, 6), n_samples=st.integers(30, 150),
       seed=st.integers(0, 2**31 - 1), integer_data=st.booleans())
def test_model_is_certified_in_any_dimension(n_features, n_classes, n_samples, seed, integer_data):
    """Check that the model is certified on random data up to 50 features, and that line probes agree."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 4, size=(n_samples, n_features)).astype(float) if integer_data else rng.normal(
        size=(n_samples, n_features))
    y = rng.randint(0, n_classes, size=n_samples)
    y[:2] = [0, n_classes - 1]
    model = _fit(X, y, max_iter=40, learning_rate=1.0, min_samples_leaf=2, random_state=seed % 1000)
    assert model.is_consistent()
    assert model.consistency_bound_ <= 1
    assert model.n_boundaries_ <= n_features
    assert _probe_around(model, X, rng) <= 1


def test_probe_oracle_sees_a_broken_model():
    """Check that the line-probe oracle detects a forced jump of two classes."""
    X, y = _step_data(d=1)
    model = _fit(X, y, classes=[0, 1, 2], max_iter=40, max_leaf_nodes=2, min_samples_leaf=3,
                 early_stopping=False, loss="squared_error", cut_points="half", random_state=0)
    assert _probe_around(model, X, np.random.RandomState(0), n_points=20) <= 1
    for tree in model.estimators_:
        tree.threshold[0] = model.estimators_[0].threshold[0]
    model._build_predictor()
    assert _probe_around(model, X, np.random.RandomState(0), n_points=20) == 2


@settings(max_examples=10)
@given(seed=st.integers(0, 10**6), log_a=st.floats(-12, 50), b=st.sampled_from([0.0, 1.0, -3e3, 1e9]))
def test_predictions_do_not_depend_on_units(seed, log_a, b):
    """Check that fitting on a * X + b predicts on a * X_test + b as the fit on X predicts on X_test."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(300, 3))
    y = np.clip(np.floor(X[:, 0] * 3 + X[:, 1] + rng.normal(scale=0.3, size=300)), 0, 3).astype(int)
    test = rng.uniform(size=(200, 3))
    a = 10.0**log_a
    Z, Z_test = a * X + b, a * test + b
    if any(np.unique(Z[:, f]).shape[0] < 300 for f in range(3)) or bin_merges(Z):
        return  # float ties or merged values: the two data sets differ
    params = dict(max_iter=30, early_stopping=False, random_state=0)
    ours, theirs = _fit(X, y, **params), _fit(Z, y, **params)
    assert theirs.is_consistent()
    agree = np.mean(ours.predict(test) == theirs.predict(Z_test))
    assert agree >= 0.99  # test points rounded onto the other side of a moved threshold only


@pytest.mark.parametrize("a, b", [(3.0, 0.0), (1e-10, 0.0), (1.0, 1e9)])
def test_default_cross_validation_does_not_depend_on_units(a, b):
    """Check that the defaults (trees counted by 3-fold cross-validation) fit the same model on a * X + b.

    The folds numbered the distinct rows by their bytes: on integer data times 3 they dealt other
    folds and chose another number of trees (ESL: 147 against 135, 10 of 122 test rows changed).
    """
    rng = np.random.RandomState(0)
    X = rng.randint(0, 9, size=(300, 4)).astype(np.float64)
    y = np.clip(np.floor((X[:, 0] + X[:, 1] + X[:, 2]) / 5 + rng.normal(scale=0.6, size=300)), 0, 4).astype(int)
    from ensemble.boosting._boosting import _content_folds

    for plain_fold, scaled_fold in zip(_content_folds(X, y, 3, 7), _content_folds(a * X + b, y, 3, 7), strict=True):
        np.testing.assert_array_equal(plain_fold[1], scaled_fold[1])
    plain, scaled = _fit(X, y, random_state=0), _fit(a * X + b, y, random_state=0)
    assert plain.n_iter_ == scaled.n_iter_
    np.testing.assert_array_equal(plain.predict(X), scaled.predict(a * X + b))


def bin_merges(Z):
    from trees._hist import bin_features

    return bin_features(Z).merged.shape[0] > 0


def test_odd_units_with_defaults_are_certified_and_accurate():
    """Check defaults on features in odd units (x1e-10, x1e9, +1e9): certified, and as accurate as plain units."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(2000, 4))
    y = np.clip(np.floor(X[:, 0] * 3 + X[:, 1] + rng.normal(scale=0.2, size=2000)), 0, 3).astype(int)
    plain = _fit(X[:1500], y[:1500], random_state=0)
    base = np.mean(plain.predict(X[1500:]) == y[1500:])
    for Z in (X * 1e-10, X * 1e9, X + 1e9):
        model = _fit(Z[:1500], y[:1500], random_state=0)
        assert model.is_consistent()
        assert np.mean(model.predict(Z[1500:]) == y[1500:]) >= base - 0.05


def test_predict_proba_is_a_cumulative_logit_on_f():
    """Check that probabilities sum to 1, that P(y >= k) grows with F, and that the RPS beats a constant."""
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(600, 3))
    y = np.clip(np.floor(X[:, 0] * 4 + rng.normal(scale=0.4, size=600)), 0, 3).astype(int)
    model = _fit(X[:400], y[:400], random_state=0)
    proba = model.predict_proba(X[400:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(proba >= 0)
    F = model.predict_value(X[400:])
    order = np.argsort(F)
    at_least = np.cumsum(proba[order][:, ::-1], axis=1)[:, ::-1]  # P(y >= k)
    assert np.all(np.diff(at_least, axis=0) >= -1e-12)
    constant = np.tile(np.bincount(y[:400], minlength=4) / 400, (200, 1))
    assert ranked_probability_score(y[400:], proba) < ranked_probability_score(y[400:], constant)


def test_staged_predict_and_exact_half_way_cuts():
    """Check staged_predict ends at predict, and half-way cuts give floor(F + 1/2) clipped."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 4))
    y = np.clip(np.floor(X[:, 0] * 5), 0, 4).astype(int)
    model = _fit(X, y, max_iter=50, cut_points="half", random_state=0)
    stages = list(model.staged_predict(X))
    assert len(stages) == model.n_iter_
    np.testing.assert_array_equal(stages[-1], model.predict(X))
    expected = np.clip(np.floor(model.predict_value(X) + 0.5), 0, 4)
    np.testing.assert_array_equal(np.searchsorted(model.classes_, model.predict(X)), expected)
    np.testing.assert_array_equal(model.cut_points_, [0.5, 1.5, 2.5, 3.5])


def test_learned_cut_points_are_spaced_by_the_bound():
    """Check that learned cut points stay at least the bound apart, and that squeezing them is caught."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 2))
    y = np.clip(np.floor(X.sum(axis=1) * 2 + rng.normal(scale=0.3, size=300)), 0, 3).astype(int)
    model = _fit(X, y, max_iter=20, max_leaf_nodes=4, learning_rate=1.0, cut_points="learned", random_state=0)
    assert model.is_consistent()
    spacing = np.diff(model._cuts).min()
    assert model.consistency_bound_ * spacing <= spacing
    assert _fused_oracle(model)[0]
    model._cuts = np.array([model._cuts[0], model._cuts[0] + 1, model._cuts[0] + 2])
    assert not model.is_consistent()
    assert not _fused_oracle(model)[0]


def test_monotone_constraints_are_certified_and_hold_on_lines():
    """Check is_monotone on a constrained fit, line probes along the feature, and a refused wrong constraint."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(800, 3))
    y = np.clip(np.floor(X[:, 0] * 3 + np.sin(6 * X[:, 0]) - X[:, 1] + 1 + rng.normal(scale=0.3, size=800)),
                0, 3).astype(int)
    model = _fit(X, y, monotonic_cst=[1, -1, 0], random_state=0)
    assert model.is_monotone() and model.is_consistent()
    assert not model.is_monotone([0, 0, 1]) or not model.is_monotone([-1, 0, 0])
    assert not model.is_monotone([-1, 0, 0])
    grid = np.linspace(-0.1, 1.1, 300)
    for _ in range(20):
        x = rng.uniform(size=3)
        line = np.tile(x, (300, 1))
        line[:, 0] = grid
        assert np.all(np.diff(model.predict_value(line)) >= 0)
        line = np.tile(x, (300, 1))
        line[:, 1] = grid
        assert np.all(np.diff(model.predict_value(line)) <= 0)
    partition = relabel.fuse([leaf_boxes(t, 3) for t in model.estimators_[:6]], snap=False)
    labels = np.searchsorted(model.classes_, model.predict(box_centres(partition.lower, partition.upper)))
    # The first trees' fused partition is labelled by the whole model's F only on its own regions' points: check
    # the sum of those trees instead, monotone on every face contact along feature 0.
    values = sum(t.value[np.asarray(partition.keys)[:, i]] for i, t in enumerate(model.estimators_[:6]))
    assert relabel.is_monotone(relabel.monotone_pairs(partition, [1, -1, 0]), values)
    assert labels.shape[0] == partition.n_regions


def test_categorical_features_do_not_count_and_names_work():
    """Check categorical features by name: not counted in the bound, classes in the given order."""
    rng = np.random.RandomState(0)
    frame = pd.DataFrame({"income": rng.uniform(size=400), "region": rng.randint(0, 4, 400).astype(float)})
    grade = np.array(["poor", "fair", "good"])[np.clip((frame.income * 3).astype(int), 0, 2)]
    model = _fit(frame, grade, classes=["poor", "fair", "good"], categorical_features=["region"], random_state=0)
    assert model.classes_.tolist() == ["poor", "fair", "good"]
    assert model.threshold_multiplicity_[1] == 0
    assert np.mean(model.predict(frame) == grade) > 0.9
    assert model.is_consistent()


def test_resolution_is_certified_or_boosting_stops_with_a_warning():
    """Check r-consistency: a fine resolution certified; a coarse one stops early, warned, still certified at r."""
    rng = np.random.RandomState(0)
    X = np.round(rng.uniform(size=(400, 2)) * 20) / 20  # gaps of 0.05 between training values
    y = np.digitize(X.sum(axis=1) + rng.normal(0, 0.2, 400), [0.7, 1.0, 1.3])
    fine = _fit(X, y, resolution=1e-4, random_state=0)
    assert fine.is_consistent(resolution=1e-4) and fine.is_consistent()
    with pytest.warns(UserWarning, match="stopped after"):
        coarse = ConsistentGradientBoostingClassifier(resolution=0.05, early_stopping=False,
                                                      random_state=0).fit(X, y)
    assert coarse.is_consistent(resolution=0.05) and coarse.n_iter_ < coarse.max_iter
    with pytest.raises(ValueError, match="resolution"):
        ConsistentGradientBoostingClassifier(resolution=[-1.0, 0.1]).fit(X, y)


def test_sample_weight_equals_repeated_rows_without_early_stopping():
    """Check that integer weights equal repeated rows and zero weights equal dropped rows."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(80, 3))
    y = np.clip(np.floor(X[:, 0] * 3), 0, 2).astype(int)
    w = rng.randint(0, 3, size=80).astype(float)
    params = dict(max_iter=30, early_stopping=False, random_state=0)
    weighted = _fit(X, y, **params).fit(X, y, sample_weight=w)
    repeated = _fit(np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)), **params)
    grid = rng.uniform(size=(500, 3))
    np.testing.assert_array_equal(weighted.predict_value(grid), repeated.predict_value(grid))


def test_early_stopping_modes():
    """Check hold-out early stopping above 10,000 rows, cross-validated tree counts below, none when off."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(12000, 3))
    y = np.clip(np.floor(X[:, 0] * 3 + rng.normal(scale=0.3, size=12000)), 0, 2).astype(int)
    big = _fit(X, y, random_state=0)
    assert big.do_early_stopping_ and big.n_iter_ < 1000 and big.validation_score_.shape[0] >= 2
    small = _fit(X[:500], y[:500], random_state=0)
    assert small.do_early_stopping_ and small.validation_score_.shape[0] == 0 and small.n_iter_ < 1000
    off = _fit(X[:500], y[:500], early_stopping=False, max_iter=25, random_state=0)
    assert not off.do_early_stopping_ and off.n_iter_ == 25


def test_one_class_prediction_warns():
    """Check the warning when the model predicts one class on training data of several."""
    X, y = _step_data()
    with pytest.warns(UserWarning, match="predicts the single class"):
        ConsistentGradientBoostingClassifier(max_iter=1, learning_rate=0.01, early_stopping=False).fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"max_iter": 0}, "max_iter"),
        ({"learning_rate": 0}, "learning_rate"),
        ({"loss": "hinge"}, "loss"),
        ({"max_bins": 300}, "max_bins"),
        ({"cut_points": "oob"}, "cut_points"),
        ({"max_leaf_nodes": None, "max_depth": None}, "max_leaf_nodes"),
        ({"categorical_features": [5]}, "categorical_features"),
        ({"monotonic_cst": [1, 0]}, "monotonic_cst"),
        ({"early_stopping": "sometimes"}, "early_stopping"),
    ],
)
def test_bad_parameters_name_themselves(params, match):
    """Check that invalid parameters raise errors naming the parameter."""
    X = np.random.RandomState(0).uniform(size=(40, 3))
    y = np.arange(40) % 3
    with pytest.raises(ValueError, match=match):
        ConsistentGradientBoostingClassifier(**params).fit(X, y)


def test_bad_data_and_weights():
    """Check the errors for one class, infinity, bad sample weights and a wrong number of features."""
    X = np.random.RandomState(0).uniform(size=(40, 2))
    with pytest.raises(ValueError, match="class"):
        ConsistentGradientBoostingClassifier().fit(X, np.ones(40))
    with pytest.raises(ValueError, match="infinity"):
        ConsistentGradientBoostingClassifier().fit(np.where(X > 0.9, np.inf, X), np.arange(40) % 2)
    with pytest.raises(ValueError, match="sample_weight"):
        ConsistentGradientBoostingClassifier().fit(X, np.arange(40) % 2, sample_weight=-np.ones(40))
    model = _fit(X, np.arange(40) % 2, max_iter=5)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.ones((2, 3)))


def test_verbose_shows_a_progress_bar(capsys):
    """Check that verbose=1 draws a progress bar over the trees on stderr, and verbose=0 prints nothing."""
    X, y = _step_data()
    _fit(X, y, max_iter=5, early_stopping=False, verbose=1)
    assert "ConsistentGradientBoosting trees" in capsys.readouterr().err
    _fit(X, y, max_iter=5, early_stopping=False)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_split_gains_and_importances_equal_the_residual_sse_decrease():
    """Check every split's stored gain against the decrease of the residuals' SSE it makes, recomputed
    from the training rows routed by the raw thresholds, and importances as their normalised per-feature sum."""
    rng = np.random.RandomState(3)
    X = rng.uniform(size=(300, 4))
    y = np.digitize(2 * X[:, 0] + X[:, 1] + rng.normal(0, 0.2, 300), [0.8, 1.6, 2.4])
    model = _fit(X, y, loss="squared_error", early_stopping=False, max_iter=6, max_depth=3, min_samples_leaf=5,
                 random_state=0)
    unit = 1.0 / (1 << UNIT_BITS)
    F = np.full(300, float(model._f0))
    expected = np.zeros(4)

    def sse(r):
        return float(((r - r.mean()) ** 2).sum()) if r.size else 0.0

    for tree, step in zip(model.estimators_, model.step_sizes_, strict=True):
        residual = F * unit - y
        node = np.zeros(300, dtype=np.int64)
        members = {0: np.arange(300)}
        for n in range(tree.children_left.shape[0]):  # children come after their parent
            rows = members.get(n, np.empty(0, np.int64))
            if tree.children_left[n] < 0:
                continue
            go_left = X[rows, tree.feature[n]] <= tree.threshold[n]
            members[tree.children_left[n]], members[tree.children_right[n]] = rows[go_left], rows[~go_left]
            decrease = sse(residual[rows]) - sse(residual[rows[go_left]]) - sse(residual[rows[~go_left]])
            assert tree.gain[n] == pytest.approx(step * decrease, rel=1e-9, abs=1e-12)
            expected[tree.feature[n]] += step * decrease
        node = tree.apply(X)
        F = F + tree.value[node]
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum(), rtol=1e-9)
    assert np.argmax(model.feature_importances_) == 0
    assert model.feature_importances_[2:].sum() < 0.2


@pytest.mark.parametrize("n_classes", [2, 3, 5, 12])
def test_fast_all_threshold_gradient_equals_the_direct_formula(n_classes):
    """Check the one-exp-per-row gradient and hessian against the loss kernel's direct formula, extreme values
    of F included, and the gradient against a central difference of the loss itself."""
    rng = np.random.RandomState(n_classes)
    n = 4000
    F = np.rint(rng.uniform(-3, n_classes + 3, n) * (1 << UNIT_BITS)).astype(np.int64)
    F[:4] = [-(10**9), 10**9, -(1 << 40), 1 << 40]
    y = rng.randint(0, n_classes, n).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    g_ref, h_ref, g, h = (np.empty(n) for _ in range(4))
    _boosting._loss_kernel(1, F, y, w, n_classes, g_ref, h_ref)
    _boosting._all_threshold_gradient(F, y, w, n_classes, g, h)
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(h, h_ref, rtol=1e-8)
    # d loss / dF at a few rows, by a central difference of the weighted loss of that row alone.
    empty = np.empty(0)
    for i in range(4, 40):
        step = 1 << 8  # 2**-12 class units
        up, down = F[i:i + 1] + step, F[i:i + 1] - step
        diff = (_boosting._loss_kernel(1, up, y[i:i + 1], w[i:i + 1], n_classes, empty, empty)
                - _boosting._loss_kernel(1, down, y[i:i + 1], w[i:i + 1], n_classes, empty, empty))
        assert diff / (2 * step / (1 << UNIT_BITS)) == pytest.approx(g[i] / w[i], rel=1e-5, abs=1e-9)


def test_early_stopping_on_tiny_data_holds_out_rows_without_stratifying():
    """Check that early stopping on 12 rows of 3 classes (a hold-out of 2 rows, fewer than the classes)
    fits on an unstratified hold-out instead of raising scikit-learn's "test_size = 2 should be greater
    or equal to the number of classes", and that holding out every row is an error naming the parameter."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(12, 2))
    y = np.digitize(X[:, 0], [0.33, 0.66])
    assert np.bincount(y).min() >= 2  # the classes could be stratified; the 2-row hold-out cannot
    model = ConsistentGradientBoostingClassifier(early_stopping=True, min_samples_leaf=1, random_state=0).fit(X, y)
    assert model.do_early_stopping_ and len(model.validation_score_) == model.n_iter_ + 1
    assert model.is_consistent()
    assert set(model.predict(X)) <= set(model.classes_)
    with pytest.raises(ValueError, match="validation_fraction=0.95 holds out every one of the 12 rows"):
        ConsistentGradientBoostingClassifier(early_stopping=True, validation_fraction=0.95).fit(X, y)


def _sums_of_the_trees(model, X):
    """F(x) summed tree by tree from the fitted trees, independent of the compiled flat copy."""
    total = np.full(X.shape[0], model._f0, dtype=np.int64)
    for tree in model.estimators_:
        total += tree.value[tree.apply(X)]
    return total


def test_model_file_predicts_from_its_trees_not_from_an_edited_flat_copy(tmp_path, monkeypatch):
    """Check that a saved model whose flat copy of the trees (what predict walks) was edited in the file
    predicts from its trees (what is_consistent() certifies) once loaded: the copy is rebuilt on load."""
    from ensemble.model_files._model_file import load_model_file as load_model, save_model_file as save_model

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 2))
    y = np.digitize(X.sum(axis=1) + rng.normal(0, 0.1, 300), [0.7, 1.0, 1.3])
    model = _fit(X, y, max_iter=60, early_stopping=False, random_state=0)
    expected = model.predict(X)
    assert np.unique(expected).shape[0] > 2
    # A file holding an edited flat copy, as the state of an earlier version held one: every leaf value zero.
    edited = model.__getstate__()
    flat = list(model._flat)
    flat[-1] = np.zeros_like(flat[-1])
    edited["_flat"] = tuple(flat)
    monkeypatch.setattr(ConsistentGradientBoostingClassifier, "__getstate__", lambda self: edited)
    save_model(tmp_path / "edited.skops", model)
    monkeypatch.undo()
    loaded = load_model(tmp_path / "edited.skops")["model"]
    assert loaded.is_consistent()
    np.testing.assert_array_equal(loaded._sums(X), _sums_of_the_trees(loaded, X))
    np.testing.assert_array_equal(loaded.predict(X), expected)
    # And a model saved now keeps no flat copy at all; it loads predicting the same.
    assert "_flat" not in model.__getstate__() and hasattr(model, "_flat")  # the model itself keeps its copy
    save_model(tmp_path / "plain.skops", model)
    np.testing.assert_array_equal(load_model(tmp_path / "plain.skops")["model"].predict(X), expected)


# On 12 rows boosting may learn nothing usable, and says so; the tree count is what is tested.
@pytest.mark.filterwarnings("ignore:.* predicts the single class .*:UserWarning")
@pytest.mark.parametrize("n_rows", [12, 20, 60])
def test_tiny_data_counts_trees_by_cross_validation_under_a_cap(n_rows):
    """Check that below 30 rows the trees are counted by cross-validation too (they were 5,000 trees with
    half-way cuts, issue 39): at most small_data_cap(n) trees, a learning rate CV chose among the
    candidates, learned cut points, certified."""
    from ensemble.boosting._boosting import AUTO_RATE, RATE_FACTORS, small_data_cap

    rng = np.random.RandomState(n_rows)
    X = rng.uniform(size=(n_rows, 4))
    y = np.digitize(X[:, 0] + 0.2 * rng.normal(size=n_rows), [0.33, 0.66])
    model = ConsistentGradientBoostingClassifier(random_state=0).fit(X, y)
    assert model.do_early_stopping_ and 1 <= model.n_iter_ <= small_data_cap(n_rows) < 1000
    assert model.learning_rate_ in [AUTO_RATE * f for f in RATE_FACTORS]
    assert model.is_consistent()
    hgb_like = ConsistentGradientBoostingClassifier(early_stopping=False, max_iter=7, random_state=0).fit(X, y)
    assert hgb_like.n_iter_ <= 7 and hgb_like.learning_rate_ == AUTO_RATE


def test_cross_validation_tries_larger_trees_only_where_the_rows_allow_them():
    """Check the tree sizes cross-validation compares under max_leaf_nodes="auto": 31 leaves once two thirds of
    the rows can hold more than 15 leaves, the size used in every tree, and no choice without CV."""
    from ensemble.boosting._boosting import AUTO_RATE, RATE_FACTORS, larger_trees

    assert larger_trees(15, 5, 119.0) is None and larger_trees(15, 5, 120.0) == 31
    assert larger_trees(None, 5, 10_000.0) is None and larger_trees(3, 1, 6.0) == 7
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(1200, 3))
    y = np.digitize(np.sin(6 * X[:, 0]) * np.cos(5 * X[:, 1]) + 0.1 * rng.normal(size=1200), [-0.4, 0.0, 0.4])
    sizes = {}
    for n in (60, 1200):
        model = ConsistentGradientBoostingClassifier(random_state=0).fit(X[:n], y[:n])
        assert model.learning_rate_ in [AUTO_RATE * f for f in RATE_FACTORS] and model.is_consistent()
        most = max(int(np.sum(t.children_left == -1)) for t in model.estimators_)
        assert model.max_leaf_nodes_ in ((15,) if n == 60 else (15, 31))
        assert most <= model.max_leaf_nodes_
        sizes[n] = (model.max_leaf_nodes_, most)
    # This interaction needs more than 15 leaves a tree: cross-validation takes the larger trees and grows them.
    assert sizes[1200][0] == 31 and sizes[1200][1] > 15
    plain = ConsistentGradientBoostingClassifier(max_leaf_nodes=7, early_stopping=False, max_iter=5).fit(X, y)
    assert plain.max_leaf_nodes_ == 7 and not hasattr(plain, "_tree_size")


def test_a_setting_the_user_gives_is_the_setting():
    """Check cross-validation chooses only what is left at "auto": a learning rate or a tree size the user sets is
    the one every tree uses (learning_rate=0.05 ended as 0.01, max_leaf_nodes=15 as 31), the tree count still CV's."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(1200, 3))
    y = np.digitize(np.sin(6 * X[:, 0]) * np.cos(5 * X[:, 1]) + 0.1 * rng.normal(size=1200), [-0.4, 0.0, 0.4])
    given = ConsistentGradientBoostingClassifier(learning_rate=0.05, max_leaf_nodes=15, random_state=0).fit(X, y)
    assert given.do_early_stopping_ and given.learning_rate_ == 0.05 and given.max_leaf_nodes_ == 15
    assert max(int(np.sum(t.children_left == -1)) for t in given.estimators_) <= 15
    assert given.is_consistent()
    chosen = ConsistentGradientBoostingClassifier(random_state=0).fit(X, y)
    assert chosen.max_leaf_nodes_ == 31  # "auto" takes the larger trees on these rows: 15 above is the user's


def test_gradient_quanta_make_sums_exact_in_any_order():
    """Check that rounded gradients sum to the same float64 in any order and any grouping (the property
    the Dask fit relies on to grow the trees of one machine), and that without rounding they do not."""
    from ensemble.boosting._boosting import gradient_quanta, quantize

    rng = np.random.RandomState(0)
    grad, hess = rng.normal(size=100_000) * 8, rng.uniform(1e-6, 9, size=100_000)
    raw, raw_h = grad.copy(), hess.copy()
    quanta = gradient_quanta(1, 4, 100_000.0)
    quantize(grad, hess, quanta)
    # The compiled pass rounds as numpy does: to the nearest multiple, ties to even, hessians at least one quantum.
    np.testing.assert_array_equal(grad, np.rint(raw / quanta[0]) * quanta[0])
    np.testing.assert_array_equal(hess, np.maximum(np.rint(raw_h / quanta[1]), 1.0) * quanta[1])
    order = rng.permutation(grad.shape[0])
    assert np.sum(grad) == np.sum(grad[order]) == np.sum(grad[:37_000]) + np.sum(grad[37_000:])
    assert np.cumsum(hess)[-1] == np.sum(hess[order]) and hess.min() > 0
    assert np.abs(grad - raw).max() < 1e-6


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 120), st.lists(st.tuples(st.integers(0, 6), st.floats(0.05, 1.0)), min_size=1, max_size=80))
def test_the_step_rule_keeps_the_n_largest_jumps_within_the_spacing(d_eff, trees):
    """Check the budget of docs/design.md section 10 on random boosting runs: each tree splits some features
    new to the model and jumps a share of what it may (the cap, the allowance); features new to the model are
    closed once a full step no longer fits, and a tree the budget no longer admits is grown again on the split
    features only. After every tree the n largest jumps sum to at most g, n the features split (the invariant
    Theorem 10.1 certifies), recomputed here by sorting; and every jump respects the cap of its moment."""
    from ensemble.boosting._steps import _Budget

    g = 1 << 20
    budget, n, jumps = _Budget(g, d_eff), 0, []
    for new, share in trees:
        new = min(new, d_eff - n)
        if budget.closed_to_new(n):
            new = 0
        if not budget.admits(n + new):
            new = 0  # grown again on the split features
        assert budget.admits(n + new)
        limit = min(budget.cap(n), budget.allowance(n + new))
        jump = max(2, int(share * limit))
        assert 2 <= jump <= limit <= max(g // max(n, budget.planned(n) if not budget.closed_to_new(n) else 1), 2)
        budget.add(jump)
        jumps.append(jump)
        n += new
        assert sum(sorted(jumps)[-max(n, 1):]) <= g


def test_once_new_features_are_closed_each_tree_takes_the_equal_share_of_the_boundaries_it_keeps():
    """Check the budget after closure (100 features): 40 trees on 10 features take full steps g / 32; a tree
    bringing the features split to 32 leaves no full step for a 33rd, which closes them; the cap is then the
    equal share g / 32 of the 32 boundaries, not the g / 64 sized for features that can no longer enter, the
    allowance lets every later tree take it, and the 32 largest jumps still sum to at most g."""
    from ensemble.boosting._steps import _Budget

    g = 1 << 20
    budget = _Budget(g, 100)
    for _ in range(40):
        assert not budget.closed_to_new(10) and budget.cap(10) == budget.open_cap(10) == g // 32
        budget.add(min(budget.cap(10), budget.allowance(10)))
    assert budget.admits(32) and budget.allowance(32) == g // 32
    budget.add(g // 32)
    assert budget.closed_to_new(32) and budget.cap(32) == g // 32 == 2 * budget.open_cap(32)
    for _ in range(200):
        jump = min(budget.cap(32), budget.allowance(32))
        assert jump == g // 32
        budget.add(jump)
        assert sum(budget.jumps[-32:]) <= g


def test_steps_are_sized_for_the_features_the_trees_split_not_for_every_feature():
    """Check that on 60 features of which 4 carry the classes the trees' jumps exceed the worst case g / d_eff
    (they are sized for the features split, at least PLANNED_MIN of them), yet the model is certified: the n
    largest jumps sum to at most g, n its boundaries; and boosting never stopped on the bound."""
    from ensemble.boosting._steps import PLANNED_MIN

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(3000, 60))
    y = np.digitize(X[:, :4].sum(axis=1) + 0.2 * rng.normal(size=3000), [1.4, 1.8, 2.2, 2.6])
    model = ConsistentGradientBoostingClassifier(random_state=0, max_iter=200, early_stopping=False).fit(X, y)
    g = 1 << UNIT_BITS
    # Under the worst-case rule every tree's value range was at most g / d_eff + 1 units.
    widest = max(int(np.ptp(t.value[t.children_left == -1])) for t in model.estimators_)
    assert g // 60 + 1 < widest <= g // PLANNED_MIN + 1
    assert model.is_consistent() and model.consistency_bound_ <= 1 and not model._stopped_by_bound
