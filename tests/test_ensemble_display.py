"""Tests for ensemble.RegionDisplay: predicted-class regions drawn in ordinal colour order."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier

from ensemble import RegionDisplay

ORDER = ["low", "mid", "high"]


@pytest.fixture
def fitted():
    """A depth-limited tree on 2D data with string classes whose sorted order is not ordinal."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 3, size=(120, 2))
    y = np.array(ORDER)[np.minimum((X[:, 0] + X[:, 1]) // 2, 2).astype(int)]
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    return tree, X, y


def _expected_colors(cmap_name, k):
    import matplotlib

    return matplotlib.colormaps[cmap_name](np.linspace(0, 1, k))


def test_region_colours_follow_predictions_in_given_order(pyplot, fitted):
    """Check that every grid cell is coloured by the rank of the class predicted at its centre."""
    tree, X, y = fitted
    disp = RegionDisplay.from_estimator(tree, X, classes=ORDER, grid_resolution=40)
    grid = np.column_stack([disp.xx0.ravel(), disp.xx1.ravel()])
    predicted = tree.predict(grid)
    rank = {c: i for i, c in enumerate(ORDER)}
    expected_rank = np.array([rank[c] for c in predicted]).reshape(disp.xx0.shape)
    np.testing.assert_array_equal(disp.response, expected_rank)
    np.testing.assert_array_equal(disp.classes[disp.response], predicted.reshape(disp.xx0.shape))
    cell_values = np.asarray(disp.surface_.get_array()).reshape(disp.xx0.shape)
    np.testing.assert_array_equal(cell_values, expected_rank)
    colours = disp.surface_.to_rgba(cell_values.ravel())
    np.testing.assert_allclose(colours, _expected_colors("viridis", 3)[expected_rank.ravel()])
    assert {0, 1, 2} <= set(np.unique(expected_rank).tolist())


def test_colorbar_ticks_are_class_names_in_ordinal_order(pyplot, fitted):
    """Check that the colour bar has one tick per class, labelled low, mid, high in order."""
    tree, X, _ = fitted
    disp = RegionDisplay.from_estimator(tree, X, classes=ORDER, grid_resolution=20)
    labels = [t.get_text() for t in disp.colorbar_.ax.get_yticklabels()]
    assert labels == ORDER
    np.testing.assert_array_equal(disp.colorbar_.get_ticks(), [0, 1, 2])
    # Without an order the estimator's sorted classes_ are used: high < low < mid.
    disp2 = RegionDisplay.from_estimator(tree, X, grid_resolution=20)
    assert [t.get_text() for t in disp2.colorbar_.ax.get_yticklabels()] == ["high", "low", "mid"]


def test_points_share_the_region_colours(pyplot, fitted):
    """Check that training points are filled with the colour of their own class."""
    tree, X, y = fitted
    disp = RegionDisplay.from_estimator(
        tree, X, y=y, classes=ORDER, grid_resolution=20, cmap="plasma"
    )
    rank = np.array([ORDER.index(c) for c in y])
    faces = disp.scatter_.to_rgba(disp.scatter_.get_array())
    np.testing.assert_allclose(faces, _expected_colors("plasma", 3)[rank])
    np.testing.assert_allclose(disp.scatter_.get_offsets(), X)


def test_grid_extent_axes_and_figure(pyplot, fitted):
    """Check the grid shape and margins and that a given ax is used and exposed with its figure."""
    tree, X, _ = fitted
    fig, ax = pyplot.subplots()
    disp = RegionDisplay.from_estimator(
        tree, X, ax=ax, grid_resolution=17, eps=0.25, plot_points=False, colorbar=False
    )
    assert disp.ax_ is ax and disp.figure_ is fig
    assert disp.xx0.shape == disp.xx1.shape == disp.response.shape == (17, 17)
    assert disp.xx0.min() == pytest.approx(X[:, 0].min() - 0.25)
    assert disp.xx1.max() == pytest.approx(X[:, 1].max() + 0.25)
    assert disp.scatter_ is None and disp.colorbar_ is None
    assert ax.get_xlabel() == "x1" and ax.get_xlim() == pytest.approx(
        (disp.xx0.min(), disp.xx0.max())
    )
    default = RegionDisplay.from_estimator(tree, X, grid_resolution=5, plot_points=False)
    span = X[:, 0].max() - X[:, 0].min()
    assert default.xx0.min() == pytest.approx(X[:, 0].min() - 0.05 * span)


def test_extra_class_in_order_gets_a_colour_and_tick(pyplot, fitted):
    """Check that a class never predicted still takes its place on the ordinal colour scale."""
    tree, X, _ = fitted
    order = ["none", "low", "mid", "high"]
    disp = RegionDisplay.from_estimator(tree, X, classes=order, grid_resolution=10)
    assert disp.response.min() >= 1
    assert [t.get_text() for t in disp.colorbar_.ax.get_yticklabels()] == order


def test_classes_order_is_a_deprecated_alias_of_classes(pyplot, fitted):
    """Check that classes_order still works, with a FutureWarning, and gives the same display as classes."""
    tree, X, _ = fitted
    new = RegionDisplay.from_estimator(tree, X, classes=ORDER, grid_resolution=12)
    with pytest.warns(FutureWarning, match="classes_order was renamed classes"):
        old = RegionDisplay.from_estimator(tree, X, classes_order=ORDER, grid_resolution=12)
    assert old.classes.tolist() == new.classes.tolist() == ORDER
    np.testing.assert_array_equal(old.response, new.response)


def _brute_jumps(ranks):
    """Jumps by a loop over every cell and its eight neighbours (each pair counted once)."""
    n0, n1 = ranks.shape
    count = 0
    for i in range(n0):
        for j in range(n1):
            for di, dj in ((0, 1), (1, 0), (1, 1), (1, -1)):
                a, b = i + di, j + dj
                if 0 <= a < n0 and 0 <= b < n1 and abs(int(ranks[i, j]) - int(ranks[a, b])) > 1:
                    count += 1
    return count


def test_n_jumps_and_count_jumps_match_a_neighbour_loop(pyplot):
    """Check that the pairs walked are the side and corner neighbours two or more classes apart."""
    from ensemble.plots._display import count_jumps, find_jumps

    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, size=(60, 2))
    y = rng.integers(1, 5, size=60)  # noise: a full tree jumps classes everywhere
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    disp = RegionDisplay.from_estimator(tree, X, grid_resolution=30, eps=0.1)
    expected = _brute_jumps(disp.response)
    assert expected > 0 and disp.n_jumps + disp.n_thin_bands == expected
    found = find_jumps(tree, X, grid_resolution=30, eps=0.1)
    assert count_jumps(tree, X, grid_resolution=30, eps=0.1) == found.n_jumps == disp.n_jumps > 0
    np.testing.assert_array_equal(found.jumps, disp.jumps.jumps)
    # Without a walk (a display built from a grid alone) every such pair counts as a jump.
    bare = RegionDisplay(xx0=disp.xx0, xx1=disp.xx1, response=disp.response, classes=disp.classes)
    assert bare.n_jumps == expected and bare.n_thin_bands == 0
    # The class order decides what a jump is: 2, 3, 1, 4 puts other classes side by side.
    ordered = RegionDisplay.from_estimator(tree, X, grid_resolution=30, eps=0.1, classes=[2, 3, 1, 4])
    assert ordered.n_jumps + ordered.n_thin_bands == _brute_jumps(ordered.response) != expected
    with pytest.raises(ValueError, match="grid_resolution must be an integer >= 2"):
        count_jumps(tree, X, grid_resolution=1)


# A line of points along x1 (x2 = 0): fitted trees split at the midpoints of consecutive x1.
def _tree_on_a_line(x, y):
    X = np.column_stack([x, np.zeros(len(x))])
    return DecisionTreeClassifier(random_state=0).fit(X, y), X


def _segments(disp, pairs):
    """Both cell centres of each pair (rows of four coordinates)."""
    return np.column_stack([disp.xx0[pairs[:, 0], pairs[:, 1]], disp.xx1[pairs[:, 0], pairs[:, 1]],
                            disp.xx0[pairs[:, 2], pairs[:, 3]], disp.xx1[pairs[:, 2], pairs[:, 3]]])


def test_a_class_1_leaf_next_to_a_class_3_leaf_is_a_jump(pyplot):
    """Check that a tree built to fail (1 | 3 at x1 = 0.5) has jumps straddling 0.5, and no thin band."""
    tree, X = _tree_on_a_line([0.0, 0.4, 0.6, 1.0, 1.4], [1, 1, 3, 3, 2])
    disp = RegionDisplay.from_estimator(tree, X, grid_resolution=12)
    assert disp.jumps.exact and disp.n_jumps > 0 and disp.n_thin_bands == 0
    seg = _segments(disp, disp.jumps.jumps)
    assert np.all(np.minimum(seg[:, 0], seg[:, 2]) < 0.5) and np.all(np.maximum(seg[:, 0], seg[:, 2]) > 0.5)
    # Every row of the grid crosses x1 = 0.5: one side pair and two corner pairs per row
    # (one corner pair less on each of the first and last rows).
    assert disp.n_jumps == 12 + 2 * 11
    assert len(disp.jumps_.get_offsets()) == disp.n_jumps and disp.thin_bands_ is None
    np.testing.assert_allclose(np.asarray(disp.jumps_.get_offsets())[:, 0], 0.5 * (seg[:, 0] + seg[:, 2]))
    assert disp.summary == "34 jumps"


def test_a_band_thinner_than_a_cell_is_not_a_jump(pyplot):
    """Check that 1 | 2 | 3 with the 2 band 2e-5 wide counts thin bands, no jump; a grid alone saw jumps."""
    from ensemble.plots._display import find_jumps

    d = 1e-5
    tree, X = _tree_on_a_line([0.0, 0.5 - d, 0.5 + d, 0.5 + 3 * d, 1.0], [1, 1, 2, 3, 3])
    band = tree.predict([[0.5 + d, 0.0]])
    assert band.tolist() == [2] and tree.get_n_leaves() == 3
    disp = RegionDisplay.from_estimator(tree, X, grid_resolution=12)
    assert not np.any(disp.classes[disp.response] == 2)  # no cell centre falls into the band
    assert disp.n_jumps == 0 and disp.n_thin_bands == 12 + 2 * 11
    assert disp.summary == "0 jumps (34 bands thinner than a cell)"
    seg = _segments(disp, disp.jumps.thin_bands)
    assert np.all(np.minimum(seg[:, 0], seg[:, 2]) < 0.5) and np.all(np.maximum(seg[:, 0], seg[:, 2]) > 0.5 + 2 * d)
    assert len(disp.thin_bands_.get_offsets()) == 34 and disp.jumps_ is None
    bare = RegionDisplay(xx0=disp.xx0, xx1=disp.xx1, response=disp.response, classes=disp.classes)
    assert bare.n_jumps == 34  # what the grid alone claims
    # A band and a real jump side by side are counted apart: 1 | 2 (thin) | 3 | 1.
    tree, X = _tree_on_a_line([0.0, 0.5 - d, 0.5 + d, 0.5 + 3 * d, 0.8, 1.0], [1, 1, 2, 3, 3, 1])
    found = find_jumps(tree, X, grid_resolution=12)
    assert found.n_jumps == 34 and found.n_thin_bands == 34


def _dense_jumps(estimator, disp, n=2001):
    """Oracle: each pair two classes apart sampled at n points of its segment; a jump if two
    consecutive samples are more than one class apart."""
    pairs = _grid_pairs_brute(disp.response)
    s = np.linspace(0.0, 1.0, n)[:, None]
    position = {c: i for i, c in enumerate(disp.classes.tolist())}
    jumps = set()
    for pair in pairs:
        p = np.array([disp.xx0[pair[0], pair[1]], disp.xx1[pair[0], pair[1]]])
        q = np.array([disp.xx0[pair[2], pair[3]], disp.xx1[pair[2], pair[3]]])
        ranks = np.array([position[v] for v in estimator.predict(p + s * (q - p)).tolist()])
        if np.any(np.abs(np.diff(ranks)) > 1):
            jumps.add(pair)
    return set(pairs), jumps


def _grid_pairs_brute(ranks):
    n0, n1 = ranks.shape
    return [(i, j, i + di, j + dj) for i in range(n0) for j in range(n1)
            for di, dj in ((0, 1), (1, 0), (1, 1), (1, -1))
            if 0 <= i + di < n0 and 0 <= j + dj < n1 and abs(int(ranks[i, j]) - int(ranks[i + di, j + dj])) > 1]


def _small_models():
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ensemble import ConsistentForestClassifier, OTreeBagger

    return {
        "tree": DecisionTreeClassifier(random_state=0),
        "bagged trees in PLS spaces": OTreeBagger(n_estimators=6, relabel=False, projection="pls",
                                                  random_state=0),
        "OTreeBagger": OTreeBagger(n_estimators=6, random_state=0),
        "certified forest": ConsistentForestClassifier(n_estimators=30, random_state=0),
        "k nearest neighbours (bisection)": KNeighborsClassifier(n_neighbors=1),
        "scaled tree (bisection)": make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0)),
    }


