"""Tests of monotone constraints in OrdinalTreeClassifier: line probes, leaf faces, oracles, errors."""

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

from trees import CRITERIA, OrdinalTreeClassifier, leaf_boxes, resolve_monotonic_cst
from trees._monotone import MONOTONIC_METHODS
from trees.criteria import impurity, split_gain


def make_data(seed, n, d, k, rounded=False):
    """Features in [0, 1) (optionally on a coarse grid) and k ordered classes from a noisy trend."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    if rounded:
        X = np.round(X * 6) / 6
    z = X @ rng.normal(size=d) + 0.4 * rng.standard_normal(n)
    y = np.digitize(z, np.quantile(z, np.linspace(0, 1, k + 1)[1:-1]))
    return X, y


def leaf_values(clf, what):
    """What is probed, per node: the mean class index or the predicted class index."""
    return clf.tree_.mean_index if what == "mean" else clf.leaf_label_


def probe_violations(clf, X, cst, rng, n_lines=20, what="mean"):
    """Steps against the constraint of the mean index (or predict) along lines parallel to each constrained feature.

    The lines cross every threshold of the feature (on it and one ulp either side) and
    every training value; half start from training rows, half from random points.
    Predictions are read through ``predict`` (class indices in ``classes_``).
    """
    t, d = clf.tree_, X.shape[1]
    low, high = X.min(axis=0) - 1.0, X.max(axis=0) + 1.0
    bad = 0
    for f in np.flatnonzero(cst):
        thr = t.threshold[t.feature == f]
        grid = np.unique(np.concatenate([
            X[:, f], thr, np.nextafter(thr, np.inf), np.nextafter(thr, -np.inf),
            [low[f], high[f]], rng.uniform(low[f], high[f], 30),
        ]))
        base = np.vstack([X[rng.integers(0, X.shape[0], n_lines // 2)], rng.uniform(low, high, (n_lines // 2, d))])
        points = np.repeat(base, grid.size, axis=0)
        points[:, f] = np.tile(grid, base.shape[0])
        if what == "mean":
            along = t.mean_index[clf.apply(points)]
        else:
            along = np.searchsorted(clf.classes_, clf.predict(points))
        along = along.reshape(base.shape[0], grid.size)
        bad += int(np.sum(np.diff(along, axis=1) * cst[f] < 0))
    return bad


def face_violations(clf, cst, what="mean"):
    """(violations, pairs checked) over the leaf pairs sharing a face across a constrained feature.

    Leaves a and b share a face across f when upper_a[f] == lower_b[f] and their open
    intervals overlap on every other feature; then b lies above a in f.
    """
    boxes = leaf_boxes(clf)
    mean = leaf_values(clf, what)[boxes.leaf_ids]
    lower, upper = boxes.lower, boxes.upper
    bad = checked = 0
    for f in np.flatnonzero(cst):
        touch = upper[:, None, f] == lower[None, :, f]
        others = np.arange(lower.shape[1]) != f
        lo = np.maximum(lower[:, None, others], lower[None, :, others])
        hi = np.minimum(upper[:, None, others], upper[None, :, others])
        pairs = touch & np.all(lo < hi, axis=-1)
        wrong = (mean[None, :] - mean[:, None]) * cst[f] < 0
        bad += int(np.sum(pairs & wrong))
        checked += int(pairs.sum())
    return bad, checked


# ---------------------------------------------------------------- the guarantee
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(8, 60),
    d=st.integers(1, 3),
    k=st.integers(2, 6),
    criterion=st.sampled_from(CRITERIA),
    signs=st.lists(st.sampled_from([-1, 0, 1]), min_size=3, max_size=3),
    rounded=st.booleans(),
    weighted=st.booleans(),
    min_samples_leaf=st.integers(1, 3),
    method=st.sampled_from(MONOTONIC_METHODS),
)
def test_predict_and_mean_index_are_monotone_on_lines_and_across_faces(
    seed, n, d, k, criterion, signs, rounded, weighted, min_samples_leaf, method
):
    """Check that predict and the leaf mean index never go against a constraint on lines and across faces."""
    cst = np.array(signs[:d])
    assume(np.any(cst))
    X, y = make_data(seed, n, d, k, rounded)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 3.0, n) if weighted else None
    clf = OrdinalTreeClassifier(
        criterion=criterion, monotonic_cst=cst, min_samples_leaf=min_samples_leaf, classes=np.arange(k),
        monotonic_method=method,
    ).fit(X, y, sample_weight=w)
    for what in ("mean", "predict"):
        assert probe_violations(clf, X, cst, rng, what=what) == 0
        assert face_violations(clf, cst, what)[0] == 0
    assert clf.is_monotone()


@pytest.mark.parametrize("method", MONOTONIC_METHODS)
def test_checks_see_the_violations_of_unconstrained_trees(method):
    """Check that the line probes, the face check and is_monotone flag free trees and pass constrained ones."""
    X, y = make_data(7, 300, 2, 5)
    y = np.where(np.random.default_rng(7).random(300) < 0.3, 4 - y, y)  # noise against the trend
    cst = np.array([1, -1]) * np.sign(np.corrcoef(np.c_[X, y].T)[-1, :2]).astype(int)
    rng = np.random.default_rng(0)
    for criterion in CRITERIA:
        free = OrdinalTreeClassifier(criterion=criterion).fit(X, y)
        mono = OrdinalTreeClassifier(criterion=criterion, monotonic_cst=cst, monotonic_method=method).fit(X, y)
        for what in ("mean", "predict"):
            assert probe_violations(free, X, cst, rng, what=what) > 0 and face_violations(free, cst, what)[0] > 0
            bad, checked = face_violations(mono, cst, what)
            assert probe_violations(mono, X, cst, rng, what=what) == 0 and bad == 0 and checked > 0
        assert not free.is_monotone(cst) and free.is_monotone()  # a free tree has no constraint of its own
        assert mono.is_monotone() and mono.is_monotone(cst) and not mono.is_monotone(-cst)


def test_is_monotone_fails_a_tree_built_to_fail():
    """Check that is_monotone and the probes both see a constrained tree whose one leaf label was broken."""
    X, y = make_data(8, 400, 2, 5)
    cst = np.array([1, 0])
    clf = OrdinalTreeClassifier(monotonic_cst=cst, max_depth=5).fit(X, y)
    boxes = leaf_boxes(clf)
    # The leaf with the highest box along x0 that touches a leaf above it across x0 drops to class 0.
    touching = [i for i in range(len(boxes.leaf_ids)) if np.any(boxes.lower[:, 0] == boxes.upper[i, 0])]
    victim = boxes.leaf_ids[max(touching, key=lambda i: clf.leaf_label_[boxes.leaf_ids[i]])]
    assert clf.is_monotone() and clf.leaf_label_[victim] > 0
    clf.leaf_label_[victim] = 0
    assert not clf.is_monotone()
    assert face_violations(clf, cst, "predict")[0] > 0


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("method", MONOTONIC_METHODS)
def test_scikit_learn_monotonic_test_on_predict(n_classes, method):
    """Check scikit-learn's monotonic classification test on predict: shifting x0 up (x1 down) never lowers it."""
    from sklearn.datasets import make_classification

    for seed in range(3):
        X, y = make_classification(n_samples=1000, n_classes=n_classes, n_features=5, n_informative=5,
                                   n_redundant=0, random_state=seed)
        X_train, y_train, X_test = X[:900], y[:900], X[900:]
        cst = [1, -1, 0, 0, 0]
        clf = OrdinalTreeClassifier(monotonic_cst=cst, monotonic_method=method, random_state=seed)
        clf.fit(X_train, y_train)
        base = clf.predict(X_test)
        for f, sign in ((0, 1), (1, -1)):
            up, down = X_test.copy(), X_test.copy()
            up[:, f] += 10
            down[:, f] -= 10
            assert np.all((clf.predict(up) - base) * sign >= 0)
            assert np.all((clf.predict(down) - base) * sign <= 0)
        assert clf.is_monotone()


