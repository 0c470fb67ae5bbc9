"""Tests of missing values (NaN) in OrdinalTreeClassifier: oracles, scikit-learn, routing, leaf boxes, constraints."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier
from test_trees_classifier import make_ordinal, oracle_gain, oracle_impurity, same_partition

from ensemble.base._estimator import SKLEARN_ROUTES_MISSING
from trees import CRITERIA, OrdinalTreeClassifier, leaf_boxes



# scikit-learn's trees are the oracle of these tests; its split search and routing of
# missing values are those implemented here from 1.8 on (1.6 and 1.7 try fewer NaN
# splits and, with sample weights, route NaN at prediction unlike in training).
needs_sklearn_18 = pytest.mark.skipif(not SKLEARN_ROUTES_MISSING,
                                      reason="scikit-learn < 1.8 handles missing values in trees differently")

def with_missing(X, fraction, seed):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


def goes_left(x, threshold, missing_left):
    """The routing rule, written out: NaN follows missing_left, numbers go left when <= threshold."""
    return np.where(np.isnan(x), missing_left, x <= threshold)


# ---------------------------------------------------------------- brute-force grower oracle
def reference_tree(X, y, w, n_classes, criterion, max_depth, min_samples_leaf):
    """A recursive grower with loops over features, gaps and the side of the missing values.

    Candidates in the documented order: features ascending; in a feature, the gaps
    between consecutive distinct real values ascending, each with the missing
    values sent right then left; then all real values left and the missing ones
    right (threshold +inf). Gains within 1e-11 of the parent's impurity tie and the
    first candidate wins. A split whose feature has no missing value in the node
    sends missing values to the child with more rows (right on a tie). Returns
    leaves as (path, counts), a path being a list of (feature, threshold,
    missing_left, went_left).
    """
    total = w.sum()
    leaves = []

    def grow(idx, depth, path):
        value = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        stop = (max_depth is not None and depth >= max_depth) or idx.size < 2 * min_samples_leaf \
            or np.count_nonzero(value) <= 1
        candidates = []
        if not stop:
            for f in range(X.shape[1]):
                x = X[idx, f]
                missing = np.isnan(x)
                real = np.unique(x[~missing])
                options = []
                for a, b in zip(real[:-1], real[1:]):
                    thr = a / 2.0 + b / 2.0
                    options += [(thr, False), (thr, True)] if missing.any() else [(thr, False)]
                if missing.any() and real.size:
                    options.append((np.inf, False))
                for thr, missing_left in options:
                    left = goes_left(x, thr, missing_left)
                    if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                        continue
                    lc = np.bincount(y[idx[left]], weights=w[idx[left]], minlength=n_classes)
                    candidates.append((oracle_gain(criterion, lc, value - lc), f, thr, missing_left))
        best = None
        if candidates:
            top = max(c[0] for c in candidates)
            tol = 1e-11 * abs(oracle_impurity(criterion, value))
            best = next(c for c in candidates if c[0] >= top - tol)
        if best is not None and value.sum() / total * (best[0] + tol) + np.finfo(float).eps >= 0.0:
            _, f, thr, missing_left = best
            left = goes_left(X[idx, f], thr, missing_left)
            if not np.isnan(X[idx, f]).any():
                missing_left = bool(left.sum() > (~left).sum())
            grow(idx[left], depth + 1, path + [(f, thr, missing_left, True)])
            grow(idx[~left], depth + 1, path + [(f, thr, missing_left, False)])
        else:
            leaves.append((path, value))

    grow(np.arange(X.shape[0]), 0, [])
    return leaves


def reference_values(leaves, X):
    out = np.full((X.shape[0], leaves[0][1].size), np.nan)
    for path, value in leaves:
        inside = np.ones(X.shape[0], dtype=bool)
        for f, thr, missing_left, went_left in path:
            left = goes_left(X[:, f], thr, missing_left)
            inside &= left if went_left else ~left
        out[inside] = value
    return out


@pytest.mark.slow
@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("fraction", [0.1, 0.4])
def test_tree_with_missing_values_equals_brute_force_grower(criterion, fraction):
    """Check that the grower with NaN builds the tree of a recursive grower that tries both sides of the NaN."""
    rng = np.random.default_rng(11)
    X = with_missing(np.round(rng.random((90, 3)), 2), fraction, 11)
    y = rng.integers(0, 4, 90)
    w = rng.uniform(0.3, 3.0, 90)  # continuous weights make exact gain ties improbable
    ours = OrdinalTreeClassifier(criterion=criterion, max_depth=5, min_samples_leaf=2,
                                 classes=np.arange(4)).fit(X, y, sample_weight=w)
    leaves = reference_tree(X, y, w, 4, criterion, 5, 2)
    assert ours.get_n_leaves() == len(leaves)
    points = np.vstack([X, with_missing(rng.random((400, 3)), 0.3, 12)])
    np.testing.assert_allclose(ours.tree_.value[ours.apply(points)], reference_values(leaves, points), atol=1e-9)


@given(
    data=st.integers(2, 20).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.sampled_from([0, 1, 2, 3, None]), min_size=2, max_size=2), min_size=n, max_size=n),
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n),
        )
    ),
    criterion=st.sampled_from(CRITERIA),
    max_depth=st.sampled_from([None, 1, 3]),
    min_samples_leaf=st.integers(1, 2),
)
def test_tiny_trees_with_missing_values_equal_brute_force_grower(data, criterion, max_depth, min_samples_leaf):
    """Check on tiny grids where whole features may be missing that the tree equals the recursive grower."""
    rows, y, w = data
    X = np.array([[np.nan if v is None else v / 4.0 for v in r] for r in rows])
    y, w = np.asarray(y), np.asarray(w, dtype=float)
    ours = OrdinalTreeClassifier(criterion=criterion, max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                                 classes=[0, 1, 2]).fit(X, y, sample_weight=w)
    leaves = reference_tree(X, y, w, 3, criterion, max_depth, min_samples_leaf)
    grid = np.array([[a, b] for a in [np.nan, -0.1, 0.1, 0.3, 0.6, 0.8, 1.0] for b in [np.nan, 0.0, 0.3, 0.7, 1.0]])
    points = np.vstack([X, grid])
    assert ours.get_n_leaves() == len(leaves)
    np.testing.assert_allclose(ours.tree_.value[ours.apply(points)], reference_values(leaves, points), atol=1e-9)


# ---------------------------------------------------------------- scikit-learn
def _walk_until_tie(ours, ref, X, y, criterion):
    """Walk both trees along equal splits (feature, threshold, side of NaN); where they differ
    return both gains. Also returns the number of nodes where they agreed."""
    K = ours.n_classes_
    stack = [(0, 0, np.arange(X.shape[0]))]
    ties, agreed = [], 0
    while stack:
        a, b, idx = stack.pop()
        split_a = (ours.tree_.feature[a], ours.tree_.threshold[a], bool(ours.tree_.missing_go_to_left[a]))
        split_b = (ref.tree_.feature[b], ref.tree_.threshold[b], bool(ref.tree_.missing_go_to_left[b]))
        if split_a == split_b:
            agreed += 1
            if split_a[0] >= 0:
                left = goes_left(X[idx, split_a[0]], split_a[1], split_a[2])
                stack.append((ours.tree_.children_left[a], ref.tree_.children_left[b], idx[left]))
                stack.append((ours.tree_.children_right[a], ref.tree_.children_right[b], idx[~left]))
            continue
        assert split_a[0] >= 0 and split_b[0] >= 0, "one tree split a node the other left as a leaf"
        counts = np.bincount(y[idx], minlength=K)
        gains = []
        for f, t, missing_left in (split_a, split_b):
            lc = np.bincount(y[idx[goes_left(X[idx, f], t, missing_left)]], minlength=K)
            gains.append(oracle_gain(criterion, lc, counts - lc))
        ties.append(gains)
    return ties, agreed


@needs_sklearn_18
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("fraction", [0.05, 0.2, 0.5])
def test_splits_with_missing_values_equal_sklearn_up_to_exact_ties(criterion, seed, fraction):
    """Check that gini/entropy trees with NaN split as DecisionTreeClassifier (feature, threshold, NaN side),
    differing only where two candidates tie exactly, and predict alike on test data with NaN."""
    X, y = make_ordinal(3000, k=6, seed=seed)
    X = with_missing(X, fraction, seed)
    X_test = with_missing(make_ordinal(3000, seed=seed + 100)[0], fraction, seed + 100)
    params = dict(criterion=criterion, max_depth=5, min_samples_leaf=30)
    ours = OrdinalTreeClassifier(leaf_label="mode", **params).fit(X, y)
    ref = DecisionTreeClassifier(random_state=seed, **params).fit(X, y)
    ties, agreed = _walk_until_tie(ours, ref, X, y, criterion)
    for ours_gain, ref_gain in ties:
        assert ours_gain == pytest.approx(ref_gain, rel=1e-9, abs=1e-12)
    assert agreed >= 0.8 * ours.tree_.node_count
    if not ties:
        assert same_partition(ours.apply(X_test), ref.apply(X_test))
        np.testing.assert_array_equal(ours.predict(X_test), ref.predict(X_test))
        np.testing.assert_allclose(ours.predict_proba(X_test), ref.predict_proba(X_test), atol=1e-12)


@needs_sklearn_18
def test_most_cases_match_sklearn_exactly():
    """Check that without an exact tie the whole tree and its test predictions equal scikit-learn's."""
    exact = 0
    for seed in range(6):
        X, y = make_ordinal(3000, k=6, seed=seed)
        X = with_missing(X, 0.2, seed)
        X_test = with_missing(make_ordinal(2000, seed=seed + 50)[0], 0.2, seed + 50)
        params = dict(criterion="gini", max_depth=5, min_samples_leaf=30)
        ours = OrdinalTreeClassifier(leaf_label="mode", **params).fit(X, y)
        ref = DecisionTreeClassifier(random_state=seed, **params).fit(X, y)
        exact += same_partition(ours.apply(X_test), ref.apply(X_test)) and np.array_equal(
            ours.predict(X_test), ref.predict(X_test))
    assert exact >= 5


