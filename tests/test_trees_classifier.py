"""Tests of OrdinalTreeClassifier: oracles (scikit-learn, brute-force grower), weights, labels, errors."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from trees import CRITERIA, OrdinalDecisionTreeClassifier, OrdinalTreeClassifier
from trees.utils import ClassOrderWarning


# ---------------------------------------------------------------- oracle impurities
# Written from the table of docs/design.md section 3 with plain loops over classes, so that
# the reference growers below share no code with trees.criteria.
def oracle_impurity(criterion, counts, power=1.0, present=None):
    """I(T) of one node from its (weighted) class counts n_1..n_K; 0 for an empty node."""
    counts = [float(c) for c in counts]
    K, n = len(counts), sum(counts)
    if n == 0:
        return 0.0
    p = [c / n for c in counts]
    if criterion == "gini":
        return 1.0 - sum(q * q for q in p)
    if criterion == "entropy":
        return -sum(q * math.log2(q) for q in p if q > 0)
    if criterion == "ogini":
        total, F = 0.0, 0.0
        for q in p:
            F += q
            total += F * (1.0 - F)
        return total
    if criterion == "ranking":
        return sum((j - i) * counts[i] * counts[j] for i in range(K) for j in range(i + 1, K))
    if criterion == "wig":
        if present is None:
            present = [c > 0 for c in counts]
        # The lowest class within 1e-11 n of the largest count (docs/design.md section 3):
        # a child's counts summed in another order must not move the mode.
        mode = next(k for k in range(K) if counts[k] >= max(counts) - 1e-11 * n)
        dist = [abs(k - mode) ** power for k in range(K)]
        norm = sum(dist[u] for u in range(K) if present[u])
        if norm == 0:  # only the mode is present: every weight is 0
            return 0.0
        return -sum(dist[k] / norm * p[k] * math.log2(p[k]) for k in range(K) if p[k] > 0)
    raise ValueError(criterion)


def oracle_gain(criterion, left, right, power=1.0):
    """Split score of docs/design.md section 3: weighted by n_child / n, except ranking (raw counts)."""
    parent = [a + b for a, b in zip(left, right)]
    present = [c > 0 for c in parent] if criterion == "wig" else None
    imp = [oracle_impurity(criterion, c, power, present) for c in (parent, left, right)]
    if criterion == "ranking":
        return imp[0] - imp[1] - imp[2]
    n = sum(parent)
    return imp[0] - sum(left) / n * imp[1] - sum(right) / n * imp[2]


@pytest.mark.parametrize(
    "criterion, left, right, power, expected",
    [
        ("gini", [97, 3, 1, 2], [2, 85, 5, 6], 1.0, 0.388493),
        ("ogini", [97, 3, 1, 2], [2, 85, 5, 6], 1.0, 0.214248),
        ("wig", [97, 3, 1, 2], [2, 85, 5, 6], 1.0, 0.077039),
        ("wig", [97, 3, 1, 2], [2, 85, 5, 6], 2.0, 0.040855),
        ("wig", [97, 3, 1, 2], [2, 85, 5, 6], 4.0, 0.014081),
        ("ranking", [28, 20, 1, 2], [2, 5, 35, 67], 1.0, 11326.0),
    ],
)
def test_oracle_gains_reproduce_the_reference_values(criterion, left, right, power, expected):
    """Check that the test's own impurity formulas give docs/design.md's published reference gains."""
    assert oracle_gain(criterion, left, right, power) == pytest.approx(expected, abs=5e-7)


def make_ordinal(n, d=4, k=4, seed=0, noise=0.3):
    """Continuous float32-representable features and an ordinal label driven by two of them."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)).astype(np.float32).astype(np.float64)
    z = X[:, 0] + 0.7 * X[:, 1] - 0.4 * X[:, 1] * X[:, 2 % d] + noise * rng.standard_normal(n)
    y = np.digitize(z, np.quantile(z, np.linspace(0, 1, k + 1)[1:-1]))
    return X, y


