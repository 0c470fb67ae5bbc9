"""Tests of adjacency_edges with categorical features and a resolution, against all-pairs oracles."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relabel
from test_relabel_helpers import fit_trees, make_data, naive_adjacency
from trees import leaf_boxes


def _one_hot_instance(n_features, n_trees, max_leaf_nodes, seed, n_binary):
    """Fused trees on data whose last ``n_binary`` columns are 0/1 (one-hot style)."""
    X, y = make_data(120, n_features, 3, seed, grid=4)
    rng = np.random.default_rng(seed)
    if n_binary:
        X[:, -n_binary:] = rng.integers(0, 2, size=(X.shape[0], n_binary))
        # The binary columns carry signal, so that trees split on them.
        y = np.clip(y + X[:, -n_binary:].sum(axis=1).astype(int) - 1, 0, 2)
    trees = fit_trees(X, y, n_trees, max_leaf_nodes, seed)
    return relabel.fuse([leaf_boxes(t) for t in trees])


def categorical_oracle(lower, upper, categorical):
    """All pairs: closures meet, and no categorical interval meets the other only at an end point."""
    n = lower.shape[0]
    edges, faces = [], []
    for a in range(n):
        for b in range(a + 1, n):
            if not np.all((lower[a] <= upper[b]) & (lower[b] <= upper[a])):
                continue
            across = (upper[a] <= lower[b]) | (upper[b] <= lower[a])
            if np.any(across & categorical):
                continue
            edges.append((a, b))
            faces.append(int(np.sum((upper[a] == lower[b]) | (upper[b] == lower[a]))) == 1)
    return np.array(edges, dtype=int).reshape(-1, 2), np.array(faces, dtype=bool)


def resolution_oracle(lower, upper, radius, categorical):
    """All pairs: per non-categorical feature the gap between the intervals is at most r_f,
    per categorical feature the open intervals overlap (pure Python floats, one pair at a time)."""
    n, d = lower.shape
    edges = []
    for a in range(n):
        for b in range(a + 1, n):
            ok = True
            for f in range(d):
                gap = max(float(lower[a, f]), float(lower[b, f])) - min(float(upper[a, f]), float(upper[b, f]))
                ok = ok and (gap < 0 if categorical[f] else gap <= float(radius[f]))
            if ok:
                edges.append((a, b))
    return np.array(edges, dtype=int).reshape(-1, 2)


@given(
    n_features=st.integers(1, 4),
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 10),
    seed=st.integers(0, 10_000),
    n_binary=st.integers(0, 2),
    data=st.data(),
)
def test_categorical_contacts_equal_all_pairs_oracle(n_features, n_trees, max_leaf_nodes, seed, n_binary, data):
    """Check that categorical_features drops exactly the contacts across a categorical split (mask and indices)."""
    n_binary = min(n_binary, n_features)
    part = _one_hot_instance(n_features, n_trees, max_leaf_nodes, seed, n_binary)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n_features, max_size=n_features)))
    mask[n_features - n_binary:] |= data.draw(st.booleans())  # declare the one-hot columns categorical
    expected, expected_face = categorical_oracle(part.lower, part.upper, mask)
    for spec in (mask, np.flatnonzero(mask), np.flatnonzero(mask).tolist()):
        got = relabel.adjacency_edges(part, categorical_features=spec)
        np.testing.assert_array_equal(got.edges, expected)
        np.testing.assert_array_equal(got.is_face, expected_face)
    faces = relabel.adjacency_edges(part, contact="face", categorical_features=mask)
    np.testing.assert_array_equal(faces.edges, expected[expected_face])
    graph = relabel.adjacency_graph(part, categorical_features=mask)
    assert sorted(graph.edges) == [tuple(e) for e in expected.tolist()]


def test_one_hot_columns_declared_categorical_cut_contacts():
    """Check that declaring 0/1 columns categorical removes every contact on their 0.5 threshold."""
    part = _one_hot_instance(3, 2, 12, seed=5, n_binary=2)
    assert np.any(part.upper[:, 1:] == 0.5) or np.any(part.upper[:, 2:] == 0.5)
    full = relabel.adjacency_edges(part)
    cut = relabel.adjacency_edges(part, categorical_features=[1, 2])
    assert cut.edges.shape[0] < full.edges.shape[0]
    a, b = cut.edges.T
    touch = (part.upper[a][:, 1:] == part.lower[b][:, 1:]) | (part.upper[b][:, 1:] == part.lower[a][:, 1:])
    assert not touch.any()


@given(
    n_features=st.integers(1, 4),
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 10),
    seed=st.integers(0, 10_000),
    grid=st.sampled_from([None, 4]),
    data=st.data(),
)
def test_resolution_neighbours_equal_all_pairs_oracle(n_features, n_trees, max_leaf_nodes, seed, grid, data):
    """Check that r-neighbour adjacency equals the all-pairs rule, with scalar, per-feature and categorical r."""
    X, y = make_data(100, n_features, 3, seed, grid)
    part = relabel.fuse([leaf_boxes(t) for t in fit_trees(X, y, n_trees, max_leaf_nodes, seed)])
    # Grid multiples make gaps equal to r exactly (the boundary case of the rule).
    radius = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.05, 0.125, 0.25, 0.3]),
                                         min_size=n_features, max_size=n_features)))
    categorical = np.array(data.draw(st.lists(st.booleans(), min_size=n_features, max_size=n_features)))
    expected = resolution_oracle(part.lower, part.upper, np.where(categorical, 0.0, radius), categorical)
    got = relabel.adjacency_edges(part, resolution=radius, categorical_features=categorical)
    np.testing.assert_array_equal(got.edges, expected)
    closure, closure_face = categorical_oracle(part.lower, part.upper, categorical)
    # Faces are the closure contacts' faces; every closure contact is an r-neighbour.
    keys = {tuple(e): f for e, f in zip(closure.tolist(), closure_face.tolist())}
    assert [keys.get(tuple(e), False) for e in got.edges.tolist()] == got.is_face.tolist()
    assert set(keys) <= {tuple(e) for e in got.edges.tolist()}
    scalar = float(radius.max())
    expected_scalar = resolution_oracle(part.lower, part.upper, np.full(n_features, scalar), np.zeros(n_features, bool))
    np.testing.assert_array_equal(relabel.adjacency_edges(part, resolution=scalar).edges, expected_scalar)


def test_zero_resolution_is_closure_contact():
    """Check that resolution None, 0 and zeros give today's closure contacts and kinds."""
    X, y = make_data(100, 3, 3, seed=1, grid=4)
    part = relabel.fuse([leaf_boxes(t) for t in fit_trees(X, y, 3, 8, seed=1)])
    expected, expected_face = naive_adjacency(part.lower, part.upper)
    for resolution in (None, 0, 0.0, [0, 0, 0]):
        got = relabel.adjacency_edges(part, resolution=resolution)
        np.testing.assert_array_equal(got.edges, expected)
        np.testing.assert_array_equal(got.is_face, expected_face)


