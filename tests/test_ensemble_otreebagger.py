"""Tests of ensemble.OTreeBagger: consistency, determinism, special cases and bad input."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relabel
from ensemble import OTreeBagger
from ensemble.datasets import make_synthetic_i
from ensemble.otreebagger._otreebagger import TooManyRegionsError

from oracles import box_centres, exact_consistency


def _lattice_data(n, n_features, n_classes, seed, spacing=0.05):
    """Points on a lattice (so every finite box side is at least ``spacing``) with ordinal labels."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, int(round(1 / spacing)) + 1, size=(n, n_features)) * spacing
    score = X.sum(axis=1) + rng.normal(0, 0.3, n)
    cuts = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(cuts, score) + 1
    return X, y


@given(
    n=st.integers(20, 300),
    n_features=st.integers(2, 4),
    n_classes=st.integers(2, 6),
    group_size=st.integers(1, 3),
    seed=st.integers(0, 10_000),
)
def test_every_fitted_model_is_consistent(n, n_features, n_classes, group_size, seed):
    """Check that OTreeBagger passes is_consistent() on random data, and its groups pass relabel's check."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, n_features))
    score = X @ rng.uniform(0.5, 1.5, n_features) + rng.normal(0, 0.3, n)
    y = np.searchsorted(np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]), score)
    if np.unique(y).size < 2:
        y[0], y[-1] = 0, 1
    model = OTreeBagger(n_estimators=2 * group_size, group_size=group_size, random_state=seed).fit(X, y)
    assert model.is_consistent()
    for group in model.groups_:
        if group.slabs is None:
            assert relabel.is_consistent(relabel.adjacency_graph(group.partition), group.labels)
            continue
        # A slab group (the default on these axes): faces one class apart, corners two (design section 5).
        labels = np.asarray(group.labels)
        for contact, most in (("face", 1), ("closure", 2)):
            pairs = relabel.adjacency_edges(group.partition, contact=contact).edges
            assert np.abs(labels[pairs[:, 0]] - labels[pairs[:, 1]]).max(initial=0) <= most, contact
    assert set(np.unique(model.predict(X))) <= set(np.unique(y))


def _corner_points(model):
    """Every corner of every region of every group, with its four diagonal neighbours at distance eps."""
    corners = []
    for group in model.groups_:
        lo, hi = group.partition.lower, group.partition.upper
        for xs in (lo[:, 0], hi[:, 0]):
            for ys in (lo[:, 1], hi[:, 1]):
                corners.append(np.column_stack([xs, ys]))
    corners = np.unique(np.vstack(corners), axis=0)
    return corners[np.all(np.isfinite(corners), axis=1)]


@pytest.mark.parametrize("group_size", [1, 3, 5])
def test_dense_grid_and_corners_never_jump_two_classes(group_size):
    """Check that on a fine grid and around every region corner, nearby points differ by at most one class."""
    spacing = 0.05
    X, y = _lattice_data(400, 2, 5, seed=group_size, spacing=spacing)
    # Midpoint thresholds: the grid step below is well under the smallest finite box side.
    model = OTreeBagger(n_estimators=3 * group_size, group_size=group_size, thresholds="midpoint",
                        random_state=1).fit(X, y)
    rank = {c: i for i, c in enumerate(model.classes_)}

    # Grid step well under the smallest finite box side (thresholds are lattice midpoints).
    step = spacing / 4
    axis = np.arange(-0.1, 1.1 + step, step)
    gx, gy = np.meshgrid(axis, axis)
    labels = np.vectorize(rank.get)(model.predict(np.column_stack([gx.ravel(), gy.ravel()])))
    labels = labels.reshape(gx.shape)
    assert np.abs(np.diff(labels, axis=0)).max() <= 1
    assert np.abs(np.diff(labels, axis=1)).max() <= 1
    assert np.abs(labels[1:, 1:] - labels[:-1, :-1]).max() <= 1
    assert np.abs(labels[1:, :-1] - labels[:-1, 1:]).max() <= 1

    corners = _corner_points(model)
    eps = spacing / 10
    offsets = np.array([[0, 0], [eps, eps], [eps, -eps], [-eps, eps], [-eps, -eps]])
    around = np.stack([np.vectorize(rank.get)(model.predict(corners + o)) for o in offsets], axis=1)
    assert corners.shape[0] > 10
    assert (around.max(axis=1) - around.min(axis=1)).max() <= 1


@pytest.mark.parametrize("group_size", [1, 3, 5])
def test_gap_thresholds_are_consistent_on_the_exact_partition(group_size):
    """Check gap-drawn thresholds (thin regions, narrower than any grid) against the exact fused oracle."""
    X, y = _lattice_data(400, 2, 5, seed=group_size, spacing=0.05)
    model = OTreeBagger(n_estimators=3 * group_size, group_size=group_size, thresholds="gap",
                        random_state=1).fit(X, y)
    assert model.is_consistent()
    assert exact_consistency(model)[0]


def test_face_contact_alone_can_leave_corner_jumps_that_closure_forbids():
    """Check that contact='closure' constrains at least as many pairs as contact='face'."""
    X, y = _lattice_data(300, 2, 5, seed=3)
    # Gap draws both ways: face contacts keep no slabs, so a slab group would fuse other trees.
    closure = OTreeBagger(n_estimators=3, group_size=3, thresholds="gap", random_state=0).fit(X, y)
    face = OTreeBagger(n_estimators=3, group_size=3, thresholds="gap", random_state=0,
                       relabel_params={'contact': "face"}).fit(X, y)
    assert closure.groups_info_[0]["n_regions"] == face.groups_info_[0]["n_regions"]
    assert closure.groups_info_[0]["n_edges"] > face.groups_info_[0]["n_edges"]
    # The optimum under more constraints cannot be lower.
    assert closure.groups_info_[0]["objective"] >= face.groups_info_[0]["objective"] - 1e-12


def test_n_jobs_and_repeated_fits_give_identical_predictions():
    """Check that n_jobs=1 and n_jobs=2, and two fits with the same seed, predict identically."""
    X, y = _lattice_data(200, 3, 4, seed=5)
    grid = np.random.RandomState(0).uniform(-0.1, 1.1, size=(500, 3))
    params = dict(n_estimators=12, group_size=3, random_state=42)
    p1 = OTreeBagger(n_jobs=1, **params).fit(X, y).predict_proba(grid)
    p2 = OTreeBagger(n_jobs=2, **params).fit(X, y).predict_proba(grid)
    p3 = OTreeBagger(n_jobs=1, **params).fit(X, y).predict_proba(grid)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(p1, p3)
    other = OTreeBagger(n_jobs=1, **{**params, "random_state": 43}).fit(X, y).predict_proba(grid)
    assert not np.array_equal(p1, other)


def test_single_tree_relabelling_is_the_cbc_optimum():
    """Check that B = M = 1 without bootstrap reaches CBC's optimum on the same problem."""
    X, y = _lattice_data(150, 2, 4, seed=7)
    # Closure contacts one class apart: a group without slabs.
    model = OTreeBagger(n_estimators=1, group_size=1, bootstrap=False, thresholds="gap", random_state=0,
                        relabel_params={'relabel_counts': "train"}).fit(X, y)
    group = model.groups_[0]
    region = group.partition.locate(group.leaves(X))
    counts = relabel.region_counts(region, np.searchsorted(model.classes_, y), model.n_classes_,
                                   n_regions=group.partition.n_regions)
    problem = relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_graph(group.partition))
    cbc = relabel.solve(problem, solver="cbc")
    assert cbc.status == relabel.SolverStatus.OPTIMAL
    assert model.groups_info_[0]["objective"] == pytest.approx(cbc.objective, rel=1e-9)
    assert problem.objective(group.labels) == pytest.approx(cbc.objective, rel=1e-9)