def same_partition(a, b):
    """True when two leaf assignments group the points identically."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def split_set(structure):
    internal = structure.children_left != -1
    return sorted(zip(structure.feature[internal].tolist(), structure.threshold[internal].tolist()))


# ---------------------------------------------------------------- scikit-learn oracles
# scikit-learn breaks exact gain ties between features by a random permutation, and
# small nodes with few classes often tie exactly (mirror-image splits). Nodes of at
# least 30 rows and 6 classes make ties improbable; the tie-aware walk below covers
# the small-node regime.
SK_PARAMS = dict(max_depth=5, min_samples_leaf=30)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_gini_entropy_partition_equals_sklearn(criterion, seed):
    """Check that gini/entropy trees make the same splits and test partition as DecisionTreeClassifier."""
    X, y = make_ordinal(3000, k=6, seed=seed)
    X_test, _ = make_ordinal(3000, seed=seed + 100)
    ours = OrdinalTreeClassifier(criterion=criterion, leaf_label="mode", **SK_PARAMS).fit(X, y)
    ref = DecisionTreeClassifier(criterion=criterion, random_state=seed, **SK_PARAMS).fit(X, y)
    assert split_set(ours.tree_) == split_set(ref.tree_)
    assert same_partition(ours.apply(X_test), ref.apply(X_test))
    np.testing.assert_array_equal(ours.predict(X_test), ref.predict(X_test))
    np.testing.assert_allclose(ours.predict_proba(X_test), ref.predict_proba(X_test), atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_ogini_partition_equals_sklearn_regressor_on_cumulative_indicators(seed):
    """Check that ogini trees partition like DecisionTreeRegressor fitted on the indicators [y <= k]."""
    X, y = make_ordinal(3000, k=6, seed=seed)
    X_test, _ = make_ordinal(3000, seed=seed + 100)
    indicators = np.stack([(y <= k).astype(float) for k in range(5)], axis=1)
    ours = OrdinalTreeClassifier(criterion="ogini", **SK_PARAMS).fit(X, y)
    ref = DecisionTreeRegressor(random_state=seed, **SK_PARAMS).fit(X, indicators)
    assert split_set(ours.tree_) == split_set(ref.tree_)
    assert same_partition(ours.apply(X_test), ref.apply(X_test))
    # sklearn's node impurity is the mean over the K-1 outputs, ours their sum.
    np.testing.assert_allclose(ours.tree_.impurity[0], ref.tree_.impurity[0] * 5)


def _walk_until_tie(ours, ref, X, y, criterion):
    """Walk both trees in parallel; where splits differ, return the two gains (else None)."""
    K = ours.n_classes_
    stack = [(0, 0, np.arange(X.shape[0]))]
    ties = []
    while stack:
        a, b, idx = stack.pop()
        fa, ta = ours.tree_.feature[a], ours.tree_.threshold[a]
        fb, tb = ref.tree_.feature[b], ref.tree_.threshold[b]
        if (fa, ta) == (fb, tb):
            if fa >= 0:
                left = X[idx, fa] <= ta
                stack.append((ours.tree_.children_left[a], ref.tree_.children_left[b], idx[left]))
                stack.append((ours.tree_.children_right[a], ref.tree_.children_right[b], idx[~left]))
            continue
        assert fa >= 0 and fb >= 0, "one tree split a node the other left as a leaf"
        counts = np.bincount(y[idx], minlength=K)
        gains = []
        for f, t in ((fa, ta), (fb, tb)):
            lc = np.bincount(y[idx[X[idx, f] <= t]], minlength=K)
            gains.append(oracle_gain(criterion, lc, counts - lc))
        ties.append(gains)
    return ties


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_small_nodes_differ_from_sklearn_only_at_exact_ties(criterion, seed):
    """Check that with small leaves the trees differ from scikit-learn only where two splits tie exactly."""
    X, y = make_ordinal(800, seed=seed)
    params = dict(criterion=criterion, max_depth=6, min_samples_leaf=3)
    ours = OrdinalTreeClassifier(**params).fit(X, y)
    ref = DecisionTreeClassifier(random_state=seed, **params).fit(X, y)
    for ours_gain, ref_gain in _walk_until_tie(ours, ref, X, y, criterion):
        assert ours_gain == pytest.approx(ref_gain, rel=1e-9, abs=1e-12)


def test_gini_weighted_partition_equals_sklearn():
    """Check that positive sample weights give the same partition as scikit-learn's weighted tree."""
    X, y = make_ordinal(600, seed=7)
    w = np.random.default_rng(7).uniform(0.5, 2.0, size=600)
    X_test, _ = make_ordinal(1500, seed=70)
    params = dict(criterion="gini", max_depth=4, min_samples_leaf=5)
    ours = OrdinalTreeClassifier(**params).fit(X, y, sample_weight=w)
    ref = DecisionTreeClassifier(random_state=0, **params).fit(X, y, sample_weight=w)
    assert same_partition(ours.apply(X_test), ref.apply(X_test))
    np.testing.assert_allclose(ours.tree_.weighted_n_node_samples[0], w.sum())



@pytest.mark.parametrize("seed", range(3))
def test_gini_feature_importances_equal_sklearn(seed):
    """Check that gini trees, which make scikit-learn's splits, have its feature importances (summing to 1)."""
    X, y = make_ordinal(3000, k=6, seed=seed)
    ours = OrdinalTreeClassifier(criterion="gini", **SK_PARAMS).fit(X, y)
    ref = DecisionTreeClassifier(criterion="gini", random_state=seed, **SK_PARAMS).fit(X, y)
    assert split_set(ours.tree_) == split_set(ref.tree_)
    np.testing.assert_allclose(ours.feature_importances_, ref.feature_importances_, rtol=1e-10, atol=1e-12)
    assert ours.feature_importances_.shape == (X.shape[1],)
    np.testing.assert_allclose(ours.feature_importances_.sum(), 1.0)