def test_moved_thresholds_keep_the_basic_mean_index_monotone():
    """Check that moving every threshold (as the certified forest does) keeps the basic rule's mean index monotone."""
    X, y = make_data(3, 200, 3, 4)
    cst = np.array([1, 0, -1])
    clf = OrdinalTreeClassifier(criterion="ranking", monotonic_cst=cst, monotonic_method="basic").fit(X, y)
    rng = np.random.default_rng(3)
    internal = clf.tree_.children_left != -1
    moved = clf.tree_.threshold + np.where(internal, rng.normal(0.0, 0.05, clf.tree_.node_count), 0.0)
    clf.tree_.set_thresholds(moved)
    assert probe_violations(clf, X, cst, rng) == 0


def test_constrained_splits_order_their_children_and_nest_the_bounds():
    """Check every split: children's raw means in order and in the node's bounds, bounds nested, clipping."""
    X, y = make_data(11, 400, 3, 6)
    w = np.random.default_rng(11).integers(1, 4, 400).astype(float)
    cst = np.array([1, -1, 0])
    for criterion in CRITERIA:
        t = OrdinalTreeClassifier(criterion=criterion, monotonic_cst=cst, monotonic_method="basic").fit(
            X, y, sample_weight=w).tree_
        raw = t.value @ np.arange(6) / t.value.sum(axis=1)
        np.testing.assert_array_equal(t.mean_index, np.clip(raw, t.lower_bound, t.upper_bound))
        nodes = np.flatnonzero(t.children_left != -1)
        left, right = t.children_left[nodes], t.children_right[nodes]
        sign = cst[t.feature[nodes]]
        assert np.all((raw[right] - raw[left]) * sign >= 0)
        on = sign != 0
        for child in (left, right):
            assert np.all(t.lower_bound[child] >= t.lower_bound[nodes])
            assert np.all(t.upper_bound[child] <= t.upper_bound[nodes])
            inside = (raw[child] >= t.lower_bound[nodes]) & (raw[child] <= t.upper_bound[nodes])
            assert np.all(inside[on])
        # Unconstrained splits pass their bounds on unchanged.
        np.testing.assert_array_equal(t.upper_bound[left[~on]], t.upper_bound[nodes[~on]])
        assert np.any(on) and np.any(t.mean_index != raw)


