"""The certified forest's split of capped leaves (docs/design.md section 13, "The forest"), against its definition.

- ``split_leaves`` keeps the tree's function and its thresholds: every point reaches a piece of the leaf
  it reached before, and the pieces are cut exactly at the tree's own thresholds strictly inside the leaf
  on the listed feature (with ``reach=1``, only the nearest to each listed face), counted by brute force.
- The split structure written into scikit-learn's and our own trees predicts, and weighs its features, as
  before, and pickles.
- ``split_capped_leaves`` keeps every piece's value and re-routes the out-of-bag rows; ``undo_splits`` puts
  the trees back as they were.
- Forests fitted on data whose classes jump two at one unit (balance-scale's kind), where leaves are split,
  stay certified at the data's resolution, walked exactly along every gap (``oracles.gap_walk_spans``).
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from ensemble import ConsistentForestClassifier
from ensemble.base._kernels import tree_apply
from ensemble.certificates._certificates import tree_nodes
from ensemble.certificates._jumps import NodeArrays
from ensemble.forest import _forest
from ensemble.forest._split_leaves import split_capped_leaves, split_leaves, undo_splits
from oracles import gap_walk_spans
from trees import OrdinalTreeClassifier, leaf_boxes


def _tree(seed, n=200, d=3, kind="sklearn"):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 6, size=(n, d)).astype(np.float64)
    y = (X @ rng.uniform(0.5, 1.5, d) + rng.normal(scale=1.0, size=n)).round().clip(0, 8)
    model = DecisionTreeRegressor(max_depth=6, random_state=seed) if kind == "sklearn" else \
        OrdinalTreeClassifier(max_depth=6, random_state=seed)
    return model.fit(X, y if kind == "sklearn" else y.astype(int)), X, rng


def _probe_points(X, nodes, rng):
    """Training rows, every threshold of the tree on its feature, and points between."""
    points = [X, X + rng.uniform(-0.5, 0.5, X.shape)]
    for f, t in zip(nodes[2], nodes[3], strict=True):
        if f >= 0:
            at = X[:20].copy()
            at[:, f] = t
            points.append(at)
    return np.ascontiguousarray(np.vstack(points))


def _cuts_by_definition(nodes, leaf, f, sides, reach, d):
    """The tree's thresholds on f strictly inside the leaf's interval, nearest ``reach`` to the listed faces."""
    left, right, feature, threshold = (np.asarray(a) for a in nodes[:4])
    boxes = leaf_boxes(NodeArrays(left, right, feature, threshold, d), d)
    row = int(np.flatnonzero(boxes.leaf_ids == leaf)[0])
    lo, hi = boxes.lower[row, f], boxes.upper[row, f]
    inside = sorted({float(t) for t, g, l in zip(threshold, feature, left, strict=True) if l >= 0 and g == f
                     and lo < t < hi})
    if reach < 0:
        return inside
    kept = set()
    if sides & 1:
        kept |= set(inside[-reach:])
    if sides & 2:
        kept |= set(inside[:reach])
    return sorted(kept)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("reach", [-1, 1])
def test_split_leaves_keep_every_point_in_its_leaf_and_cut_only_at_the_trees_own_thresholds(seed, reach):
    """Check split_leaves against its definition on random leaves and features: every probe point reaches a
    piece whose origin is the leaf it reached, each split leaf has one more piece per listed cut (brute force),
    and the split tree's thresholds per feature are the grown tree's."""
    tree, X, rng = _tree(seed)
    nodes = tree_nodes(tree)
    leaves_all = np.flatnonzero(np.asarray(nodes[0]) < 0)
    leaves = rng.choice(leaves_all, size=min(8, leaves_all.shape[0]), replace=False)
    features = rng.randint(0, X.shape[1], leaves.shape[0])
    sides = rng.randint(1, 4, leaves.shape[0])
    split = split_leaves(nodes, leaves, features, X.shape[1], X, sides, reach=reach)
    expected = {int(leaf): _cuts_by_definition(nodes, leaf, int(f), int(s), reach, X.shape[1])
                for leaf, f, s in zip(leaves, features, sides, strict=True)}
    if split is None:
        assert not any(expected.values())
        return
    points = _probe_points(X, nodes, rng)
    before = tree_apply(points, *[np.ascontiguousarray(a) for a in nodes])
    after = tree_apply(points, *split.nodes)
    np.testing.assert_array_equal(split.origin[after], before)
    new_left = split.nodes[0]
    for leaf, cuts in expected.items():
        pieces = np.flatnonzero((new_left < 0) & (split.origin == leaf))
        assert pieces.shape[0] == len(cuts) + 1
    for f in range(X.shape[1]):
        grown = set(np.asarray(nodes[3])[(np.asarray(nodes[0]) >= 0) & (np.asarray(nodes[2]) == f)].tolist())
        now = set(split.nodes[3][(new_left >= 0) & (split.nodes[2] == f)].tolist())
        assert now == grown
    # Children sit above their parents, as the kernels that sum and route through the tree read them.
    inner = np.flatnonzero(new_left >= 0)
    assert np.all(new_left[inner] > inner) and np.all(split.nodes[1][inner] > inner)
    shares = np.bincount(split.origin[(new_left < 0)], weights=split.share[new_left < 0])
    np.testing.assert_allclose(shares[np.unique(split.origin[new_left < 0])], 1.0)


@pytest.mark.parametrize("kind", ["sklearn", "ordinal"])
def test_a_written_split_predicts_and_weighs_its_features_as_before_and_pickles(kind):
    """Check write(): the split tree's own predict (and class shares) equal the grown tree's everywhere probed,
    its impurity-decrease importances are unchanged (pieces add no decrease), and it survives a pickle."""
    tree, X, rng = _tree(3, kind=kind)
    grown = copy.deepcopy(tree)
    nodes = tree_nodes(tree)
    leaves = np.flatnonzero(np.asarray(nodes[0]) < 0)
    split = split_leaves(nodes, leaves, np.zeros(leaves.shape[0], np.int64), X.shape[1], X)
    assert split is not None
    split.write(tree)
    assert tree.tree_.node_count > grown.tree_.node_count
    points = _probe_points(X, nodes, rng)
    np.testing.assert_allclose(tree.predict(points), grown.predict(points))
    if kind == "ordinal":
        np.testing.assert_allclose(tree.predict_proba(points), grown.predict_proba(points))
    np.testing.assert_allclose(tree.feature_importances_, grown.feature_importances_, atol=1e-12)
    again = pickle.loads(pickle.dumps(tree))
    np.testing.assert_allclose(again.predict(points), grown.predict(points))


def _own_prediction(tree, X):
    """What the tree itself predicts: classes and their shares for ours, values for scikit-learn's."""
    if isinstance(tree, OrdinalTreeClassifier):
        return np.column_stack([tree.predict(X), tree.predict_proba(X)])
    return tree.predict(X)