def test_feature_importances_of_a_single_leaf_are_zero_and_need_a_fit():
    """Check that a tree without splits has zero importances and an unfitted tree has none."""
    from sklearn.exceptions import NotFittedError

    tree = OrdinalTreeClassifier(classes=[0, 1]).fit([[0.0, 1.0], [1.0, 2.0]], [1, 1])
    assert tree.feature_importances_.tolist() == [0.0, 0.0]
    with pytest.raises(NotFittedError):
        _ = OrdinalTreeClassifier().feature_importances_


@pytest.mark.parametrize("criterion", ["gini", "ogini"])
def test_class_weight_balanced_equals_sklearn_sample_weights(criterion):
    """Check that class_weight="balanced" is the tree fitted with compute_sample_weight("balanced", y),
    and that a dict multiplies the user's sample weights, as in scikit-learn."""
    from sklearn.utils.class_weight import compute_sample_weight

    X, y = make_ordinal(400, k=4, seed=3)
    y = np.where(y == y.max(), y - 1, y)[:300]  # unequal classes
    X = X[:300]
    X_test, _ = make_ordinal(800, seed=33)
    params = dict(criterion=criterion, max_depth=4, min_samples_leaf=5)
    balanced = OrdinalTreeClassifier(class_weight="balanced", **params).fit(X, y)
    weighted = OrdinalTreeClassifier(**params).fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    plain = OrdinalTreeClassifier(**params).fit(X, y)
    assert split_set(balanced.tree_) == split_set(weighted.tree_) != split_set(plain.tree_)
    np.testing.assert_array_equal(balanced.predict_proba(X_test), weighted.predict_proba(X_test))
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.shape[0])
    weights = {int(y.min()): 3.0}
    by_dict = OrdinalTreeClassifier(class_weight=weights, **params).fit(X, y, sample_weight=w)
    by_hand = OrdinalTreeClassifier(**params).fit(X, y, sample_weight=w * compute_sample_weight(weights, y))
    np.testing.assert_array_equal(by_dict.tree_.value, by_hand.tree_.value)
    if criterion == "gini":
        ref = DecisionTreeClassifier(class_weight="balanced", random_state=0, **params).fit(X, y)
        assert split_set(balanced.tree_) == split_set(ref.tree_)


@pytest.mark.parametrize("class_weight, message", [
    ("uniform", "class_weight"),
    ({9: 1.0}, "class_weight names 9, which is not a class"),
    ({1: -1.0}, r"class_weight\[1\] must be a finite non-negative number"),
    ({1: 0.0, 2: 0.0}, "sample_weight times class_weight is zero for every row"),
])
def test_class_weight_is_validated_in_fit(class_weight, message):
    """Check that a bad class_weight is refused in fit, naming the parameter (or the weights it zeroes)."""
    tree = OrdinalTreeClassifier(class_weight=class_weight)
    with pytest.raises(ValueError, match=message):
        tree.fit([[0.0], [1.0], [2.0]], [1, 2, 2])


# ---------------------------------------------------------------- brute-force grower oracle
def reference_tree(X, y, w, n_classes, criterion, max_depth, min_samples_split, min_samples_leaf, mid, power):
    """A plain recursive grower with loops over features and thresholds; returns leaf predicates."""
    total = w.sum()
    leaves = []

    def grow(idx, depth, box):
        value = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        stop = (
            (max_depth is not None and depth >= max_depth)
            or idx.size < max(min_samples_split, 2 * min_samples_leaf)
            or np.count_nonzero(value) <= 1
        )
        best = None
        if not stop:
            candidates = []  # in (feature, threshold) order
            for f in range(X.shape[1]):
                values = np.unique(X[idx, f])
                for a, b in zip(values[:-1], values[1:]):
                    thr = a / 2.0 + b / 2.0
                    go_left = X[idx, f] <= thr
                    if go_left.sum() < min_samples_leaf or (~go_left).sum() < min_samples_leaf:
                        continue
                    lc = np.bincount(y[idx[go_left]], weights=w[idx[go_left]], minlength=n_classes)
                    candidates.append((oracle_gain(criterion, lc, value - lc, power), f, thr))
            if candidates:
                # Documented tie rule: gains within 1e-11 of the parent's impurity tie,
                # and the first candidate (lowest feature, then threshold) wins.
                top = max(c[0] for c in candidates)
                tol = 1e-11 * abs(oracle_impurity(criterion, value, power))
                best = next(c for c in candidates if c[0] >= top - tol)
        # A gain within that tolerance of zero counts as zero when deciding to split.
        if best is not None and value.sum() / total * (best[0] + tol) + np.finfo(float).eps >= mid:
            _, f, thr = best
            go_left = X[idx, f] <= thr
            grow(idx[go_left], depth + 1, box + [(f, thr, True)])
            grow(idx[~go_left], depth + 1, box + [(f, thr, False)])
        else:
            leaves.append((box, value))

    grow(np.arange(X.shape[0]), 0, [])
    return leaves


