"""Float slivers: thresholds a few ulps apart are one threshold in fuse, and their tuples still locate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relabel
import relabel._fusion as fusion
from test_relabel_helpers import fit_trees, make_data, naive_adjacency
from trees import leaf_boxes

INF = np.inf


def split_boxes(threshold, feature=0, n_features=1):
    """Leaf boxes of a stump on ``feature`` at ``threshold`` (leaf ids 1 and 2)."""
    lower = np.full((2, n_features), -INF)
    upper = np.full((2, n_features), INF)
    upper[0, feature] = threshold
    lower[1, feature] = threshold
    return np.array([1, 2]), lower, upper


def leaf_of(boxes, points):
    """Leaf id of every point in one tree's boxes by containment (lower < x <= upper)."""
    ids, lower, upper = boxes
    inside = np.all((lower[None] < points[:, None]) & (points[:, None] <= upper[None]), axis=2)
    assert np.all(inside.sum(axis=1) == 1)
    return ids[inside.argmax(axis=1)]


def perturbed(boxes, ulps):
    """The same tree with every distinct finite bound moved up by ``ulps[value index]`` ulps."""
    ids, lower, upper = boxes
    values = np.unique(np.concatenate((lower[np.isfinite(lower)], upper[np.isfinite(upper)])))
    moved = values.copy()
    for i, k in enumerate(ulps[: values.shape[0]]):
        for _ in range(k):
            moved[i] = np.nextafter(moved[i], INF)

    def move(a):
        out = a.copy()
        finite = np.isfinite(a)
        out[finite] = moved[np.searchsorted(values, a[finite])]
        return out

    return ids, move(lower), move(upper)


def max_jump_on_grid(part, boxes_list, labels, coords):
    """Largest label difference between axis neighbours of the grid ``coords`` (one array per feature)."""
    grid = np.stack(np.meshgrid(*coords, indexing="ij"), -1).reshape(-1, len(coords))
    leaves = np.column_stack([leaf_of(b, grid) for b in boxes_list])
    lab = labels[part.locate(leaves)].reshape([c.shape[0] for c in coords])
    return max(int(np.abs(np.diff(lab, axis=f)).max(initial=0)) for f in range(len(coords)))


def test_snap_table_clusters_and_tolerance():
    """Check the snapping rule: at most 4 ulps apart, chained, largest value as representative."""
    t = 0.325
    chain = [t]
    for _ in range(3):
        nxt = chain[-1]
        for _ in range(3):
            nxt = np.nextafter(nxt, INF)
        chain.append(nxt)  # each 3 ulps above the previous: one chain 9 ulps wide
    far = chain[-1]
    for _ in range(5):
        far = np.nextafter(far, INF)  # 5 ulps: a new threshold
    distinct, snapped = fusion.snap_table(chain + [far, -INF, INF, 1.0])
    assert distinct.tolist() == chain + [far, 1.0]
    assert snapped.tolist() == [chain[-1]] * 4 + [far, 1.0]
    assert fusion.SNAP_ULPS == 4
    # Near zero the tolerance follows the magnitude: 0 and the smallest subnormal are one value.
    assert fusion.snap_table([0.0, 5e-324, 1e-300])[1].tolist() == [5e-324, 5e-324, 1e-300]


def test_traced_case_from_issue_15():
    """Check the traced case: 0.325 and 0.32500000000000007 are one threshold, no jump of two, the sliver locates."""
    t1 = (0.25 + 0.4) / 2
    t2 = (0.30000000000000004 + 0.35000000000000003) / 2
    assert t1 == 0.325 and t2 == 0.32500000000000007 and t2 - t1 == pytest.approx(5.55e-17, rel=1e-2)
    boxes = [split_boxes(t1), split_boxes(t2)]
    counts = np.array([[9, 0, 0], [0, 0, 9]], dtype=float)  # class 1 left, class 3 right
    part = relabel.fuse(boxes)
    assert part.keys.tolist() == [[1, 1], [2, 2]] and part.n_aliases == 1
    assert part.upper[0, 0] == t2 == part.lower[1, 0]
    assert part.alias_keys.tolist() == [[2, 1]] and part.alias_region.tolist() == [0]
    # The sliver's own float points (right of t1, left of t2) go to the left region.
    sliver = np.array([[t2]])
    assert part.locate(np.column_stack([leaf_of(b, sliver) for b in boxes])).tolist() == [0]
    labels = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_edges(part).edges)).labels
    coords = [np.array([0.3, t1, t2, np.nextafter(t2, INF), 0.35])]
    assert max_jump_on_grid(part, boxes, labels, coords) <= 1


