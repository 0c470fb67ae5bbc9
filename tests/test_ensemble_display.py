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
    """Check that n_jumps and count_jumps count side and corner neighbours two or more classes apart."""
    from ensemble._display import count_jumps

    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, size=(60, 2))
    y = rng.integers(1, 5, size=60)  # noise: a full tree jumps classes everywhere
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    disp = RegionDisplay.from_estimator(tree, X, grid_resolution=30, eps=0.1)
    expected = _brute_jumps(disp.response)
    assert expected > 0 and disp.n_jumps == expected
    assert count_jumps(tree, X, grid_resolution=30, eps=0.1) == expected
    # The class order decides what a jump is: 2, 3, 1, 4 puts other classes side by side.
    ordered = RegionDisplay.from_estimator(tree, X, grid_resolution=30, eps=0.1, classes=[2, 3, 1, 4])
    assert ordered.n_jumps == _brute_jumps(ordered.response) != expected
    with pytest.raises(ValueError, match="grid_resolution must be an integer >= 2"):
        count_jumps(tree, X, grid_resolution=1)


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

    from ensemble._display import PartitionDisplay

    relabel, partition, X = fused.relabel, fused.partition, fused.X
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
    from ensemble._display import PartitionDisplay

    relabel, partition, X = fused.relabel, fused.partition, fused.X
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
    from ensemble._display import PartitionDisplay

    relabel, partition, X = fused.relabel, fused.partition, fused.X
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

    from ensemble._display import PartitionDisplay

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

    from ensemble._display import PartitionDisplay

    relabel, partition, X = fused.relabel, fused.partition, fused.X
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
    from ensemble._display import PartitionDisplay
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