def _balance_like(n=260, seed=0):
    """Four integer features 1..5 and the class of a balance (1 left, 2 balanced, 3 right): classes jump two."""
    rng = np.random.RandomState(seed)
    X = rng.randint(1, 6, size=(n, 4)).astype(np.float64)
    torque = X[:, 0] * X[:, 1] - X[:, 2] * X[:, 3]
    return X, np.where(torque > 0, 1, np.where(torque < 0, 3, 2))


@pytest.mark.parametrize("criterion", ["squared_error", "ogini"])
def test_split_capped_leaves_keep_the_values_and_undo_puts_the_trees_back(monkeypatch, criterion):
    """Check the forest-level split inside a fit: every training row gets from a split tree the value it got
    from the grown one (as grown and as voted), the out-of-bag rows are routed again through the split trees,
    and undo_splits restores every tree's nodes and values, and what the tree itself predicts."""
    X, y = _balance_like()
    seen = {}
    probe = np.ascontiguousarray(X[:50])

    def checked(trees, voters, grown, oob, pairs, cap, X_, weight):
        before = [(tuple(np.array(a) for a in tree_nodes(t)), v.value.copy(), g.copy())
                  for t, v, g in zip(trees, voters, grown, strict=True)]
        own = [_own_prediction(t, probe) for t in trees]
        undo = split_capped_leaves(trees, voters, grown, oob, pairs, cap, X_, weight)
        seen["split"] = len(undo)
        rows = np.ascontiguousarray(X_)
        for i, *_ in undo:
            nodes = tree_nodes(trees[i])
            assert np.asarray(nodes[0]).shape[0] > before[i][0][0].shape[0]
            old_leaf = tree_apply(rows, *[np.ascontiguousarray(a) for a in before[i][0]])
            new_leaf = tree_apply(rows, *nodes)
            np.testing.assert_array_equal(grown[i][new_leaf], before[i][2][old_leaf])
            np.testing.assert_array_equal(voters[i].value[new_leaf], before[i][1][old_leaf])
            if oob[i] is not None:
                np.testing.assert_array_equal(oob[i][1], new_leaf[oob[i][0]])
        undo_splits(undo, trees, voters, grown, oob)
        for i, *_ in undo:
            np.testing.assert_array_equal(tree_nodes(trees[i])[0], before[i][0][0])
            np.testing.assert_array_equal(voters[i].value, before[i][1])
            np.testing.assert_array_equal(_own_prediction(trees[i], probe), own[i])
            if isinstance(trees[i], OrdinalTreeClassifier):  # its per-node labels are its structure's again
                assert trees[i].leaf_label_.shape[0] == trees[i].tree_.node_count
        return split_capped_leaves(trees, voters, grown, oob, pairs, cap, X_, weight)  # and on with the fit

    monkeypatch.setattr(_forest, "split_capped_leaves", checked)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ConsistentForestClassifier(n_estimators=30, criterion=criterion, random_state=0).fit(X, y)
    assert seen["split"] > 0, "no leaf was split: the data were meant to break caps"
    assert model.consistency_notion_ == "data" and model.is_consistent()


