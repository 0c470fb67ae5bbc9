"""Certificates on hand-built trees whose largest jump lies where a planted bug would look away.

Each tree is small enough that its exact jump is computed here independently: for every
pattern of missing features, the leaves a point with that pattern can reach and their
boxes in the present features; two points are near when they miss the same features and
their present values are close, so two leaves are in contact on a slice when their closed
boxes meet there (a face, an edge or a corner). benchmarks/planted_bugs.py plants the
bugs these tests must catch: strict contact in the jump search, contacts through a
missing-value slice dropped, and the kernel score's Lipschitz bound halved.
"""

from itertools import combinations, product

import numpy as np

from ensemble.certificates._certificates import exact_jump, monotone_leaf_pairs
from ensemble.spaces._spaces import KernelScore


def _slice_leaves(left, right, feature, threshold, missing_left, n_features, missing):
    """(leaf, lower, upper) of every leaf reached by points missing exactly the features in ``missing``."""
    out = []
    stack = [(0, np.full(n_features, -np.inf), np.full(n_features, np.inf))]
    while stack:
        node, lower, upper = stack.pop()
        if left[node] == -1:
            out.append((node, lower, upper))
            continue
        f, t = feature[node], threshold[node]
        if f in missing:
            stack.append((left[node] if missing_left[node] else right[node], lower, upper))
            continue
        if lower[f] <= t:  # x_f <= t goes left
            up = upper.copy()
            up[f] = min(upper[f], t)
            stack.append((left[node], lower, up))
        if upper[f] > t:
            low = lower.copy()
            low[f] = max(lower[f], t)
            stack.append((right[node], low, upper))
    return out


def _oracle_jump(left, right, feature, threshold, missing_left, value, n_features):
    """Largest value difference between leaves in contact on some missing pattern, and those pairs."""
    best, pairs = 0, set()
    for pattern in product([False, True], repeat=n_features):
        missing = {f for f in range(n_features) if pattern[f]}
        present = [f for f in range(n_features) if f not in missing]
        leaves = _slice_leaves(left, right, feature, threshold, missing_left, n_features, missing)
        for (a, la, ua), (b, lb, ub) in combinations(leaves, 2):
            if all(max(la[f], lb[f]) <= min(ua[f], ub[f]) for f in present):
                best = max(best, abs(int(value[a]) - int(value[b])))
                pairs.add((min(a, b), max(a, b), frozenset(missing)))
    return best, pairs


def _nodes(left, right, feature, threshold, missing_left=None):
    arrays = (np.array(left), np.array(right), np.array(feature), np.array(threshold, dtype=np.float64))
    if missing_left is None:
        return arrays
    return arrays + (np.array(missing_left, dtype=np.uint8),)


def test_exact_jump_counts_leaves_that_touch_only_at_a_corner():
    """Check the jump of a 2x2 grid whose two extreme leaves (0 and 9) meet only at the corner (0.5, 0.5).

    Every face contact differs by at most 5; only closed intervals at the threshold (a box whose end
    lies on it touches both sides) find the 9.
    """
    left, right = [1, 3, 5, -1, -1, -1, -1], [2, 4, 6, -1, -1, -1, -1]
    feature, threshold = [0, 1, 1, -2, -2, -2, -2], [0.5, 0.5, 0.5, -2.0, -2.0, -2.0, -2.0]
    value = np.array([0, 0, 0, 0, 4, 4, 9], dtype=np.int64)  # leaves 3 (low, low) ... 6 (high, high)
    oracle, pairs = _oracle_jump(left, right, feature, threshold, np.zeros(7, np.uint8), value, 2)
    assert oracle == 9 and (3, 6, frozenset()) in pairs
    assert exact_jump(_nodes(left, right, feature, threshold), value, 2) == oracle
    # A face end point too: in 1-d, the leaf (-inf, 0.5] touches (0.5, 0.7] at 0.5 only.
    line = _nodes([1, -1, 3, -1, -1], [2, -1, 4, -1, -1], [0, -2, 0, -2, -2], [0.5, -2.0, 0.7, -2.0, -2.0])
    line_value = np.array([0, 0, 0, 7, 3], dtype=np.int64)
    expected, _ = _oracle_jump(*line, np.zeros(5, np.uint8), line_value, 1)
    assert expected == 7 and exact_jump(line, line_value, 1) == 7


