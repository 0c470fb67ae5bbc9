"""Tests of the histogram binning and grower (trees/_hist.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

from trees._hist import MIN_GAP_ULPS, bin_features, grow_tree


def _leaf_of_rows(tree, n):
    """Leaf node of every training row, from the grower's row partition."""
    leaf = np.full(n, -1)
    for node in np.flatnonzero(tree.left == -1):
        leaf[tree.rows[tree.start[node]:tree.stop[node]]] = node
    return leaf


def test_bins_are_distinct_values_or_equal_count_quantiles():
    """Check one bin per distinct value when they fit, equal-count bins otherwise, and exact gaps."""
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.randint(0, 7, 500).astype(float), rng.normal(size=500)])
    bins = bin_features(X, max_bins=16)
    assert bins.n_bins.tolist() == [7, 16]
    np.testing.assert_array_equal(bins.binned[:, 0], X[:, 0].astype(int))
    for f in range(2):
        for b in range(bins.n_bins[f] - 1):
            # The gap of a split between bins b and b + 1: largest value of bin b, smallest of bin b + 1.
            assert bins.gap_lo[f, b] == X[bins.binned[:, f] == b, f].max()
            assert bins.gap_hi[f, b] == X[bins.binned[:, f] == b + 1, f].min()
    counts = np.bincount(bins.binned[:, 1])
    assert counts.min() >= 500 / 16 - 2 and counts.max() <= 500 / 16 + 2
    assert np.all(np.diff(X[np.argsort(X[:, 1]), 1][np.argsort(bins.binned[np.argsort(X[:, 1]), 1], kind="stable")]) >= 0)
    with pytest.raises(ValueError, match="max_bins"):
        bin_features(X, max_bins=300)


def test_values_too_close_for_distinct_thresholds_share_a_bin():
    """Check that distinct values a few ulps apart are merged (and reported), and roomy ones are not."""
    a = 0.3
    X = np.array([[a, 0.0], [np.nextafter(a, 1.0), 1.0], [0.7, 2.0]])
    bins = bin_features(X)
    assert bins.merged.tolist() == [0]
    assert bins.n_bins.tolist() == [2, 3]
    assert bins.binned[0, 0] == bins.binned[1, 0] != bins.binned[2, 0]
    # A gap of MIN_GAP_ULPS + some ulps is roomy enough.
    b = a + (MIN_GAP_ULPS + 16) * np.spacing(a)
    assert bin_features(np.array([[a], [b]])).n_bins.tolist() == [2]
    assert bin_features(np.array([[a], [b]])).merged.shape[0] == 0


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), log_a=st.floats(-12, 50), b=st.floats(-1e9, 1e9),
       max_bins=st.sampled_from([4, 16, 255]))
def test_bins_do_not_depend_on_units(seed, log_a, b, max_bins):
    """Check that a * X + b (a > 0) gives the same bins as X whenever it keeps the values distinct."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(200, 2))
    X[:, 1] = np.round(X[:, 1] * 10)
    Z = 10.0**log_a * X + b
    for f in range(2):
        if np.unique(Z[:, f]).shape[0] != np.unique(X[:, f]).shape[0]:
            return  # the transformation merged values (float ties): nothing to compare
    ours, theirs = bin_features(X, max_bins), bin_features(Z, max_bins)
    if ours.merged.shape[0] or theirs.merged.shape[0]:
        return
    np.testing.assert_array_equal(ours.binned, theirs.binned)


@pytest.mark.parametrize(("max_leaf_nodes", "max_depth"), [(2, None), (5, None), (12, None), (12, 2), (30, 3)])
def test_grower_makes_the_best_first_tree_of_scikit_learn(max_leaf_nodes, max_depth):
    """Check that on binned data with unit hessians the tree is scikit-learn's best-first regression tree."""
    rng = np.random.RandomState(max_leaf_nodes)
    X = rng.uniform(size=(400, 4))
    y = X[:, 0] * 3 + np.sin(6 * X[:, 1]) + rng.normal(scale=0.3, size=400)
    bins = bin_features(X, max_bins=32)
    tree = grow_tree(bins, -y, np.ones(400), np.arange(400), max_leaf_nodes=max_leaf_nodes, max_depth=max_depth,
                     min_samples_leaf=7)
    ref = DecisionTreeRegressor(max_leaf_nodes=max_leaf_nodes, max_depth=max_depth, min_samples_leaf=7,
                                random_state=0)
    ref.fit(bins.binned.astype(float), y)
    assert (tree.left == -1).sum() == ref.get_n_leaves()
    leaf = _leaf_of_rows(tree, 400)
    # Same leaves (as row sets), same values: the mean of y (-G / H with l2 = 0).
    np.testing.assert_allclose(tree.value[leaf], ref.predict(bins.binned.astype(float)), rtol=1e-10, atol=1e-12)