@pytest.mark.parametrize("name", sorted(_small_models()))
@pytest.mark.parametrize("seed", [0, 1])
def test_walk_equals_dense_sampling_of_every_segment(pyplot, name, seed):
    """Check that the jumps found equal a dense sampling of each segment, for tree models and others."""
    import warnings

    from ensemble.datasets import make_synthetic_i

    X, y = make_synthetic_i(60, random_state=seed)
    model = _small_models()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an uncertified forest of 30 trees warns
        model.fit(X, y)
    disp = RegionDisplay.from_estimator(model, X, grid_resolution=16, plot_points=False)
    pairs, jumps = _dense_jumps(model, disp)
    assert pairs, "the case must have pairs to decide"
    assert {tuple(p) for p in disp.jumps.jumps.tolist()} == jumps
    assert {tuple(p) for p in disp.jumps.thin_bands.tolist()} == pairs - jumps
    assert disp.jumps.exact == ("bisection" not in name)
    if name in ("OTreeBagger", "certified forest") and model.is_consistent():
        assert disp.n_jumps == 0


def test_bisection_finds_a_thin_band_of_a_model_without_trees(pyplot):
    """Check that a pipeline (no trees the walk can read) is bisected, and its thin band found."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ensemble.plots._display import find_jumps

    d = 1e-5
    x = [0.0, 0.5 - d, 0.5 + d, 0.5 + 3 * d, 1.0]
    X = np.column_stack([x, np.zeros(5)])
    model = make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0)).fit(X, [1, 1, 2, 3, 3])
    found = find_jumps(model, X, grid_resolution=12)
    assert not found.exact and found.n_jumps == 0 and found.n_thin_bands == 34


def test_pandas_frame_keeps_feature_names(pyplot):
    """Check that a DataFrame's column names reach predict (no warning) and the axis labels."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.uniform(size=(50, 2)), columns=["age", "income"])
    y = np.where(frame["age"] > 0.5, 2, 1)
    tree = DecisionTreeClassifier(random_state=0).fit(frame, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        disp = RegionDisplay.from_estimator(tree, frame, y=y, grid_resolution=10)
    assert disp.ax_.get_xlabel() == "age" and disp.ax_.get_ylabel() == "income"


def test_display_rejects_bad_input(pyplot, fitted):
    """Check that bad arguments raise ValueError (or NotFittedError) naming the culprit."""
    tree, X, y = fitted
    with pytest.raises(NotFittedError):
        RegionDisplay.from_estimator(DecisionTreeClassifier(), X)
    with pytest.raises(ValueError, match="X must have exactly 2 features"):
        RegionDisplay.from_estimator(tree, np.hstack([X, X[:, :1]]))
    with pytest.raises(ValueError, match="grid_resolution must be an integer >= 2"):
        RegionDisplay.from_estimator(tree, X, grid_resolution=1)
    with pytest.raises(ValueError, match="eps must be a non-negative number"):
        RegionDisplay.from_estimator(tree, X, eps=-1.0)
    with pytest.raises(ValueError, match="classes must list every class.*'high'"):
        RegionDisplay.from_estimator(tree, X, classes=["low", "mid"])
    with pytest.raises(ValueError, match="classes must not contain duplicates"):
        RegionDisplay.from_estimator(tree, X, classes=["low", "mid", "high", "low"])
    with pytest.raises(ValueError, match="pass classes only"):
        RegionDisplay.from_estimator(tree, X, classes=ORDER, classes_order=ORDER)
    with pytest.raises(ValueError, match="y contains classes that are not in the class order"):
        RegionDisplay.from_estimator(tree, X, y=np.where(y == "low", "zero", y))
    with pytest.raises(ValueError, match="y must be 1-D with one class per row"):
        RegionDisplay.from_estimator(tree, X, y=y[:-1])
    with pytest.raises(ValueError, match="cmap must be a matplotlib colormap name"):
        RegionDisplay.from_estimator(tree, X, cmap="no-such-map")
    with pytest.raises(ValueError, match="NaN"):
        RegionDisplay.from_estimator(tree, np.vstack([X, [np.nan, 0.0]]))


# ---------------------------------------------------------------- PartitionDisplay


@pytest.fixture
def fused():
    """A real fused partition of two depth-3 scikit-learn trees fitted on halves of syntheticI."""
    relabel = pytest.importorskip("relabel")
    from types import SimpleNamespace

    from ensemble.datasets import make_synthetic_i
    from trees import leaf_boxes

    X, y = make_synthetic_i(300, random_state=0)
    pair = [
        DecisionTreeClassifier(max_depth=3, random_state=s).fit(X[s::2], y[s::2]) for s in (0, 1)
    ]
    partition = relabel.fuse([leaf_boxes(t) for t in pair])
    leaves = np.column_stack([t.apply(X) for t in pair])
    return SimpleNamespace(relabel=relabel, partition=partition, X=X, y=y, leaves=leaves)


class _GroupsHolder(BaseEstimator):
    """A fitted container with OTreeBagger's group attributes, built from real relabel output."""

    def __init__(self, groups=None, classes=None):
        self.groups = groups
        self.classes = classes

    def fit(self, X=None, y=None):
        self.groups_ = list(self.groups)
        self.classes_ = np.asarray(self.classes)
        self.contact = "closure"
        return self


def _dotted(collection):
    """Which segments of a LineCollection are drawn with a dash pattern."""
    return np.array([dashes is not None for _, dashes in collection.get_linestyles()])


def test_partition_boxes_tile_the_window_and_carry_label_colours(pyplot, fused):
    """Check that the drawn boxes tile the window exactly and are filled by label colour."""
    import shapely

    from ensemble import PartitionDisplay

    partition, X = fused.partition, fused.X
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 5, size=partition.n_regions)
    disp = PartitionDisplay.from_partition(partition, labels, X=X, cmap="viridis")
    xmin, ymin, xmax, ymax = disp.bounds
    assert xmin < X[:, 0].min() and xmax > X[:, 0].max()
    window_area = (xmax - xmin) * (ymax - ymin)
    areas = np.array([p.area for p in disp.polygons])
    assert np.all(areas > 0)
    assert areas.sum() == pytest.approx(window_area)
    assert shapely.union_all(list(disp.polygons)).area == pytest.approx(window_area)
    np.testing.assert_array_equal(disp.regions_.get_array(), labels)
    faces = disp.regions_.to_rgba(np.asarray(disp.regions_.get_array()))
    np.testing.assert_allclose(faces, _expected_colors("viridis", 5)[labels])
    assert [t.get_text() for t in disp.colorbar_.ax.get_yticklabels()] == ["1", "2", "3", "4", "5"]