def test_resolution_on_non_guillotine_boxes_and_budget():
    """Check the sweep fallback (pinwheel boxes) against the oracle, and the max_edges budget."""
    pinwheel = np.array([[0, 0, 2, 1], [2, 0, 3, 2], [1, 2, 3, 3], [0, 1, 1, 3], [1, 1, 2, 2]], dtype=float)
    # The pinwheel tiling of [0, 3]^2 plus a box at distance 2 from it on both axes.
    part = SimpleNamespace(lower=np.vstack((pinwheel[:, :2], [[5.0, 5.0]])),
                           upper=np.vstack((pinwheel[:, 2:], [[6.0, 6.0]])))
    for r in (0.5, 2.0, [2.0, 0.0]):
        radius = relabel.check_resolution(r, 2)
        expected = resolution_oracle(part.lower, part.upper, radius, np.zeros(2, bool))
        np.testing.assert_array_equal(relabel.adjacency_edges(part, resolution=r).edges, expected)
    n = relabel.adjacency_edges(part, resolution=2.0).edges.shape[0]
    assert relabel.adjacency_edges(part, resolution=2.0, max_edges=n).edges.shape[0] == n
    with pytest.raises(relabel.TooManyRegionsError, match=f"max_edges={n - 1}"):
        relabel.adjacency_edges(part, resolution=2.0, max_edges=n - 1)