def test_without_snapping_the_traced_case_jumps_two(monkeypatch):
    """Check that the grid check above would fail without snapping (the sliver becomes a free step)."""
    t1, t2 = 0.325, 0.32500000000000007
    boxes = [split_boxes(t1), split_boxes(t2)]
    monkeypatch.setattr(fusion, "SNAP_ULPS", 0)
    part = relabel.fuse(boxes)
    assert part.n_regions == 3 and part.n_aliases == 0
    counts = np.array([[9, 0, 0], [0, 0, 0], [0, 0, 9]], dtype=float)
    labels = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_edges(part).edges)).labels
    assert labels.tolist() == [0, 1, 2]
    assert max_jump_on_grid(part, boxes, labels, [np.array([0.3, 0.35])]) == 2


@settings(max_examples=20)
@given(
    n_features=st.integers(1, 3),
    n_trees=st.integers(2, 4),
    max_leaf_nodes=st.integers(2, 8),
    seed=st.integers(0, 10_000),
    data=st.data(),
)
def test_perturbed_thresholds_give_the_unperturbed_partition(n_features, n_trees, max_leaf_nodes, seed, data):
    """Check that thresholds moved by 0-4 ulps per tree fuse into the unperturbed partition, and every float point locates."""
    X, y = make_data(100, n_features, 3, seed, grid=4)
    boxes = [leaf_boxes(t) for t in fit_trees(X, y, n_trees, max_leaf_nodes, seed)]
    moved = [perturbed(b, data.draw(st.lists(st.integers(0, 4), min_size=20, max_size=20))) for b in boxes]
    reference = relabel.fuse(boxes)
    part = relabel.fuse(moved)
    np.testing.assert_array_equal(part.keys, reference.keys)
    for got_bound, expected_bound in ((part.lower, reference.lower), (part.upper, reference.upper)):
        finite = np.isfinite(expected_bound)
        np.testing.assert_array_equal(np.isfinite(got_bound), finite)
        assert np.all(np.abs(got_bound[finite] - expected_bound[finite]) <= 4 * np.spacing(expected_bound[finite]))
    # The snapped boxes touch exactly as the unperturbed ones (all-pairs oracle); the
    # adjacency adds only the contacts of sliver images that no region holds whole.
    expected = relabel.adjacency_edges(reference)
    geometric, geometric_face = naive_adjacency(part.lower, part.upper)
    np.testing.assert_array_equal(geometric, expected.edges)
    np.testing.assert_array_equal(geometric_face, expected.is_face)
    got = relabel.adjacency_edges(part)
    if part.n_aliases == 0 or part.alias_covered.all():
        np.testing.assert_array_equal(got.edges, expected.edges)
        np.testing.assert_array_equal(got.is_face, expected.is_face)
    else:
        extra = {tuple(e) for e in got.edges.tolist()} - {tuple(e) for e in expected.edges.tolist()}
        loose = set(part.alias_region[~part.alias_covered].tolist())
        assert all(a in loose or b in loose for a, b in extra)
        assert {tuple(e) for e in expected.edges.tolist()} <= {tuple(e) for e in got.edges.tolist()}
    # Every float point of the perturbed trees locates, the sliver points included, in a
    # region whose box holds it up to the snapping (a few ulps).
    values = np.unique(np.concatenate([b[1][np.isfinite(b[1])] for b in moved]))
    rng = np.random.default_rng(seed)
    points = rng.uniform(-0.2, 1.2, size=(300, n_features))
    for f in range(n_features):
        for v in np.concatenate((values, np.nextafter(values, INF), np.nextafter(values, -INF))):
            point = rng.uniform(-0.2, 1.2, n_features)
            point[f] = v
            points = np.vstack((points, point))
    leaves = np.column_stack([leaf_of(b, points) for b in moved])
    region = part.locate(leaves)
    slack = 16 * np.spacing(np.maximum(np.abs(points), 1.0))
    near_box = np.all((part.lower[region] - slack <= points) & (points <= part.upper[region] + slack), axis=1)
    # A point of a sliver that no region holds whole lies in its image (up to the snap)
    # and goes to the alias region.
    if part.n_aliases:
        loose_keys = part.alias_keys[~part.alias_covered]
        for i in np.flatnonzero(~near_box):
            match = np.flatnonzero((loose_keys == leaves[i]).all(axis=1))
            assert match.shape[0] == 1, points[i]
            k = np.flatnonzero(~part.alias_covered)[match[0]]
            assert region[i] == part.alias_region[k]
            assert np.all((part.alias_lower[k] - slack[i] <= points[i]) & (points[i] <= part.alias_upper[k] + slack[i]))
    else:
        assert near_box.all()


