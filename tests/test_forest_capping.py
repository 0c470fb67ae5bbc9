"""The certified forest's capping (weighted L1 projection under caps) and the threshold multiplicity, against
their definitions: brute force on small cases, the simplex on larger ones."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ensemble.certificates._certificates import threshold_clusters, threshold_multiplicity
from ensemble.forest._resolution import _l1_projection, _l1_projection_by_flow, _moving_mask, capped_leaf_values


def _instance(rng, n, values, caps, density):
    value = rng.randint(-values, values + 1, n).astype(np.int64)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.rand() < density]
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    return value, a, b, rng.randint(0, caps + 1, len(pairs)).astype(np.int64)


@pytest.mark.parametrize("seed", range(4))
def test_the_flow_projection_is_the_least_change_keeping_the_caps(seed):
    """Check the circulation's potentials against every integer labelling of up to 5 leaves: they keep the caps
    and change the values by the least weighted total (equal or integer weights), and the flow is taken, not a
    fallback."""
    rng = np.random.RandomState(seed)
    checked = 0
    while checked < 40:
        value, a, b, cap = _instance(rng, rng.randint(2, 6), 5, 3, 0.6)
        broken = np.abs(value[a] - value[b]) > cap
        if not broken.any():
            continue
        weight = None if checked % 2 else rng.randint(1, 5, value.shape[0]).astype(np.float64)
        w = np.ones(value.shape[0]) if weight is None else weight
        out = _l1_projection_by_flow(value, a, b, cap, broken, weight)
        assert out is not None and np.all(np.abs(out[a] - out[b]) <= cap)
        lo, hi = int(value.min()), int(value.max())
        best = min(sum(wi * abs(x - v) for wi, x, v in zip(w.tolist(), xs, value.tolist()))
                   for xs in itertools.product(range(lo, hi + 1), repeat=value.shape[0])
                   if all(abs(xs[i] - xs[j]) <= c for i, j, c in zip(a.tolist(), b.tolist(), cap.tolist())))
        assert np.sum(w * np.abs(out - value)) == best
        checked += 1


@pytest.mark.parametrize("seed", range(3))
def test_the_flow_and_the_simplex_change_the_values_by_the_same_weighted_total(seed):
    """Check the circulation against HiGHS's simplex on trees' worth of leaves with integer row weights: both
    keep the caps, and the circulation (exact in integer weights) changes the values by no more than the simplex
    (whose small pull on every leaf may cost a little)."""
    rng = np.random.RandomState(seed)
    for _ in range(10):
        value, a, b, cap = _instance(rng, 40, 1_000_000, 300_000, 0.15)
        weight = rng.randint(1, 50, value.shape[0]).astype(np.float64)
        broken = np.abs(value[a] - value[b]) > cap
        flow = _l1_projection_by_flow(value, a, b, cap, broken, weight)
        simplex = _l1_projection(value, a, b, cap, broken, weight)
        assert flow is not None and simplex is not None
        for out in (flow, simplex):
            assert np.all(np.abs(out[a] - out[b]) <= cap)
        assert np.sum(weight * np.abs(flow - value)) <= np.sum(weight * np.abs(simplex - value))
        assert np.array_equal(capped_leaf_values(value, a, b, cap, weight), flow)


def _multiplicity_by_definition(t, owners, r):
    t = threshold_clusters(t) if r <= 0 else t
    return max(len({o for s, o in zip(t, owners) if start <= s <= start + max(r, 0.0)}) for start in t)


@pytest.mark.parametrize("r", [0.0, 0.1, 0.5])
def test_threshold_multiplicity_counts_the_most_trees_in_one_window(r):
    """Check the compiled sliding window against its definition: for each threshold, the distinct trees with a
    threshold in the window starting at it."""
    rng = np.random.RandomState(int(r * 10))
    for _ in range(300):
        n = rng.randint(1, 40)
        t = rng.randint(0, rng.randint(1, 20), n) / 7.0
        owners = rng.randint(0, rng.randint(1, 12), n) * 3 + 5
        assert threshold_multiplicity(t, owners, resolution=r) == _multiplicity_by_definition(t, owners, r)


def test_the_moving_leaves_are_the_components_of_the_broken_pairs():
    """Check the compiled union-find against scipy's connected components: a leaf moves exactly when its component,
    in the graph of the pairs, holds a broken pair (isolated leaves, repeated pairs and self-pairs included)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.RandomState(0)
    moved = 0
    for _ in range(500):
        n, k = rng.randint(1, 30), rng.randint(0, 40)
        a, b = rng.randint(0, n, k).astype(np.int64), rng.randint(0, n, k).astype(np.int64)
        broken = rng.rand(k) < 0.15
        _, component = connected_components(coo_matrix((np.ones(k), (a, b)), shape=(n, n)), directed=False)
        expected = np.isin(component, np.unique(component[a[broken]]))
        np.testing.assert_array_equal(_moving_mask(n, a, b, broken), expected)
        moved += int(expected.sum())
    assert moved > 0