def test_options_reject_bad_input():
    """Check that bad categorical_features, resolution and their combinations name the parameter."""
    part = SimpleNamespace(lower=np.array([[-np.inf], [0.0]]), upper=np.array([[0.0], [np.inf]]))
    with pytest.raises(ValueError, match="categorical_features as a boolean mask must have length"):
        relabel.adjacency_edges(part, categorical_features=[True, False])
    with pytest.raises(ValueError, match="categorical_features indices must lie in 0..0"):
        relabel.adjacency_edges(part, categorical_features=[1])
    with pytest.raises(ValueError, match="categorical_features must be a boolean mask .*names are resolved"):
        relabel.adjacency_edges(part, categorical_features=["colour"])
    with pytest.raises(ValueError, match="categorical_features must be a boolean mask .*names are resolved"):
        relabel.adjacency_edges(part, categorical_features="colour")
    with pytest.raises(ValueError, match="categorical_features must be 1-d"):
        relabel.adjacency_edges(part, categorical_features=[[0]])
    for bad in (-0.1, np.nan, np.inf, [0.1, 0.2], "x", True):
        with pytest.raises(ValueError, match="resolution"):
            relabel.adjacency_edges(part, resolution=bad)
    with pytest.raises(ValueError, match="resolution > 0 needs contact='closure'"):
        relabel.adjacency_edges(part, contact="face", resolution=0.1)
    # A categorical feature's resolution is ignored: no error, no contact across the split.
    assert relabel.adjacency_edges(part, resolution=1.0, categorical_features=[0]).edges.shape == (0, 2)
    with pytest.raises(ValueError, match="n_features"):
        relabel.check_resolution(0.1, 0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("option", ["closure", "categorical", "resolution", "grid"])
@pytest.mark.parametrize("kind", ["random", "three", "smooth"])
def test_jumps_of_keeps_exactly_the_contacts_of_labels_two_apart(seed, option, kind):
    """Check ``jumps_of``: the contacts it returns are those of the full search whose labels differ by 2 or
    more, under every contact notion (the consistency checks read only these). Labels at random over five
    classes, over three (the middle class is left out of the search), and following the regions' place with
    a few changed (the searches skip most of the hierarchy by label range)."""
    X, y = make_data(150, 3, 4, seed, grid=5)
    if option == "categorical":
        X[:, 2] = np.random.default_rng(seed).integers(0, 2, size=X.shape[0])
    partition = relabel.fuse([leaf_boxes(t) for t in fit_trees(X, y, 3, 12, seed)])
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3 if kind == "three" else 5, size=partition.n_regions)
    if kind == "smooth":
        centre = np.clip(partition.lower, -0.2, 1.2) + np.clip(partition.upper, -0.2, 1.2)
        labels = np.digitize(centre.sum(axis=1), np.quantile(centre.sum(axis=1), [0.2, 0.4, 0.6, 0.8]))
        changed = rng.choice(partition.n_regions, 5, replace=False)
        labels[changed] = rng.integers(0, 5, size=5)
    kwargs = {"categorical": dict(categorical_features=[2]), "resolution": dict(resolution=0.1),
              "grid": dict(grid=relabel.DataGrid.from_data(X))}.get(option, {})
    everything = relabel.adjacency_edges(partition, **kwargs)
    full = everything.edges
    two_apart = np.abs(labels[full[:, 0]] - labels[full[:, 1]]) >= 2
    far = full[two_apart]
    assert far.shape[0] > 0  # the random labels leave jumps to find
    jumps = relabel.adjacency_edges(partition, jumps_of=labels, **kwargs)
    assert jumps.edges.tolist() == far.tolist()
    assert jumps.is_face.tolist() == everything.is_face[two_apart].tolist()  # the kind of contact, too
    assert relabel.adjacency_edges(partition, jumps_of=np.zeros(partition.n_regions, int), **kwargs).edges.shape[0] == 0
    with pytest.raises(ValueError, match="jumps_of must hold one label per region"):
        relabel.adjacency_edges(partition, jumps_of=labels[1:])


@given(n_features=st.integers(1, 3), seed=st.integers(0, 10_000), n_pad=st.integers(1, 3), data=st.data())
def test_axes_no_region_is_bounded_on_change_no_contact(n_features, seed, n_pad, data):
    """Check contacts, r-neighbours and grid neighbours of a partition padded with unbounded axes (the search
    skips them) against the all-pairs oracles and against the partition without them."""
    part = _one_hot_instance(n_features, 2, 8, seed, 0)
    n, pos = part.lower.shape[0], data.draw(st.integers(0, n_features))
    pad_lo, pad_hi = np.full((n, n_pad), -np.inf), np.full((n, n_pad), np.inf)
    padded = SimpleNamespace(lower=np.insert(part.lower, [pos] * n_pad, pad_lo, axis=1),
                             upper=np.insert(part.upper, [pos] * n_pad, pad_hi, axis=1))
    d = n_features + n_pad
    categorical = np.array(data.draw(st.lists(st.booleans(), min_size=d, max_size=d)))
    edges, faces = categorical_oracle(padded.lower, padded.upper, categorical)
    got = relabel.adjacency_edges(padded, categorical_features=categorical)
    np.testing.assert_array_equal(got.edges, edges)
    np.testing.assert_array_equal(got.is_face, faces)
    radius = np.full(d, 0.125)
    near = relabel.adjacency_edges(padded, resolution=radius, categorical_features=categorical)
    np.testing.assert_array_equal(near.edges, resolution_oracle(padded.lower, padded.upper,
                                                                np.where(categorical, 0.0, radius), categorical))
    # Grid neighbours: a move along an axis every region spans stays in one region, and one along
    # another axis sees the same boxes.
    values = [np.linspace(-1.0, 2.0, 7)] * d
    kept = np.insert(np.ones(n_features, bool), [pos] * n_pad, False)
    on_grid = relabel.adjacency_edges(padded, grid=values, categorical_features=categorical)
    plain = relabel.adjacency_edges(part, grid=[v for v, k in zip(values, kept) if k],
                                    categorical_features=categorical[kept])
    np.testing.assert_array_equal(on_grid.edges, plain.edges)
    np.testing.assert_array_equal(on_grid.is_face, plain.is_face)
