"""Tests of OTreeBagger.fit(sample_weight=...): equivalences with repeated and dropped rows, and bad weights."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ensemble import OTreeBagger


def _data(n=60, n_classes=4, seed=0):
    """2D points in the unit square on a 0.05 lattice, with ordinal labels from a noisy sum."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 21, size=(n, 2)) * 0.05
    score = X.sum(axis=1) + rng.normal(0, 0.3, n)
    y = np.searchsorted(np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]), score) + 1
    return X, y


def _grid():
    """Query points covering the unit square, between and on the lattice."""
    g = np.linspace(-0.1, 1.1, 49)
    return np.array([[a, b] for a in g for b in g])


def _recount(model, X, y, w, union):
    """Counts of every group recomputed from the raw rows: each row's region gets its weight."""
    out = []
    for group, mult in zip(model.groups_, union):
        region = group.partition.locate(group.leaves(X))
        counts = np.zeros_like(group.counts)
        keep = mult > 0
        np.add.at(counts, (region[keep], np.searchsorted(model.classes_, y[keep])), w[keep])
        out.append(counts)
    return out


def _assert_same_models(a, b, scale=1.0):
    """Same predictions everywhere, same labels per group, counts of b = scale * counts of a."""
    grid = _grid()
    np.testing.assert_array_equal(a.predict(grid), b.predict(grid))
    np.testing.assert_array_equal(a.predict_proba(grid), b.predict_proba(grid))
    for ga, gb in zip(a.groups_, b.groups_):
        for ta, tb in zip(ga.trees, gb.trees):
            np.testing.assert_array_equal(ta.tree_.apply(grid), tb.tree_.apply(grid))
        if ga.counts is not None:
            np.testing.assert_allclose(gb.counts, scale * ga.counts)
            np.testing.assert_array_equal(ga.labels, gb.labels)


@pytest.mark.parametrize(
    "params",
    [
        {"n_estimators": 4, "group_size": 2},
        {"n_estimators": 3, "group_size": 1},
        {"n_estimators": 1, "group_size": 1},
        {"n_estimators": 3, "group_size": 1, "relabel": False},
    ],
)
def test_integer_weights_equal_repeated_rows(params):
    """Check that integer weights give the model of the data with each row repeated that often (no bootstrap)."""
    X, y = _data()
    w = np.random.RandomState(1).randint(1, 4, size=X.shape[0])
    kwargs = dict(params, bootstrap=False, max_features=1, relabel_params={"relabel_counts": "train"}, random_state=0)
    weighted = OTreeBagger(**kwargs).fit(X, y, sample_weight=w)
    repeated = OTreeBagger(**kwargs).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    _assert_same_models(weighted, repeated)
    for ia, ib in zip(weighted.groups_info_, repeated.groups_info_):
        assert ia["objective"] == pytest.approx(ib["objective"], rel=1e-12, nan_ok=True)
    assert weighted.is_consistent() or not weighted.relabel


@pytest.mark.parametrize("relabel_counts", ["train", "bootstrap"])
def test_zero_weight_rows_change_nothing_under_bootstrap(relabel_counts):
    """Check that rows of weight 0 moved far away with other labels leave trees, counts and votes unchanged."""
    X, y = _data(n=80)
    w = np.ones(X.shape[0])
    zero = np.arange(0, 80, 4)
    w[zero] = 0.0
    X_moved, y_moved = X.copy(), y.copy()
    # Far outside the data and with reversed labels: any leak would move splits, counts or votes.
    X_moved[zero] = X[zero] + 5.0
    y_moved[zero] = 5 - y[zero]
    kwargs = dict(n_estimators=6, group_size=3, relabel_params={"relabel_counts": relabel_counts}, random_state=3)
    a = OTreeBagger(**kwargs).fit(X, y, sample_weight=w)
    b = OTreeBagger(**kwargs).fit(X_moved, y_moved, sample_weight=w)
    _assert_same_models(a, b)
    assert a.is_consistent() and b.is_consistent()


def test_zero_weight_rows_equal_dropped_rows_without_bootstrap():
    """Check that weight 0 equals dropping the rows when there is no bootstrap (deterministic)."""
    X, y = _data(n=70)
    w = np.ones(X.shape[0])
    w[::3] = 0.0
    kwargs = dict(n_estimators=4, group_size=2, bootstrap=False, max_features=1, random_state=0)
    a = OTreeBagger(**kwargs).fit(X, y, sample_weight=w)
    b = OTreeBagger(**kwargs).fit(X[w > 0], y[w > 0])
    _assert_same_models(a, b)


