"""Thresholds moved to nearby gaps with room (ensemble.forest._gap_room): where they may go, and what the forest gains."""

import warnings

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from ensemble import ConsistentForestClassifier
from ensemble.certificates._certificates import face_steps, gap_loads, tree_nodes
from ensemble.forest._gap_room import _allowed_intervals, spread_thresholds_into_room
from oracles import gap_walk_spans
from relabel import DataGrid


def _path_bounds(left, right, feature, threshold, node):
    """The interval of ``node``'s feature its threshold may take, by definition: above every threshold on that
    feature of an ancestor it lies right of or of a node of its left subtree, below the others."""
    parent = {int(c): m for m in range(left.shape[0]) if left[m] >= 0 for c in (left[m], right[m])}
    f, lo, hi = feature[node], -np.inf, np.inf
    child = node
    while child in parent:
        a = parent[child]
        if feature[a] == f:
            if left[a] == child:
                hi = min(hi, threshold[a])
            else:
                lo = max(lo, threshold[a])
        child = a
    stack = [(int(left[node]), "left"), (int(right[node]), "right")]
    while stack:
        m, side = stack.pop()
        if left[m] < 0:
            continue
        if feature[m] == f:
            lo, hi = (max(lo, threshold[m]), hi) if side == "left" else (lo, min(hi, threshold[m]))
        stack += [(int(left[m]), side), (int(right[m]), side)]
    return lo, hi


@pytest.mark.parametrize("seed", range(4))
def test_allowed_intervals_equal_their_definition(seed):
    rng = np.random.RandomState(seed)
    X = rng.rand(200, 2)
    tree = DecisionTreeRegressor(max_depth=6, random_state=seed).fit(X, rng.rand(200))
    left, right, feature, threshold, _ = (np.asarray(a) for a in tree_nodes(tree))
    lo, hi = _allowed_intervals(left.astype(np.int64), right.astype(np.int64), feature.astype(np.int64),
                                threshold.astype(np.float64))
    for m in np.flatnonzero(left >= 0):
        assert (lo[m], hi[m]) == _path_bounds(left, right, feature, threshold, m)
        assert lo[m] < threshold[m] < hi[m]