def test_histogram_subtraction_and_partition_keep_every_row_once():
    """Check that every row is in exactly one leaf, each leaf's rows are on its side of every split, values exact."""
    rng = np.random.RandomState(3)
    X = rng.normal(size=(1000, 6))
    g, h = rng.normal(size=1000), rng.uniform(0.5, 2.0, size=1000)
    bins = bin_features(X, max_bins=20)
    tree = grow_tree(bins, g, h, np.arange(1000), max_leaf_nodes=20, min_samples_leaf=10, l2_regularization=0.5)
    leaf = _leaf_of_rows(tree, 1000)
    assert np.all(leaf >= 0) and np.sort(tree.rows).tolist() == list(range(1000))
    for node in np.flatnonzero(tree.left == -1):
        rows = leaf == node
        assert rows.sum() >= 10
        assert tree.value[node] == pytest.approx(-g[rows].sum() / (h[rows].sum() + 0.5))
    # Walking the bins down the tree reaches the same leaf.
    for i in range(0, 1000, 37):
        node = 0
        while tree.left[node] != -1:
            node = tree.left[node] if bins.binned[i, tree.feature[node]] <= tree.bin[node] else tree.right[node]
        assert node == leaf[i]


@pytest.mark.parametrize("sign", [1, -1])
def test_monotone_trees_are_monotone_along_constrained_features(sign):
    """Check that with a constraint every line probe along the feature sees monotone leaf values."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(600, 3))
    y = sign * X[:, 0] + np.sin(8 * X[:, 0]) + X[:, 1] + rng.normal(scale=0.3, size=600)
    bins = bin_features(X, max_bins=30)
    tree = grow_tree(bins, -y, np.ones(600), np.arange(600), max_leaf_nodes=25, min_samples_leaf=5,
                     monotonic_cst=np.array([sign, 0, 0]))
    free = grow_tree(bins, -y, np.ones(600), np.arange(600), max_leaf_nodes=25, min_samples_leaf=5)

    def probe(t, fixed):
        values = []
        for b in range(bins.n_bins[0]):
            node = 0
            row = np.array([b, fixed[0], fixed[1]])
            while t.left[node] != -1:
                node = t.left[node] if row[t.feature[node]] <= t.bin[node] else t.right[node]
            values.append(t.value[node])
        return sign * np.diff(values)

    assert all(np.all(probe(tree, rng.randint(0, 30, 2)) >= 0) for _ in range(40))
    assert any(np.any(probe(free, rng.randint(0, 30, 2)) < 0) for _ in range(40))  # the constraint did something


def test_sample_weight_counts_as_repeated_rows():
    """Check that integer weights grow the tree that repeated rows grow (min_samples_leaf counts weight)."""
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(80, 2))
    y = X[:, 0] + rng.normal(scale=0.1, size=80)
    w = rng.randint(1, 4, size=80).astype(float)
    bins_w = bin_features(X, 8, sample_weight=w)
    weighted = grow_tree(bins_w, -w * y, w, np.arange(80), sample_weight=w, max_leaf_nodes=6, min_samples_leaf=9)
    Xr, yr = np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    bins_r = bin_features(Xr, 8)
    repeated = grow_tree(bins_r, -yr, np.ones(yr.shape[0]), np.arange(yr.shape[0]), max_leaf_nodes=6,
                         min_samples_leaf=9)
    np.testing.assert_array_equal(weighted.feature, repeated.feature)
    np.testing.assert_array_equal(weighted.bin, repeated.bin)
    np.testing.assert_allclose(weighted.value, repeated.value)


def _brute_best_stump(binned, n_bins, g, h, min_leaf):
    """Largest loss decrease over every (feature, real cut, missing side) and the real-vs-missing cut."""
    def loss(mask):
        G, H = g[mask].sum(), h[mask].sum()
        return -G * G / H if H > 0 else 0.0

    everything = np.ones(g.shape[0], dtype=bool)
    best = (0.0, None)
    for f in range(binned.shape[1]):
        column, m = binned[:, f].astype(int), int(n_bins[f])
        missing = column == m
        cuts = [(b, side) for b in range(m - 1) for side in ((0, 1) if missing.any() else (0,))]
        cuts += [(m - 1, 0)] if missing.any() else []
        for b, side in cuts:
            left = np.where(missing, bool(side), column <= b)
            if left.sum() < min_leaf or (~left).sum() < min_leaf:
                continue
            gain = loss(everything) - loss(left) - loss(~left)
            if gain > best[0] + 1e-9:
                best = (gain, (f, b, side))
    return best


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), fraction=st.sampled_from([0.0, 0.1, 0.4, 0.9]))
def test_root_split_with_missing_values_is_the_brute_force_best(seed, fraction):
    """Check the root split against every cut with missing values on either side (and real vs missing),
    and that every row, missing or not, sits in the leaf its bins and the missing flags send it to."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(120, 3))
    X[rng.uniform(size=X.shape) < fraction] = np.nan
    g = rng.normal(size=120) + 2.0 * np.isnan(X[:, 0])  # missingness itself can be informative
    h = rng.uniform(0.5, 2.0, size=120)
    bins = bin_features(X, max_bins=8)
    assert np.all(bins.binned[np.isnan(X)] == np.broadcast_to(bins.n_bins, X.shape)[np.isnan(X)])
    stump = grow_tree(bins, g, h, np.arange(120), max_leaf_nodes=2, min_samples_leaf=5)
    gain, where = _brute_best_stump(bins.binned, bins.n_bins, g, h, 5)
    if where is None:
        assert stump.left.shape[0] == 1
        return
    assert stump.gain[0] == pytest.approx(gain, rel=1e-9)
    tree = grow_tree(bins, g, h, np.arange(120), max_leaf_nodes=8, min_samples_leaf=5)
    leaf = _leaf_of_rows(tree, 120)
    for i in range(120):
        node = 0
        while tree.left[node] != -1:
            f, b = tree.feature[node], tree.bin[node]
            code = bins.binned[i, f]
            go_left = bool(tree.missing_left[node]) if code == bins.n_bins[f] else code <= b
            node = tree.left[node] if go_left else tree.right[node]
        assert node == leaf[i]