def test_partition_edges_match_shapely_closure_oracle(pyplot, fused):
    """Check that drawn edges are exactly the box pairs whose closures intersect (shapely)."""
    from ensemble import PartitionDisplay

    partition, X = fused.partition, fused.X
    labels = np.arange(partition.n_regions) % 5
    disp = PartitionDisplay.from_partition(partition, labels, X=X)
    polygons = disp.polygons
    oracle = {
        (i, j)
        for i in range(len(polygons))
        for j in range(i + 1, len(polygons))
        if polygons[i].intersects(polygons[j])
    }
    drawn = {tuple(sorted(map(int, e))) for e in disp.edges}
    assert drawn == oracle
    assert len(disp.edges_.get_segments()) == len(oracle)
    # Corner contacts: closures meet in a single point.
    corners = {
        tuple(sorted(map(int, e)))
        for e, face in zip(disp.edges, disp.is_face)
        if not face
    }
    assert corners == {
        (i, j) for i, j in oracle if polygons[i].intersection(polygons[j]).geom_type == "Point"
    }
    bad = {(i, j) for i, j in oracle if abs(labels[i] - labels[j]) > 1}
    assert {tuple(sorted(map(int, e))) for e in disp.violations} == bad
    expected_dotted = np.array(
        [
            not face and tuple(sorted(map(int, e))) not in bad
            for e, face in zip(disp.edges, disp.is_face)
        ]
    )
    np.testing.assert_array_equal(_dotted(disp.edges_), expected_dotted)
    reds = disp.edges_.get_colors()[:, 0] > 0.5
    np.testing.assert_array_equal(
        reds, [tuple(sorted(map(int, e))) in bad for e in disp.edges]
    )