@settings(max_examples=15)
@given(
    n_features=st.integers(1, 2),
    n_trees=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    data=st.data(),
)
def test_relabelled_perturbed_partition_never_jumps_two_on_a_grid(n_features, n_trees, seed, data):
    """Check that the optimal labelling of a perturbed partition has no jump of two between grid neighbours,
    on a grid through every perturbed threshold and the floats next to it."""
    X, y = make_data(150, n_features, 5, seed, grid=4)
    boxes = [leaf_boxes(t) for t in fit_trees(X, y, n_trees, 8, seed)]
    moved = [perturbed(b, data.draw(st.lists(st.integers(0, 4), min_size=20, max_size=20))) for b in boxes]
    part = relabel.fuse(moved)
    region = part.locate(np.column_stack([leaf_of(b, X) for b in moved]))
    counts = relabel.region_counts(region, y, 5, n_regions=part.n_regions)
    labels = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_edges(part).edges)).labels
    # Regions are at least 0.25 wide (data on a grid of 1/4): a step of 0.05 sees every one.
    coords = []
    for f in range(n_features):
        values = np.unique(np.concatenate([b[1][:, f][np.isfinite(b[1][:, f])] for b in moved]))
        extra = np.concatenate((values, np.nextafter(values, INF), np.nextafter(values, -INF)))
        coords.append(np.unique(np.concatenate((np.linspace(-0.1, 1.1, 25), extra))))
    assert max_jump_on_grid(part, moved, labels, coords) <= 1


def ambiguous_pair():
    """Two 2D trees whose sliver x in (t1, t2] has split neighbours on both sides (no region holds its image)."""
    t1 = 0.325
    t2 = np.nextafter(t1, INF)
    # Tree 1: x <= t1 then y at 0.5 on the left; tree 2: x <= t2 then y at 0.7 on the right.
    tree1 = (np.array([3, 4, 2]),
             np.array([[-INF, -INF], [-INF, 0.5], [t1, -INF]]),
             np.array([[t1, 0.5], [t1, INF], [INF, INF]]))
    tree2 = (np.array([1, 3, 4]),
             np.array([[-INF, -INF], [t2, -INF], [t2, 0.7]]),
             np.array([[t2, INF], [INF, 0.7], [INF, INF]]))
    return [tree1, tree2], t1, t2


