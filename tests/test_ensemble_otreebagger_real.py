"""Tests of OTreeBagger's defaults on real and many-feature data, and of its categorical contacts."""

# Models here are fitted for the pointwise notion where their subject is the machinery the data's
# resolution (docs/design.md section 13) does not certify: projected spaces, monotone forests.

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from ensemble import OTreeBagger
from ensemble.otreebagger._otreebagger import GroupSizeWarning
from ensemble.datasets import load_benchmark
from test_relabel_adjacency_options import categorical_oracle

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
needs_shared = pytest.mark.skipif(
    not (SHARED / "car.csv").is_file(), reason="the team's shared/datasets folder is absent"
)


def _fit_recording(model, X, y):
    """Fit and return the GroupSizeWarnings raised (every other warning is left alone)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GroupSizeWarning)
        model.fit(X, y)
    return [w for w in caught if issubclass(w.category, GroupSizeWarning)]


def _check_no_silent_change(model, warned):
    """Every group is what the parameters say, or says what changed, and then the fit warned."""
    adapted = [info["adapted"] for info in model.groups_info_ if info["adapted"]]
    assert bool(adapted) == bool(warned)
    for group, info in zip(model.groups_, model.groups_info_):
        assert len(group.trees) == info["group_size"]
        depths = [tree.get_depth() for tree in group.trees]
        if info["max_depth"] is not None:
            assert max(depths) <= info["max_depth"]
        if not info["adapted"]:
            assert info["group_size"] == model.group_size and info["max_depth"] == model.max_depth
        else:
            assert info["group_size"] < model.group_size or info["max_depth"] != model.max_depth
            assert info["n_regions"] <= model.relabel_params_["max_regions"] and info["n_edges"] <= model.relabel_params_["max_edges"]
    if warned:
        assert f"{len(adapted)} of {len(model.groups_)} groups" in str(warned[0].message)


def _many_features(n_samples, n_features, seed):
    """Uniform features, ten of them informative through monotone and U-shaped terms, five classes."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n_samples, n_features))
    score = X[:, :5].sum(axis=1) + 4 * ((X[:, 5:10] - 0.5) ** 2).sum(axis=1)
    score = score + rng.normal(scale=0.3 * score.std(), size=n_samples)
    return X, np.searchsorted(np.quantile(score, [0.2, 0.4, 0.6, 0.8]), score) + 1