def test_single_tree_keeps_its_cost_when_already_consistent():
    """Check that a tree whose median labels are consistent keeps the unconstrained optimal cost."""
    # One feature, classes in contiguous increasing intervals: leaves are pure and ordered.
    X = np.linspace(0, 1, 120).reshape(-1, 1)
    y = np.repeat([1, 2, 3, 4], 30)
    model = OTreeBagger(n_estimators=1, group_size=1, bootstrap=False, random_state=0).fit(X, y)
    group = model.groups_[0]
    region = group.partition.locate(group.leaves(X))
    counts = relabel.region_counts(region, y - 1, 4, n_regions=group.partition.n_regions)
    costs = np.abs(np.arange(4)[None, :] - np.arange(4)[:, None])  # |i - k|
    unconstrained = (counts @ costs).min(axis=1).sum()
    assert model.groups_info_[0]["objective"] == pytest.approx(unconstrained)
    np.testing.assert_array_equal(model.predict(X), y)


def test_bagged_trees_baseline_and_mode_vote():
    """Check that relabel=False grows one voter per tree and the mode vote picks the most frequent class."""
    X, y = _lattice_data(200, 2, 3, seed=9)
    model = OTreeBagger(n_estimators=7, relabel=False, vote="mode", criterion="gini",
                        random_state=0).fit(X, y)
    assert len(model.groups_) == 7
    votes = model._votes(X)
    shares = model.predict_proba(X)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    expected = model.classes_[np.argmax(shares, axis=1)]
    np.testing.assert_array_equal(model.predict(X), expected)
    assert votes.shape == (200, 7)
    assert model.is_consistent() is False


