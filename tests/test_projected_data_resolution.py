"""OTreeBagger in projected spaces at the data's resolution, exact in floats (docs/design.md section 13).

The oracle walks every feature of real and random rows across the gaps of its
training values (both ends, evenly spaced points, and bisection down to adjacent
floats wherever the class changes) and never asks the model's certificate.
"""

import warnings

import numpy as np
import pytest

import relabel
from ensemble import OTreeBagger, audit
from ensemble.spaces._rank_map import RankMap
from ensemble.spaces._moves import gap_swing, move_edges, space_moves
from relabel import move_pairs
from trees import leaf_boxes
from oracles import bisected_gap_walk as gap_walk


def _data(kind, seed, n=140, d=6):
    rng = np.random.RandomState(seed)
    U = rng.uniform(size=(n, d))
    y = np.clip((U[:, :3].sum(axis=1) / 3 * 5 + 0.4 * rng.normal(size=n)).astype(int), 0, 4)
    if kind == "plain":
        X = U
    elif kind == "offset":  # 1e9 + tiny values: one float is a large part of the data's spread
        X = 1e9 + U * 1e-5
    elif kind == "scale":
        X = U * 1e-10
    elif kind == "lattice":  # one feature on consecutive floats, the others coarse integers
        X = np.floor(U * 6)
        X[:, 0] = 1.0 + np.floor(U[:, 0] * 5) * np.spacing(1.0)
    else:
        raise ValueError(kind)
    return X, y


def _rows(X, seed=1):
    rng = np.random.RandomState(seed)
    random_rows = X[rng.randint(0, X.shape[0], 4)].copy()
    random_rows[:, 1] = X[rng.randint(0, X.shape[0], 4), 1]  # rows no one trained on
    return np.vstack([X[:8], random_rows])


def float_step_jumps(model, X_train, rows):
    """The largest class change of one float step of one feature, from the rows and from every training value."""
    worst = 0
    for f in range(X_train.shape[1]):
        starts = np.repeat(rows, 2, axis=0)
        values = np.unique(X_train[:, f])
        starts = np.vstack([starts, np.repeat(rows[:1], values.shape[0], axis=0)])
        starts[2 * rows.shape[0]:, f] = values
        for direction in (np.inf, -np.inf):
            moved = starts.copy()
            moved[:, f] = np.nextafter(starts[:, f], direction)
            a = np.searchsorted(model.classes_, model.predict(starts))
            b = np.searchsorted(model.classes_, model.predict(moved))
            worst = max(worst, int(np.max(np.abs(a - b))))
    return worst