def test_sliver_without_a_covering_region_adds_the_image_contacts():
    """Check that an alias whose region cannot hold the whole sliver image gets the image's contacts and pairs."""
    boxes, t1, t2 = ambiguous_pair()
    part = relabel.fuse(boxes)
    assert part.n_aliases == 1 and not part.alias_covered[0]
    assert part.alias_keys.tolist() == [[2, 1]]
    target = int(part.alias_region[0])
    assert part.keys[target].tolist() == [3, 1]  # the top corner (t2, 0) of the image, at or below t2
    geometric, _ = naive_adjacency(part.lower, part.upper)
    got = relabel.adjacency_edges(part).edges
    extra = {tuple(e) for e in got.tolist()} - {tuple(e) for e in geometric.tolist()}
    far = int(np.flatnonzero((part.keys == [2, 4]).all(axis=1))[0])  # x > t2, y > 0.7
    assert extra == {(min(target, far), max(target, far))}
    # Along x the sliver sits between its left and right neighbours at every height.
    pairs = relabel.monotone_pairs(part, [1, 0])
    left_high = int(np.flatnonzero((part.keys == [4, 1]).all(axis=1))[0])
    assert [left_high, target] in pairs.tolist() and [target, far] in pairs.tolist()
    # Labels: whatever the counts, no jump of two between grid neighbours through the sliver.
    rng = np.random.default_rng(0)
    for _ in range(20):
        counts = rng.integers(0, 4, size=(part.n_regions, 5)).astype(float) * (rng.uniform(size=(part.n_regions, 1)) < 0.7)
        labels = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, got)).labels
        coords = [np.array([0.3, t1, t2, np.nextafter(t2, INF), 0.35]), np.linspace(-0.2, 1.2, 57)]
        assert max_jump_on_grid(part, boxes, labels, coords) <= 1
        mono = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, got, monotone=pairs)).labels
        grid = np.stack(np.meshgrid(*coords, indexing="ij"), -1).reshape(-1, 2)
        lab = mono[part.locate(np.column_stack([leaf_of(b, grid) for b in boxes]))].reshape(5, 57)
        assert np.all(np.diff(lab, axis=0) >= 0)


def test_staged_encoding_locates_aliases(monkeypatch):
    """Check that aliases locate through the staged key encoding (radix overflow) as through one code."""
    t1, t2 = 0.325, 0.32500000000000007
    boxes = [split_boxes(t1, 0, 2), split_boxes(t2, 0, 2), split_boxes(0.5, 1, 2), split_boxes(0.7, 1, 2)]
    direct = relabel.fuse(boxes)
    monkeypatch.setattr(fusion, "_CODE_LIMIT", 3)
    staged = relabel.fuse(boxes)
    assert len(staged._stages) > 1 and staged.n_aliases == direct.n_aliases > 0
    rows = np.vstack((direct.keys, direct.alias_keys))
    np.testing.assert_array_equal(staged.locate(rows), direct.locate(rows))
    np.testing.assert_array_equal(direct.locate(direct.alias_keys), direct.alias_region)


