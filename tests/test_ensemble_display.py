"""Tests for ensemble.RegionDisplay: predicted-class regions drawn in ordinal colour order."""

import numpy as np
import pytest
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
    disp = RegionDisplay.from_estimator(tree, X, classes_order=ORDER, grid_resolution=40)
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
    disp = RegionDisplay.from_estimator(tree, X, classes_order=ORDER, grid_resolution=20)
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
        tree, X, y=y, classes_order=ORDER, grid_resolution=20, cmap="plasma"
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
    disp = RegionDisplay.from_estimator(tree, X, classes_order=order, grid_resolution=10)
    assert disp.response.min() >= 1
    assert [t.get_text() for t in disp.colorbar_.ax.get_yticklabels()] == order


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
    with pytest.raises(ValueError, match="classes_order must list every class.*'high'"):
        RegionDisplay.from_estimator(tree, X, classes_order=["low", "mid"])
    with pytest.raises(ValueError, match="classes_order must not contain duplicates"):
        RegionDisplay.from_estimator(tree, X, classes_order=["low", "mid", "high", "low"])
    with pytest.raises(ValueError, match="y contains classes that are not in the class order"):
        RegionDisplay.from_estimator(tree, X, y=np.where(y == "low", "zero", y))
    with pytest.raises(ValueError, match="y must be 1-D with one class per row"):
        RegionDisplay.from_estimator(tree, X, y=y[:-1])
    with pytest.raises(ValueError, match="cmap must be a matplotlib colormap name"):
        RegionDisplay.from_estimator(tree, X, cmap="no-such-map")
    with pytest.raises(ValueError, match="NaN"):
        RegionDisplay.from_estimator(tree, np.vstack([X, [np.nan, 0.0]]))