def reference_values(leaves, X):
    out = np.full((X.shape[0], leaves[0][1].size), np.nan)
    for box, value in leaves:
        inside = np.ones(X.shape[0], dtype=bool)
        for f, thr, left in box:
            inside &= (X[:, f] <= thr) if left else (X[:, f] > thr)
        out[inside] = value
    return out


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize(
    "params",
    [
        dict(max_depth=4, min_samples_split=2, min_samples_leaf=1, min_impurity_decrease=0.0),
        dict(max_depth=None, min_samples_split=9, min_samples_leaf=3, min_impurity_decrease=0.0),
        dict(max_depth=6, min_samples_split=2, min_samples_leaf=2, min_impurity_decrease=0.01),
    ],
)
def test_tree_equals_brute_force_grower(criterion, params):
    """Check that the vectorised level-wise growth builds the tree of a plain recursive grower."""
    rng = np.random.default_rng(3)
    X = np.round(rng.random((70, 3)), 2)  # repeated values exercise the distinct-value rule
    y = rng.integers(0, 4, size=70)
    w = rng.uniform(0.3, 3.0, size=70)  # continuous weights make exact gain ties improbable
    power = 2.0 if criterion == "wig" else 1.0
    ours = OrdinalTreeClassifier(criterion=criterion, wig_power=power, **params).fit(X, y, sample_weight=w)
    leaves = reference_tree(
        X, y, w, 4, criterion, params["max_depth"], params["min_samples_split"], params["min_samples_leaf"],
        params["min_impurity_decrease"], power,
    )
    assert ours.get_n_leaves() == len(leaves)
    points = np.vstack([X, rng.random((300, 3))])
    np.testing.assert_allclose(ours.tree_.value[ours.apply(points)], reference_values(leaves, points), atol=1e-9)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_zero_gain_split_does_not_depend_on_rounding(criterion):
    """Check that a split of exactly zero gain splits (min_impurity_decrease=0), whatever its rounding.

    Both children hold the parent's class proportions, so every criterion's gain is
    0 in exact arithmetic; summed in another order it came out a few ulps below 0
    and the tree stopped where the brute-force grower split (a fresh hypothesis
    example, entropy).
    """
    X = np.array([[0, 0], [0, 0], [0, 0], [0, 0], [0, 1], [0, 1], [0, 0], [0, 1]]) / 4.0
    y = np.array([0, 0, 1, 0, 1, 0, 0, 0])
    w = np.array([0.0, 0.0, 0.5, 1.0, 0.5, 1.0, 2.0, 2.0])
    clf = OrdinalTreeClassifier(criterion=criterion, classes=[0, 1, 2, 3]).fit(X, y, sample_weight=w)
    leaves = reference_tree(X[w > 0], y[w > 0], w[w > 0], 4, criterion, None, 2, 1, 0.0, 1.0)
    assert clf.get_n_leaves() == len(leaves) == 2
    assert clf.tree_.feature[0] == 1


def test_wig_mode_ties_do_not_depend_on_rounding():
    """Check that two equal class counts tie for wig's mode however the counts were summed.

    A hypothesis example: the left child of x0 <= 0.375 in the root's right node holds
    1.7 of class 1 and 1.7 of class 2, but its class-1 count came out as 2.2 - 0.5, an
    ulp off 1.7; that ulp made class 2 the mode, raised the candidate's gain above the
    exact best (x1 <= 0.125) and grew a fifth leaf.
    """
    rows = np.array([[2, 1], [0, 0], [2, 0], [0, 0], [0, 0], [1, 0], [1, 1]]) / 4.0
    y = np.array([1, 2, 0, 2, 3, 2, 1])
    w = np.array([0.5, 1.7, 1.0, 2.0, 1.0, 1.7, 1.7])
    clf = OrdinalTreeClassifier(criterion="wig", classes=[0, 1, 2, 3]).fit(rows, y, sample_weight=w)
    leaves = reference_tree(rows, y, w, 4, "wig", None, 2, 1, 0.0, 1.0)
    assert clf.get_n_leaves() == len(leaves) == 4
    np.testing.assert_allclose(clf.tree_.value[clf.apply(rows)], reference_values(leaves, rows), atol=1e-9)


@given(
    data=st.integers(2, 24).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(0, 5), min_size=2, max_size=2), min_size=n, max_size=n),
            st.lists(st.integers(0, 3), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.7, 2.0, 3.1]), min_size=n, max_size=n),
        )
    ),
    criterion=st.sampled_from(CRITERIA),
    max_depth=st.sampled_from([None, 1, 2, 4]),
    min_samples_leaf=st.integers(1, 3),
)
def test_tiny_trees_equal_brute_force_grower(data, criterion, max_depth, min_samples_leaf):
    """Check on tiny grids with repeated values and zero weights that the tree equals the recursive grower."""
    rows, y, w = (np.asarray(v, dtype=float) for v in data)
    X, y = rows / 4.0, y.astype(int)
    assume(np.count_nonzero(w) >= 1)
    ours = OrdinalTreeClassifier(
        criterion=criterion, max_depth=max_depth, min_samples_leaf=min_samples_leaf, classes=[0, 1, 2, 3]
    ).fit(X, y, sample_weight=w)
    keep = w > 0
    leaves = reference_tree(X[keep], y[keep], w[keep], 4, criterion, max_depth, 2, min_samples_leaf, 0.0, 1.0)
    grid = np.stack(np.meshgrid(np.arange(-1, 7) / 4.0 + 0.01, np.arange(-1, 7) / 4.0), axis=-1).reshape(-1, 2)
    points = np.vstack([X, grid])
    assert ours.get_n_leaves() == len(leaves)
    np.testing.assert_allclose(ours.tree_.value[ours.apply(points)], reference_values(leaves, points), atol=1e-9)