# ---------------------------------------------------------------- oracles
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("criterion", ["ogini", "gini"])
def test_two_classes_equal_sklearn_monotone_regressor(criterion, seed):
    """Check that for K = 2 the tree partitions and clips like DecisionTreeRegressor with monotonic_cst."""
    # float32-representable features (scikit-learn splits float32) and dyadic weights:
    # exact sums, so no rounding residue makes scikit-learn split a pure node. Exact
    # gain ties remain in nodes of a few rows (two features cutting off the same rows,
    # or mirror splits; scikit-learn breaks them at random, we by the lowest feature,
    # which changes the bounds when one of them is constrained): min_samples_leaf=3
    # avoids them (measured: 0 mismatches in 600 fits, 46 with min_samples_leaf=1,
    # all exact ties).
    rng = np.random.default_rng(seed)
    X = rng.random((150, 3)).astype(np.float32).astype(np.float64)
    y = (X @ np.array([1.0, -1.0, 0.5]) + rng.normal(0.0, 0.5, 150) > 0.2).astype(int)
    w = rng.integers(512, 2048, 150) / 1024.0
    cst = [[1, -1, 0], [1, 1, 1], [-1, 0, 1]][seed % 3]
    ours = OrdinalTreeClassifier(criterion=criterion, monotonic_cst=cst, min_samples_leaf=3, monotonic_method="basic")
    ours.fit(X, y, sample_weight=w)
    ref = DecisionTreeRegressor(monotonic_cst=cst, min_samples_leaf=3, random_state=seed)
    ref.fit(X, y.astype(float), sample_weight=w)
    # Training rows only: two features may cut off the same rows (a tie that leaves the
    # training partition and the values unchanged but moves the boundary between rows).
    ours_leaf, ref_leaf = ours.apply(X), ref.apply(X)
    assert ours.tree_.node_count == ref.tree_.node_count
    pairs = set(zip(ours_leaf.tolist(), ref_leaf.tolist()))
    assert len(pairs) == len(set(ours_leaf.tolist())) == len(set(ref_leaf.tolist()))
    np.testing.assert_allclose(ours.tree_.mean_index[ours_leaf], ref.tree_.value[ref_leaf, 0, 0], rtol=0, atol=1e-12)
    # Not the unconstrained tree: the constraint changed the result.
    free = DecisionTreeRegressor(min_samples_leaf=3, random_state=seed).fit(X, y.astype(float), sample_weight=w)
    assert free.tree_.node_count != ref.tree_.node_count or not np.array_equal(free.apply(X), ref.apply(X))