def test_a_feature_with_every_cut_blocked_grows_the_tree_it_would_without_it_but_can_split_off_missing_values():
    """Check that blocking every cut of a feature grows the tree grown with that feature not allowed (its
    histograms are then not built), that a partly blocked feature is still split at its open cuts, and that a
    fully blocked feature with missing values can still send them to a child of their own."""
    rng = np.random.RandomState(4)
    X = rng.uniform(size=(600, 4))
    gradient = -(np.sin(6 * X[:, 0]) + X[:, 1] - X[:, 2] * X[:, 3])
    bins = bin_features(X, max_bins=32)
    fields = ("left", "feature", "bin", "value")
    blocked = np.zeros((4, 32), dtype=bool)
    blocked[0] = True
    shut = grow_tree(bins, gradient, np.ones(600), np.arange(600), max_leaf_nodes=12, min_samples_leaf=5,
                     blocked=blocked)
    absent = grow_tree(bins, gradient, np.ones(600), np.arange(600), max_leaf_nodes=12, min_samples_leaf=5,
                       allowed=np.array([False, True, True, True]))
    for name in fields:
        np.testing.assert_array_equal(getattr(shut, name), getattr(absent, name))
    free = grow_tree(bins, gradient, np.ones(600), np.arange(600), max_leaf_nodes=12, min_samples_leaf=5)
    assert 0 in free.feature and 0 not in shut.feature
    half = blocked.copy()
    half[0, 16:] = False  # the cuts above the middle of feature 0 open again
    partly = grow_tree(bins, gradient, np.ones(600), np.arange(600), max_leaf_nodes=12, min_samples_leaf=5,
                       blocked=half)
    assert np.all(partly.bin[partly.feature == 0] >= 16) and 0 in partly.feature

    X_missing = X.copy()
    X_missing[::3, 0] = np.nan
    gradient_missing = np.where(np.isnan(X_missing[:, 0]), -3.0, 1.0) + 0.1 * gradient
    bins_missing = bin_features(X_missing, max_bins=32)
    tree = grow_tree(bins_missing, gradient_missing, np.ones(600), np.arange(600), max_leaf_nodes=4,
                     min_samples_leaf=5, blocked=blocked)
    inner = tree.feature >= 0
    assert np.any((tree.feature[inner] == 0) & (tree.bin[inner] == bins_missing.n_bins[0] - 1))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_features=st.integers(1, 9), whole=st.booleans())