def test_feature_without_missing_values_sends_them_to_the_larger_child():
    """Check scikit-learn's rule for splits learnt without NaN: NaN goes to the child with more rows (right on ties)."""
    X, y = make_ordinal(1000, seed=3)
    ours = OrdinalTreeClassifier(criterion="gini", max_depth=6, min_samples_leaf=20, leaf_label="mode").fit(X, y)
    ref = DecisionTreeClassifier(criterion="gini", max_depth=6, min_samples_leaf=20, random_state=0).fit(X, y)
    t = ours.tree_
    internal = t.children_left != -1
    expected = t.n_node_samples[t.children_left[internal]] > t.n_node_samples[t.children_right[internal]]
    np.testing.assert_array_equal(t.missing_go_to_left[internal], expected)
    X_test = with_missing(make_ordinal(2000, seed=30)[0], 0.3, 30)
    assert same_partition(ours.apply(X_test), ref.apply(X_test))
    np.testing.assert_array_equal(ours.predict(X_test), ref.predict(X_test))


# ---------------------------------------------------------------- routing, apply, leaf boxes
@pytest.mark.parametrize("criterion", CRITERIA)
def test_apply_with_missing_values_equals_a_plain_walk(criterion):
    """Check that apply routes NaN as a node-by-node walk with the routing rule does, and every training row
    lands where the grower put it."""
    X, y = make_ordinal(800, seed=5)
    X = with_missing(X, 0.25, 5)
    w = np.random.default_rng(5).uniform(0.5, 2.0, 800)
    clf = OrdinalTreeClassifier(criterion=criterion, min_samples_leaf=3).fit(X, y, sample_weight=w)
    t = clf.tree_
    assert np.any(t.missing_go_to_left[t.children_left != -1]) and np.any(np.isinf(t.threshold))
    points = np.vstack([X, with_missing(np.random.default_rng(6).random((500, 4)), 0.4, 6)])
    expected = []
    for x in points:
        node = 0
        while t.children_left[node] != -1:
            v = x[t.feature[node]]
            left = t.missing_go_to_left[node] if np.isnan(v) else v <= t.threshold[node]
            node = t.children_left[node] if left else t.children_right[node]
        expected.append(node)
    np.testing.assert_array_equal(clf.apply(points), expected)
    leaves = clf.apply(X)
    np.testing.assert_array_equal(np.bincount(leaves, minlength=t.node_count)[t.children_left == -1],
                                  t.n_node_samples[t.children_left == -1])