# Root: x0 <= 0.5. Left: x1 <= 0.6, missing x1 right (to leaf 4). Right: x1 <= 0.4, missing x1 left
# (to leaf 5). Leaves 4 (x0 <= 0.5, x1 > 0.6 or missing) and 5 (x0 > 0.5, x1 <= 0.4 or missing) have
# disjoint x1 intervals: they meet only on the slice where x1 is missing, along x0 = 0.5.
_MISSING_TREE = ([1, 3, 5, -1, -1, -1, -1], [2, 4, 6, -1, -1, -1, -1], [0, 1, 1, -2, -2, -2, -2],
                 [0.5, 0.6, 0.4, -2.0, -2.0, -2.0, -2.0], [0, 0, 1, 0, 0, 0, 0])
_MISSING_VALUES = np.array([0, 0, 0, 4, 0, 9, 5], dtype=np.int64)


def test_exact_jump_reaches_leaves_that_meet_only_inside_a_missing_value_slice():
    """Check that the jump is 9, found only through the points missing x1 in leaves 4 and 5."""
    left, right, feature, threshold, missing = _MISSING_TREE
    oracle, pairs = _oracle_jump(left, right, feature, threshold, missing, _MISSING_VALUES, 2)
    assert oracle == 9
    assert {(a, b) for a, b, slice_ in pairs if not slice_} >= {(3, 4), (3, 5), (4, 6), (5, 6)}
    assert (4, 5, frozenset()) not in pairs and (4, 5, frozenset({1})) in pairs
    assert exact_jump(_nodes(*_MISSING_TREE), _MISSING_VALUES, 2) == 9
    # Without the missing-value routing (missing values right) the two leaves never meet: the jump is 5.
    assert exact_jump(_nodes(*_MISSING_TREE[:4]), _MISSING_VALUES, 2) == 5


def test_monotone_pairs_include_leaves_that_meet_only_inside_a_missing_value_slice():
    """Check that along x0 the pair (leaf 4 below, leaf 5 above) is a monotone pair: points missing x1
    cross from one to the other at x0 = 0.5."""
    leaves, pairs = monotone_leaf_pairs(_nodes(*_MISSING_TREE), 2, np.array([1, 0]))
    found = {(int(leaves[a]), int(leaves[b])) for a, b in pairs}
    assert (4, 5) in found
    assert found >= {(3, 5), (4, 6)}  # the face contacts across x0 = 0.5 with overlapping x1


def _single_kernel() -> KernelScore:
    """One Gaussian in odd units: its steepest slope along f is exactly the bound sqrt(2 gamma / e) |c| / (s std)."""
    return KernelScore(features=np.array([0, 1]), scale=np.array([4.0, 0.25]), center=np.array([0.1, -0.2]),
                       mean=np.array([0.05, 0.3]), std=np.array([1.5, 0.2]), landmarks=np.array([[0.2, -0.1]]),
                       coefs=np.array([-2.5]), gamma=0.5, intercept=0.3, alpha=1.0, spread=np.zeros(2))


def test_kernel_score_lipschitz_bound_holds_every_measured_slope_and_is_tight_for_one_kernel():
    """Check Lip_f against finite-difference slopes over many random pairs of points: no slope above it,
    and for a single kernel some slope above half of it (a bound halved would be broken)."""
    score = _single_kernel()
    bound = score.lipschitz()
    rng = np.random.RandomState(0)
    # Points around the landmark, in the features' own units: x_f = (t_f + mean_f + center_f) * scale_f.
    centre = (score.landmarks[0] * score.std + score.mean + score.center) * score.scale
    width = 3.0 * score.std * score.scale / np.sqrt(2.0 * score.gamma)
    for f in range(2):
        base = centre + rng.uniform(-1.0, 1.0, size=(20000, 2)) * width
        step = rng.uniform(-1.0, 1.0, size=20000) * width[f] * 1e-3
        moved = base.copy()
        moved[:, f] += step
        slope = np.abs(score.value(moved) - score.value(base)) / np.abs(step)
        assert slope.max() <= bound[f] * (1 + 1e-9)
        assert slope.max() > 0.5 * bound[f] * 1.5  # tight: near the bound itself, far above half of it
    # Pairs far apart and in several features at once move no faster than the sum of the bounds.
    a = centre + rng.uniform(-1.0, 1.0, size=(20000, 2)) * width
    b = centre + rng.uniform(-1.0, 1.0, size=(20000, 2)) * width
    change = np.abs(score.value(a) - score.value(b))
    assert np.all(change <= np.abs(a - b) @ bound * (1 + 1e-9))
