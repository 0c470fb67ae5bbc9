"""The certified forest on its constrained features' monotone index (``monotonic_space``)."""

# These tests are about the pointwise machinery of projected (or monotone) models, which the data's
# resolution (docs/design.md section 13) does not certify: their models are fitted for the pointwise notion.

from dataclasses import replace

import numpy as np
import pytest

from ensemble import ConsistentForestClassifier
from ensemble.plots._grid import find_jumps
from ensemble.model_files._model_file import load_model_file, save_model_file

from oracles import grid_consistent_and_monotone
from test_ensemble_monotone import _dominance_violations, _index_data, _two_constrained, _wrong_way_on_lines

CST = np.array([1, -1, 1, 0, 0, 0, 0, 0])


def _with_x1_flipped(model):
    """A copy of an index forest whose index takes x1 the wrong way round: x1 raises it (and the class),
    against its -1 constraint."""
    broken = ConsistentForestClassifier(**model.get_params())
    vars(broken).update(vars(model))
    weights = model.space_.weights.copy()
    weights[1] = -weights[1]
    broken.space_ = replace(model.space_, weights=weights)
    return broken


@pytest.fixture(scope="module")
def index_forest():
    X, y = _index_data()
    return X, y, ConsistentForestClassifier(consistency="pointwise", n_estimators=40, monotonic_cst=CST, monotonic_space="index",
                                            random_state=0).fit(X, y)


def test_forest_index_combines_the_constrained_features_with_their_signs(index_forest):
    """Check the index's structure and that the certificates, the grid oracle in z and probes in x agree."""
    X, y, model = index_forest
    space = model.space_
    assert model.monotonic_space_ == "index" and model.monotonic_space_scores_ is None
    assert list(space.projected) == [0, 1, 2] and list(space.kept) == [3, 4, 5, 6, 7]
    assert space.n_components == 1
    assert np.array_equal(np.sign(space.weights[:, 0]), CST[:3])
    assert model.is_monotone() and model.is_consistent()
    assert _wrong_way_on_lines(model, X, CST, np.random.RandomState(1), n_lines=30) == 0
    assert _dominance_violations(model, X, CST, np.random.RandomState(2)) == 0
    # Per-feature attributes speak of the features, not of the index's axes.
    assert model.feature_importances_.shape == (8,) and np.isclose(model.feature_importances_.sum(), 1.0)
    assert np.all(model.feature_importances_[:3] > 0)
    assert model.threshold_multiplicity_.shape == (8,)
    assert model.apply(X[:5]).shape == (5, model.n_estimators_)
    # A useful model: it learned the data's direction.
    assert np.mean(np.abs(model.predict(X) - y)) < 0.5


def test_forest_index_cumulative_probabilities_follow_the_constraints(index_forest):
    """Check P(class >= k) never goes the wrong way along lines parallel to each constrained feature."""
    X, _, model = index_forest
    rng = np.random.RandomState(4)
    grid = np.linspace(-0.1, 1.1, 241)
    for f in np.flatnonzero(CST):
        for _ in range(10):
            line = np.repeat(X[rng.randint(X.shape[0])][None, :], grid.shape[0], axis=0)
            line[:, f] = grid
            at_least = np.cumsum(model.predict_proba(line)[:, ::-1], axis=1)[:, ::-1][:, 1:]
            assert (np.diff(at_least, axis=0) * CST[f]).min() >= -1e-12


def test_forest_index_built_to_fail_is_caught(index_forest):
    """Check a forest whose index takes x1 the wrong way round fails is_monotone, the grid oracle and the probes."""
    X, _, model = index_forest
    broken = _with_x1_flipped(model)
    assert model.is_monotone()
    assert not broken.is_monotone()
    assert _wrong_way_on_lines(broken, X, CST, np.random.RandomState(1), n_lines=30) > 0