@pytest.mark.parametrize("seed", [0, 1])
def test_leaf_boxes_with_missing_flags_contain_exactly_their_points(seed):
    """Check that every point with NaN lies in exactly one leaf box with missing flags: the leaf apply gives."""
    X, y = make_ordinal(600, seed=seed)
    X = with_missing(X, 0.3, seed)
    clf = OrdinalTreeClassifier(max_depth=7).fit(X, y)
    boxes = leaf_boxes(clf, missing=True)
    plain = leaf_boxes(clf)
    np.testing.assert_array_equal(boxes.lower, plain.lower)
    np.testing.assert_array_equal(boxes.upper, plain.upper)
    assert type(boxes.boxes()) is type(plain) and all(np.array_equal(a, b) for a, b in zip(boxes.boxes(), plain))
    points = np.vstack([X, with_missing(np.random.default_rng(seed + 9).normal(0.5, 0.6, (1500, 4)), 0.4, seed + 9)])
    nan = np.isnan(points)
    x = np.where(nan, 0.0, points)
    real_inside = (x[:, None, :] > boxes.lower[None]) & (x[:, None, :] <= boxes.upper[None])
    inside = np.all(np.where(nan[:, None, :], boxes.missing[None], real_inside), axis=2)
    assert np.all(inside.sum(axis=1) == 1)
    np.testing.assert_array_equal(boxes.leaf_ids[inside.argmax(axis=1)], clf.apply(points))
    # A split that separates the real values from the missing ones leaves an empty real interval.
    only_missing = (boxes.lower == np.inf) & (boxes.upper == np.inf)
    assert np.all(boxes.missing[only_missing])