def reference_monotone_tree(X, y, w, k, criterion, cst, max_depth, min_samples_leaf):
    """A plain recursive grower with scikit-learn's monotone rule; returns (box, counts, mean index) leaves."""
    leaves = []
    index = np.arange(k)
    total = w.sum()

    def grow(idx, depth, box, lo, hi):
        value = np.bincount(y[idx], weights=w[idx], minlength=k)
        stop = (
            (max_depth is not None and depth >= max_depth)
            or idx.size < 2 * min_samples_leaf
            or np.count_nonzero(value) <= 1
        )
        candidates = []
        if not stop:
            for f in range(X.shape[1]):
                values = np.unique(X[idx, f])
                for a, b in zip(values[:-1], values[1:]):
                    thr = a / 2.0 + b / 2.0
                    go_left = X[idx, f] <= thr
                    if go_left.sum() < min_samples_leaf or (~go_left).sum() < min_samples_leaf:
                        continue
                    lc = np.bincount(y[idx[go_left]], weights=w[idx[go_left]], minlength=k)
                    rc = value - lc
                    ml, mr = lc @ index / lc.sum(), rc @ index / rc.sum()
                    if cst[f] and not (lo <= ml <= hi and lo <= mr <= hi and (mr - ml) * cst[f] >= 0):
                        continue
                    candidates.append((float(split_gain(criterion, lc, rc)), f, thr, ml, mr))
        tol = 1e-11 * abs(float(impurity(criterion, value)))
        if candidates:
            top = max(c[0] for c in candidates)
            candidates = [c for c in candidates if c[0] >= top - tol]
        # min_impurity_decrease=0 still stops a best split of negative gain (wig can have one);
        # a gain within the tie tolerance of zero counts as zero (a split into children of the
        # parent's proportions scores +-1e-16, its sign set by the logarithm's last bit).
        if candidates and value.sum() / total * (candidates[0][0] + tol) + np.finfo(float).eps >= 0.0:
            _, f, thr, ml, mr = candidates[0]
            mid = ml / 2.0 + mr / 2.0
            left_bounds, right_bounds = (lo, hi), (lo, hi)
            if cst[f] == 1:
                left_bounds, right_bounds = (lo, mid), (mid, hi)
            elif cst[f] == -1:
                left_bounds, right_bounds = (mid, hi), (lo, mid)
            go_left = X[idx, f] <= thr
            grow(idx[go_left], depth + 1, box + [(f, thr, True)], *left_bounds)
            grow(idx[~go_left], depth + 1, box + [(f, thr, False)], *right_bounds)
        else:
            leaves.append((box, value, min(max(value @ index / value.sum(), lo), hi)))

    grow(np.arange(X.shape[0]), 0, [], -np.inf, np.inf)
    return leaves