def test_histograms_are_the_sums_of_each_bin_at_the_root_and_in_a_node(seed, n_features, whole):
    """Check ``_build_histogram`` (four features a pass, the root read in row order) against ``np.add.at``,
    for every count of allowed features, rows in any order, missing values, and a node's range of rows."""
    from trees._hist import _build_histogram

    rng = np.random.RandomState(seed)
    n = 300
    X = rng.normal(size=(n, n_features))
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    bins = bin_features(X, max_bins=16)
    # Multiples of 2**-10: sums exact in any order, as boosting's quantised gradients.
    g, h, w = (np.round(rng.normal(size=n) * 1024) / 1024 for _ in range(3))
    rows = rng.permutation(n).astype(np.int64)
    start, stop = (0, n) if whole else (40, 230)
    ok = rng.uniform(size=n_features) < 0.7
    hist = np.full((n_features, 17, 3), np.nan)
    _build_histogram(bins.binned, g, h, w, rows, start, stop, ok, hist, np.empty((n, 3)))
    for f in range(n_features):
        if not ok[f]:
            assert np.isnan(hist[f]).all()  # not touched
            continue
        expected = np.zeros((17, 3))
        chosen = rows[start:stop]
        for k, column in enumerate((g, h, w)):
            np.add.at(expected[:, k], bins.binned[chosen, f], column[chosen])
        np.testing.assert_array_equal(hist[f], expected)