def test_leaf_boxes_of_scikit_learn_trees_with_missing_values():
    """Check the missing flags of scikit-learn's trees (their missing_go_to_left) against their apply."""
    X, y = make_ordinal(600, seed=2)
    X = with_missing(X, 0.3, 2)
    sk = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    boxes = leaf_boxes(sk, missing=True)
    points = with_missing(np.random.default_rng(3).random((1000, 4)), 0.3, 3)
    nan = np.isnan(points)
    x = np.where(nan, 0.0, points)
    real_inside = (x[:, None, :] > boxes.lower[None]) & (x[:, None, :] <= boxes.upper[None])
    inside = np.all(np.where(nan[:, None, :], boxes.missing[None], real_inside), axis=2)
    assert np.all(inside.sum(axis=1) == 1)
    np.testing.assert_array_equal(boxes.leaf_ids[inside.argmax(axis=1)], sk.apply(points))


# ---------------------------------------------------------------- edge cases and constraints
def test_a_feature_known_only_by_its_missing_values_splits_real_against_missing():
    """Check that a feature constant where present splits its real values from its missing ones (threshold +inf)."""
    X = np.array([[1.0], [1.0], [1.0], [np.nan], [np.nan], [np.nan]])
    y = [0, 0, 0, 1, 1, 1]
    clf = OrdinalTreeClassifier().fit(X, y)
    t = clf.tree_
    assert t.threshold[0] == np.inf and not t.missing_go_to_left[0]
    assert clf.predict([[1.0], [np.nan], [-5.0], [1e300]]).tolist() == [0, 1, 0, 0]


def test_all_missing_feature_and_all_missing_rows():
    """Check that a feature missing everywhere is never split and rows missing everything follow the NaN sides."""
    rng = np.random.default_rng(0)
    X = np.column_stack([np.full(200, np.nan), rng.random(200)])
    y = (X[:, 1] > 0.5).astype(int)
    clf = OrdinalTreeClassifier(max_features=1, random_state=0).fit(X, y)
    assert np.all(clf.tree_.feature[clf.tree_.children_left != -1] == 1)
    assert clf.predict([[np.nan, np.nan]]).shape == (1,)
    assert OrdinalTreeClassifier().fit(X, y).score(X, y) == 1.0


def test_infinite_values_are_still_rejected():
    """Check that inf in X raises a ValueError while NaN is accepted."""
    X = np.array([[0.0], [np.inf], [1.0]])
    with pytest.raises(ValueError, match="infinity"):
        OrdinalTreeClassifier().fit(X, [0, 1, 1])
    clf = OrdinalTreeClassifier().fit([[0.0], [np.nan], [1.0]], [0, 1, 1])
    with pytest.raises(ValueError, match="infinity"):
        clf.predict([[np.inf]])
    assert clf.__sklearn_tags__().input_tags.allow_nan


@pytest.mark.parametrize("method", ["basic", "intermediate", "isotonic"])
def test_monotone_trees_with_missing_values(method):
    """Check that constrained trees fitted with NaN predict monotonically on lines (with NaN elsewhere) and certify it."""
    X, y = make_ordinal(800, seed=9)
    X = with_missing(X, 0.2, 9)
    cst = np.array([1, 1, 0, 0])
    clf = OrdinalTreeClassifier(monotonic_cst=cst, monotonic_method=method).fit(X, y)
    assert clf.is_monotone()
    rng = np.random.default_rng(9)
    grid = np.linspace(-0.2, 1.2, 141)
    for f in (0, 1):
        base = with_missing(rng.random((60, 4)), 0.3, 10 + f)
        points = np.repeat(base, grid.size, axis=0)
        points[:, f] = np.tile(grid, 60)
        along = clf.predict(points).reshape(60, grid.size)
        assert np.all(np.diff(along, axis=1) >= 0)