def _trees_on_one_strong_split(n_trees, seed):
    """Trees that all split x0 in the same gap first (the class steps there), on integer data."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 40, size=(300, 2)).astype(np.float64)
    y = 3.0 * (X[:, 0] >= 20) + rng.normal(scale=0.3, size=300)
    trees, values = [], []
    for t in range(n_trees):
        rows = rng.randint(0, 300, size=300)
        tree = DecisionTreeRegressor(max_depth=4, random_state=t).fit(X[rows], y[rows])
        trees.append(tree)
        values.append(np.rint(tree.tree_.value[:, 0, 0] * 16).astype(np.int64))
    return X, [tree_nodes(t) for t in trees], values


def test_spread_keeps_every_threshold_inside_its_allowed_interval_and_fills_gaps_up_to_the_budget():
    X, nodes, values = _trees_on_one_strong_split(20, 0)
    grid = DataGrid.from_data(X)
    countable = np.ones(2, bool)
    budget = 3 * 16 * 4  # room for about four trees' steps of 3 classes in one gap
    before = gap_loads(nodes, values, grid, countable, ranges_only=False)
    new, (owner, node, lo, hi) = spread_thresholds_into_room(nodes, values, grid, countable, budget,
                                                             np.random.RandomState(0), window=8)
    assert owner.shape[0] > 0  # the crowded gap sent thresholds elsewhere
    moved_nodes = [n[:3] + (t,) + n[4:] for n, t in zip(nodes, new)]
    for t, (left, right, feature, _, _) in enumerate(moved_nodes):
        threshold = new[t]
        for m in np.flatnonzero(np.asarray(left) >= 0):
            a, b = _path_bounds(np.asarray(left), np.asarray(right), np.asarray(feature), threshold, m)
            assert a < threshold[m] < b  # no leaf emptied: the order on every path holds
    for t, m, a, b in zip(owner, node, lo, hi):
        f = nodes[t][2][m]
        home = grid.threshold_gaps(f, np.array([nodes[t][3][m]]))[0]
        gap = grid.threshold_gaps(f, np.array([new[t][m]]))[0]
        assert a <= new[t][m] < b and 1 <= abs(int(gap) - int(home)) <= 8
    # Every gap a threshold moved into carries at most the budget (the sums of the largest steps).
    rises = [face_steps(n, v, 2, countable) for n, v in zip(moved_nodes, values)]
    load = {}
    for t, n in enumerate(moved_nodes):
        for m in np.flatnonzero(np.asarray(n[0]) >= 0):
            key = (int(n[2][m]), int(grid.threshold_gaps(int(n[2][m]), np.array([new[t][m]]))[0]))
            up, down = load.get(key, (0, 0))
            load[key] = (up + rises[t][0][m], down + rises[t][1][m])
    for t, m in zip(owner, node):
        key = (int(nodes[t][2][m]), int(grid.threshold_gaps(int(nodes[t][2][m]), np.array([new[t][m]]))[0]))
        assert max(load[key]) <= budget
    after = gap_loads(moved_nodes, values, grid, countable, ranges_only=True)
    assert after.loads[0].max() < gap_loads(nodes, values, grid, countable, ranges_only=True).loads[0].max()
    assert before.bound > 0


def test_forest_on_a_steep_step_spreads_its_splits_and_stays_certified():
    rng = np.random.RandomState(1)
    X = rng.randint(0, 60, size=(400, 3)).astype(np.float64)
    score = np.where(X[:, 0] >= 30, 3.0, 0.0) + X[:, 1] / 30 + rng.normal(scale=0.4, size=400)
    y = np.clip(np.rint(score), 0, 4).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ConsistentForestClassifier(random_state=0).fit(X, y)
    assert model.consistency_notion_ == "data" and model.is_consistent()
    roots = np.array([t.tree_.threshold[0] for t in model.estimators_ if t.tree_.feature[0] == 0])
    gaps = DataGrid.from_data(X).threshold_gaps(0, roots)
    assert np.unique(gaps).shape[0] > 1  # the roots no longer all share the gap of the step
    worst, witness = gap_walk_spans(model, X, X[:60])
    assert worst <= 1, witness
    # Nothing moved a training row's class off by the spreading alone: the forest still fits the step.
    assert np.mean(np.abs(model.predict(X) - y)) < 0.5


def test_monotone_envelope_forest_is_certified_at_the_data_resolution_where_its_gaps_have_room():
    """Envelope trees stay monotone wherever their thresholds are: moved to gaps with room, a forest with one
    constrained feature certifies the data's resolution, and the oracles agree (gap walks, monotone lines)."""
    rng = np.random.RandomState(0)
    X = rng.rand(300, 3)
    y = np.clip((X[:, 0] * 3 + X[:, 1] + rng.normal(scale=0.3, size=300)).astype(int), 0, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ConsistentForestClassifier(monotonic_cst=[1, 0, 0], random_state=0).fit(X, y)
    assert model.consistency_notion_ == "data" and model.is_consistent() and model.is_monotone()
    worst, witness = gap_walk_spans(model, X, X[:60])
    assert worst <= 1, witness
    line = np.repeat(X[:20], 50, axis=0)
    line[:, 0] = np.tile(np.linspace(-0.1, 1.1, 50), 20)
    classes = model.predict(line).reshape(20, 50)
    assert np.all(np.diff(classes, axis=1) >= 0)  # rising along the constrained feature on every line


def test_monotone_forest_on_two_valued_steps_has_no_room_and_says_pointwise():
    """Built to fail: the class jumps by three between the only two values of x0; no move can spread that."""
    rng = np.random.RandomState(1)
    X = np.c_[rng.randint(0, 2, 300).astype(float), rng.rand(300)]
    y = 3 * X[:, 0].astype(int) + (X[:, 1] > 0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = ConsistentForestClassifier(monotonic_cst=[1, 0], random_state=0).fit(X, y)
    assert model.consistency_notion_ == "pointwise" and not model.is_consistent(notion="data")
    assert any("pointwise only" in str(w.message) for w in caught)


def test_node_values_hold_the_rows_reaching_each_node_by_a_walk_of_every_row():
    from ensemble.forest._gap_room import _node_values

    rng = np.random.RandomState(0)
    X = rng.rand(300, 3)
    X[rng.rand(300, 3) < 0.1] = np.nan  # missing values follow the node's side and are not recorded
    tree = DecisionTreeRegressor(max_depth=5, random_state=0).fit(np.nan_to_num(X), rng.rand(300))
    left, right, feature, threshold, missing = (np.asarray(a) for a in tree_nodes(tree))
    start, values = _node_values(left.astype(np.int64), right.astype(np.int64), feature.astype(np.int64),
                                 threshold.astype(np.float64), missing.astype(bool), X)
    expected = {int(m): [] for m in np.flatnonzero(left >= 0)}
    for x in X:
        m = 0
        while left[m] >= 0:
            v = x[feature[m]]
            if np.isnan(v):
                m = left[m] if missing[m] else right[m]
                continue
            expected[int(m)].append(v)
            m = left[m] if v <= threshold[m] else right[m]
    for m, vals in expected.items():
        np.testing.assert_array_equal(np.sort(values[start[m]:start[m + 1]]), np.sort(vals))