def test_counts_are_the_weighted_counts_of_all_rows():
    """Check that with relabel_counts='train' each group's counts equal an independent weighted recount."""
    X, y = _data(n=50, seed=4)
    w = np.random.RandomState(0).choice([0.0, 0.1, 1 / 3, 1.0, 2.5], size=X.shape[0])
    model = OTreeBagger(n_estimators=4, group_size=2, random_state=1, relabel_params={'relabel_counts': "train"})
    model.fit(X, y, sample_weight=w)
    union = [np.ones(X.shape[0])] * len(model.groups_)
    for counts, group in zip(_recount(model, X, y, w, union), model.groups_):
        np.testing.assert_allclose(group.counts, counts, rtol=1e-12, atol=1e-12)
    assert model.is_consistent()


def _multiplicities(tree, y_idx, w, base):
    """Each row's bootstrap multiplicity in ``tree``, decoded from the root's weighted class counts.

    Row i weighs base**-i, so a class total sum_i m_i base**-i (exact in float64) holds
    the multiplicities m_i < base as its digits; rows of weight 0 read as 0.
    """
    top = len(w) - 1
    mult = np.zeros(len(w), dtype=np.int64)
    for c, total in enumerate(tree.tree_.value[0]):
        digits = int(round(total * float(base) ** top))
        for i in np.flatnonzero((y_idx == c) & (w > 0)):
            mult[i] = digits // base ** (top - i) % base
    return mult


@pytest.mark.parametrize("random_state", [1, 2])
def test_bootstrap_counts_are_the_weighted_union_of_the_bootstrap_samples(random_state):
    """Check that relabel_counts='bootstrap' counts each row drawn by some tree of the group once, times its weight."""
    X, y = _data(n=16, seed=4)
    base = 8  # a multiplicity of 8 or more in 16 draws is rare; the decoded totals are checked below
    w = float(base) ** -np.arange(16)
    w[[3, 10]] = 0.0
    model = OTreeBagger(n_estimators=6, group_size=3, random_state=random_state, relabel_params={'relabel_counts': "bootstrap"})
    model.fit(X, y, sample_weight=w)
    y_idx = np.searchsorted(model.classes_, y)
    union = []
    for group in model.groups_:
        mult = [_multiplicities(tree, y_idx, w, base) for tree in group.trees]
        for tree, m in zip(group.trees, mult):
            # The decoding is exact: the multiplicities rebuild the tree's root counts.
            np.testing.assert_array_equal(np.bincount(y_idx, weights=m * w, minlength=4), tree.tree_.value[0])
            assert m[w > 0].sum() <= 16
        union.append(np.sum(mult, axis=0))
    assert any(np.any((u == 0) & (w > 0)) for u in union), "every row was drawn: the test shows nothing"
    for counts, group in zip(_recount(model, X, y, w, union), model.groups_):
        np.testing.assert_array_equal(group.counts, counts)


@pytest.mark.parametrize("empty_regions", ["leaves", "paper"])
def test_scaled_weights_and_penalties_give_the_same_model(empty_regions):
    """Check that (w, C1, C2) and (3 w, 3 C1, 3 C2) give the same trees and votes (counts times 3) without
    bootstrap: the problem is homogeneous in the weights, the leaves' prior and the penalties (the paper's
    default penalties are in units of one row of weight 1, so scaling the weights alone moves the balance
    between them and the prior)."""
    X, y = _data(n=60, seed=2)
    w = np.random.RandomState(2).choice([0.5, 1.0, 2.0, 1 / 3], size=X.shape[0])
    kwargs = dict(n_estimators=4, group_size=2, bootstrap=False, max_features=1, random_state=0)
    a = OTreeBagger(**kwargs, relabel_params={"empty_regions": empty_regions, "C1": 1 / 512, "C2": 1 / 448})
    b = OTreeBagger(**kwargs, relabel_params={"empty_regions": empty_regions, "C1": 3 / 512, "C2": 3 / 448})
    a.fit(X, y, sample_weight=w)
    b.fit(X, y, sample_weight=3 * w)
    _assert_same_models(a, b, scale=3.0)