def test_partition_accepts_graph_or_edge_array(pyplot, fused):
    """Check that a networkx graph or a bare edge array gives the same edges and contact kinds."""
    from ensemble import PartitionDisplay

    relabel, partition = fused.relabel, fused.partition
    labels = np.zeros(partition.n_regions, dtype=int)
    graph = relabel.adjacency_graph(partition)
    from_graph = PartitionDisplay.from_partition(partition, labels, edges=graph, colorbar=False)
    arrays = relabel.adjacency_edges(partition)
    from_array = PartitionDisplay.from_partition(partition, labels, edges=arrays.edges)
    key = lambda d: sorted(  # noqa: E731
        (tuple(sorted(map(int, e))), bool(f)) for e, f in zip(d.edges, d.is_face)
    )
    assert key(from_graph) == key(from_array)
    assert sum(1 for _, f in key(from_array) if not f) == int((~arrays.is_face).sum())
    assert from_graph.violations.shape == (0, 2) and from_graph.colorbar_ is None


def test_partition_display_relabelled_by_solver_is_consistent(pyplot, fused):
    """Check that labels from relabel.solve draw with no violating (red) edge."""
    from types import SimpleNamespace

    from ensemble import PartitionDisplay

    relabel, partition, X = fused.relabel, fused.partition, fused.X
    counts = relabel.region_counts(
        partition.locate(fused.leaves), fused.y - 1, 5, n_regions=partition.n_regions
    )
    graph = relabel.adjacency_graph(partition)
    result = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, graph))
    labels = np.asarray(result.labels)
    group = SimpleNamespace(partition=partition, labels=labels, edges=np.array(graph.edges))
    model = _GroupsHolder(groups=[group], classes=np.arange(1, 6)).fit()
    disp = PartitionDisplay.from_estimator(model, X, group=0)
    assert disp.violations.shape == (0, 2)
    assert not np.any(disp.edges_.get_colors()[:, 0] > 0.5)
    np.testing.assert_array_equal(disp.regions_.get_array(), labels)


