"""Gap-drawn thresholds: a group's trees share two places per gap of its values (docs/design.md section 5)."""

import numpy as np
import pytest
from scipy import stats

from ensemble import OTreeBagger


def _lattice(n, n_features, seed, levels=6):
    """Integer features of few values (every gap is split by several trees) with ordinal labels."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, levels, size=(n, n_features)).astype(float)
    score = X.sum(axis=1) + rng.normal(0, 0.8, n)
    y = np.searchsorted(np.quantile(score, [0.25, 0.5, 0.75]), score) + 1
    return X, y


def _thresholds_per_gap(group, X):
    """For every (feature, gap of the training values): the trees that split inside it and their places."""
    places = {}
    for t, tree in enumerate(group.trees):
        inner = tree.tree_.children_left >= 0
        for f, threshold in zip(tree.tree_.feature[inner], tree.tree_.threshold[inner], strict=True):
            values = np.unique(X[:, f])
            gap = int(np.searchsorted(values, threshold, side="right"))
            places.setdefault((int(f), gap), []).append((t, float(threshold)))
    return places


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_group_splits_each_gap_at_two_places_and_parts_it_where_two_trees_split_it(seed):
    """Check at most two places per gap, two distinct ones wherever two trees split it, one per tree."""
    X, y = _lattice(300, 3, seed)
    # Without bootstrap the group's values are the training values.
    model = OTreeBagger(n_estimators=10, group_size=5, bootstrap=False, max_features=1, thresholds="gap",
                        random_state=seed).fit(X, y)
    shared = 0
    for group in model.groups_:
        for (f, gap), cuts in _thresholds_per_gap(group, X).items():
            values = np.unique(X[:, f])
            assert 0 < gap < values.shape[0], "a threshold outside the training values' range"
            trees = {t for t, _ in cuts}
            distinct = {p for _, p in cuts}
            assert len(distinct) <= 2, (f, gap, cuts)
            # A tree's nodes inside one gap share its place.
            for t in trees:
                assert len({p for u, p in cuts if u == t}) == 1
            if len(trees) >= 2:
                shared += 1
                assert len(distinct) == 2, (f, gap, cuts)
            assert all(values[gap - 1] <= p < values[gap] for p in distinct)
    assert shared > 5, "the data should make several trees split one gap"


def test_the_places_keep_every_tree_rows_on_their_sides():
    """Check that each gap tree routes the training rows as its midpoint twin (the same grown tree)."""
    X, y = _lattice(250, 3, 7)
    # Every row in every tree's sample: a row left out of a bootstrap may change sides, as it should.
    params = dict(n_estimators=6, group_size=3, bootstrap=False, max_features=1, random_state=3)
    gap = OTreeBagger(thresholds="gap", **params).fit(X, y)
    mid = OTreeBagger(thresholds="midpoint", **params).fit(X, y)
    moved = 0
    for g_gap, g_mid in zip(gap.groups_, mid.groups_, strict=True):
        for a, b in zip(g_gap.trees, g_mid.trees, strict=True):
            np.testing.assert_array_equal(a.apply(X), b.apply(X))
            moved += int(np.sum(a.tree_.threshold != b.tree_.threshold))
    assert moved > 0


def test_each_place_is_uniform_inside_its_gap():
    """Check the law of a threshold's place inside its training gap: uniform, as a draw of its own."""
    fractions = []
    for seed in range(4):
        X, y = _lattice(300, 3, 10 + seed, levels=5)
        model = OTreeBagger(n_estimators=12, group_size=3, bootstrap=False, max_features=1, thresholds="gap",
                            random_state=seed).fit(X, y)
        for group in model.groups_:
            for (f, gap), cuts in _thresholds_per_gap(group, X).items():
                values = np.unique(X[:, f])
                lo, hi = values[gap - 1], values[gap]
                # One place per (tree, gap): the draws, not the nodes that reuse them.
                fractions += [(p - lo) / (hi - lo) for p in dict(cuts).values()]
    assert len(fractions) > 100
    assert stats.kstest(fractions, "uniform").pvalue > 1e-3
    # Midpoints (or fixed places) would fail this.
    assert stats.kstest(np.full(len(fractions), 0.5) + 1e-9 * np.arange(len(fractions)), "uniform").pvalue < 1e-3


@pytest.mark.parametrize("cst", [None, [1, 1, 1]])
def test_slab_groups_take_one_place_per_gap_and_groups_without_slabs_keep_two(cst):
    """Check the default ``"slab"``: one place per gap where slabs are kept, the gap draws' two where they cannot be.

    A monotone group keeps no slabs; with one place per gap it would lose the thin
    regions of the gap draws and relabel as midpoint thresholds do, so it must grow
    exactly the trees ``thresholds="gap"`` grows.
    """
    X, y = _lattice(300, 3, 4)
    params = dict(n_estimators=10, group_size=5, bootstrap=False, max_features=1, monotonic_cst=cst,
                  projection="none", random_state=0)
    slab, gap = OTreeBagger(**params).fit(X, y), OTreeBagger(thresholds="gap", **params).fit(X, y)
    most = max(len({p for _, p in cuts}) for g in slab.groups_ for cuts in _thresholds_per_gap(g, X).values())
    same = all(np.array_equal(a.tree_.threshold, b.tree_.threshold)
               for gs, gg in zip(slab.groups_, gap.groups_, strict=True) for a, b in zip(gs.trees, gg.trees, strict=True))
    if cst is None:
        assert all(g.slabs is not None for g in slab.groups_)
        assert most == 1 and not same
    else:
        assert all(g.slabs is None for g in slab.groups_)
        assert most == 2 and same
        np.testing.assert_array_equal(slab.predict(X), gap.predict(X))
