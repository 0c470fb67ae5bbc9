"""Tests of the max_edges guard of relabel.adjacency_edges: exact threshold and early stop."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relabel
from relabel import _adjacency
from test_relabel_helpers import fused_instance, naive_adjacency


@given(
    n_features=st.integers(1, 5),
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 40),
    seed=st.integers(0, 10_000),
    grid=st.sampled_from([None, 4]),
    contact=st.sampled_from(["closure", "face"]),
)
def test_budget_equal_to_the_edge_count_changes_nothing(n_features, n_trees, max_leaf_nodes, seed, grid, contact):
    """Check that max_edges = true count gives the unbudgeted output and one less raises."""
    part, *_ = fused_instance(n_features, n_trees, max_leaf_nodes, 3, seed, n_samples=250, grid=grid)
    expected, expected_face = naive_adjacency(part.lower, part.upper)
    if contact == "face":
        expected, expected_face = expected[expected_face], expected_face[expected_face]
    free = relabel.adjacency_edges(part, contact)
    np.testing.assert_array_equal(free.edges, expected)
    np.testing.assert_array_equal(free.is_face, expected_face)
    n_true = expected.shape[0]
    exact = relabel.adjacency_edges(part, contact, max_edges=n_true)
    np.testing.assert_array_equal(exact.edges, free.edges)
    np.testing.assert_array_equal(exact.is_face, free.is_face)
    assert exact.edges.dtype == free.edges.dtype
    if n_true > 0:
        with pytest.raises(relabel.TooManyRegionsError, match=f"max_edges={n_true - 1}"):
            relabel.adjacency_edges(part, contact, max_edges=n_true - 1)


def test_many_chunks_give_the_same_edges():
    """Check that a budget just above the count (many small chunks over many axes) keeps the exact output."""
    part, *_ = fused_instance(5, 3, 60, 4, 7, n_samples=400)
    free = relabel.adjacency_edges(part)
    assert free.edges.shape[0] > 1000  # enough faces for several chunks per axis
    for budget in (free.edges.shape[0], free.edges.shape[0] + 1, 10 * free.edges.shape[0]):
        got = relabel.adjacency_edges(part, max_edges=budget)
        np.testing.assert_array_equal(got.edges, free.edges)
        np.testing.assert_array_equal(got.is_face, free.is_face)


def _full_depth_10d():
    """Two full-depth trees on 10-D data: an adjacency graph far larger than the budgets below."""
    part, *_ = fused_instance(10, 2, None, 5, 0, n_samples=400)
    return part


@pytest.mark.parametrize("max_edges", [0, 500, 5_000])
def test_early_stop_examines_a_bounded_number_of_candidates(max_edges):
    """Check that an oversized 10-D graph raises after a small multiple of max_edges candidate pairs."""
    part = _full_depth_10d()
    relabel.adjacency_edges(part)
    full_work = _adjacency._STATS["candidates"]
    assert full_work > 50 * max(max_edges, 1_000)  # the unbudgeted pass does far more work
    with pytest.raises(relabel.TooManyRegionsError, match=f"max_edges={max_edges}") as info:
        relabel.adjacency_edges(part, max_edges=max_edges)
    examined = _adjacency._STATS["candidates"]
    assert examined > max_edges  # it raised on edges actually found
    # Each chunk after the first is sized to about half the remaining budget, so at most
    # about 2 * max_edges candidates plus the first chunk of _CHUNK_MIN faces (each
    # face of this partition meets well under 100 others).
    assert examined <= 2 * max_edges + 100 * _adjacency._CHUNK_MIN
    # The message tells the user what to change.
    assert "max_depth" in str(info.value) and "raise max_edges" in str(info.value)


def test_early_stop_holds_the_face_contact_budget_too():
    """Check that contact="face" counts only face edges against the budget and stops early."""
    part = _full_depth_10d()
    n_face = int(relabel.adjacency_edges(part).is_face.sum())
    full_work = _adjacency._STATS["candidates"]
    assert relabel.adjacency_edges(part, "face", max_edges=n_face).edges.shape[0] == n_face
    with pytest.raises(relabel.TooManyRegionsError, match="max_edges=1000"):
        relabel.adjacency_edges(part, "face", max_edges=1000)
    # Most candidates here are corner contacts, so finding 1000 face edges takes more
    # candidates than edges, but still a small part of the whole pass.
    assert _adjacency._STATS["candidates"] <= full_work / 20


def test_guard_on_the_sweep_fallback():
    """Check the exact threshold when faces form a pinwheel and the sweep (not the hierarchy) runs."""
    pinwheel = np.array([[0, 0, 2, 1], [2, 0, 3, 2], [1, 2, 3, 3], [0, 1, 1, 3], [1, 1, 2, 2]], dtype=float)
    lower = np.vstack((np.column_stack((pinwheel[:, :2], np.full(5, -1.0))), [0, 0, 0]))
    upper = np.vstack((np.column_stack((pinwheel[:, 2:], np.zeros(5))), [3, 3, 1]))
    part = SimpleNamespace(lower=lower, upper=upper)
    expected, _ = naive_adjacency(lower, upper)
    got = relabel.adjacency_edges(part, max_edges=expected.shape[0])
    np.testing.assert_array_equal(got.edges, expected)
    with pytest.raises(relabel.TooManyRegionsError, match="max_edges"):
        relabel.adjacency_edges(part, max_edges=expected.shape[0] - 1)


@pytest.mark.parametrize("bad", [-1, 2.5, True, "10"])
def test_bad_budget_is_rejected(bad):
    """Check that a max_edges that is not a non-negative integer raises a ValueError naming it."""
    part = SimpleNamespace(lower=np.zeros((2, 2)), upper=np.ones((2, 2)))
    with pytest.raises(ValueError, match="max_edges"):
        relabel.adjacency_edges(part, max_edges=bad)