@needs_shared
@pytest.mark.parametrize("name", ["machine10", "tae"])
def test_defaults_fit_real_data_consistently(name):
    """Check that OTreeBagger() fits real data sets of 6 and 54 features, certified, with no silent change."""
    X, y, train, test = load_benchmark(name, SHARED, split=0)
    model = OTreeBagger(consistency="pointwise", random_state=0)
    warned = _fit_recording(model, X[train], y[train])
    _check_no_silent_change(model, warned)
    assert model.is_consistent()
    # Better than always predicting the middle class: the fit learned something.
    middle = np.sort(y[train])[len(train) // 2]
    assert np.mean(np.abs(model.predict(X[test]) - y[test])) < np.mean(np.abs(middle - y[test]))


@needs_shared
def test_defaults_fit_wine_with_fewer_trees():
    """Check that the defaults (but 15 trees) fit winequality-red's 11 features, certified, no silent change."""
    X, y, train, _ = load_benchmark("winequality-red", SHARED, split=0)
    model = OTreeBagger(consistency="pointwise", n_estimators=15, random_state=0)
    warned = _fit_recording(model, X[train], y[train])
    _check_no_silent_change(model, warned)
    assert model.is_consistent()


def test_defaults_fit_thirty_features_and_adapt_loudly():
    """Check that OTreeBagger() fits 30 features certified, and that a group past a budget always warns."""
    X, y = _many_features(600, 30, seed=0)
    model = OTreeBagger(consistency="pointwise", n_estimators=30, random_state=0)
    warned = _fit_recording(model, X, y)
    _check_no_silent_change(model, warned)
    assert model.is_consistent()
    # Unprojected, 30 features pass a small edge budget: smaller groups, then shallower trees, all reported.
    tight = OTreeBagger(consistency="pointwise", n_estimators=6, projection="none", random_state=0, relabel_params={'max_edges': 500})
    warned = _fit_recording(tight, X[:300], y[:300])
    adapted = [info["adapted"] for info in tight.groups_info_]
    assert warned and all(re.search(r"group_size 3 -> 1; max_depth \d+ ->", a) for a in adapted)
    _check_no_silent_change(tight, warned)
    assert tight.is_consistent()


@pytest.mark.parametrize("projection", ["none", "pls"])
def test_categorical_contacts_are_the_all_pairs_oracle_in_every_group(projection):
    """Check that every group's contacts are the all-pairs categorical rule on its regions, and bind."""
    rng = np.random.RandomState(3)
    n = 240
    continuous = rng.uniform(size=(n, 5))
    colour = rng.randint(0, 3, size=n)
    one_hot = np.eye(3)[colour]
    X = np.column_stack([continuous, one_hot])
    score = continuous[:, :2].sum(axis=1) + 0.6 * colour + rng.normal(scale=0.2, size=n)
    y = np.searchsorted(np.quantile(score, [0.25, 0.5, 0.75]), score)
    mask = np.r_[np.zeros(5, bool), np.ones(3, bool)]
    # Closure contacts one class apart (gap draws): a slab group holds its faces and helpers instead.
    model = OTreeBagger(consistency="pointwise", n_estimators=6, group_size=3, projection=projection, n_components=2,
                        categorical_features=[5, 6, 7], max_depth=4, thresholds="gap", random_state=0).fit(X, y)
    dropped = 0
    for group in model.groups_:
        if projection == "pls":
            # The space: two components, then the categorical columns as they are.
            assert group.space.n_components == 2 and list(group.space.kept) == [5, 6, 7]
            space_mask = np.r_[np.zeros(2, bool), np.ones(3, bool)]
        else:
            assert group.space is None
            space_mask = mask
        lower, upper = group.partition.lower, group.partition.upper
        expected, _ = categorical_oracle(lower, upper, space_mask)
        got = {tuple(sorted(edge)) for edge in group.edges.tolist()}
        assert got == {tuple(edge) for edge in expected.tolist()}
        labels = group.labels
        assert np.all(np.abs(labels[expected[:, 0]] - labels[expected[:, 1]]) <= 1)
        everything, _ = categorical_oracle(lower, upper, np.zeros_like(space_mask))
        dropped += everything.shape[0] - expected.shape[0]
    assert dropped > 0  # the rule removed contacts: the one-hot columns were split on
    assert model.is_consistent()


def test_auto_projection_only_for_relabelled_groups():
    """Check that projection='auto' gives relabelled groups of 3+ continuous features the additive space,
    2D data its own axes, and plain bagged trees no projection."""
    X, y = _many_features(200, 12, seed=1)
    relabelled = OTreeBagger(consistency="pointwise", n_estimators=3, random_state=0).fit(X, y)
    # Beside the score: n_components - 1 PLS directions, or at most as many interaction axes.
    width = 1 + (relabelled.n_components - 1 if relabelled.residual_axes_ == "pls" else 0)
    assert all(group.space is not None and group.space.additive is not None
               and group.space.n_components == width
               and group.space.n_components + group.space.kept.shape[0] <= relabelled.n_components
               for group in relabelled.groups_)
    bagged = OTreeBagger(consistency="pointwise", n_estimators=3, relabel=False, random_state=0).fit(X, y)
    assert all(group.space is None for group in bagged.groups_)
    # Asked for by name, a projection applies to bagged trees too.
    for projection in ("pls", "additive"):
        asked = OTreeBagger(consistency="pointwise", n_estimators=3, relabel=False, projection=projection, random_state=0).fit(X, y)
        assert all(group.space is not None for group in asked.groups_)
    three = OTreeBagger(consistency="pointwise", n_estimators=3, random_state=0).fit(X[:, :3], y)
    assert all(group.space.additive is not None for group in three.groups_)
    two = OTreeBagger(consistency="pointwise", n_estimators=3, random_state=0).fit(X[:, :2], y)
    assert all(group.space is None for group in two.groups_)


def test_auto_projection_counts_constrained_features_in_the_dimension():
    """Check that constrained features count towards the 3-feature rule and enter the score, not PLS."""
    X, y = _many_features(200, 6, seed=2)

    def spaces(cst):
        model = OTreeBagger(consistency="pointwise", n_estimators=3, monotonic_cst=cst, random_state=0).fit(X[:, :len(cst)], y)
        assert model.is_monotone()
        return [group.space for group in model.groups_]

    for space in spaces([1, 1, 0]):  # 3 continuous features, two of them constrained
        assert space.additive is not None and space.additive.features.tolist() == [0, 1, 2]
        assert space.projected.tolist() == [2]  # PLS of the residual on the free feature only
    assert all(space is None for space in spaces([1, 0]))  # 2D: the features themselves
    with pytest.raises(ValueError, match="monotonic_cst"):
        spaces([1, 1, 1, 1, 1, 2])


def test_group_space_of_one_class_is_silent_and_constant():
    """Check that a bootstrap of one class gives PLS no warning to pass on and constant components."""
    from ensemble.otreebagger._otreebagger import GroupSpace

    X = np.random.RandomState(0).uniform(size=(60, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # sklearn warns "y residual is constant at iteration 0"
        space = GroupSpace.pls(X, np.zeros(60, np.intp), np.arange(60), np.arange(6), np.empty(0, np.intp),
                               n_components=3)
    Z = space.transform(X)
    assert Z.shape == (60, 3) and np.isfinite(Z).all()
    assert np.ptp(Z, axis=0).max() < 1e-9  # no direction: columns no tree can split


@pytest.mark.parametrize("n_constrained, space, expected, kept", [
    (1, "index", 2, [0]), (2, "index", 3, []), (4, "index", 3, []),
    (1, "axes", 2, [0]), (2, "axes", 1, [0, 1]), (4, "axes", 1, [0, 1, 2, 3])])
def test_constrained_axes_take_the_place_of_components(n_constrained, space, expected, kept):
    """Check that the constrained features take PLS components' places: a single one as its own
    axis, two or more as one monotone index beside the 2 remaining PLS components, or each as its
    own axis in a component's place (at least one component stays)."""
    X, y = _many_features(240, 12, seed=2)
    cst = np.zeros(12, int)
    cst[:n_constrained] = 1  # the first five features raise the score
    model = OTreeBagger(consistency="pointwise", n_estimators=3, monotonic_cst=cst, max_depth=4, projection="pls", random_state=0, space_params={'monotonic_space': space}).fit(X, y)
    for group in model.groups_:
        assert group.space.n_components == expected
        assert list(group.space.kept) == kept
        # The index is the last component; it moves along every constrained feature (all raise
        # the score here) and along nothing else.
        if n_constrained > 1 and space == "index":
            on = np.isin(group.space.projected, np.arange(n_constrained))
            assert np.all(group.space.weights[on, -1] > 0) and not np.any(group.space.weights[~on, -1])
    assert model.is_monotone() and model.is_consistent()