def _split_by_the_rule(hist, n_bins, ok, closed, cst, g_sum, h_sum, count, lo, hi, l2, min_leaf):
    """``_find_split``'s documented rule, one candidate at a time in (feature, bin, side) order."""
    def value(g, h):
        return min(max(-g / (h + l2) if h + l2 > 0 else 0.0, lo), hi)

    def loss(g, h):
        v = value(g, h)
        return 2.0 * g * v + (h + l2) * v * v

    parent = loss(g_sum, h_sum)
    tiny = 1e-12 * max(abs(parent), 1e-300)
    best = (0.0, -1, -1, 0.0, 0.0, 0)
    for f in range(hist.shape[0]):
        if not ok[f]:
            continue
        m = n_bins[f]
        mg, mh, mc = hist[f, m]
        last = m if mc > 0 else m - 1
        for b in range(last):
            if b < m - 1 and closed[f, b]:
                continue
            for side in range(2 if mc > 0 and b < m - 1 else 1):
                gl = hl = cl = 0.0
                for bb in range(b + 1):
                    gl, hl, cl = gl + hist[f, bb, 0], hl + hist[f, bb, 1], cl + hist[f, bb, 2]
                gl, hl, cl = gl + mg * side, hl + mh * side, cl + mc * side
                if cl < min_leaf or count - cl < min_leaf or hl <= 0 or h_sum - hl <= 0:
                    continue
                vl, vr = value(gl, hl), value(g_sum - gl, h_sum - hl)
                if (cst[f] == 1 and vl > vr) or (cst[f] == -1 and vl < vr):
                    continue
                gain = parent - loss(gl, hl) - loss(g_sum - gl, h_sum - hl)
                if gain > best[0] + tiny:
                    best = (gain, f, b, vl, vr, side)
    return best


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), bounded=st.booleans(), l2=st.sampled_from([0.0, 0.5]))
def test_split_search_follows_its_rule_candidate_by_candidate(seed, bounded, l2):
    """Check ``_find_split`` (every gain computed without branches, then read in order) against the rule
    evaluated one candidate at a time: blocked cuts, missing values on either side, monotone signs,
    bounded values, ties (equal bins) and nodes too small for any split."""
    from trees._hist import _find_split

    rng = np.random.RandomState(seed)
    d, width = 5, 9
    n_bins = rng.randint(1, width, size=d)
    hist = np.zeros((d, width, 3))
    count = float(rng.randint(2, 60))
    for f in range(d):
        m = n_bins[f]
        share = rng.multinomial(int(count), rng.dirichlet(np.ones(m + 1)))  # the last bin: missing values
        if rng.uniform() < 0.5:
            share[m - 1] += share[m]
            share[m] = 0  # no missing value in this node
        hist[f, :m + 1, 2] = share
        hist[f, :m + 1, 0] = np.where(share > 0, np.round(rng.normal(size=m + 1) * 8) / 8 * share, 0.0)
        hist[f, :m + 1, 1] = share * 0.25
    g_sum, h_sum = hist[0, :, 0].sum(), hist[0, :, 1].sum()
    for f in range(1, d):  # one node: every feature sums to the same totals
        hist[f, :, 0] *= 0.0
        m = n_bins[f]
        hist[f, :m + 1, 0] = g_sum * hist[f, :m + 1, 2] / count
    hist[:, :, 1] = hist[:, :, 2] * 0.25
    ok = rng.uniform(size=d) < 0.8
    closed = rng.uniform(size=(d, width)) < 0.3
    cst = rng.randint(-1, 2, size=d)
    lo, hi = (-0.3, 0.4) if bounded else (-np.inf, np.inf)
    min_leaf = int(rng.randint(1, 12))
    args = (hist, n_bins, ok, closed, cst, float(g_sum), float(h_sum), count, lo, hi, l2, min_leaf)
    got = _find_split(*args)
    assert tuple(got) == _split_by_the_rule(*args)


def test_a_tree_of_fewer_leaves_is_the_first_splits_of_a_larger_one():
    """Check best-first growth: the tree of L leaves makes the first L - 1 splits of the tree of 16 leaves
    (nodes are numbered in the order they are split), whichever nodes the grower skips histogramming."""
    rng = np.random.RandomState(5)
    X = rng.normal(size=(600, 6))
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    g = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + rng.normal(scale=0.2, size=600)
    g = np.where(np.isnan(g), 1.0, g)
    h = rng.uniform(0.5, 2.0, size=600)
    bins = bin_features(X, max_bins=24)
    big = grow_tree(bins, g, h, np.arange(600), max_leaf_nodes=16, min_samples_leaf=5)
    assert (big.left == -1).sum() == 16
    for leaves in range(2, 16):
        small = grow_tree(bins, g, h, np.arange(600), max_leaf_nodes=leaves, min_samples_leaf=5)
        inner = np.flatnonzero(small.left >= 0)
        assert inner.shape[0] == leaves - 1
        for key in ("left", "right", "feature", "bin", "missing_left"):
            np.testing.assert_array_equal(getattr(small, key)[inner], getattr(big, key)[inner])


def test_rows_must_be_distinct_indices():
    """Check that repeated or out-of-range rows are refused with a message saying to weigh rows instead
    (a node of every row is histogrammed without its row list)."""
    X = np.arange(8.0).reshape(-1, 1)
    bins = bin_features(X)
    g, h = -(X[:, 0] > 3).astype(float), np.ones(8)
    for rows in ([0, 1, 2, 3, 4, 5, 6, 6], [0, 1, 8], [-1, 2]):
        with pytest.raises(ValueError, match="rows must be distinct.*sample_weight"):
            grow_tree(bins, g, h, np.array(rows, dtype=np.int64), min_samples_leaf=1)
    tree = grow_tree(bins, g, h, np.array([7, 0, 5, 2], dtype=np.int64), min_samples_leaf=1)
    assert sorted(tree.rows.tolist()) == [0, 2, 5, 7]