@pytest.mark.slow
def test_forest_index_exact_grid_oracle_in_its_space():
    """Check certificates against the exact grid of every threshold in z (index + one free feature), and the
    same oracle on a model built to fail (x1's weight flipped)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 3))
    y = np.digitize(X[:, 0] - X[:, 1] + np.sin(4 * X[:, 2]) + 0.2 * rng.normal(size=300), [-0.5, 0.0, 0.5])
    cst = np.array([1, -1, 0])
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=30, monotonic_cst=cst, monotonic_space="index",
                                       random_state=0).fit(X, y)
    assert model.is_monotone() and model.is_consistent()
    assert grid_consistent_and_monotone(model, cst) == (True, True)
    broken = _with_x1_flipped(model)
    assert not broken.is_monotone()
    assert grid_consistent_and_monotone(broken, cst)[0] is False


@pytest.mark.parametrize("checked, expected", [([1, -1], True), ([1, 0], True), ([0, -1], True),
                                               ([1, 1], False), ([-1, 1], False), ([0, 1], False)])
def test_forest_index_checks_other_constraints_exactly(checked, expected):
    """Check is_monotone(cst) on a 2-feature index forest, including constraints that ask the index both ways
    (only a model constant along it meets them), against line probes along each checked feature."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 2))
    y = np.digitize(X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=300), [-0.4, 0.0, 0.4])
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=30, monotonic_cst=[1, -1], monotonic_space="index",
                                       random_state=0).fit(X, y)
    assert model.is_monotone(checked) is expected
    assert grid_consistent_and_monotone(model, checked)[0] is expected
    assert (_wrong_way_on_lines(model, X, np.array(checked), np.random.RandomState(1), n_lines=30) == 0) is expected


@pytest.mark.parametrize("kind, expected", [("sum", "index"), ("min", "axes")])
def test_forest_monotonic_space_auto_keeps_the_forest_that_errs_less_out_of_bag(kind, expected):
    """Check monotonic_space='auto': both forests grown, the smaller out-of-bag error kept (the index where the
    constraints act through one score, the axes where the class follows the smaller of two), the kept model
    identical to the one fitted in that space alone, and better on fresh data."""
    X, y = _two_constrained(kind)
    cst = np.r_[1, 1, np.zeros(6, int)]
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=40, monotonic_cst=cst, random_state=0).fit(X, y)
    scores = model.monotonic_space_scores_
    assert set(scores) == {"index", "axes"}
    assert model.monotonic_space_ == expected == min(scores, key=lambda k: (scores[k], k != "index"))
    assert (model.space_ is None) == (expected == "axes")
    alone = {space: ConsistentForestClassifier(consistency="pointwise", n_estimators=40, monotonic_cst=cst, monotonic_space=space,
                                               random_state=0).fit(X, y) for space in ("index", "axes")}
    X_test, y_test = _two_constrained(kind, 3000, seed=1)
    assert np.array_equal(model.predict(X_test), alone[expected].predict(X_test))
    assert np.array_equal(model.predict_proba(X_test), alone[expected].predict_proba(X_test))
    assert model.n_estimators_ == alone[expected].n_estimators_
    other = "axes" if expected == "index" else "index"
    mae = lambda m: np.mean(np.abs(m.predict(X_test) - y_test))  # noqa: E731
    assert mae(model) < mae(alone[other])
    assert model.is_monotone() and model.is_consistent()


# Forests of 10 trees need not be certified: the space each one takes is what is tested.
@pytest.mark.filterwarnings("ignore:.* is not certified consistent.*:UserWarning")
def test_forest_monotonic_space_where_nothing_or_one_space_applies():
    """Check one constraint gives no space, missing values in a constrained feature keep the axes, no bootstrap
    (no out-of-bag rows) takes the index, and 'axes' grows the trees on the features."""
    X, y = _index_data(200)
    one = ConsistentForestClassifier(consistency="pointwise", n_estimators=10, monotonic_cst=np.r_[1, np.zeros(7, int)],
                                     random_state=0).fit(X, y)
    assert one.monotonic_space_ is None and one.space_ is None and one.monotonic_space_scores_ is None
    holes = X.copy()
    holes[::7, 1] = np.nan
    missing = ConsistentForestClassifier(consistency="pointwise", n_estimators=10, criterion="ogini", monotonic_cst=CST,
                                         random_state=0).fit(holes, y)
    assert missing.monotonic_space_ == "axes" and missing.space_ is None and missing.is_monotone()
    with pytest.warns(UserWarning, match="monotonic_space='index' cannot form the monotone index .a constrained"):
        ConsistentForestClassifier(consistency="pointwise", n_estimators=10, criterion="ogini", monotonic_cst=CST, monotonic_space="index",
                                   random_state=0).fit(holes, y)
    against = np.r_[-1, 1, -1, np.zeros(5, int)]  # every constrained feature against the data's direction
    with pytest.warns(UserWarning, match="no constrained feature follows its direction"):
        backwards = ConsistentForestClassifier(consistency="pointwise", n_estimators=10, monotonic_cst=against, monotonic_space="index",
                                               random_state=0).fit(X, y)
    assert backwards.monotonic_space_ == "axes" and backwards.is_monotone()
    no_bag = ConsistentForestClassifier(consistency="pointwise", bootstrap=False, max_features=0.5, monotonic_cst=CST,
                                        random_state=0).fit(X, y)
    assert no_bag.monotonic_space_ == "index" and no_bag.monotonic_space_scores_ is None
    assert no_bag.is_monotone() and no_bag.is_consistent()
    axes = ConsistentForestClassifier(consistency="pointwise", n_estimators=10, monotonic_cst=CST, monotonic_space="axes",
                                      random_state=0).fit(X, y)
    assert axes.monotonic_space_ == "axes" and axes.space_ is None
    assert _wrong_way_on_lines(axes, X, CST, np.random.RandomState(1), n_lines=30) == 0


