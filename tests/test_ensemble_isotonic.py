"""The isotonic projection of a tree's leaf values (ensemble.forest._monotone) against brute force."""

# These tests are about the pointwise machinery of projected (or monotone) models, which the data's
# resolution (docs/design.md section 13) does not certify: their models are fitted for the pointwise notion.

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

import relabel
from ensemble import ConsistentForestClassifier
from ensemble.certificates._certificates import NodeArrays, monotone_leaf_pairs, tree_nodes, trees_are_monotone
from ensemble.forest._monotone import isotonic_leaf_values
from trees import leaf_boxes


def _reach(nodes, n_features):
    """Brute force: for every leaf and feature, can a point missing that feature reach it (walk every path)."""
    left, right, feature, _, missing = nodes
    out = {}

    def walk(node, ok):
        if left[node] == -1:
            out[node] = ok.copy()
            return
        f = feature[node]
        for child, goes in ((left[node], missing[node] != 0), (right[node], missing[node] == 0)):
            nxt = ok.copy()
            nxt[f] = ok[f] and goes
            walk(child, nxt)

    walk(0, np.ones(n_features, bool))
    return out


def _brute_pairs(nodes, cst):
    """Every ordered leaf pair, tested one by one: a face across a constrained feature, or missing on the others."""
    d = len(cst)
    boxes = leaf_boxes(NodeArrays(*nodes[:4], d), d)
    reach = _reach(nodes, d)
    ids = boxes.leaf_ids
    pairs = set()
    for i in range(ids.shape[0]):
        for j in range(ids.shape[0]):
            for f in np.flatnonzero(cst):
                present = all(boxes.lower[k, f] < boxes.upper[k, f] for k in (i, j))
                if not (present and np.isfinite(boxes.upper[i, f]) and boxes.upper[i, f] == boxes.lower[j, f]):
                    continue
                ok = all(f == g or max(boxes.lower[i, g], boxes.lower[j, g]) < min(boxes.upper[i, g], boxes.upper[j, g])
                         or (reach[ids[i]][g] and reach[ids[j]][g]) for g in range(d))
                if ok:
                    pairs.add((i, j) if cst[f] > 0 else (j, i))
    return ids, pairs


def _brute(nodes, value, weight, cst, step):
    """Every monotone assignment of grid levels to the leaves; the cheapest in weighted |new - value|."""
    leaves, pair_set = _brute_pairs(nodes, cst)
    pairs = np.array(sorted(pair_set), dtype=np.int64).reshape(-1, 2)
    v = value[leaves]
    levels = np.arange(np.floor(v.min() / step), np.ceil(v.max() / step) + 1) * step
    best = np.inf
    for combo in itertools.product(levels, repeat=leaves.shape[0]):
        combo = np.array(combo)
        if np.all(combo[pairs[:, 0]] <= combo[pairs[:, 1]]):
            best = min(best, float(np.sum(weight[leaves] * np.abs(combo - v))))
    return best, leaves


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), cst=st.sampled_from([[1, 0], [-1, 0], [1, -1], [0, 1]]))
def test_projection_is_the_cheapest_monotone_grid_assignment(seed, cst):
    """Check on trees of at most 5 leaves that the projection is monotone and as cheap as brute force."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(40, 2))
    y = rng.uniform(0, 3, size=40)
    tree = DecisionTreeRegressor(max_leaf_nodes=5, random_state=seed).fit(X, y)
    nodes = tree_nodes(tree)
    value = tree.tree_.value[:, 0, 0].copy()
    weight = tree.tree_.weighted_n_node_samples.astype(float)
    step = 0.5
    projected = isotonic_leaf_values(nodes, value, weight, 2, np.array(cst), step)
    if trees_are_monotone([nodes], [value], 2, np.array(cst)):
        np.testing.assert_array_equal(projected, value)  # nothing to project
        return
    best, leaves = _brute(nodes, value, weight, cst, step)
    cost = float(np.sum(weight[leaves] * np.abs(projected[leaves] - value[leaves])))
    assert cost == pytest.approx(best, abs=1e-9)
    assert trees_are_monotone([nodes], [projected], 2, np.array(cst))
    assert np.allclose(projected[leaves] / step, np.round(projected[leaves] / step))


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), cst=st.sampled_from([[1, 0], [-1, 0], [1, -1], [0, 1]]),
       nan=st.booleans())
def test_monotone_leaf_pairs_equal_brute_force(seed, cst, nan):
    """Check the monotone pairs (faces and missing values) against every pair tested one by one."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(60, 2))
    if nan:
        X[rng.uniform(size=X.shape) < 0.2] = np.nan
    y = rng.uniform(0, 3, size=60)
    tree = DecisionTreeRegressor(max_leaf_nodes=8, random_state=seed).fit(X, y)
    nodes = tree_nodes(tree)
    leaves, pairs = monotone_leaf_pairs(nodes, 2, np.array(cst))
    ids, brute = _brute_pairs(nodes, np.array(cst))
    assert leaves.tolist() == ids.tolist()
    assert {tuple(p) for p in pairs.tolist()} == brute
    if not nan:
        # They include the face contacts of the tree's partition (with missing values in the data,
        # a leaf may hold only missing values: an empty box, which fusion refuses).
        faces = relabel.monotone_pairs(relabel.fuse([leaf_boxes(NodeArrays(*nodes[:4], 2))], snap=False),
                                       np.array(cst))
        assert {tuple(p) for p in faces.tolist()} <= brute


def test_free_tree_is_caught_and_projected():
    """Check a model built to fail: a free tree on data falling in a +1 feature is not monotone, its projection is."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 1))
    y = 2 - 2 * X[:, 0] + 0.2 * rng.normal(size=200)
    tree = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    nodes, value = tree_nodes(tree), tree.tree_.value[:, 0, 0].copy()
    assert not trees_are_monotone([nodes], [value], 1, np.array([1]))
    projected = isotonic_leaf_values(nodes, value, tree.tree_.weighted_n_node_samples, 1, np.array([1]), 2.0 ** -4)
    assert trees_are_monotone([nodes], [projected], 1, np.array([1]))


@pytest.mark.parametrize("method", ["isotonic", "basic"])
def test_monotone_forest_methods_are_certified_and_isotonic_costs_nothing(method):
    """Check both rules certify, and on data monotone in the constraints the projection loses at most 0.02 MAE."""
    rng = np.random.RandomState(0)

    def data(n):
        X = rng.uniform(size=(n, 4))
        s = 2 * X[:, 0] - 1.5 * X[:, 1] + 0.5 * np.sin(6 * X[:, 2]) + 0.3 * rng.normal(size=n)
        return X, np.digitize(s, [-0.6, -0.1, 0.4, 0.9])

    X, y = data(600)
    Xt, yt = data(3000)
    free = ConsistentForestClassifier(consistency="pointwise", random_state=0).fit(X, y)
    model = ConsistentForestClassifier(consistency="pointwise", monotonic_cst=[1, -1, 0, 0], monotonic_method=method, random_state=0).fit(X, y)
    assert model.is_monotone() and model.is_consistent()
    mae = lambda m: np.abs(m.predict(Xt) - yt).mean()  # noqa: E731
    if method == "isotonic":
        assert mae(model) <= mae(free) + 0.02