# ---------------------------------------------------------------- structure and leaf labels
def test_tree_structure_invariants():
    """Check ids, children, values and sample counts of the tree_ arrays."""
    X, y = make_ordinal(500, seed=1)
    w = np.random.default_rng(1).integers(0, 3, size=500).astype(float)
    clf = OrdinalTreeClassifier(criterion="ranking", min_samples_leaf=2).fit(X, y, sample_weight=w)
    t = clf.tree_
    internal = np.flatnonzero(t.children_left != -1)
    leaves = np.flatnonzero(t.children_left == -1)
    assert t.node_count == t.children_left.size == t.value.shape[0]
    assert np.all(t.children_left[internal] > internal)
    assert np.all(t.children_right[internal] == t.children_left[internal] + 1)
    assert np.all(t.children_right[leaves] == -1) and np.all(t.feature[leaves] == -2)
    assert np.all(t.threshold[leaves] == -2.0)
    np.testing.assert_allclose(t.value[internal], t.value[t.children_left[internal]] + t.value[t.children_right[internal]])
    np.testing.assert_array_equal(
        t.n_node_samples[internal], t.n_node_samples[t.children_left[internal]] + t.n_node_samples[t.children_right[internal]]
    )
    assert t.n_node_samples[0] == np.count_nonzero(w) and np.all(t.n_node_samples[leaves] >= 2)
    np.testing.assert_allclose(t.weighted_n_node_samples, t.value.sum(axis=1))
    assert clf.get_n_leaves() == leaves.size == t.n_leaves
    assert clf.get_depth() == t.max_depth == t.depth.max()
    assert set(np.unique(clf.apply(X))) <= set(leaves.tolist())


def test_pickled_trees_keep_every_array_and_files_of_earlier_versions_load():
    """Check that a tree's packed state (two node tables, what __init__ derives rebuilt on load) gives
    back every attribute with its dtype (moved thresholds, isotonic leaf means, monotone bounds and
    missing-value directions included), that
    the classifier's class shares are rebuilt, and that the attribute-per-array state of earlier
    model files loads to the same tree."""
    import pickle

    from trees import OrdinalTree

    X, y = make_ordinal(400, seed=3)
    X_missing = X.copy()
    X_missing[::7, 1] = np.nan
    covered = []
    # Bounds of the basic method, leaf means replaced by the isotonic one (the default), NaN.
    for clf, data in ((OrdinalTreeClassifier(monotonic_cst=[1, 0, 0, 0], monotonic_method="basic").fit(X, y), X),
                      (OrdinalTreeClassifier(monotonic_cst=[1, 0, 0, 0]).fit(X, y), X),
                      (OrdinalTreeClassifier(random_state=0).fit(X_missing, y), X_missing)):
        t = clf.tree_
        internal = t.children_left != -1
        t.set_thresholds(np.where(internal & (np.arange(t.node_count) % 5 == 0), np.inf, t.threshold + 1e-3))
        assert np.isinf(t.threshold).any()
        old_state = {k: v for k, v in t.__dict__.items() if k != "_tables"}
        old = OrdinalTree.__new__(OrdinalTree)
        old.__setstate__(old_state)
        back = pickle.loads(pickle.dumps(clf))
        for tree in (back.tree_, old):
            assert set(tree.__dict__) == set(t.__dict__)
            for name, value in t.__dict__.items():
                if name == "_tables":
                    for a, b in zip(value, tree._tables):
                        np.testing.assert_array_equal(a, b)
                elif isinstance(value, np.ndarray):
                    assert tree.__dict__[name].dtype == value.dtype, name
                    np.testing.assert_array_equal(tree.__dict__[name], value, err_msg=name)
                else:
                    assert tree.__dict__[name] == value, name
        assert "_proba" not in clf.__getstate__() and "_proba" in clf.__dict__
        np.testing.assert_array_equal(back.predict_proba(data), clf.predict_proba(data))
        np.testing.assert_array_equal(back.predict(data), clf.predict(data))
        covered.append((np.isfinite(t.lower_bound).any(), 0 < t.missing_go_to_left.sum() < internal.sum()))
    assert covered[0][0] and covered[2][1]  # monotone bounds, and missing values sent both ways