@pytest.mark.parametrize("transform", [lambda v: v * 1e-10, lambda v: v * 1e9, lambda v: v + 1e9])
def test_forest_index_in_odd_units(transform):
    """Check the index forest predicts the same in odd units of its constrained features, certified."""
    X, y = _index_data()
    odd = X.copy()
    odd[:, :3] = transform(X[:, :3])
    make = lambda: ConsistentForestClassifier(consistency="pointwise", n_estimators=30, monotonic_cst=CST,  # noqa: E731
                                              monotonic_space="index", random_state=0)
    base, scaled = make().fit(X, y), make().fit(odd, y)
    X_test, _ = _index_data(2000, seed=5)
    odd_test = X_test.copy()
    odd_test[:, :3] = transform(X_test[:, :3])
    assert np.mean(base.predict(X_test) == scaled.predict(odd_test)) >= 0.99
    assert scaled.is_monotone() and scaled.is_consistent()


def test_forest_index_with_resolution_certifies_it():
    """Check an index forest fitted with a resolution certifies it (mapped onto the index) and not a far larger one."""
    X, y = _index_data(300)
    model = ConsistentForestClassifier(consistency="pointwise", monotonic_cst=CST, monotonic_space="index", resolution=1e-4,
                                       random_state=0).fit(X, y)
    assert not model._given_up_resolution
    assert model.is_consistent(resolution=1e-4) and model.is_monotone()
    assert not model.is_consistent(resolution=1e-3)