def test_deprecated_majority_vote_is_the_mode_with_a_warning():
    """Check that vote='majority' still works, warns FutureWarning, and predicts as vote='mode'."""
    X, y = _lattice_data(200, 2, 3, seed=9)
    params = dict(n_estimators=7, relabel=False, criterion="gini", random_state=0)
    with pytest.warns(FutureWarning, match="vote='majority' is deprecated.*vote='mode'"):
        old = OTreeBagger(vote="majority", **params).fit(X, y)
    new = OTreeBagger(vote="mode", **params).fit(X, y)
    np.testing.assert_array_equal(old.predict(X), new.predict(X))
    assert old.is_consistent() is False
    with pytest.raises(ValueError, match="vote='majority' breaks the consistency"), pytest.warns(FutureWarning):
        OTreeBagger(vote="majority", n_estimators=4, group_size=2).fit(X, y)


def test_median_vote_is_the_lower_median():
    """Check that predict returns the order statistic of rank ceil(L/2) of the group votes."""
    X, y = _lattice_data(200, 2, 5, seed=11)
    model = OTreeBagger(n_estimators=8, group_size=2, random_state=0).fit(X, y)
    votes = np.sort(model._votes(X), axis=1)
    np.testing.assert_array_equal(model.predict(X), model.classes_[votes[:, 1]])  # L = 4 -> rank 2


def test_string_labels_follow_the_given_order():
    """Check that string classes keep the user's order and predictions are members of it."""
    X, y = _lattice_data(200, 2, 3, seed=13)
    names = np.array(["low", "mid", "high"])[y - 1]
    model = OTreeBagger(n_estimators=6, group_size=3, classes=["low", "mid", "high"],
                        random_state=0).fit(X, names)
    assert model.classes_.tolist() == ["low", "mid", "high"]
    assert set(model.predict(X)) <= {"low", "mid", "high"}
    assert model.is_consistent()


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_estimators": 3, "group_size": 5}, "group_size=5 must not exceed n_estimators=3"),
        ({"group_size": 0}, "group_size"),
        ({"n_estimators": 2.5}, "n_estimators"),
        ({"solver": "gurobi"}, "solver"),
        ({"criterion": "twoing"}, "criterion"),
        ({"vote": "mode"}, "vote='mode'"),
        ({"vote": "plurality"}, "vote"),
        ({"time_limit": 0}, "time_limit"),
        ({"classes": [1, 2]}, "classes is missing label"),
    ],
)
def test_bad_parameters_are_rejected(params, message):
    """Check that invalid parameters raise a ValueError naming the parameter."""
    X, y = _lattice_data(60, 2, 3, seed=0)
    with pytest.raises(ValueError, match=message):
        OTreeBagger(**params).fit(X, y)


def test_bad_data_is_rejected():
    """Check that infinities, one class and mismatched lengths raise clear errors (NaN is a missing value,
    tests/test_ensemble_missing.py)."""
    X, y = _lattice_data(60, 2, 3, seed=0)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        OTreeBagger(n_estimators=3).fit(bad, y)
    with pytest.raises(ValueError, match="has one class"):
        OTreeBagger(n_estimators=3).fit(X, np.ones(60))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        OTreeBagger(n_estimators=3).fit(X, y[:-1])


def test_region_budget_is_enforced_before_solving():
    """Check that a fused partition over max_regions raises TooManyRegionsError with advice."""
    X, y = _lattice_data(300, 3, 5, seed=2)
    with pytest.raises(TooManyRegionsError, match="more than max_regions=300.*group_size or max_depth"):
        OTreeBagger(n_estimators=5, group_size=5, random_state=0, relabel_params={'max_regions': 300, 'on_budget': "raise"}).fit(X, y)
    with pytest.raises(TooManyRegionsError, match="first tree alone.*max_depth"):
        OTreeBagger(n_estimators=5, group_size=5, random_state=0, relabel_params={'max_regions': 20, 'on_budget': "raise"}).fit(X, y)
    # A budget the partition fits in changes nothing.
    ok = OTreeBagger(n_estimators=5, group_size=5, random_state=0, relabel_params={'max_regions': 10**6}).fit(X, y)
    assert ok.groups_info_[0]["n_regions"] > 300