def reference_predict(leaves, X):
    counts = np.full((X.shape[0], leaves[0][1].size), np.nan)
    mean = np.full(X.shape[0], np.nan)
    for box, value, m in leaves:
        inside = np.ones(X.shape[0], dtype=bool)
        for f, thr, left in box:
            inside &= (X[:, f] <= thr) if left else (X[:, f] > thr)
        counts[inside], mean[inside] = value, m
    return counts, mean


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("cst, max_depth, min_samples_leaf", [([1, -1, 0], None, 1), ([1, 1, -1], 5, 3)])
def test_tree_equals_brute_force_monotone_grower(criterion, cst, max_depth, min_samples_leaf):
    """Check for K = 5 that the vectorised grower builds the tree of a recursive grower with the same rule."""
    X, y = make_data(5, 70, 3, 5)
    X = np.round(X, 2)  # repeated values exercise the distinct-value rule
    w = np.random.default_rng(5).uniform(0.3, 3.0, 70)  # continuous weights: no exact gain ties
    ours = OrdinalTreeClassifier(
        criterion=criterion, monotonic_cst=cst, max_depth=max_depth, min_samples_leaf=min_samples_leaf,
        monotonic_method="basic",
    ).fit(X, y, sample_weight=w)
    leaves = reference_monotone_tree(X, y, w, 5, criterion, np.array(cst), max_depth, min_samples_leaf)
    assert ours.get_n_leaves() == len(leaves)
    points = np.vstack([X, np.random.default_rng(6).random((300, 3))])
    counts, mean = reference_predict(leaves, points)
    leaf = ours.apply(points)
    np.testing.assert_allclose(ours.tree_.value[leaf], counts, atol=1e-9)
    np.testing.assert_allclose(ours.tree_.mean_index[leaf], mean, atol=1e-12)


@given(
    data=st.integers(2, 24).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(0, 5), min_size=2, max_size=2), min_size=n, max_size=n),
            st.lists(st.integers(0, 3), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n),
        )
    ),
    criterion=st.sampled_from(CRITERIA),
    cst=st.sampled_from([[1, 0], [-1, 1], [0, -1], [1, 1]]),
    max_depth=st.sampled_from([None, 2]),
)
@example(  # a zero-gain split (children of the parent's proportions) that scores -5.9e-16 on numpy 1.24, -2.5e-16 on 2.x
    data=(
        [[0, 0]] * 4 + [[0, 1]] * 2 + [[1, 0]] * 3 + [[0, 0]] * 2 + [[0, 1], [1, 0]],
        [0] * 9 + [2, 2, 2, 0],
        [0.5] * 9 + [1.0, 3.0, 2.0, 0.5],
    ),
    criterion="entropy", cst=[-1, 1], max_depth=None,
)
def test_tiny_trees_equal_brute_force_monotone_grower(data, criterion, cst, max_depth):
    """Check on tiny grids (equal means, ties, repeated values; exact dyadic weights) against the recursive grower."""
    rows, y, w = (np.asarray(v, dtype=float) for v in data)
    X, y = rows / 4.0, y.astype(int)
    ours = OrdinalTreeClassifier(
        criterion=criterion, monotonic_cst=cst, max_depth=max_depth, classes=[0, 1, 2, 3], monotonic_method="basic"
    ).fit(X, y, sample_weight=w)
    leaves = reference_monotone_tree(X, y, w, 4, criterion, np.array(cst), max_depth, 1)
    grid = np.stack(np.meshgrid(np.arange(-1, 7) / 4.0 + 0.01, np.arange(-1, 7) / 4.0), axis=-1).reshape(-1, 2)
    points = np.vstack([X, grid])
    counts, mean = reference_predict(leaves, points)
    leaf = ours.apply(points)
    assert ours.get_n_leaves() == len(leaves)
    np.testing.assert_allclose(ours.tree_.value[leaf], counts, atol=1e-9)
    np.testing.assert_array_equal(ours.tree_.mean_index[leaf], mean)