def _projected_model(kind, seed, **params):
    """A small OTreeBagger on ``_data(kind, seed)``, its groups in rank-mapped projected spaces."""
    X, y = _data(kind, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OTreeBagger(n_estimators=6, random_state=0, **params).fit(X, y)
    assert all(g.space is not None and g.space.ranks is not None for g in model.groups_)
    return model, X


@pytest.mark.parametrize("kind", ["plain", "offset", "scale", "lattice"])
@pytest.mark.parametrize("projection", ["auto", "pls", "additive"])
def test_projected_models_at_the_data_resolution_never_jump_two_classes_inside_a_gap(kind, projection):
    model, X = _projected_model(kind, 3, projection=projection, consistency="data")
    assert model.consistency_notion_ == "data"
    assert model.is_consistent() and model.is_consistent(notion="pointwise")
    worst, witness = gap_walk(model, X, _rows(X))
    assert worst <= 1, witness


@pytest.mark.parametrize("kind", ["plain", "offset", "scale", "lattice"])
@pytest.mark.parametrize("projection", ["auto", "pls", "additive"])
def test_projected_pointwise_models_never_jump_two_classes_in_one_float(kind, projection):
    """The paper's notion by name on more than four continuous features: exact between adjacent floats."""
    model, X = _projected_model(kind, 4, projection=projection, consistency="pointwise")
    assert model.consistency_notion_ == "pointwise" and model.is_consistent()
    assert float_step_jumps(model, X, _rows(X)) <= 1


@pytest.mark.parametrize("kind", ["plain", "offset", "lattice"])
def test_the_default_holds_the_data_resolution_on_many_continuous_features(kind):
    """The default on more than four continuous features: the data's resolution, in floats."""
    model, X = _projected_model(kind, 5)
    assert model.consistency_notion_ == "data" and model.is_consistent()
    worst, witness = gap_walk(model, X, _rows(X))
    assert worst <= 1, witness
    assert float_step_jumps(model, X, _rows(X)) <= 1


def test_categories_missing_values_and_zero_weights():
    X, y = _data("plain", 5, n=160, d=7)
    X[:, 5] = np.floor(X[:, 5] * 3)  # a category
    X[::9, 2] = np.nan
    w = np.ones(X.shape[0])
    w[::7] = 0.0
    model = OTreeBagger(n_estimators=6, categorical_features=[5], consistency="data",
                        random_state=0).fit(X, y, sample_weight=w)
    assert model.consistency_notion_ == "data" and model.is_consistent()
    worst, witness = gap_walk(model, X, X[:10], weight=w)
    assert worst <= 1, witness


def test_built_to_fail_pointwise_projected_model_jumps_and_says_so():
    """A projected model relabelled pointwise (no moves inside gaps among its edges) jumps on a coarse lattice."""
    rng = np.random.RandomState(0)
    X = rng.randint(0, 3, size=(200, 6)).astype(np.float64)
    y = np.clip(2 * X[:, 0] + (X[:, 1] > 1), 0, 4).astype(int)  # class climbs two per unit of x0
    model = OTreeBagger(n_estimators=6, consistency="pointwise", random_state=0).fit(X, y)
    assert model.consistency_notion_ == "pointwise" and model.is_consistent()
    assert not model.is_consistent(notion="data")
    assert gap_walk(model, X, X[:20])[0] >= 2
    guarded = OTreeBagger(n_estimators=6, consistency="data", random_state=0).fit(X, y)
    assert guarded.is_consistent() and gap_walk(guarded, X, X[:20])[0] <= 1


def test_the_one_float_cases_are_certified_and_hold():
    """The reproducers of a projected model at a 1e9 offset: one float step jumped 2 -> 4 (additive) and 3 -> 1 (pls)."""
    for seed, projection, x, f in [(6, "pls", [1000000000.0000002, 1000000000.000009, 1000000000.0000094], 1),
                                   (4, "additive", [1000000000.0000079, 1000000000.0000007, 1000000000.0000072], 1)]:
        rng = np.random.RandomState(seed)
        U = rng.uniform(size=(120, 3))
        X = 1e9 + U * 1e-5
        y = np.clip((U.sum(1) / 3 * 6 + 0.3 * rng.normal(size=120)).astype(int), 0, 5)
        for consistency in ("auto", "pointwise"):
            model = OTreeBagger(n_estimators=6, projection=projection, consistency=consistency,
                                random_state=seed).fit(X, y)
            assert model.is_consistent()
            p = np.array(x)
            q = p.copy()
            q[f] = np.nextafter(p[f], np.inf)
            a, b = np.searchsorted(model.classes_, model.predict(np.array([p, q])))
            assert abs(int(a) - int(b)) <= 1


def test_rank_map_is_monotone_and_sends_every_gap_to_one_unit():
    rng = np.random.RandomState(0)
    for values in (np.sort(rng.uniform(-5, 5, 30)), 1e9 + np.arange(6) * np.spacing(1e9),
                   np.array([-1.7e308, -1.0, 0.0, 1e-300, 1.7e308]), np.array([3.0])):
        values = np.unique(values)
        ranks = RankMap(np.array([0]), (values,))
        assert np.array_equal(ranks.apply(values[:, None])[:, 0], np.arange(values.shape[0], dtype=float))
        finite_span = values[-1] * 0.5 - values[0] * 0.5 < 1e300
        inside = np.concatenate([rng.uniform(values[0], values[-1], 400) if finite_span
                                 else np.array([0.5, -3.0, 1e300]),
                                 values, np.nextafter(values, np.inf), np.nextafter(values, -np.inf),
                                 [-np.inf, np.inf]])
        inside = np.sort(inside)
        q = ranks.apply(inside[:, None])[:, 0]
        assert np.all(np.diff(q) >= 0)
        k = np.clip(np.searchsorted(values, inside, side="right") - 1, 0, max(values.shape[0] - 2, 0))
        within = (inside >= values[0]) & (inside <= values[-1])
        assert np.all((q[within] >= k[within]) & (q[within] <= k[within] + 1))


def test_additive_gap_swing_bounds_the_curve_inside_every_gap():
    rng = np.random.RandomState(2)
    X, y = _data("plain", 2, n=200, d=6)
    X[:, 4] = np.floor(X[:, 4] * 3)  # three values: one gap is half the curve
    X[:, 3] = np.floor(X[:, 3] * 2)  # two values: an axis of its own
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OTreeBagger(n_estimators=3, projection="additive", consistency="data", random_state=0).fit(X, y)
    score = model.groups_[0].space.additive
    assert score.swings is not None and coarse_kept(model, 3)
    for i, f in enumerate(score.features):
        top = score.ranks.values[score.ranks.rank_of(f)].shape[0] - 1
        swing = gap_swing(score, i, top)
        for k in rng.choice(top, size=min(top, 12), replace=False):
            q = np.linspace(k, k + 1, 401)
            Q = np.zeros((q.shape[0], X.shape[1]))
            Q[:, f] = q
            arg = score._scaled_column(Q, i)
            values = score._curve(i)(arg)
            assert values.max() - values.min() <= swing


def coarse_kept(model, f):
    """Whether feature f is on an axis of its own in every group's space (out of the score and the components)."""
    return all(f in g.space.kept and f not in g.space.additive.features and f not in g.space.projected
               for g in model.groups_)


def test_move_pairs_hold_every_sampled_move_and_match_a_brute_force():
    """Every move drawn in the displacement set joins a found pair; the pairs equal the predicate on all pairs."""
    rng = np.random.RandomState(0)
    for trial in range(5):
        cuts = [np.sort(rng.uniform(0, 10, 4)) for _ in range(3)]
        grids = np.meshgrid(*[np.arange(5)] * 3, indexing="ij")
        cells = np.column_stack([g.ravel() for g in grids])
        edges = [np.concatenate([[-np.inf], c, [np.inf]]) for c in cuts]
        lower = np.column_stack([edges[j][cells[:, j]] for j in range(3)])
        upper = np.column_stack([edges[j][cells[:, j] + 1] for j in range(3)])
        step = rng.normal(size=(2, 3)) * [[1, 1, 0], [0, 2, 1]]
        spread = np.abs(rng.normal(size=(2, 3))) * [[0.5, 0, 0], [0, 0, 0]]
        slack = np.array([1e-9, 1e-9, 0.0])
        found = {tuple(p) for p in move_pairs(lower, upper, step, spread, slack, [-1, -1, -1], [11, 11, 11])}

        def region(z, lower=lower, upper=upper):
            inside = np.all((lower < z) & (z <= upper), axis=1)
            return int(np.flatnonzero(inside)[0])

        for _ in range(400):
            m = rng.randint(2)
            z = rng.uniform(-1, 11, 3)
            z[2] = rng.choice(np.concatenate([cuts[2], rng.uniform(-1, 11, 2)]))  # the static axis
            w = z + rng.uniform(-1, 1) * step[m] + rng.uniform(-1, 1, 3) * spread[m]
            if np.any((w < -1) | (w > 11)):
                continue
            a, b = sorted((region(z), region(w)))
            assert a == b or (a, b) in found, (trial, z, w)
        # The predicate on every pair (the bound box [-1, 11] clips the infinite boxes).
        clo, chi = np.maximum(lower, -1), np.minimum(upper, 11)
        brute = set()
        for a in range(lower.shape[0]):
            for b in range(a + 1, lower.shape[0]):
                for m in range(2):
                    tmin, tmax, ok = -1.0, 1.0, True
                    for j in range(3):
                        if step[m, j] == 0 and spread[m, j] == 0 and slack[j] == 0:
                            ok &= max(lower[a, j], lower[b, j]) < min(upper[a, j], upper[b, j])
                            continue
                        lo = clo[b, j] - chi[a, j] - slack[j] - spread[m, j]
                        hi = chi[b, j] - clo[a, j] + slack[j] + spread[m, j]
                        if step[m, j] == 0:
                            ok &= lo <= 0 <= hi
                        else:
                            t0, t1 = sorted((lo / step[m, j], hi / step[m, j]))
                            tmin, tmax = max(tmin, t0), min(tmax, t1)
                    if ok and tmin <= tmax + 1e-9:
                        brute.add((a, b))
        assert found == brute


def test_space_moves_follow_the_weights_on_ranks():
    ranks = RankMap(np.array([0, 1, 2]), (np.arange(4.0), np.arange(3.0), np.arange(2.0)))
    from ensemble.spaces._spaces import GroupSpace

    space = GroupSpace(np.array([0, 1]), np.array([[1.0, 0.0], [2.0, -1.0]]), np.zeros(2), np.array([2]),
                       np.array([4.0, 2.0]), np.zeros(2), ranks=ranks)
    moves = space_moves(space, ranks, None)
    assert moves.features.tolist() == [0, 1, 2]
    np.testing.assert_allclose(moves.step, [[0.25, 0.0, 0.0], [1.0, -0.5, 0.0], [0.0, 0.0, 1.0]])
    assert np.all(moves.slack[:2] > 0) and moves.slack[2] == 0
    # One float step of these small integers moves a rank by about 1e-15 only.
    assert np.all(space_moves(space, ranks, None, reach="float").step <= 1e-14)


def test_audit_reads_snapped_groups_through_their_own_partition():
    """A pointwise model on a one-ulp lattice snaps its groups' bounds: the audit read the snapped labels with
    the unsnapped region numbers (IndexError)."""
    rng = np.random.RandomState(0)
    X = np.column_stack([1.0 + rng.randint(0, 6, 120) * 3 * np.spacing(1.0), rng.rand(120)])  # gaps of 3 ulps
    y = (X[:, 0] > 1.0 + 7.5 * np.spacing(1.0)).astype(int) + (X[:, 1] > 0.5)
    # Two places per gap of three ulps snap; one (a slab group's) need not.
    model = OTreeBagger(n_estimators=6, consistency="pointwise", thresholds="gap", random_state=0).fit(X, y)
    assert any(g.partition.n_regions < relabel.fuse([leaf_boxes(t) for t in g.trees], snap=False).n_regions
               for g in model.groups_)
    assert model.is_consistent()
    assert audit(model, X, resolution="pointwise", time_limit=10).status == "proved"


def _steep_data(n=240, seed=0):
    """Six continuous features; x0 on 12 values, across whose middle gap the class climbs two at once."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 6))
    X[:, 0] = rng.randint(0, 12, n).astype(float)
    latent = 2.0 * (X[:, 0] >= 6) + 1.5 * X[:, 1] + X[:, 2] + 0.3 * rng.normal(size=n)
    return X, np.clip(np.round(latent), 0, 4).astype(int)


def test_a_steep_feature_keeps_its_own_axis_at_the_data_resolution():
    """Check that at the data's resolution a feature whose curve climbs two classes inside one gap leaves the
    score for an axis of its own, the others stay in it, and the model holds."""
    X, y = _steep_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = OTreeBagger(n_estimators=6, random_state=0, consistency="data").fit(X, y)
    for group in data.groups_:
        assert 0 in group.space.kept.tolist() and 0 not in group.space.additive.features.tolist()
        assert {1, 2} <= set(group.space.additive.features.tolist())
    assert data.consistency_notion_ == "data" and data.is_consistent()
    worst, witness = gap_walk(data, X, _rows(X))
    assert worst <= 1, witness


def test_move_pairs_budget_stops_past_it_and_changes_nothing_within():
    """Check that ``max_pairs`` raises, naming itself, once more pairs than it are found, and that at the exact count
    it returns them all."""
    from relabel import TooManyRegionsError

    cuts = np.linspace(0, 10, 12)
    cells = np.column_stack([g.ravel() for g in np.meshgrid(np.arange(11), np.arange(11), indexing="ij")])
    lower = np.column_stack([cuts[cells[:, j]] for j in range(2)])
    upper = np.column_stack([cuts[cells[:, j] + 1] for j in range(2)])
    args = (lower, upper, [[2.5, 0.0]], [[0.0, 0.0]], [0.0, 0.0], [0.0, 0.0], [10.0, 10.0])
    every = move_pairs(*args)
    assert every.shape[0] > 100
    np.testing.assert_array_equal(move_pairs(*args, max_pairs=every.shape[0]), every)
    # The message names the parameter the caller passed, not OTreeBagger's max_edges.
    with pytest.raises(TooManyRegionsError, match=f"move pairs has more than max_pairs={every.shape[0] - 1} .*raise max_pairs"):
        move_pairs(*args, max_pairs=every.shape[0] - 1)


def test_move_pairs_among_some_regions_are_those_of_the_full_search_that_touch_them():
    """Check that ``among`` keeps exactly the pairs of the full search with a region in it, each once, with and
    without labels (a pair of two such regions is found from both and must come back once)."""
    rng = np.random.RandomState(3)
    cuts = np.linspace(0, 10, 9)
    cells = np.column_stack([g.ravel() for g in np.meshgrid(np.arange(8), np.arange(8), indexing="ij")])
    lower = np.column_stack([cuts[cells[:, j]] for j in range(2)])
    upper = np.column_stack([cuts[cells[:, j] + 1] for j in range(2)])
    args = (lower, upper, [[2.0, 0.5], [0.0, 3.0]], [[0.0, 0.2], [0.0, 0.0]], [0.0, 0.0], [0.0, 0.0], [10.0, 10.0])
    labels = rng.randint(0, 4, size=lower.shape[0])
    for jumps_of in (None, labels):
        every = move_pairs(*args, jumps_of=jumps_of)
        assert every.shape[0] > 20
        for share in (0.1, 0.5, 1.0):
            among = rng.uniform(size=lower.shape[0]) < share
            some = move_pairs(*args, jumps_of=jumps_of, among=among)
            np.testing.assert_array_equal(some, every[among[every[:, 0]] | among[every[:, 1]]])
        assert move_pairs(*args, jumps_of=jumps_of, among=np.zeros(lower.shape[0], bool)).shape == (0, 2)
    with pytest.raises(ValueError, match="among must hold one bool per region"):
        move_pairs(*args, among=np.ones(lower.shape[0] - 1, bool))


def test_a_group_whose_move_pairs_pass_the_edges_budget_fuses_fewer_trees(monkeypatch):
    """Check that a group solving with all its move pairs counts them with its contacts against ``max_edges``:
    with a budget above its contacts but below contacts and pairs, it fuses fewer trees, and stays certified."""
    import ensemble.otreebagger._groups as groups
    from ensemble.otreebagger._otreebagger import GroupSizeWarning

    X, y = _data("plain", 3, n=400, d=7)
    monkeypatch.setattr(groups, "_LAZY_ROUNDS", 0)  # every group solves with all its pairs at once
    params = dict(n_estimators=3, group_size=3, random_state=0, projection="additive")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = OTreeBagger(**params).fit(X, y)
    group = whole.groups_[0]
    contacts = relabel.adjacency_edges(group.partition, contact="closure").edges.shape[0]
    pairs = move_edges(group.partition, group.trees, group.space, None).shape[0]
    assert whole.groups_info_[0]["group_size"] == 3 and pairs > 0
    with pytest.warns(GroupSizeWarning):
        model = OTreeBagger(**params, relabel_params={"max_edges": contacts + pairs // 2}).fit(X, y)
    assert model.groups_info_[0]["group_size"] < 3
    assert model.is_consistent()
    with pytest.raises(relabel.TooManyRegionsError, match=r"contacts and its move pairs pass max_edges=\d+.*Measured"):
        OTreeBagger(**params, relabel_params={"max_edges": contacts + pairs // 2, "on_budget": "raise"}).fit(X, y)


@pytest.mark.parametrize("consistency", ["data", "pointwise"])
def test_move_pairs_added_as_broken_reach_the_optimum_of_all_pairs_at_once(monkeypatch, consistency):
    """Check that the move pairs added round by round, only where the labelling breaks them, give each group
    the optimum of the problem holding all of them from the start (same objective, labels consistent on all)."""
    import ensemble.otreebagger._groups as groups

    X, y = _data("plain", 3, n=400, d=7)
    objectives, rounds = {}, {}
    calls = []
    real = move_edges

    def counted(*args, **kwargs):  # a group's search, each call of it counted
        search = groups_search(*args, **kwargs)

        def asked(partition, **options):
            calls.append(options.get("jumps_of") is not None)
            return search(partition, **options)
        return asked

    groups_search = groups.move_search
    monkeypatch.setattr(groups, "move_search", counted)
    for name, lazy_rounds in [("lazy", 8), ("all", 0)]:
        monkeypatch.setattr(groups, "_LAZY_ROUNDS", lazy_rounds)
        calls.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = OTreeBagger(n_estimators=6, random_state=0, consistency=consistency,
                                projection="additive").fit(X, y)
        objectives[name] = [g.info["objective"] for g in model.groups_]
        rounds[name] = sum(calls)
        assert model.is_consistent()
        for group in model.groups_:
            every = real(group.partition, group.trees, group.space, None,
                         reach="gap" if consistency == "data" else "float")
            assert np.all(np.abs(np.diff(group.labels[every], axis=1)) <= 1)
    if consistency == "data":  # some group broke pairs after its first solve and was solved again
        assert rounds["lazy"] > len(objectives["lazy"])
    np.testing.assert_allclose(objectives["lazy"], objectives["all"], rtol=1e-12)


def test_later_rounds_asking_only_the_changed_regions_find_every_pair_the_solves_break(monkeypatch):
    """Check the rounds after the first, which search only the pairs of regions whose labels changed: on integer
    features (five values, where a solve with the first round's pairs breaks new ones) later searches find
    pairs, and every group ends with the objective of all pairs at once and breaks none of them."""
    import ensemble.otreebagger._groups as groups

    rng = np.random.RandomState(3)
    U = rng.uniform(size=(400, 7))
    y = np.clip((U[:, :3].sum(axis=1) / 3 * 5 + 0.4 * rng.normal(size=400)).astype(int), 0, 4)
    X = np.floor(U * 5)
    real, found_later, groups_search = move_edges, [], groups.move_search

    def counted(*args, **kwargs):  # a group's search, the pairs its later rounds find counted
        search = groups_search(*args, **kwargs)

        def asked(partition, **options):
            out = search(partition, **options)
            if options.get("among") is not None:
                found_later.append(out.shape[0])
            return out
        return asked

    monkeypatch.setattr(groups, "move_search", counted)
    objectives = {}
    for name, lazy_rounds in [("lazy", 8), ("all", 0)]:
        monkeypatch.setattr(groups, "_LAZY_ROUNDS", lazy_rounds)
        model = OTreeBagger(n_estimators=6, random_state=0, projection="additive").fit(X, y)
        objectives[name] = [g.info["objective"] for g in model.groups_]
        for group in model.groups_:
            every = real(group.partition, group.trees, group.space, None, reach="gap")
            assert np.all(np.abs(np.diff(group.labels[every], axis=1)) <= 1)
        if name == "lazy":
            assert sum(n > 0 for n in found_later) >= 2, found_later
    np.testing.assert_allclose(objectives["lazy"], objectives["all"], rtol=1e-12)


def test_the_steep_pilot_reads_the_constrained_features_too():
    """Check that a constrained feature stays in the pilot that finds steep features: left out, the coarse copy
    of it (5 values) took its place in the pilot's curves and looked steep, and moved to an axis of its own."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(400, 6))
    X[:, 0] = rng.randint(0, 12, 400).astype(float)
    latent = 2.0 * (X[:, 0] >= 6) + 3.0 * X[:, 1] + 0.3 * rng.normal(size=400)
    X[:, 2] = np.floor(X[:, 1] * 5)  # a coarse copy of x1
    y = np.clip(np.round(latent), 0, 4).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OTreeBagger(n_estimators=6, random_state=0, monotonic_cst=[0, 1, 0, 0, 0, 0]).fit(X, y)
    for group in model.groups_:
        assert 0 in group.space.kept.tolist() and 2 not in group.space.kept.tolist()
    assert model.consistency_notion_ == "data" and model.is_consistent() and model.is_monotone()