@pytest.mark.parametrize("split", [True, False])
def test_the_pairs_the_caps_and_the_certificate_read_are_every_pair_of_the_final_trees_fully_counted(monkeypatch,
                                                                                                     split):
    """Which pairs break their caps is decided on counts refined only as far as that question needs; the caps the
    capping keeps and the pairs the certificate reads must be every face pair of the final trees with its full
    count, whether leaves were split (pairs found again) or not (the first counts completed)."""
    from ensemble.certificates._certificates import gap_pairs

    X, y = _balance_like()
    seen = {}
    original = ConsistentForestClassifier._certificate

    def recording(self, *args, **kwargs):
        seen["pairs"] = kwargs.get("pairs")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ConsistentForestClassifier, "_certificate", recording)
    if not split:
        monkeypatch.setattr(_forest, "split_capped_leaves", lambda *args: [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ConsistentForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    full = gap_pairs(model._trees_nodes(), model._grid, np.ones(X.shape[1], bool), exact_limit=0)
    kept = seen["pairs"]
    assert kept is not None and kept.tree.shape[0] == full.tree.shape[0] > 0
    for name in ("tree", "a", "b", "node", "feature", "gap", "neighbours"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(full, name))
    assert model.consistency_notion_ == "data" and model.is_consistent()


@pytest.mark.parametrize("seed", range(3))
def test_forests_with_split_leaves_never_jump_two_classes_inside_a_gap(seed):
    """Fit the default forest on balance-like data (its trees' leaves are split) and walk every gap of every
    feature from 60 rows exactly (every threshold and the float above it): at most one class apart, and the
    forest says it is consistent at the data's resolution."""
    X, y = _balance_like(seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ConsistentForestClassifier(n_estimators=40, random_state=seed).fit(X, y)
    assert model.consistency_notion_ == "data" and model.is_consistent()
    worst, witness = gap_walk_spans(model, X, X[:60])
    assert worst <= 1, witness