def test_feature_blocks_give_the_same_constrained_tree(monkeypatch):
    """Check that scoring the features in memory-bounded blocks builds the same constrained tree as one block."""
    import trees._grower

    X, y = make_data(21, 600, 5, 4)
    cst = [0, 1, 0, -1, 1]
    for criterion in CRITERIA:
        whole = OrdinalTreeClassifier(criterion=criterion, monotonic_cst=cst, monotonic_method="basic").fit(X, y)
        monkeypatch.setattr(trees._grower, "_BLOCK_ELEMENTS", 600 * 4 * 2)  # two features per block at the root
        blocks = OrdinalTreeClassifier(criterion=criterion, monotonic_cst=cst, monotonic_method="basic").fit(X, y)
        monkeypatch.undo()
        np.testing.assert_array_equal(whole.tree_.feature, blocks.tree_.feature)
        np.testing.assert_array_equal(whole.tree_.threshold, blocks.tree_.threshold)
        np.testing.assert_array_equal(whole.tree_.mean_index, blocks.tree_.mean_index)


# ---------------------------------------------------------------- unconstrained trees and input forms
@pytest.mark.parametrize("criterion", CRITERIA)
def test_no_constraint_gives_the_unconstrained_tree(criterion):
    """Check that None, all zeros and a dict of zeros grow the same tree, with the plain mean index."""
    X, y = make_data(2, 300, 3, 5, rounded=True)
    w = np.random.default_rng(2).uniform(0.5, 2.0, 300)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    fits = [
        OrdinalTreeClassifier(criterion=criterion, max_features=2, random_state=0, monotonic_cst=cst).fit(
            data, y, sample_weight=w
        )
        for data, cst in [(X, None), (X, [0, 0, 0]), (X, np.zeros(3, dtype=np.int8)), (frame, {"b": 0})]
    ]
    t = fits[0].tree_
    for other in fits[1:]:
        for name in ("children_left", "feature", "threshold", "value", "impurity", "mean_index"):
            np.testing.assert_array_equal(getattr(other.tree_, name), getattr(t, name))
    np.testing.assert_allclose(t.mean_index, t.value @ np.arange(5) / t.value.sum(axis=1), rtol=1e-15)
    assert np.all(t.lower_bound == -np.inf) and np.all(t.upper_bound == np.inf)
    assert t.monotonic_cst.tolist() == [0, 0, 0]


def test_dict_by_feature_name_equals_the_array():
    """Check that a dict by column name constrains the same features as the equivalent array."""
    pd = pytest.importorskip("pandas")
    X, y = make_data(4, 300, 3, 4)
    frame = pd.DataFrame(X, columns=["income", "age", "debt"])
    by_name = OrdinalTreeClassifier(monotonic_cst={"debt": -1, "income": 1}).fit(frame, y)
    by_index = OrdinalTreeClassifier(monotonic_cst=[1, 0, -1]).fit(X, y)
    assert by_name.tree_.monotonic_cst.tolist() == [1, 0, -1]
    np.testing.assert_array_equal(by_name.tree_.threshold, by_index.tree_.threshold)
    np.testing.assert_array_equal(by_name.tree_.mean_index, by_index.tree_.mean_index)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "cst, match",
    [
        ([1, 0], r"monotonic_cst must have one entry per feature \(length 3\)"),
        ([[1, 0, 1]], r"monotonic_cst must have one entry per feature"),
        ([1, 2, 0], r"monotonic_cst must hold only -1, 0 or \+1"),
        ([0.5, 0, 0], r"monotonic_cst must hold only -1, 0 or \+1"),
        ([True, False, True], r"monotonic_cst must hold -1, 0 or \+1 per feature; got dtype bool"),
        (["a", "b", "c"], r"monotonic_cst must hold -1, 0 or \+1 per feature; got dtype <U1"),
        ({"a": 1}, r"monotonic_cst is a dict by feature name but X has no feature names"),
        ("abc", r"'monotonic_cst' parameter of OrdinalTreeClassifier must be"),
        (3, r"'monotonic_cst' parameter of OrdinalTreeClassifier must be"),
    ],
)
def test_bad_monotonic_cst_raises(cst, match):
    """Check that each malformed monotonic_cst raises a ValueError naming it."""
    X, y = make_data(0, 30, 3, 3)
    with pytest.raises(ValueError, match=match):
        OrdinalTreeClassifier(monotonic_cst=cst).fit(X, y)