def test_feature_blocks_give_the_same_tree(monkeypatch):
    """Check that scoring the features in several memory-bounded blocks builds the same tree as one block."""
    import trees._grower

    X, y = make_ordinal(600, d=5, seed=21)
    w = np.random.default_rng(21).uniform(0.5, 2, size=600)
    for criterion in CRITERIA:
        whole = OrdinalTreeClassifier(criterion=criterion, max_depth=6).fit(X, y, sample_weight=w)
        monkeypatch.setattr(trees._grower, "_BLOCK_ELEMENTS", 600 * 4 * 2)  # two features per block at the root
        blocks = OrdinalTreeClassifier(criterion=criterion, max_depth=6).fit(X, y, sample_weight=w)
        monkeypatch.undo()
        np.testing.assert_array_equal(whole.tree_.feature, blocks.tree_.feature)
        np.testing.assert_array_equal(whole.tree_.threshold, blocks.tree_.threshold)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_apply_sends_training_rows_where_the_grower_put_them(criterion):
    """Check that apply and the grower's partition follow one routing rule: every training row's leaf."""
    X, y = make_ordinal(500, seed=4)
    X = np.round(X, 1)  # tied values
    w = np.random.default_rng(4).uniform(0.5, 2.0, 500)
    clf = OrdinalTreeClassifier(criterion=criterion, min_samples_leaf=3).fit(X, y, sample_weight=w)
    t = clf.tree_
    leaves = clf.apply(X)
    np.testing.assert_array_equal(np.bincount(leaves, minlength=t.node_count)[t.children_left == -1],
                                  t.n_node_samples[t.children_left == -1])
    counts = np.zeros_like(t.value)
    np.add.at(counts, (leaves, np.searchsorted(clf.classes_, y)), w)
    np.testing.assert_allclose(counts[t.children_left == -1], t.value[t.children_left == -1], rtol=1e-12)


def test_apply_matches_a_plain_traversal():
    """Check that the compiled apply equals walking the tree point by point."""
    X, y = make_ordinal(400, seed=2)
    clf = OrdinalTreeClassifier(criterion="wig").fit(X, y)
    t = clf.tree_
    X_test = np.random.default_rng(5).random((300, 4))
    expected = []
    for x in X_test:
        node = 0
        while t.children_left[node] != -1:
            node = t.children_left[node] if x[t.feature[node]] <= t.threshold[node] else t.children_right[node]
        expected.append(node)
    np.testing.assert_array_equal(clf.apply(X_test), expected)
    assert clf.apply(X_test).dtype == np.intp


def test_median_and_mode_leaf_labels():
    """Check that leaves predict the lower weighted median (default) or the lowest mode."""
    X = np.zeros((7, 1))
    y = np.array([0, 0, 0, 2, 2, 3, 3])
    med = OrdinalTreeClassifier().fit(X, y)  # one leaf: counts (3, 0, 2, 2)
    mode = OrdinalTreeClassifier(leaf_label="mode").fit(X, y)
    assert med.predict([[0.0]])[0] == 2 and mode.predict([[0.0]])[0] == 0
    # Exact half: the lower median.
    half = OrdinalTreeClassifier().fit(np.zeros((4, 1)), [1, 1, 3, 3])
    assert half.predict([[0.0]])[0] == 1
    # Weights move the median.
    w = np.array([1, 1, 1, 1, 1, 5, 5], dtype=float)
    assert OrdinalTreeClassifier().fit(X, y, sample_weight=w).predict([[0.0]])[0] == 3


def test_leaf_labels_match_brute_force_median():
    """Check leaf_label_ against the median computed from each leaf's expanded sample."""
    X, y = make_ordinal(600, k=5, seed=4)
    clf = OrdinalTreeClassifier(max_depth=3).fit(X, y)
    for node in np.flatnonzero(clf.tree_.children_left == -1):
        members = y[clf.apply(X) == node]
        assert clf.leaf_label_[node] == np.sort(members)[(members.size - 1) // 2]
    pred = clf.predict(X)
    assert np.all(np.isin(pred, clf.classes_))


def test_predict_proba_rows_sum_to_one_under_weights():
    """Check that predict_proba rows sum to 1 and are the leaf's weighted class shares."""
    X, y = make_ordinal(300, seed=8)
    w = np.random.default_rng(8).uniform(0.1, 4, size=300)
    clf = OrdinalTreeClassifier(max_depth=3).fit(X, y, sample_weight=w)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    leaves = clf.apply(X)
    leaf = leaves[0]
    shares = np.bincount(y[leaves == leaf], weights=w[leaves == leaf], minlength=4)
    np.testing.assert_allclose(proba[0], shares / shares.sum())


# ---------------------------------------------------------------- sample weights
def test_zero_weights_equal_dropping_rows():
    """Check that zero-weight rows are ignored entirely (bootstrap multiplicity vectors)."""
    X, y = make_ordinal(400, seed=9)
    w = np.random.default_rng(9).poisson(1.0, size=400).astype(float)
    keep = w > 0
    a = OrdinalTreeClassifier(min_samples_leaf=3).fit(X, y, sample_weight=w)
    b = OrdinalTreeClassifier(min_samples_leaf=3).fit(X[keep], y[keep], sample_weight=w[keep])
    for attr in ("children_left", "feature", "threshold", "value", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a.tree_, attr), getattr(b.tree_, attr))