# Random weights can leave one class dominant enough that nothing else is predicted; still consistent.
@pytest.mark.filterwarnings("ignore:.* predicts the single class .*:UserWarning")
@given(
    weights=st.lists(st.sampled_from([0.0, 0.1, 0.2, 1 / 3, 0.5, 1.0, 2.0, 7.0]), min_size=40, max_size=40),
    seed=st.integers(0, 1000),
    group_size=st.integers(1, 3),
    relabel_counts=st.sampled_from(["train", "bootstrap"]),
)
def test_weighted_models_are_consistent(weights, seed, group_size, relabel_counts):
    """Check that every model fitted with float weights (0.1, 1/3, ...) is consistent, graph cut included."""
    X, y = _data(n=40, seed=seed)
    w = np.asarray(weights)
    if not np.any(w > 0):
        w[0] = 1.0
    model = OTreeBagger(
        n_estimators=2 * group_size, group_size=group_size, random_state=seed, relabel_params={'relabel_counts': relabel_counts}).fit(X, y, sample_weight=w)
    assert model.is_consistent()
    assert set(model.predict(_grid())) <= set(model.classes_)
    for group in model.groups_:
        assert group.counts.sum() <= w.sum() * (1 + 1e-12)


@pytest.mark.parametrize("kind", ["uniform", "balanced"])
def test_arbitrary_float_weights_fit_with_graphcut_and_agree_with_cbc(kind):
    """Check that weights without a small common denominator (random, or scikit-learn's balanced
    class weights) fit under the graph cut, at CBC's optimum group by group."""
    from sklearn.utils.class_weight import compute_sample_weight

    X, y = _data(n=60, seed=5)
    if kind == "uniform":
        w = np.random.RandomState(0).uniform(0.1, 3.0, size=X.shape[0])
    else:
        w = compute_sample_weight("balanced", y)
    cut = OTreeBagger(n_estimators=4, group_size=2, random_state=0).fit(X, y, sample_weight=w)
    cbc = OTreeBagger(n_estimators=4, group_size=2, solver="cbc", random_state=0).fit(X, y, sample_weight=w)
    assert cut.is_consistent() and cbc.is_consistent()
    for ours, reference in zip(cut.groups_info_, cbc.groups_info_):
        assert ours["status"] == "optimal" and reference["status"] == "optimal"
        assert ours["objective"] == pytest.approx(reference["objective"], rel=1e-9, abs=1e-12)


def test_classes_come_from_y_including_zero_weight_rows():
    """Check that a class seen only in rows of weight 0 stays in classes_ (as in scikit-learn) and is never voted."""
    X, y = _data(n=40, n_classes=3)
    X = np.vstack([X, [[0.5, 0.5]]])
    y = np.append(y, 9)
    w = np.append(np.ones(40), 0.0)
    model = OTreeBagger(n_estimators=4, group_size=2, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(model.classes_, [1, 2, 3, 9])
    assert 9 not in model.predict(_grid())
    assert model.predict_proba(_grid()).shape[1] == 4
    assert model.is_consistent()


def test_sample_weight_none_equals_unit_weights():
    """Check that sample_weight=None and all-ones weights give the same model (bootstrap on)."""
    X, y = _data()
    kwargs = dict(n_estimators=4, group_size=2, random_state=7)
    a = OTreeBagger(**kwargs).fit(X, y)
    b = OTreeBagger(**kwargs).fit(X, y, sample_weight=np.ones(X.shape[0]))
    _assert_same_models(a, b)


@pytest.mark.parametrize(
    "w, match",
    [
        (lambda n: -np.ones(n), "sample_weight must be non-negative"),
        (lambda n: np.full(n, np.nan), "sample_weight must be finite"),
        (lambda n: np.full(n, np.inf), "sample_weight must be finite"),
        (lambda n: np.ones(n - 1), "sample_weight has 29 entries but there are 30 samples"),
        (lambda n: np.ones((n, 2)), r"sample_weight must be a 1D array .* got an array of shape \(30, 2\)"),
        (lambda n: np.zeros(n), "sample_weight must contain at least one non-zero weight"),
    ],
    ids=["negative", "nan", "inf", "length", "2d", "all-zero"],
)
def test_bad_sample_weight_raises(w, match):
    """Check that negative, NaN, infinite, misshapen and all-zero weights raise a ValueError naming them."""
    X, y = _data(n=30)
    with pytest.raises(ValueError, match=match):
        OTreeBagger(n_estimators=2, group_size=1).fit(X, y, sample_weight=w(X.shape[0]))