def test_forest_index_in_2d_has_no_jump_on_the_exact_walk(tmp_path):
    """Check the exact 2D walk (through the index's oblique boundaries) finds no jump, and a saved model
    predicts the same once loaded."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(400, 2))
    y = np.digitize(2 * X[:, 0] - X[:, 1] + 0.2 * rng.normal(size=400), [0.0, 0.5, 1.0])
    model = ConsistentForestClassifier(consistency="pointwise", monotonic_cst=[1, -1], monotonic_space="index", random_state=0).fit(X, y)
    found = find_jumps(model, X, grid_resolution=60)
    assert found.exact and found.n_jumps == 0
    path = tmp_path / "index.skops"
    save_model_file(path, model)
    assert np.array_equal(load_model_file(path)["model"].predict(X), model.predict(X))


@pytest.mark.parametrize("method", ["envelope", "isotonic", "basic"])
@pytest.mark.parametrize("criterion", ["squared_error", "ogini"])
def test_forest_index_under_every_monotonic_method_and_criterion(method, criterion):
    """Check every way of making the trees monotone works on the index (constraints, leaf counts and
    feature counts carried to z): certificates, the exact grid oracle in z and line probes in x agree."""
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(150, 3))
    y = np.digitize(X[:, 0] - X[:, 1] + np.sin(4 * X[:, 2]) + 0.2 * rng.normal(size=150), [-0.5, 0.0, 0.5])
    cst = np.array([1, -1, 0])
    # Half-way cuts: 24 trees then certify any forest on 2 axes with 4 classes (B >= d (K - 1)).
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=24, cut_points="half", criterion=criterion, monotonic_cst=cst,
                                       monotonic_method=method, monotonic_space="index", random_state=0).fit(X, y)
    assert model.space_ is not None and model.is_monotone() and model.is_consistent()
    assert grid_consistent_and_monotone(model, cst) == (True, True)
    assert _wrong_way_on_lines(model, X, cst, np.random.RandomState(2), n_lines=15) == 0
    assert model.feature_importances_.shape == (3,)


def _ulp_lattice_data(n=100, seed=5):
    """x0 on nine adjacent floats above 3, x1 at an offset of 1e9; five classes falling in both."""
    lattice = 3.0 + np.arange(9) * np.spacing(3.0)
    rng = np.random.RandomState(seed)
    step = rng.randint(0, 9, n)
    x1 = 1e9 + rng.uniform(size=n) * 100
    score = -step / 8 - (x1 - 1e9) / 100 + 0.2 * rng.normal(size=n)
    y = np.searchsorted(np.quantile(score, [0.2, 0.4, 0.6, 0.8]), score)
    return np.column_stack([lattice[step], x1]), y, lattice


def _largest_one_float_step(model, lattice, n_lines=200):
    """Largest class change between adjacent floats of x0 (below, across and above its lattice) at many x1."""
    x0 = np.concatenate([[np.nextafter(lattice[0], -np.inf)], lattice, [np.nextafter(lattice[-1], np.inf)]])
    worst = 0
    for x1 in np.linspace(1e9 - 10, 1e9 + 110, n_lines):
        classes = model.predict(np.column_stack([x0, np.full(x0.shape[0], x1)])).astype(int)
        worst = max(worst, int(np.abs(np.diff(classes)).max()))
    return worst


def test_forest_index_certificate_covers_one_float_step_of_a_feature():
    """One float of x0 is an eighth of its spread: the index moves across many thresholds at once.

    "auto" keeps the features' axes there; an index asked for by name is certified only if its
    certificate, which counts the thresholds one float step can cross, holds. The same model
    checked without the float step in the index (the certificate of before) claims consistency,
    and the walk between adjacent floats refutes it.
    """
    X, y, lattice = _ulp_lattice_data()
    auto = ConsistentForestClassifier(monotonic_cst=[-1, -1], random_state=5, n_jobs=1).fit(X, y)
    assert auto.monotonic_space_ == "axes"
    assert auto.is_consistent(notion="pointwise") and auto.is_monotone()
    assert _largest_one_float_step(auto, lattice) <= 1
    with pytest.warns(UserWarning, match="not certified"):
        index = ConsistentForestClassifier(monotonic_cst=[-1, -1], monotonic_space="index", random_state=5,
                                           n_jobs=1).fit(X, y)
    assert index.monotonic_space_ == "index"
    assert not index.is_consistent(notion="pointwise")
    assert _largest_one_float_step(index, lattice) >= 2
    index._float_reach = None  # built to fail: the index's thresholds as if one float moved it by nothing
    assert index.is_consistent(notion="pointwise")


def test_forest_index_is_clipped_to_the_training_range():
    """Beyond the training range the index stops moving: far points predict as the range's ends."""
    X, y = _index_data(300)
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=30, monotonic_cst=CST,
                                       monotonic_space="index", random_state=0).fit(X, y)
    far = X[:20].copy()
    edge = X[:20].copy()
    far[:, 0] = 1e300
    edge[:, 0] = X[:, 0].max()
    assert np.array_equal(model.predict(far), model.predict(edge))
    assert model._float_reach[0] > 0 and not model._float_reach[1:].any()


def test_an_index_forest_is_checked_for_the_notion_it_claims():
    """Check is_consistent() without arguments checks the claimed notion: an index forest fitted for "data" claims
    and proves "pointwise" only, and the command line's words say so."""
    from ensemble.certificates._certificates import VERDICTS, certified_notion

    X, y = _index_data(300)
    with pytest.warns(UserWarning, match="pointwise only"):
        model = ConsistentForestClassifier(n_estimators=30, monotonic_cst=CST, monotonic_space="index",
                                           random_state=0).fit(X, y)
    assert model.consistency == "data" and model.consistency_notion_ == "pointwise"
    assert model.is_consistent() and model.is_consistent(notion="pointwise")
    assert not model.is_consistent(notion="data")
    assert VERDICTS[certified_notion(model)] == "consistent pointwise only"
