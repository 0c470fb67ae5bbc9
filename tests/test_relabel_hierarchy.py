"""The compiled splitting hierarchy of fusion and adjacency, against brute force."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relabel import TooManyRegionsError, fuse
from relabel._guillotine import guillotine_tree, push_down
from trees import OrdinalTreeClassifier, leaf_boxes


def tree_leaves(seed, n_features):
    """Leaf boxes of a random tree on tied data (bounds shared between leaves)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 300))
    X = np.round(rng.random((n, n_features)) * rng.integers(3, 12))
    y = rng.integers(0, 4, n)
    tree = OrdinalTreeClassifier(max_depth=[None, 3][seed % 2], random_state=seed).fit(X, y)
    _, lower, upper = leaf_boxes(tree)
    return lower, upper, rng


def brute_pairs(q_lo, q_hi, lower, upper, closed):
    """Every (query, leaf) pair whose boxes meet: open (half-open points) or closed per feature."""
    lo = np.maximum(q_lo[:, None, :], lower[None])
    hi = np.minimum(q_hi[:, None, :], upper[None])
    meet = np.where(closed, lo <= hi, lo < hi).all(axis=2)
    return set(zip(*np.nonzero(meet)))


@given(st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_push_down_reaches_exactly_the_leaves_a_box_meets(seed, n_features):
    """Check that pushing boxes down the compiled hierarchy gives all and only the leaves they meet."""
    lower, upper, rng = tree_leaves(seed, n_features)
    hierarchy = guillotine_tree(lower, upper)
    # Leaves alone reach themselves (the hierarchy separates every pair of leaves).
    regions, leaves = push_down(lower, upper, hierarchy)
    np.testing.assert_array_equal(np.sort(leaves), np.arange(lower.shape[0]))
    np.testing.assert_array_equal(regions, leaves)
    # Query boxes on the same grid of values, so that faces often touch.
    q = np.sort(np.round(rng.random((40, n_features, 2)) * 12) - 1, axis=2)
    q[..., 1] += 1
    q_lo, q_hi = q[..., 0], q[..., 1]
    for closed in (False, True, rng.random(n_features) < 0.5):
        mask = np.broadcast_to(np.asarray(closed), (n_features,))
        regions, leaves = push_down(q_lo, q_hi, hierarchy, closed=closed)
        pairs = list(zip(regions.tolist(), leaves.tolist()))
        assert len(pairs) == len(set(pairs))
        assert set(pairs) == brute_pairs(q_lo, q_hi, lower, upper, mask)


@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(2, 6))
def test_push_down_with_labels_reaches_exactly_the_leaves_two_labels_away(seed, n_features, n_labels):
    """Check ``jumps_of``: the pairs are those of the unlabelled push whose labels differ by two or more,
    with labels drawn at random and labels that follow the boxes' position (most nodes pruned)."""
    lower, upper, rng = tree_leaves(seed, n_features)
    hierarchy = guillotine_tree(lower, upper)
    q = np.sort(np.round(rng.random((40, n_features, 2)) * 12) - 1, axis=2)
    q[..., 1] += 1
    q_lo, q_hi = q[..., 0], q[..., 1]
    centre = np.clip(np.where(np.isfinite(lower), lower, -2) + np.where(np.isfinite(upper), upper, 14), -4, 28)
    smooth = np.floor(centre[:, 0] * n_labels / 24).astype(int)
    for leaf_labels in (rng.integers(0, n_labels, lower.shape[0]), smooth):
        query_labels = rng.integers(leaf_labels.min(), leaf_labels.max() + 1, q_lo.shape[0])
        regions, leaves = push_down(q_lo, q_hi, hierarchy, closed=True)
        far = np.abs(query_labels[regions] - leaf_labels[leaves]) >= 2
        expected = set(zip(regions[far].tolist(), leaves[far].tolist()))
        got_r, got_l = push_down(q_lo, q_hi, hierarchy, closed=True, jumps_of=(query_labels, leaf_labels))
        pairs = list(zip(got_r.tolist(), got_l.tolist()))
        assert len(pairs) == len(set(pairs)) and set(pairs) == expected
    with pytest.raises(ValueError, match="one label per query box"):
        push_down(q_lo, q_hi, hierarchy, jumps_of=(query_labels[1:], leaf_labels))
    with pytest.raises(ValueError, match="cannot be combined with jumps_of"):
        push_down(q_lo, q_hi, hierarchy, max_pairs=10, jumps_of=(query_labels, leaf_labels))


