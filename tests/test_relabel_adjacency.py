"""Tests of relabel.adjacency_edges / adjacency_graph / region_polygons against oracles."""

from __future__ import annotations

from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st

import relabel
from test_relabel_helpers import fused_instance, naive_adjacency


@given(
    n_features=st.integers(1, 4),
    n_trees=st.integers(1, 4),
    max_leaf_nodes=st.integers(2, 12),
    seed=st.integers(0, 10_000),
    grid=st.sampled_from([None, 3, 5]),
)
def test_adjacency_equals_naive_all_pairs(n_features, n_trees, max_leaf_nodes, seed, grid):
    """Check that the sweep finds exactly the all-pairs closure contacts with the right kinds."""
    part, *_ = fused_instance(n_features, n_trees, max_leaf_nodes, 3, seed, grid=grid)
    expected, expected_face = naive_adjacency(part.lower, part.upper)
    got = relabel.adjacency_edges(part)
    np.testing.assert_array_equal(got.edges, expected)
    np.testing.assert_array_equal(got.is_face, expected_face)
    faces = relabel.adjacency_edges(part, contact="face")
    np.testing.assert_array_equal(faces.edges, expected[expected_face])
    assert faces.is_face.all()


@given(
    n_trees=st.integers(1, 4),
    max_leaf_nodes=st.integers(2, 15),
    seed=st.integers(0, 10_000),
    grid=st.sampled_from([None, 4]),
)
def test_adjacency_equals_shapely_in_2d(n_trees, max_leaf_nodes, seed, grid):
    """Check that 2D adjacency equals shapely's intersects on the closed clipped boxes."""
    part, *_ = fused_instance(2, n_trees, max_leaf_nodes, 3, seed, grid=grid)
    finite = np.concatenate([part.lower[np.isfinite(part.lower)], part.upper[np.isfinite(part.upper)]])
    lo, hi = (finite.min() - 1, finite.max() + 1) if finite.size else (-1.0, 1.0)
    polygons = relabel.region_polygons(part, (lo, lo, hi, hi))
    n = part.n_regions
    i, j = np.triu_indices(n, k=1)
    meets = shapely.intersects(polygons[i], polygons[j])
    touch = shapely.intersection(polygons[i], polygons[j])
    expected = np.column_stack((i[meets], j[meets])).reshape(-1, 2)
    got = relabel.adjacency_edges(part)
    np.testing.assert_array_equal(got.edges, expected)
    # A face contact shares a segment of positive length; a corner only a point.
    np.testing.assert_array_equal(got.is_face, shapely.length(touch[meets]) > 0)
    assert np.all(shapely.area(touch[meets]) == 0)


def test_adjacency_graph_nodes_and_attributes():
    """Check that the graph has nodes 0..N-1 (isolated ones too) and a contact attribute per edge."""
    inf = np.inf
    # Four quadrants plus a far-away isolated box (not a partition, but valid boxes).
    part = SimpleNamespace(
        lower=np.array([[-inf, -inf], [0, -inf], [-inf, 0], [0, 0], [10, 10]], dtype=float),
        upper=np.array([[0, 0], [5, 0], [0, 5], [5, 5], [11, 11]], dtype=float),
    )
    graph = relabel.adjacency_graph(part)
    assert isinstance(graph, nx.Graph)
    assert sorted(graph.nodes) == [0, 1, 2, 3, 4]
    assert graph.degree[4] == 0
    assert dict(((a, b), c) for a, b, c in graph.edges(data="contact")) == {
        (0, 1): "face", (0, 2): "face", (0, 3): "corner", (1, 2): "corner", (1, 3): "face", (2, 3): "face",
    }
    face_graph = relabel.adjacency_graph(part, contact="face")
    assert sorted(face_graph.edges) == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert face_graph.number_of_nodes() == 5


def test_face_adjacency_misses_corner_violations():
    """Check that face-only adjacency admits a labelling that jumps two classes at a corner."""
    inf = np.inf
    part = SimpleNamespace(
        lower=np.array([[-inf, -inf], [0, -inf], [-inf, 0], [0, 0]], dtype=float),
        upper=np.array([[0, 0], [inf, 0], [0, inf], [inf, inf]], dtype=float),
    )
    labels = np.array([0, 1, 1, 2])
    assert relabel.is_consistent(relabel.adjacency_graph(part, contact="face"), labels)
    closure = relabel.adjacency_graph(part)
    assert not relabel.is_consistent(closure, labels)
    assert relabel.violating_edges(closure, labels).tolist() == [[0, 3]]


def test_adjacency_rejects_bad_input():
    """Check that adjacency and region_polygons name the bad parameter."""
    part = SimpleNamespace(lower=np.zeros((2, 2)), upper=np.ones((2, 2)))
    with pytest.raises(ValueError, match="contact"):
        relabel.adjacency_edges(part, contact="edge")
    with pytest.raises(ValueError, match="lower < upper"):
        relabel.adjacency_edges(SimpleNamespace(lower=np.ones((1, 2)), upper=np.ones((1, 2))))
    with pytest.raises(ValueError, match="partition"):
        relabel.adjacency_graph(object())
    with pytest.raises(ValueError, match="2D"):
        relabel.region_polygons(SimpleNamespace(lower=np.zeros((1, 3)), upper=np.ones((1, 3))), (0, 0, 1, 1))
    with pytest.raises(ValueError, match="bounds"):
        relabel.region_polygons(part, (0, 0, 0, 1))