def test_partition_display_rejects_bad_input(pyplot, fused):
    """Check that malformed partitions, labels, edges, bounds and estimators raise ValueError."""
    from types import SimpleNamespace

    from ensemble import PartitionDisplay

    partition, X = fused.partition, fused.X
    n = partition.n_regions
    ok = np.zeros(n, dtype=int)
    cube = SimpleNamespace(lower=np.zeros((2, 3)), upper=np.ones((2, 3)))
    with pytest.raises(ValueError, match="partition must have lower and upper bounds of shape"):
        PartitionDisplay.from_partition(cube, [0, 0])
    with pytest.raises(ValueError, match=f"labels must be {n} integer class ranks"):
        PartitionDisplay.from_partition(partition, ok[:-1])
    with pytest.raises(ValueError, match="integer class ranks"):
        PartitionDisplay.from_partition(partition, ok.astype(float))
    with pytest.raises(ValueError, match=r"labels must be ranks in 0..1"):
        PartitionDisplay.from_partition(partition, ok + 2, classes=["a", "b"])
    with pytest.raises(ValueError, match="edges refer to regions outside"):
        PartitionDisplay.from_partition(partition, ok, edges=[[0, n]])
    with pytest.raises(ValueError, match="edges must be a networkx graph or integer pairs"):
        PartitionDisplay.from_partition(partition, ok, edges=[0.5, 1.5])
    with pytest.raises(ValueError, match="bounds must be four finite numbers"):
        PartitionDisplay.from_partition(partition, ok, bounds=(1, 0, 0, 1))
    with pytest.raises(NotFittedError):
        PartitionDisplay.from_estimator(DecisionTreeClassifier())
    tree = DecisionTreeClassifier().fit(X, np.arange(len(X)) % 2)
    with pytest.raises(ValueError, match="must be a fitted OTreeBagger with groups_"):
        PartitionDisplay.from_estimator(tree)
    model = _GroupsHolder(groups=[SimpleNamespace(partition=None)], classes=[1, 2]).fit()
    with pytest.raises(ValueError, match="group must be an integer in 0..0"):
        PartitionDisplay.from_estimator(model, group=3)
    with pytest.raises(ValueError, match="fitted without relabelling"):
        PartitionDisplay.from_estimator(model)


def test_displays_of_a_real_otreebagger(pyplot):
    """Check both displays on a fitted OTreeBagger: regions match predict, groups are consistent."""
    from ensemble import OTreeBagger
    from ensemble import PartitionDisplay
    from ensemble.datasets import make_synthetic_i

    X, y = make_synthetic_i(200, random_state=1)
    model = OTreeBagger(n_estimators=6, group_size=3, random_state=0).fit(X, y)
    regions = RegionDisplay.from_estimator(model, X, y=y, grid_resolution=30)
    grid = np.column_stack([regions.xx0.ravel(), regions.xx1.ravel()])
    np.testing.assert_array_equal(
        regions.classes[regions.response].ravel(), model.predict(grid)
    )
    for g, group in enumerate(model.groups_):
        disp = PartitionDisplay.from_estimator(model, X, group=g, colorbar=False)
        assert disp.violations.shape == (0, 2)
        assert len(disp.polygons) == group.partition.n_regions
        np.testing.assert_array_equal(disp.regions_.get_array(), group.labels)
        assert disp.classes.tolist() == model.classes_.tolist()