def test_push_down_budget_raises_exactly_past_max_pairs():
    """Check that max_pairs raises when the pairs exceed it and not when they reach it."""
    lower, upper, rng = tree_leaves(4, 2)
    hierarchy = guillotine_tree(lower, upper)
    q_lo = np.array([[-np.inf, -np.inf], [2.0, 2.0]])
    q_hi = np.array([[np.inf, np.inf], [5.0, 5.0]])
    total = push_down(q_lo, q_hi, hierarchy)[0].shape[0]
    assert total > lower.shape[0]
    assert push_down(q_lo, q_hi, hierarchy, max_pairs=total)[0].shape[0] == total
    with pytest.raises(TooManyRegionsError, match=f"max_regions={total - 1}"):
        push_down(q_lo, q_hi, hierarchy, max_pairs=total - 1)


def test_grouped_hierarchies_and_starts():
    """Check that per-group hierarchies rooted at their group id keep boxes of other groups apart."""
    lower, upper, _ = tree_leaves(7, 2)
    n = lower.shape[0]
    groups = np.arange(n) % 3
    hierarchy = guillotine_tree(lower, upper, groups=groups)
    everything = np.array([[-np.inf, -np.inf]]), np.array([[np.inf, np.inf]])
    for g in range(3):
        regions, leaves = push_down(*everything, hierarchy, start=np.array([g]))
        np.testing.assert_array_equal(np.sort(leaves), np.flatnonzero(groups == g))


def test_guillotine_refuses_a_pinwheel():
    """Check that boxes no axis-aligned cut separates raise, naming the tree's position."""
    pinwheel = np.array([[0, 0, 2, 1], [2, 0, 3, 2], [1, 2, 3, 3], [0, 1, 1, 3], [1, 1, 2, 2]], dtype=float)
    with pytest.raises(ValueError, match=r"boxes_list\[3\] is not the leaf partition of a tree"):
        guillotine_tree(pinwheel[:, :2], pinwheel[:, 2:], name="boxes_list[3]")


def _leaves_under(hierarchy, node):
    stack, found = [node], []
    while stack:
        v = stack.pop()
        if hierarchy.left[v] >= 0:
            stack += [hierarchy.left[v], hierarchy.right[v]]
        else:
            found.append(int(hierarchy.leaf[v]))
    return set(found)


@given(st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_every_cut_is_the_most_balanced_then_lowest_feature_then_lowest_position(seed, n_features):
    """Check each node's cut against every guillotine cut of its boxes, found by brute force.

    The rule keeps the hierarchy shallow (pushes cost its depth); the kernel stops its
    scans early where no later cut can win, which must not change the choice.
    """
    lower, upper, rng = tree_leaves(seed, n_features)
    if seed % 3 == 0:  # a fused partition of two trees: cuts of both in every node
        other_lower, other_upper, _ = tree_leaves((seed + 1) % 2**32, n_features)
        part = fuse([(np.arange(lower.shape[0]), lower, upper),
                     (np.arange(other_lower.shape[0]), other_lower, other_upper)])
        lower, upper = part.lower, part.upper
    # In shuffled order: a tree's leaves come in the order of its cuts, which hides a stale row.
    order = rng.permutation(lower.shape[0])
    lower, upper = lower[order], upper[order]
    hierarchy = guillotine_tree(lower, upper)
    for node in np.flatnonzero(hierarchy.left >= 0):
        boxes = np.array(sorted(_leaves_under(hierarchy, node)))
        size = boxes.shape[0]
        best = None
        for f in range(n_features):
            for t in np.unique(lower[boxes, f][np.isfinite(lower[boxes, f])]):
                left = upper[boxes, f] <= t
                if left.all() or not left.any() or not (left | (lower[boxes, f] >= t)).all():
                    continue
                key = (abs(2 * int(left.sum()) - size), f, int(left.sum()))
                if best is None or key < best[0]:
                    best = (key, t, set(boxes[left].tolist()))
        assert best is not None
        (_, f, _), t, left_set = best
        assert hierarchy.feature[node] == f
        assert hierarchy.threshold[node] == t
        assert _leaves_under(hierarchy, hierarchy.left[node]) == left_set
    # Every leaf names the box a point of that box reaches (x <= threshold goes left).
    inside = np.zeros_like(lower)
    has_lo, has_hi = np.isfinite(lower), np.isfinite(upper)
    inside[has_lo & has_hi] = lower[has_lo & has_hi] / 2 + upper[has_lo & has_hi] / 2
    inside[has_hi & ~has_lo] = upper[has_hi & ~has_lo] - 1
    inside[has_lo & ~has_hi] = lower[has_lo & ~has_hi] + 1
    for box in range(lower.shape[0]):
        node = 0
        while hierarchy.left[node] >= 0:
            goes_left = inside[box, hierarchy.feature[node]] <= hierarchy.threshold[node]
            node = hierarchy.left[node] if goes_left else hierarchy.right[node]
        assert hierarchy.leaf[node] == box