@pytest.mark.parametrize(
    "cst, match",
    [
        ({"b": 1, "zz": -1, "aa": 0}, r"monotonic_cst names unknown features: \['aa', 'zz'\]"),
        ({"b": 2}, r"monotonic_cst\['b'\] must be -1, 0 or \+1; got 2"),
        ({"b": True}, r"monotonic_cst\['b'\] must be -1, 0 or \+1; got True"),
    ],
)
def test_bad_monotonic_cst_dict_raises(cst, match):
    """Check that a dict naming an unknown feature or holding a bad value raises a ValueError naming it."""
    pd = pytest.importorskip("pandas")
    X, y = make_data(0, 30, 3, 3)
    with pytest.raises(ValueError, match=match):
        OrdinalTreeClassifier(monotonic_cst=cst).fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)


def test_resolve_monotonic_cst_forms():
    """Check the resolver on its own: None, arrays of ints or floats, dicts, and a string."""
    assert resolve_monotonic_cst(None, 2).tolist() == [0, 0]
    assert resolve_monotonic_cst(np.array([1.0, -1.0]), 2).tolist() == [1, -1]
    assert resolve_monotonic_cst({"y": -1}, 2, np.array(["x", "y"])).dtype == np.int8
    with pytest.raises(ValueError, match="monotonic_cst must be an array-like of -1, 0, \\+1 per feature or a dict"):
        resolve_monotonic_cst("x", 2)


def test_bad_monotonic_method_and_mode_labels_raise():
    """Check that an unknown monotonic_method and leaf_label='mode' under constraints raise ValueErrors naming them."""
    X, y = make_data(0, 30, 3, 3)
    with pytest.raises(ValueError, match="'monotonic_method' parameter of OrdinalTreeClassifier must be"):
        OrdinalTreeClassifier(monotonic_cst=[1, 0, 0], monotonic_method="advanced").fit(X, y)
    with pytest.raises(ValueError, match="monotonic_cst needs leaf_label='median'"):
        OrdinalTreeClassifier(monotonic_cst=[1, 0, 0], leaf_label="mode").fit(X, y)
    OrdinalTreeClassifier(leaf_label="mode", monotonic_method="basic").fit(X, y)  # no constraint: no conflict


def test_isotonic_rule_grows_the_free_tree_and_projects_its_leaf_means():
    """Check that monotonic_method='isotonic' keeps the free partition and projects the leaf means exactly."""
    from trees._isotonic import isotonic_regression
    from trees._monotone import tree_leaf_order

    X, y = make_data(12, 400, 3, 5)
    cst = np.array([1, 0, -1], dtype=np.int8)
    free = OrdinalTreeClassifier().fit(X, y)
    iso = OrdinalTreeClassifier(monotonic_cst=cst, monotonic_method="isotonic").fit(X, y)
    for name in ("children_left", "feature", "threshold", "value"):
        np.testing.assert_array_equal(getattr(iso.tree_, name), getattr(free.tree_, name))
    leaves, below, above = tree_leaf_order(iso.tree_, cst)
    expected = isotonic_regression(free.tree_.mean_index[leaves], free.tree_.weighted_n_node_samples[leaves],
                                   below, above)
    np.testing.assert_array_equal(iso.tree_.mean_index[leaves], expected)
    assert np.any(iso.tree_.mean_index[leaves] != free.tree_.mean_index[leaves])