def test_non_guillotine_faces_fall_back_to_the_sweep():
    """Check that adjacency stays exact when a hyperplane's faces form a pinwheel (no guillotine cut)."""
    from relabel._adjacency import _hierarchy_join

    # Five boxes below z = 0 whose tops form the pinwheel tiling of [0, 3]^2, and one
    # box above z = 0 touching all of them.
    pinwheel = np.array([[0, 0, 2, 1], [2, 0, 3, 2], [1, 2, 3, 3], [0, 1, 1, 3], [1, 1, 2, 2]], dtype=float)
    lower = np.column_stack((pinwheel[:, 0], pinwheel[:, 1], np.full(5, -1.0)))
    upper = np.column_stack((pinwheel[:, 2], pinwheel[:, 3], np.zeros(5)))
    lower = np.vstack((lower, [0, 0, 0]))
    upper = np.vstack((upper, [3, 3, 1]))
    assert _hierarchy_join(np.zeros(5), np.zeros(1), lower[:5, :2], upper[:5, :2],
                           lower[5:, :2], upper[5:, :2]) is None
    part = SimpleNamespace(lower=lower, upper=upper)
    expected, expected_face = naive_adjacency(lower, upper)
    got = relabel.adjacency_edges(part)
    np.testing.assert_array_equal(got.edges, expected)
    np.testing.assert_array_equal(got.is_face, expected_face)
    assert [5] * 5 == got.edges[got.edges[:, 1] == 5][:, 1].tolist()


def test_jumps_between_two_labels_on_non_guillotine_regions():
    """Check the search across two labels when the rarer label's regions admit no guillotine hierarchy.

    The five boxes of a pinwheel (label 0) lie below six slabs (label 2): the jumps are
    every contact between the two layers, found by the sweep instead of a hierarchy.
    """
    pinwheel = np.array([[0, 0, 2, 1], [2, 0, 3, 2], [1, 2, 3, 3], [0, 1, 1, 3], [1, 1, 2, 2]], dtype=float)
    cuts = np.linspace(0.0, 3.0, 7)
    lower = np.vstack((np.column_stack((pinwheel[:, :2], np.full(5, -1.0))),
                       np.column_stack((cuts[:-1], np.zeros(6), np.zeros(6)))))
    upper = np.vstack((np.column_stack((pinwheel[:, 2:], np.zeros(5))),
                       np.column_stack((cuts[1:], np.full(6, 3.0), np.ones(6)))))
    part = SimpleNamespace(lower=lower, upper=upper)
    labels = np.array([0] * 5 + [2] * 6)
    full = relabel.adjacency_edges(part)
    across = np.abs(labels[full.edges[:, 0]] - labels[full.edges[:, 1]]) >= 2
    assert across.sum() > 5
    jumps = relabel.adjacency_edges(part, jumps_of=labels)
    np.testing.assert_array_equal(jumps.edges, full.edges[across])
    np.testing.assert_array_equal(jumps.is_face, full.is_face[across])


@given(seed=st.integers(0, 10_000), n_features=st.integers(1, 5))
def test_compiled_contact_rules_equal_their_definitions(seed, n_features):
    """Check the compiled r-neighbour and face rules, by rows and by index, against the rules written out.

    Bounds are drawn from a few values (so boxes touch, share bounds and meet at corners),
    with infinite ends, categorical axes and a resolution of zero on some axes.
    """
    from relabel._contacts import _face_flags, _face_flags_at, near_rule, near_rule_at

    rng = np.random.default_rng(seed)
    n = 40
    ends = np.sort(rng.choice([-np.inf, 0.0, 0.5, 1.0, 1.5, 2.0, np.inf], size=(n, n_features, 2)), axis=2)
    ends[..., 1] = np.where(ends[..., 0] == ends[..., 1], np.inf, ends[..., 1])  # no empty interval
    ends[..., 0] = np.where(ends[..., 0] == np.inf, -np.inf, ends[..., 0])
    lower, upper = ends[..., 0], ends[..., 1]
    resolution = rng.choice([0.0, 0.25, 0.5], size=n_features)
    categorical = rng.random(n_features) < 0.3
    a, b = np.triu_indices(n, k=1)
    gap = np.maximum(lower[a], lower[b]) - np.minimum(upper[a], upper[b])
    near = np.all(np.where(categorical, gap < 0, gap <= resolution), axis=1)
    meet = np.all(np.maximum(lower[a], lower[b]) <= np.minimum(upper[a], upper[b]), axis=1)
    touches = np.sum((upper[a] == lower[b]) | (upper[b] == lower[a]), axis=1)
    face = meet & (touches == 1)
    np.testing.assert_array_equal(near_rule_at(lower, upper, a, b, resolution, categorical), near)
    np.testing.assert_array_equal(near_rule(lower[a], upper[a], lower[b], upper[b], resolution, categorical), near)
    np.testing.assert_array_equal(_face_flags_at(lower, upper, a, b), face)
    np.testing.assert_array_equal(_face_flags(lower[a], upper[a], lower[b], upper[b]), face)
    # One box against all, broadcast as the sliver images are.
    one = near_rule(np.broadcast_to(lower[0], lower.shape), np.broadcast_to(upper[0], upper.shape), lower, upper,
                    resolution, categorical)
    gap0 = np.maximum(lower[0], lower) - np.minimum(upper[0], upper)
    np.testing.assert_array_equal(one, np.all(np.where(categorical, gap0 < 0, gap0 <= resolution), axis=1))
