"""Tests of relabel.fuse, FusedPartition.locate and relabel.region_counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

import relabel
import relabel._fusion as fusion
from test_relabel_helpers import fit_trees, fused_instance, make_data
from trees import leaf_boxes


def all_combinations(boxes_list):
    """Every leaf tuple with a non-empty intersection, by brute force over the product."""
    found = {}
    for combo in itertools.product(*[range(b.leaf_ids.shape[0]) for b in boxes_list]):
        lo = np.max([b.lower[i] for b, i in zip(boxes_list, combo)], axis=0)
        hi = np.min([b.upper[i] for b, i in zip(boxes_list, combo)], axis=0)
        if np.all(lo < hi):
            key = tuple(int(b.leaf_ids[i]) for b, i in zip(boxes_list, combo))
            found[key] = (lo, hi)
    return found


@given(
    n_features=st.integers(1, 4),
    n_trees=st.integers(1, 4),
    max_leaf_nodes=st.integers(2, 7),
    seed=st.integers(0, 10_000),
    grid=st.sampled_from([None, 4]),
)
def test_fuse_equals_all_combinations(n_features, n_trees, max_leaf_nodes, seed, grid):
    """Check that fuse finds exactly the non-empty leaf intersections, with their bounds."""
    X, y = make_data(80, n_features, 4, seed, grid)
    trees = fit_trees(X, y, n_trees, max_leaf_nodes, seed)
    boxes = [leaf_boxes(t) for t in trees]
    part = relabel.fuse(boxes)
    expected = all_combinations(boxes)
    keys = [tuple(k) for k in part.keys.tolist()]
    assert keys == sorted(expected)
    assert part.n_regions == len(expected) and part.n_trees == n_trees
    assert part.n_features == n_features
    for i, key in enumerate(keys):
        np.testing.assert_array_equal(part.lower[i], expected[key][0])
        np.testing.assert_array_equal(part.upper[i], expected[key][1])
    assert np.all(part.lower < part.upper)


@given(
    n_features=st.sampled_from([2, 4]),
    n_trees=st.integers(1, 5),
    max_leaf_nodes=st.integers(2, 30),
    seed=st.integers(0, 10_000),
)
def test_locate_matches_apply_and_geometry(n_features, n_trees, max_leaf_nodes, seed):
    """Check that locate sends every point to the region whose key is its leaves and whose box holds it."""
    part, trees, X, _, _ = fused_instance(n_features, n_trees, max_leaf_nodes, 3, seed, n_samples=150)
    rng = np.random.default_rng(seed)
    Z = np.vstack([X, rng.uniform(-0.5, 1.5, size=(200, n_features))])
    leaves = np.column_stack([t.apply(Z) for t in trees])
    idx = part.locate(leaves)
    assert idx.dtype == np.intp
    np.testing.assert_array_equal(part.keys[idx], leaves)
    assert np.all((part.lower[idx] < Z) & (Z <= part.upper[idx]))
    # The boxes are disjoint: each point lies in exactly one region box.
    inside = np.all((part.lower[None] < Z[:, None]) & (Z[:, None] <= part.upper[None]), axis=2)
    np.testing.assert_array_equal(inside.sum(axis=1), 1)


def test_locate_staged_encoding_agrees(monkeypatch):
    """Check that the staged key encoding (radix overflow) locates like the single int64 code."""
    part, trees, X, _, _ = fused_instance(3, 5, 25, 3, seed=1)
    leaves = np.column_stack([t.apply(X) for t in trees])
    direct = part.locate(leaves)
    monkeypatch.setattr(fusion, "_CODE_LIMIT", 40)
    staged = relabel.fuse([leaf_boxes(t) for t in trees])
    assert len(staged._stages) > 1
    np.testing.assert_array_equal(staged.keys, part.keys)
    np.testing.assert_array_equal(staged.locate(leaves), direct)
    with pytest.raises(ValueError, match="matches no region"):
        missing = staged.keys[:1].copy()
        # A leaf tuple of valid ids that is not a region of the partition.
        for ids in itertools.product(*staged.leaf_ids):
            if not (staged.keys == np.array(ids)).all(axis=1).any():
                missing[0] = ids
                break
        else:  # pragma: no cover - every tuple present would make the test vacuous
            pytest.skip("no missing tuple")
        staged.locate(missing)


def test_fuse_regressor_and_single_tree():
    """Check that fuse accepts regressor trees, and one tree gives its own leaves."""
    X, y = make_data(100, 2, 3, seed=3)
    tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    boxes = leaf_boxes(tree)
    part = relabel.fuse([boxes])
    np.testing.assert_array_equal(part.keys[:, 0], boxes.leaf_ids)
    np.testing.assert_array_equal(part.lower, boxes.lower)
    assert part.locate(tree.apply(X)[:, None]).shape == (100,)


def test_locate_rejects_bad_rows():
    """Check that locate rejects wrong shapes, unknown leaf ids and tuples matching no region."""
    a = (np.array([1, 2]), np.array([[-np.inf], [0.0]]), np.array([[0.0], [np.inf]]))
    b = (np.array([1, 2]), np.array([[-np.inf], [1.0]]), np.array([[1.0], [np.inf]]))
    part = relabel.fuse([a, b])
    with pytest.raises(ValueError, match="shape"):
        part.locate(np.array([1, 1]))
    with pytest.raises(ValueError, match="not a leaf id of tree 1"):
        part.locate(np.array([[1, 7]]))
    with pytest.raises(ValueError, match="matches no region"):
        part.locate(np.array([[2, 1], [1, 2]]))  # x <= 0 and x > 1: empty
    with pytest.raises(ValueError, match="integer"):
        part.locate(np.array([[1.0, 1.0]]))


def test_fuse_rejects_bad_input():
    """Check that fuse names the problem for malformed leaf boxes."""
    good = (np.array([1, 2]), np.array([[-np.inf], [0.0]]), np.array([[0.0], [np.inf]]))
    with pytest.raises(ValueError, match="at least one"):
        relabel.fuse([])
    with pytest.raises(ValueError, match="triple"):
        relabel.fuse([good, (np.array([1]),)])
    with pytest.raises(ValueError, match="same number of features"):
        relabel.fuse([good, (np.array([1]), np.full((1, 2), -np.inf), np.full((1, 2), np.inf))])
    with pytest.raises(ValueError, match="empty leaf box"):
        relabel.fuse([(np.array([1]), np.array([[1.0]]), np.array([[1.0]]))])
    with pytest.raises(ValueError, match="NaN"):
        relabel.fuse([(np.array([1]), np.array([[np.nan]]), np.array([[1.0]]))])
    with pytest.raises(ValueError, match="duplicates"):
        relabel.fuse([(np.array([1, 1]), good[1], good[2])])
    overlapping = (np.array([1, 2]), np.array([[-np.inf], [-1.0]]), np.array([[0.0], [np.inf]]))
    with pytest.raises(ValueError, match="not the leaf partition of a tree"):
        relabel.fuse([good, overlapping])
    with pytest.raises(ValueError, match="one LeafBoxes"):
        relabel.fuse(leaf_boxes(DecisionTreeRegressor(max_depth=1).fit([[0.0], [1.0]], [0, 1])))


@given(
    n_regions=st.integers(1, 6),
    n_classes=st.integers(2, 4),
    data=st.data(),
)
def test_region_counts_matches_loop(n_regions, n_classes, data):
    """Check that region_counts equals an explicit weighted loop over the samples."""
    n = data.draw(st.integers(0, 30))
    region = np.array(data.draw(st.lists(st.integers(0, n_regions - 1), min_size=n, max_size=n)), dtype=int)
    y = np.array(data.draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)), dtype=int)
    w = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=float)
    expected = np.zeros((n_regions, n_classes))
    for r, c, weight in zip(region, y, w):
        expected[r, c] += weight
    got = relabel.region_counts(region, y, n_classes, sample_weight=w, n_regions=n_regions)
    np.testing.assert_array_equal(got, expected)
    unweighted = relabel.region_counts(region, y, n_classes, n_regions=n_regions)
    np.testing.assert_array_equal(unweighted.sum(axis=1), np.bincount(region, minlength=n_regions))


def test_region_counts_rejects_bad_input():
    """Check that region_counts names the offending parameter."""
    with pytest.raises(ValueError, match="n_classes"):
        relabel.region_counts([0], [0], 1)
    with pytest.raises(ValueError, match="class indices"):
        relabel.region_counts([0], [3], 2)
    with pytest.raises(ValueError, match="same length"):
        relabel.region_counts([0, 1], [0], 2)
    with pytest.raises(ValueError, match="sample_weight"):
        relabel.region_counts([0], [0], 2, sample_weight=[-1.0])
    with pytest.raises(ValueError, match="region_index"):
        relabel.region_counts([5], [0], 2, n_regions=2)


def test_fuse_stops_before_exceeding_max_regions():
    """Check that fuse raises TooManyRegionsError once max_regions is certain to be exceeded, and not below."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 2))
    boxes = [
        leaf_boxes(DecisionTreeRegressor(max_depth=4, random_state=s).fit(X, rng.normal(size=200)))
        for s in range(3)
    ]
    n = relabel.fuse(boxes).n_regions
    assert relabel.fuse(boxes, max_regions=n).n_regions == n
    with pytest.raises(relabel.TooManyRegionsError, match=f"max_regions={n - 1}"):
        relabel.fuse(boxes, max_regions=n - 1)
    with pytest.raises(ValueError, match="max_regions must be a positive integer"):
        relabel.fuse(boxes, max_regions=0)