def test_integer_weights_equal_repeated_rows():
    """Check that integer weights give the same tree as repeating rows (default min_samples)."""
    X, y = make_ordinal(200, seed=10)
    w = np.random.default_rng(10).integers(1, 4, size=200)
    a = OrdinalTreeClassifier(criterion="ranking").fit(X, y, sample_weight=w.astype(float))
    b = OrdinalTreeClassifier(criterion="ranking").fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    for attr in ("children_left", "feature", "threshold", "value"):
        np.testing.assert_array_equal(getattr(a.tree_, attr), getattr(b.tree_, attr))


# ---------------------------------------------------------------- hyper-parameters
def test_max_depth_min_samples_and_min_impurity_decrease_are_respected():
    """Check the stopping rules: depth, leaf sizes and the weighted gain threshold of every split."""
    X, y = make_ordinal(500, seed=11)
    clf = OrdinalTreeClassifier(max_depth=4, min_samples_leaf=7, min_impurity_decrease=0.002).fit(X, y)
    t = clf.tree_
    assert clf.get_depth() <= 4
    assert t.n_node_samples[t.children_left == -1].min() >= 7
    internal = np.flatnonzero(t.children_left != -1)
    gains = np.array([oracle_gain("ogini", t.value[a], t.value[b]) for a, b in
                      zip(t.children_left[internal], t.children_right[internal])])
    assert np.all(t.weighted_n_node_samples[internal] / 500 * gains >= 0.002 - 1e-12)
    stump = OrdinalTreeClassifier(min_impurity_decrease=10.0).fit(X, y)
    assert stump.get_n_leaves() == 1
    big = OrdinalTreeClassifier(min_samples_split=0.5).fit(X, y)
    assert np.all(big.tree_.n_node_samples[big.tree_.children_left != -1] >= 250)