def test_verbose_shows_a_progress_bar_over_groups(capsys):
    """Check that verbose=1 draws a progress bar on stderr that counts the groups."""
    X, y = _lattice_data(100, 2, 3, seed=4)
    OTreeBagger(n_estimators=6, group_size=2, verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    # The first two groups, then the others (which start smaller when both first ones had to be made smaller).
    assert "OTreeBagger first groups" in err and "2/2" in err and "OTreeBagger groups" in err and "1/1" in err
    OTreeBagger(n_estimators=6, group_size=2, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


def test_edge_budget_is_enforced_before_solving():
    """Check that an adjacency graph over max_edges raises TooManyRegionsError naming max_edges."""
    X, y = _lattice_data(300, 3, 5, seed=2)
    # A group without slabs, whose held pairs are its adjacency graph (a slab group's also hold helpers).
    params = dict(n_estimators=3, group_size=3, thresholds="gap", random_state=0)
    ok = OTreeBagger(**params).fit(X, y)
    n_edges = ok.groups_info_[0]["n_edges"]
    OTreeBagger(**params, relabel_params={'max_edges': n_edges}).fit(X, y)
    with pytest.raises(TooManyRegionsError, match=f"more than max_edges={n_edges - 1}"):
        OTreeBagger(**params, relabel_params={'max_edges': n_edges - 1, 'on_budget': "raise"}).fit(X, y)


def test_pandas_ordered_categorical_gives_the_class_order():
    """Check that an ordered pandas Categorical y sets classes_ to its categories' order."""
    pd = pytest.importorskip("pandas")
    X, y = _lattice_data(120, 2, 3, seed=6)
    order = ["poor", "fair", "good"]
    cat = pd.Categorical(np.array(order)[y - 1], categories=order, ordered=True)
    model = OTreeBagger(n_estimators=4, group_size=2, random_state=0).fit(X, pd.Series(cat))
    assert model.classes_.tolist() == order
    assert model.is_consistent()


def test_bagged_trees_ignore_group_size():
    """Check that relabel=False accepts fewer trees than the (unused) group_size."""
    X, y = _lattice_data(80, 2, 3, seed=8)
    model = OTreeBagger(n_estimators=1, relabel=False, random_state=0).fit(X, y)
    assert len(model.groups_) == 1 and model.group_size == 3


def test_is_consistent_rederives_contacts_from_the_geometry(monkeypatch):
    """Check that is_consistent() ignores the solver's edges: dropped contacts and face models are caught."""
    X, y = make_synthetic_i(300, random_state=1)
    honest = OTreeBagger(n_estimators=6, random_state=0).fit(X, y)
    assert honest.is_consistent()
    # A face-contact model is certified in the weaker sense only (corners jump on this data).
    with pytest.warns(UserWarning, match=r"certifies no consistency .*contact='face'"):
        face = OTreeBagger(n_estimators=6, random_state=0, relabel_params={'contact': "face"}).fit(
            *make_synthetic_i(300, random_state=0))
    assert face.consistency_notion_ is None and face.is_consistent(contact="face")
    assert not face.is_consistent()
    with pytest.raises(ValueError, match="contact"):
        face.is_consistent(contact="edge")
    # A bug that loses half of the contacts before solving: the labels break real
    # contacts, and the certificate, which re-derives them, sees it.
    original = relabel.adjacency_edges

    def lossy(partition, contact="closure", **kwargs):
        found = original(partition, contact, **kwargs)
        return relabel.AdjacencyEdges(found.edges[::2], found.is_face[::2])

    monkeypatch.setattr(relabel, "adjacency_edges", lossy)
    broken = OTreeBagger(n_estimators=6, thresholds="gap", random_state=0).fit(X, y)
    # A slab group reads its closure contacts again after each solve, and refuses labels that break a face.
    with pytest.raises(RuntimeError, match="face contact of a slab group"):
        OTreeBagger(n_estimators=6, random_state=0).fit(X, y)
    monkeypatch.setattr(relabel, "adjacency_edges", original)
    assert all(relabel.is_consistent(g.edges, g.labels) for g in broken.groups_)  # the solver's own view
    assert not broken.is_consistent()



def test_groups_past_a_budget_are_made_smaller_and_say_so():
    """Check that on_budget='adapt' halves the group, then the depth, records it and warns, never silently."""
    from ensemble.otreebagger._otreebagger import GroupSizeWarning

    X, y = _lattice_data(300, 3, 5, seed=2)
    with pytest.warns(GroupSizeWarning, match="groups passed max_regions=300.*groups_info_"):
        model = OTreeBagger(n_estimators=5, group_size=5, random_state=0, relabel_params={'max_regions': 300}).fit(X, y)
    info = model.groups_info_[0]
    assert info["adapted"].startswith("group_size 5 -> 2")
    assert info["n_regions"] <= 300 and info["group_size"] == len(model.groups_[0].trees) < 5
    assert model.is_consistent()
    with pytest.warns(GroupSizeWarning):
        tiny = OTreeBagger(n_estimators=2, group_size=2, random_state=0, relabel_params={'max_regions': 20}).fit(X, y)
    info = tiny.groups_info_[0]
    assert "group_size 2 -> 1" in info["adapted"] and "max_depth" in info["adapted"]
    assert info["n_regions"] <= 20 and tiny.groups_[0].trees[0].get_depth() == info["max_depth"]
    assert tiny.is_consistent()
    # The advice names a smaller space only where one exists: raw features past two.
    with pytest.warns(GroupSizeWarning) as record:
        OTreeBagger(n_estimators=2, group_size=2, projection="none", random_state=0, relabel_params={'max_regions': 20}).fit(X, y)
    assert "projection='auto'" in str(record[0].message)
    with pytest.warns(GroupSizeWarning) as record:
        OTreeBagger(n_estimators=2, group_size=2, random_state=0, relabel_params={'max_regions': 20}).fit(X, y)
    assert "projection" not in str(record[0].message)
    # A budget that holds changes nothing and warns nothing.
    with warnings.catch_warnings():
        warnings.simplefilter("error", GroupSizeWarning)
        fine = OTreeBagger(n_estimators=5, group_size=5, random_state=0).fit(X, y)
    assert fine.groups_info_[0]["adapted"] is None and fine.groups_info_[0]["group_size"] == 5


def test_groups_after_two_that_passed_a_budget_start_at_their_size_from_all_their_trees():
    """When the first two groups both fuse fewer trees to fit the budget, the later groups are formed at the size
    they kept from all their trees (none grown to be dropped), each says so, and the model is certified and the
    same for any n_jobs; when the first groups fit, every group keeps the size asked for."""
    from ensemble.otreebagger._otreebagger import GroupSizeWarning

    X, y = _lattice_data(300, 3, 5, seed=2)
    params = dict(n_estimators=12, group_size=3, random_state=0, relabel_params={'max_regions': 300})
    with pytest.warns(GroupSizeWarning, match="8 of 8 groups passed max_regions=300"):
        model = OTreeBagger(**params).fit(X, y)
    sizes = [info["group_size"] for info in model.groups_info_]
    adapted = [info["adapted"] for info in model.groups_info_]
    # 4 groups of 3 drawn: the two first made smaller, the 6 trees of the other two regrouped one by one.
    assert sizes == [1] * 8 and [len(g.trees) for g in model.groups_] == sizes
    assert all(a.startswith("group_size 3 -> 1") for a in adapted[:2])
    assert all(a.startswith("group_size 3 -> 1 as the first groups") for a in adapted[2:])
    assert len({g.trees[0].tree_.threshold.tobytes() for g in model.groups_}) == 8  # eight distinct trees
    assert model.is_consistent()
    with pytest.warns(GroupSizeWarning):
        parallel = OTreeBagger(**params, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(parallel.predict(X), model.predict(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GroupSizeWarning)
        fine = OTreeBagger(n_estimators=12, group_size=3, random_state=0).fit(X, y)
    assert [info["group_size"] for info in fine.groups_info_] == [3] * 4


def test_groups_after_one_pilot_that_passed_a_budget_start_at_its_size():
    """When only one of the first two groups fuses fewer trees, the later ones are still formed at the size it
    kept: where one group passes a budget most do, and each would pay for its attempt at the full size."""
    from ensemble.otreebagger._otreebagger import GroupSizeWarning

    X, y = _lattice_data(300, 3, 5, seed=2)
    params = dict(n_estimators=12, group_size=3, random_state=0)
    regions = [info["n_regions"] for info in OTreeBagger(**params).fit(X, y).groups_info_]
    assert regions[0] < regions[1]  # the first pilot fits under the budget below, the second does not
    with pytest.warns(GroupSizeWarning):
        model = OTreeBagger(**params, relabel_params={"max_regions": regions[0]}).fit(X, y)
    sizes = [info["group_size"] for info in model.groups_info_]
    adapted = [info["adapted"] for info in model.groups_info_]
    assert sizes == [3, 1] + [1] * 6 and adapted[0] is None and adapted[1].startswith("group_size 3 -> 1")
    assert all(a.startswith("group_size 3 -> 1 as the first groups") for a in adapted[2:])
    assert model.is_consistent()


@pytest.mark.parametrize("empty_regions", ["leaves", "paper"])
def test_group_labels_are_optimal_for_the_leaf_prior_rebuilt_independently(empty_regions):
    """Check each group's labels against the problem rebuilt from scratch: regions fused from the trees'
    leaf boxes, every training row counted, and each empty region's prior 2**-9 times the class counts of
    the training rows in each tree's leaf at its centre (none for "paper"); CBC's optimum of that problem
    equals the labels' objective, and with the prior the paper's optimum is not optimal."""
    from test_relabel_helpers import objective_of
    from trees import leaf_boxes

    X, y = make_synthetic_i(300, random_state=3)
    # Closure contacts one class apart: groups without slabs.
    model = OTreeBagger(n_estimators=6, group_size=3, max_depth=5, thresholds="gap", random_state=0,
                        relabel_params={'relabel_counts': "train", 'empty_regions': empty_regions}).fit(X, y)
    index = np.searchsorted(model.classes_, y)
    prior_decided = []
    for group in model.groups_:
        partition = relabel.fuse([leaf_boxes(tree) for tree in group.trees])
        Z = group.coordinates(X)
        region = partition.locate(np.column_stack([tree.apply(Z) for tree in group.trees]))
        counts = np.zeros((partition.n_regions, model.n_classes_))
        np.add.at(counts, (region, index), 1.0)
        empty = counts.sum(axis=1) == 0
        prior = np.zeros_like(counts)
        if empty_regions == "leaves":
            centre = box_centres(partition.lower[empty], partition.upper[empty])
            for tree in group.trees:
                leaf_counts = np.zeros((tree.tree_.node_count, model.n_classes_))
                np.add.at(leaf_counts, (tree.apply(Z), index), 1.0)
                prior[empty] += 2.0**-9 * leaf_counts[tree.apply(centre)]
        # The model's contacts: closure, and the neighbours at the data's resolution (its kept grid).
        edges = relabel.adjacency_edges(partition, grid=model._grid).edges
        problem = relabel.ConsistencyProblem.from_counts(counts, edges, prior=prior)
        optimum = relabel.solve(problem, solver="cbc", formulation="tight").objective
        ours = objective_of(counts, edges, problem.C1, problem.C2, group.labels, prior=prior)
        assert empty.sum() > 10 and np.isclose(ours, optimum, rtol=1e-9, atol=1e-12)
        paper = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, edges), solver="cbc").labels
        prior_decided.append(objective_of(counts, edges, problem.C1, problem.C2, paper, prior=prior) > optimum + 1e-9)
    # With the prior, the paper's optimum is not optimal: the leaves changed labels.
    assert any(prior_decided) == (empty_regions == "leaves")


def test_held_out_weight_is_a_quarter_of_every_set_of_equal_rows():
    """Check that the "auto" probes hold out part of each set of equal rows, as a test split draws them.

    Holding out every copy of a row together scored the probes on unseen points only
    (on ESL, twice the error of a random quarter of rows). An independent count: a set
    of 8 equal rows holds out exactly 2 of them (floor(8/4 + u)), singletons a quarter
    on average, and a row of weight 8 holds out what its 8 copies hold out.
    """
    from ensemble.otreebagger._selection import held_fraction as _held_fraction

    rng = np.random.RandomState(0)
    X = np.vstack([np.tile([[0.5, 7.0]], (8, 1)), rng.uniform(size=(4000, 2))])
    y = np.concatenate([np.full(8, 2), rng.randint(0, 3, 4000)])
    weight = np.ones(X.shape[0])
    held = _held_fraction(X, y, 11, weight) * weight
    assert held[:8].sum() == pytest.approx(2.0)
    assert np.all((held[8:] == 0) | (held[8:] == 1))
    assert abs(held[8:].mean() - 0.25) < 0.03
    # The same set as one row of weight 8: the same held-out weight, the rest unchanged.
    Xw, yw, w = X[7:], y[7:], np.concatenate([[8.0], np.ones(4000)])
    held_w = _held_fraction(Xw, yw, 11, w) * w
    assert held_w[0] == pytest.approx(2.0) and np.array_equal(held_w[1:], held[8:])
    # Units never matter (ranks), and a weight under 1 holds out all of it or none.
    assert np.array_equal(_held_fraction(X * 1e-10, y, 11, weight), _held_fraction(X, y, 11, weight))
    light = np.full(X.shape[0], 0.3)
    assert set(np.unique(_held_fraction(X[8:], y[8:], 11, light[8:]))) <= {0.0, 1.0}


def test_held_out_folds_share_out_every_set_of_equal_rows():
    """Check that the four probe folds hold out every row's weight once, a quarter each.

    Fold j holds out floor((j+1) W/4 + u) - floor(j W/4 + u) of a set of equal rows
    of total weight W: summed over the folds, W (an integer). Counted independently:
    a set of 7 equal rows holds out 1 or 2 rows in each fold, 7 in all; each singleton
    is held out by exactly one fold; a row of weight 5 holds out 5 over the folds.
    """
    from ensemble.otreebagger._selection import held_fraction as _held_fraction

    rng = np.random.RandomState(1)
    X = np.vstack([np.tile([[0.25, 3.0]], (7, 1)), rng.uniform(size=(3000, 2))])
    y = np.concatenate([np.full(7, 1), rng.randint(0, 3, 3000)])
    weight = np.concatenate([np.ones(3007 - 1), [5.0]])
    held = np.array([_held_fraction(X, y, 5, weight, fold) * weight for fold in range(4)])
    assert np.allclose(held.sum(axis=0), weight)
    assert set(np.round(held[:, :7].sum(axis=1), 9).tolist()) <= {1.0, 2.0}
    assert held[:, :7].sum() == pytest.approx(7.0)
    assert np.all((held[:, 7:-1] == 0) | (held[:, 7:-1] == 1))
    assert np.all(np.count_nonzero(held[:, 7:-1], axis=0) == 1)
    assert held[:, -1].sum() == pytest.approx(5.0)
    assert np.all(np.abs(held[:, 7:-1].mean(axis=1) - 0.25) < 0.03)
    assert np.array_equal(held[0], _held_fraction(X, y, 5, weight) * weight)


@pytest.mark.parametrize("n_samples, n_estimators, n_folds, n_probe",
                         [(400, 24, 4, 4), (3000, 24, 3, 4), (9000, 24, 1, 8), (400, 6, 2, 2), (400, 12, 2, 4)])
def test_auto_choices_score_small_data_on_several_folds(monkeypatch, n_samples, n_estimators, n_folds, n_probe):
    """Check the number of held-out folds, and each probe's score against refitted models.

    Below 8,000 rows the "auto" choices hold out up to four disjoint quarters in
    turn (4 probe groups each), above it one quarter (8 groups); the folds fit at
    most twice the groups one quarter would (at most 8, at most the fit's). The
    score of the midpoint rule is recomputed independently: for each fold a public
    fit with the weight the fold keeps and the same seeds (the first groups of a fit
    draw the same seeds whatever its number of groups), scored on the rows it holds
    out, weighted by the weight held out, pooled over the folds.
    """
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(n_samples, 2))
    y = np.digitize(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=n_samples), [0.7, 1.3])
    seen = []
    held_out = OTreeBagger._held_out
    monkeypatch.setattr(OTreeBagger, "_held_out",
                        staticmethod(lambda data, seeds: seen.append(held_out(data, seeds)) or seen[-1]))
    params = dict(n_estimators=n_estimators, group_size=3, projection="none", max_depth=4, random_state=0)
    model = OTreeBagger(thresholds="auto", **params).fit(X, y)
    (probe,) = seen
    assert len(probe.folds) == n_folds and min(probe.n_groups, n_estimators // 3) == n_probe
    rows = np.array([fold.rows for fold in probe.folds])
    assert np.all(rows.sum(axis=0) <= 1)  # disjoint folds
    if n_folds == 4:
        assert np.all(rows.sum(axis=0) == 1)
    error = weight = 0.0
    for fold in probe.folds:
        refit = OTreeBagger(thresholds="midpoint", **{**params, "n_estimators": 3 * n_probe}).fit(
            X, y, sample_weight=fold.train.sample_weight)
        error += np.dot(np.abs(refit.predict(X[fold.rows]) - y[fold.rows]), fold.weight[fold.rows])
        weight += fold.weight[fold.rows].sum()
    assert model.threshold_scores_["midpoint"] == pytest.approx(error / weight, abs=1e-12)
    assert model.is_consistent()


def test_every_feature_categorical_makes_every_tree_its_own_group():
    """Check that with no continuous feature each tree is a group, and one continuous feature restores groups.

    Between two values of a categorical feature no move is small, so consistency
    asks nothing of a group and fused trees would only be smaller regions labelled
    from fewer rows. Independent check: no group has a contact, and every region's
    label minimises the absolute class error of its training counts.
    """
    rng = np.random.RandomState(0)
    X = rng.randint(0, 2, size=(300, 6)).astype(float)
    y = np.clip(X[:, :3].sum(axis=1).astype(int) + (rng.uniform(size=300) < 0.2), 0, 3)
    model = OTreeBagger(n_estimators=10, random_state=0).fit(X, y)
    assert model.categorical_features_.tolist() == list(range(6))
    assert model.group_size_ == 1 and len(model.groups_) == 10
    assert all(len(group.trees) == 1 for group in model.groups_)
    assert model.is_consistent()
    cost = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    for group in model.groups_:
        assert group.edges.shape[0] == 0
        error = group.counts @ cost
        assert np.allclose(error[np.arange(error.shape[0]), group.labels], error.min(axis=1))
    mixed = OTreeBagger(n_estimators=10, random_state=0).fit(np.column_stack([X, rng.uniform(size=300)]), y)
    assert mixed.group_size_ == 3 and len(mixed.groups_) == 3
    assert OTreeBagger(n_estimators=10, categorical_features=None, random_state=0).fit(X, y).group_size_ == 3


def test_public_parameters_are_at_most_25_and_the_rest_deprecated():
    """Check the surface: 25 parameters at most besides the deprecated ones, each of those a key of a dict."""
    import inspect

    from ensemble.otreebagger._otreebagger import DEPRECATED, RELABEL_PARAMS, SPACE_PARAMS

    params = inspect.signature(OTreeBagger.__init__).parameters
    deprecated = {name for name, p in params.items() if p.default == DEPRECATED}
    public = set(params) - deprecated - {"self"}
    assert len(public) <= 25
    assert deprecated == set(RELABEL_PARAMS) | set(SPACE_PARAMS)
    assert {"relabel_params", "space_params"} <= public


def test_a_deprecated_parameter_warns_naming_its_key_and_is_honoured():
    """Check that contact='face' as a parameter warns, names relabel_params, and fits what the key fits."""
    X, y = make_synthetic_i(200, random_state=0)
    with pytest.warns(FutureWarning, match=r"relabel_params=\{'contact': 'face'\}"):
        old = OTreeBagger(n_estimators=6, contact="face", random_state=0).fit(X, y)
    new = OTreeBagger(n_estimators=6, relabel_params={"contact": "face"}, random_state=0).fit(X, y)
    assert old.relabel_params_ == new.relabel_params_ and new.relabel_params_["contact"] == "face"
    assert old.consistency_notion_ is None is new.consistency_notion_  # face contacts certify no notion
    np.testing.assert_array_equal(old.predict(X), new.predict(X))
    assert [g["n_edges"] for g in old.groups_info_] == [g["n_edges"] for g in new.groups_info_]
    with pytest.warns(FutureWarning, match=r"space_params=\{'residual_axes': 'pls'\}"):
        OTreeBagger(n_estimators=3, residual_axes="pls", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="contact is given twice"), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        OTreeBagger(n_estimators=3, contact="face", relabel_params={"contact": "closure"}).fit(X, y)


def test_paper_preset_merges_the_users_relabelling_keys():
    """Check that OTreeBagger.paper keeps the paper's relabelling keys beside the ones a user adds."""
    model = OTreeBagger.paper(relabel_params={"max_regions": 50_000, "formulation": "tight"})
    assert model.relabel_params == {"empty_regions": "paper", "formulation": "tight", "max_regions": 50_000}
    assert OTreeBagger.paper().relabel_params is not OTreeBagger.paper().relabel_params  # no shared dict


def test_a_model_saved_before_the_dict_parameters_loads_and_refits():
    """Check that a pickled model without relabel_params/space_params (older files) loads, predicts and refits."""
    import pickle

    X, y = make_synthetic_i(150, random_state=1)
    model = OTreeBagger(n_estimators=3, random_state=0).fit(X, y)
    state = model.__getstate__()
    # The state an older version wrote: the settings as parameters of their own.
    for name in ("relabel_params", "space_params", "relabel_params_", "space_params_"):
        state.pop(name)
    state["contact"] = "closure"
    old = OTreeBagger.__new__(OTreeBagger)
    old.__setstate__(state)
    loaded = pickle.loads(pickle.dumps(old))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.get_params()["relabel_params"] is None and loaded.is_consistent()
    with pytest.warns(FutureWarning, match="contact"):
        loaded.fit(X, y)