def test_grid_neighbours_are_found_on_the_boxes_before_snapping():
    """Snapping shrinks an overlap of positive length to a touch: the gap move across it must stay an edge.

    Tree A cuts x1 at 1 left of x0 = 0.3, tree B at 1 + 2 ulps right of x0 = 0.6. Both bounds snap
    to 1 + 2 ulps, and the snapped boxes P (x0 <= 0.3, x1 > 1) and Q (x0 > 0.6, x1 <= 1 + 2 ulps)
    only touch on x1. Yet at x1 = 1 + 1 ulp, a training value, x0 moves from P to Q inside
    its one gap [0, 1]: P and Q are neighbours at the data's resolution, and labels 0 and 2
    on them are a jump that ``predict`` shows.
    """
    u = np.spacing(1.0)
    t1, t2 = 1.0, 1.0 + 2 * u
    a = (np.array([1, 2, 3]), np.array([[-INF, -INF], [-INF, t1], [0.3, -INF]]),
         np.array([[0.3, t1], [0.3, INF], [INF, INF]]))
    b = (np.array([1, 2, 3]), np.array([[-INF, -INF], [0.6, -INF], [0.6, t2]]),
         np.array([[0.6, INF], [INF, t2], [INF, INF]]))
    partition = relabel.fuse([a, b])
    assert partition.exact_region is not None  # the two bounds were snapped
    grid = [np.array([0.0, 1.0]), np.array([t1, 1.0 + u, t2])]
    p, q = partition.locate([[2, 1], [3, 2]])
    edges = relabel.adjacency_edges(partition, grid=grid).edges
    assert [min(p, q), max(p, q)] in edges.tolist()
    labels = np.ones(partition.n_regions, dtype=np.intp)
    labels[p], labels[q] = 0, 2
    found = relabel.adjacency_edges(partition, grid=grid, jumps_of=labels).edges
    assert [min(p, q), max(p, q)] in found.tolist()
    # The jump is real: both points lie on one line inside one gap of x0.
    points = np.array([[0.1, 1.0 + u], [0.7, 1.0 + u]])
    regions = partition.locate(np.column_stack([leaf_of(a, points), leaf_of(b, points)]))
    assert labels[regions].tolist() == [0, 2]


def test_exact_regions_locate_where_predict_puts_their_points():
    """Every box before snapping locates (through its own tuple) where its inner points go."""
    rng = np.random.RandomState(3)
    u = np.spacing(1.0)
    boxes = [split_boxes(1.0 + k * u, feature=f, n_features=2) for k, f in ((0, 0), (2, 0), (1, 1), (3, 1))]
    partition = relabel.fuse(boxes)
    assert partition.exact_region is not None
    lo, hi = partition.exact_lower, partition.exact_upper
    for i in range(lo.shape[0]):
        point = np.where(np.isfinite(hi[i]), hi[i], np.where(np.isfinite(lo[i]), lo[i] + 1.0, rng.normal(size=2)))
        leaves = np.column_stack([leaf_of(box, point[None]) for box in boxes])
        assert partition.locate(leaves)[0] == partition.exact_region[i]


def test_on_a_grid_bounds_snap_only_inside_one_gap():
    """Check that a training value between two close bounds keeps them apart, and bounds of one gap still snap.

    A bound t lies in the gap of the values v <= t < v' (x <= t goes left); bounds one ulp apart with a
    training value at the upper one separate that value from the one below: snapped, they merged its
    region with its neighbour's.
    """
    u = np.spacing(1.0)
    bounds = [1.0, 1.0 + u, 1.0 + 2 * u, 1.0 + 3 * u]
    assert fusion.snap_table(bounds)[1].tolist() == [1.0 + 3 * u] * 4
    distinct, snapped = fusion.snap_table(bounds, grid_values=[0.5, 1.0 + u, 7.0])
    assert distinct.tolist() == bounds
    assert snapped.tolist() == [1.0, 1.0 + 3 * u, 1.0 + 3 * u, 1.0 + 3 * u]
    # No value between them: one chain, as without a grid.
    assert fusion.snap_table(bounds, grid_values=[0.5, 7.0])[1].tolist() == [1.0 + 3 * u] * 4

    stumps = [split_boxes(1.0), split_boxes(1.0 + u)]
    assert relabel.fuse(stumps).n_regions == 2
    kept = relabel.fuse(stumps, grid=relabel.DataGrid((np.array([1.0, 1.0 + u, 1.0 + 2 * u]),)))
    assert kept.n_regions == 3 and kept.n_aliases == 0
    points = np.array([[1.0], [1.0 + u], [1.0 + 2 * u]])
    assert kept.locate(np.column_stack([leaf_of(b, points) for b in stumps])).tolist() == [0, 1, 2]
    # A feature without values (None) snaps as without a grid.
    assert relabel.fuse(stumps, grid=relabel.DataGrid((None,))).n_regions == 2
    with pytest.raises(ValueError, match="grid has 2 features"):
        relabel.fuse(stumps, grid=relabel.DataGrid((None, None)))