def test_max_features_is_reproducible_and_random():
    """Check that max_features draws per-node subsets reproducibly from random_state."""
    X, y = make_ordinal(500, d=8, seed=12)
    a = OrdinalTreeClassifier(max_features="sqrt", random_state=0).fit(X, y)
    b = OrdinalTreeClassifier(max_features="sqrt", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    others = [OrdinalTreeClassifier(max_features=2, random_state=s).fit(X, y).tree_ for s in range(1, 4)]
    assert any(o.node_count != a.tree_.node_count or not np.array_equal(o.feature, a.tree_.feature) for o in others)
    full = OrdinalTreeClassifier(max_features=1.0, random_state=3).fit(X, y)
    none = OrdinalTreeClassifier().fit(X, y)
    np.testing.assert_array_equal(full.tree_.threshold, none.tree_.threshold)
    assert a.max_features_ == 2 and OrdinalTreeClassifier(max_features="log2").fit(X, y).max_features_ == 3
    # With one feature per node the root's split feature follows the draw, not the best gain.
    roots = {OrdinalTreeClassifier(max_features=1, random_state=s).fit(X, y).tree_.feature[0] for s in range(12)}
    assert len(roots) > 1


def test_max_features_skips_constant_features():
    """Check that features without a candidate split in a node are not drawn."""
    rng = np.random.default_rng(13)
    X = np.zeros((200, 5))
    X[:, 3] = rng.random(200)
    y = (X[:, 3] > 0.5).astype(int)
    clf = OrdinalTreeClassifier(max_features=1, random_state=0).fit(X, y)
    assert clf.tree_.feature[0] == 3 and clf.score(X, y) == 1.0


def test_every_criterion_learns_the_synthetic_signal():
    """Check that each criterion fits a depth-limited tree that beats the constant median predictor."""
    X, y = make_ordinal(2000, seed=14, noise=0.1)
    X_test, y_test = make_ordinal(2000, seed=15, noise=0.1)
    baseline = np.abs(y_test - np.median(y)).mean()
    for criterion in CRITERIA:
        pred = OrdinalTreeClassifier(criterion=criterion, max_depth=6).fit(X, y).predict(X_test)
        assert np.abs(pred - y_test).mean() < 0.6 * baseline, criterion


# ---------------------------------------------------------------- labels
def test_string_labels_with_explicit_order():
    """Check that classes=['low', 'mid', 'high'] fixes the order and predictions belong to it."""
    X = np.arange(9, dtype=float)[:, None]
    y = np.array(["low"] * 3 + ["mid"] * 3 + ["high"] * 3)
    clf = OrdinalTreeClassifier(classes=["low", "mid", "high"]).fit(X, y)
    assert clf.classes_.tolist() == ["low", "mid", "high"] and clf.n_classes_ == 3
    assert clf.predict([[0.0], [4.0], [8.0]]).tolist() == ["low", "mid", "high"]
    # The median of a leaf holding low and high rows (one each) is the lower one in the given order.
    half = OrdinalTreeClassifier(classes=["low", "mid", "high"]).fit(np.zeros((2, 1)), ["high", "low"])
    assert half.predict([[0.0]]).tolist() == ["low"]
    # Without classes the labels sort like np.unique: 'high' < 'low' < 'mid'.
    with pytest.warns(ClassOrderWarning, match="'high' < 'low' < 'mid'"):
        default = OrdinalTreeClassifier().fit(X, y)
    assert default.classes_.tolist() == ["high", "low", "mid"]
    assert set(default.predict(X)) <= {"high", "low", "mid"}


def test_pandas_ordered_categorical_carries_its_order():
    """Check that an ordered Categorical y gives classes_ in its category order, absent ones included."""
    pd = pytest.importorskip("pandas")
    X = np.arange(6, dtype=float)[:, None]
    y = pd.Series(pd.Categorical(["poor", "poor", "good", "good", "fair", "fair"],
                                 categories=["poor", "fair", "good", "great"], ordered=True))
    clf = OrdinalTreeClassifier().fit(X, y)
    assert clf.classes_.tolist() == ["poor", "fair", "good", "great"]
    assert clf.predict([[0.0], [2.5], [5.0]]).tolist() == ["poor", "good", "fair"]
    with pytest.warns(ClassOrderWarning, match="sorted alphabetically: 'fair' < 'good' < 'poor'"):
        unordered = OrdinalTreeClassifier().fit(X, y.astype(str))
    assert unordered.classes_.tolist() == ["fair", "good", "poor"]


def test_classes_may_contain_absent_labels_and_single_present_class():
    """Check that explicit classes keep absent labels as zero columns and a single present class fits."""
    X, y = make_ordinal(200, k=3, seed=16)
    clf = OrdinalTreeClassifier(classes=np.arange(5)).fit(X, y)
    assert clf.n_classes_ == 5 and clf.tree_.value.shape[1] == 5
    proba = clf.predict_proba(X)
    assert proba.shape == (200, 5) and np.all(proba[:, 3:] == 0)
    one = OrdinalTreeClassifier(classes=[0, 1, 2]).fit(X, np.ones(200, dtype=int))
    assert one.get_n_leaves() == 1 and one.get_depth() == 0
    assert np.all(one.predict(X) == 1)
    np.testing.assert_array_equal(one.predict_proba(X[:2]), [[0, 1, 0], [0, 1, 0]])


def test_alias_and_clone():
    """Check the documented alias and that clone keeps the keyword-only parameters."""
    assert OrdinalDecisionTreeClassifier is OrdinalTreeClassifier
    clf = OrdinalTreeClassifier(criterion="wig", wig_power=2.0, classes=[1, 2, 3])
    assert clone(clf).get_params() == clf.get_params()
    with pytest.raises(TypeError):
        OrdinalTreeClassifier("gini")


# ---------------------------------------------------------------- bad input
def test_bad_input_raises_clear_errors():
    """Check that bad data, targets and parameters raise a ValueError naming the problem."""
    X, y = make_ordinal(50, seed=17)
    bad = X.copy()
    bad[3, 1] = np.inf  # NaN is a missing value (tests/test_trees_missing.py); infinity is an error
    with pytest.raises(ValueError, match="infinity"):
        OrdinalTreeClassifier().fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        OrdinalTreeClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="at least 2 classes"):
        OrdinalTreeClassifier().fit(X, np.zeros(50))
    with pytest.raises(ValueError, match="'criterion' parameter"):
        OrdinalTreeClassifier(criterion="mse").fit(X, y)
    with pytest.raises(ValueError, match=r"classes is missing label\(s\) present in y: \[3\]"):
        OrdinalTreeClassifier(classes=[0, 1, 2]).fit(X, y)
    with pytest.raises(ValueError, match="duplicate"):
        OrdinalTreeClassifier(classes=[0, 1, 1, 2, 3]).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        OrdinalTreeClassifier().fit(X, y, sample_weight=-np.ones(50))
    with pytest.raises(ValueError, match="at least one non-zero"):
        OrdinalTreeClassifier().fit(X, y, sample_weight=np.zeros(50))
    with pytest.raises(ValueError, match="max_features must be at most n_features=4"):
        OrdinalTreeClassifier(max_features=9).fit(X, y)
    with pytest.raises(ValueError, match="'leaf_label' parameter"):
        OrdinalTreeClassifier(leaf_label="mean").fit(X, y)
    with pytest.raises(ValueError, match="'wig_power' parameter"):
        OrdinalTreeClassifier(wig_power=0).fit(X, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        OrdinalTreeClassifier().fit(X, np.linspace(0, 1, 50))
    clf = OrdinalTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match="infinity"):
        clf.predict(bad)
    with pytest.raises(ValueError, match="4 features"):
        clf.predict(X[:, :3])
