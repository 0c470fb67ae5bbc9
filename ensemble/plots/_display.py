"""Decision regions of a fitted 2D classifier drawn as a discrete colour map in ordinal order.

Modelled on scikit-learn's ``DecisionBoundaryDisplay``: a display object holds the
evaluation grid and the predicted classes, ``plot`` draws them, and
``from_estimator`` builds the grid from the data and plots in one call.
matplotlib is imported only when drawing.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_array

from ensemble.plots._grid import GridJumps, class_ranks, count_jumps, find_jumps, grid_pairs, grid_response, walk_grid

logger = logging.getLogger(__name__)

__all__ = ["RegionDisplay", "count_jumps", "find_jumps"]


def _renamed_classes(classes: Any, classes_order: Any) -> Any:
    """Accept the deprecated keyword ``classes_order`` for ``classes``, with a FutureWarning."""
    if classes_order is None:
        return classes
    if classes is not None:
        raise ValueError("pass classes only; classes_order is its deprecated old name")
    warnings.warn(
        "classes_order was renamed classes (the name the estimators use) and will be removed; "
        "pass classes=...",
        FutureWarning,
        stacklevel=3,
    )
    return classes_order


def _discrete_colormap(cmap: Any, n_classes: int):
    """A ListedColormap with one colour per class, sampled evenly from ``cmap``, and its norm."""
    import matplotlib
    from matplotlib.colors import BoundaryNorm, Colormap, ListedColormap

    if isinstance(cmap, str):
        try:
            base = matplotlib.colormaps[cmap]
        except KeyError:
            raise ValueError(f"cmap must be a matplotlib colormap name, got {cmap!r}") from None
    elif isinstance(cmap, Colormap):
        base = cmap
    else:
        raise ValueError(f"cmap must be a colormap name or Colormap, got {type(cmap).__name__}")
    # Sampling the ends of the map keeps the lowest and highest classes maximally apart.
    positions = np.linspace(0.0, 1.0, n_classes) if n_classes > 1 else np.array([0.5])
    listed = ListedColormap(base(positions), name=f"{base.name}_{n_classes}")
    norm = BoundaryNorm(np.arange(n_classes + 1) - 0.5, n_classes)
    return listed, norm


def _finish_axes(ax, mappable, classes, xlabel, ylabel, colorbar: bool, label: str):
    """Axis labels and a colour bar with one tick per class (in ordinal order); returns the bar or None."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if not colorbar:
        return None
    bar = ax.figure.colorbar(mappable, ax=ax)
    bar.set_ticks(np.arange(len(classes)), labels=[str(c) for c in np.asarray(classes).tolist()])
    bar.set_label(label)
    return bar

class RegionDisplay:
    """Predicted-class regions of a 2D classifier, one colour per class in ordinal order.

    Build it with :meth:`from_estimator`; the constructor only stores a grid that
    was already evaluated. Classes are coloured by their rank in ``classes``
    (lowest class first) along a sequential colour map, so neighbouring classes
    get neighbouring colours and an ordinal inconsistency (a region touching a
    region two or more classes away) shows as a jump in colour.

    Parameters
    ----------
    xx0, xx1 : ndarray of shape (grid_resolution, grid_resolution)
        Coordinates of the grid points (as from :func:`numpy.meshgrid`).
    response : ndarray of int of shape (grid_resolution, grid_resolution)
        Rank in ``classes`` of the class predicted at each grid point.
    classes : ndarray of shape (n_classes,)
        The classes in their ordinal order; ``classes[response]`` are the
        predicted labels.
    xlabel, ylabel : str, default=None
        Axis labels.

    jumps : GridJumps, default=None
        The pairs of neighbouring cells two or more classes apart, sorted by
        :func:`find_jumps` into jumps and bands thinner than a cell (what
        :meth:`from_estimator` passes). ``None`` counts every such pair as a
        jump: the grid alone cannot tell a thin band from a jump.

    Attributes
    ----------
    n_jumps : int
        Pairs of grid cells touching by a side or a corner whose class changes
        by more than one at a single point of the segment between their centres
        (see :func:`find_jumps`); 0 for a consistent model, on any grid.
    n_thin_bands : int
        Pairs whose centres are two or more classes apart with the classes in
        between in a band thinner than a cell (the grid skips it).
    ax_ : matplotlib Axes
        Axes holding the drawing (after :meth:`plot`).
    figure_ : matplotlib Figure
        Figure holding ``ax_``.
    surface_ : matplotlib QuadMesh
        The coloured regions.
    colorbar_ : matplotlib Colorbar or None
        Colour bar with one tick per class, labelled by class.
    scatter_ : matplotlib PathCollection or None
        The data points, when drawn.
    thin_bands_, jumps_ : matplotlib PathCollection or None
        Markers half-way between the two cells of every thin band (open
        magenta diamonds) and of every jump (red crosses), when there are any.

    See Also
    --------
    sklearn.inspection.DecisionBoundaryDisplay : The scikit-learn display this
        one is modelled on; it colours probabilities or decision values, whereas
        this one colours the predicted class on a discrete ordinal scale.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from ensemble import RegionDisplay
    >>> X = [[0, 0], [1, 0], [2, 1], [3, 1]]
    >>> y = ["low", "mid", "mid", "high"]
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    >>> disp = RegionDisplay.from_estimator(tree, X, y=y, grid_resolution=50,
    ...                                     classes=["low", "mid", "high"])
    >>> disp.response.shape, disp.classes.tolist(), disp.summary
    ((50, 50), ['low', 'mid', 'high'], '0 jumps')
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """

    def __init__(
        self,
        *,
        xx0: NDArray[np.float64],
        xx1: NDArray[np.float64],
        response: NDArray[np.intp],
        classes: ArrayLike,
        xlabel: str | None = None,
        ylabel: str | None = None,
        jumps: GridJumps | None = None,
    ) -> None:
        self.xx0 = xx0
        self.xx1 = xx1
        self.response = response
        self.classes = np.asarray(classes)
        self.xlabel = xlabel
        self.ylabel = ylabel
        if jumps is None:
            pairs = grid_pairs(np.asarray(response))
            jumps = GridJumps(pairs, pairs[:0], exact=False)
        self.jumps = jumps
        self.n_jumps = jumps.n_jumps
        self.n_thin_bands = jumps.n_thin_bands

    @property
    def summary(self) -> str:
        """The jumps in words, for a title: ``"0 jumps (3 bands thinner than a cell)"``."""
        return self.jumps.summary()

    def plot(
        self,
        *,
        ax: Any = None,
        cmap: Any = "viridis",
        X: ArrayLike | None = None,
        y: ArrayLike | None = None,
        plot_points: bool = True,
        colorbar: bool = True,
        xlabel: str | None = None,
        ylabel: str | None = None,
        mark_jumps: bool = True,
        **kwargs: Any,
    ) -> "RegionDisplay":
        """Draw the regions, optionally the points and a colour bar labelled by class.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure and axes are created if None.
        cmap : str or matplotlib Colormap, default="viridis"
            Sequential map sampled at ``n_classes`` evenly spaced positions.
        X : array-like of shape (n_samples, 2), default=None
            Points to draw on top of the regions.
        y : array-like of shape (n_samples,), default=None
            Their classes; the points are then filled with their class colour
            (the same colours as the regions), otherwise drawn white.
        plot_points : bool, default=True
            Whether to draw ``X`` at all.
        colorbar : bool, default=True
            Whether to add a colour bar with one tick per class.
        xlabel, ylabel : str, default=None
            Override the stored axis labels.
        mark_jumps : bool, default=True
            Mark every band thinner than a cell (an open magenta diamond half-way
            between its two cells: the grid cannot show its colour) and every
            jump (a red cross).
        **kwargs : dict
            Passed on to :meth:`matplotlib.axes.Axes.pcolormesh` (e.g. ``alpha``).

        Returns
        -------
        self : RegionDisplay
            With ``ax_``, ``figure_``, ``surface_``, ``colorbar_``, ``scatter_``,
            ``thin_bands_`` and ``jumps_`` set.

        Raises
        ------
        ValueError
            If ``X`` is not of shape (n_samples, 2), ``y`` has another length or
            holds a class not in ``classes``, or ``cmap`` is unknown.

        Notes
        -----
        Each grid point is the centre of one cell (``shading="nearest"``), so a
        cell shows exactly the class predicted at its centre. Cost O(grid
        points + n_samples) drawing work.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from ensemble import RegionDisplay
        >>> xx0, xx1 = np.meshgrid(np.linspace(0, 1, 3), np.linspace(0, 1, 3))
        >>> disp = RegionDisplay(xx0=xx0, xx1=xx1, response=(xx0 > 0.5).astype(int),
        ...                      classes=["bad", "good"]).plot(cmap="cividis")
        >>> [t.get_text() for t in disp.colorbar_.ax.get_yticklabels()]
        ['bad', 'good']
        >>> import matplotlib.pyplot as plt; plt.close("all")
        """
        import matplotlib.pyplot as plt

        n_classes = self.classes.shape[0]
        listed, norm = _discrete_colormap(cmap, n_classes)
        # Validate the points before drawing anything, so an error leaves no half-made plot.
        points = ranks = None
        if plot_points and X is not None:
            points = check_array(X, dtype=np.float64, input_name="X")
            if points.shape[1] != 2:
                raise ValueError(f"X must have exactly 2 columns, got {points.shape[1]}")
            if y is not None:
                labels = np.asarray(y)
                if labels.ndim != 1 or labels.shape[0] != points.shape[0]:
                    raise ValueError(
                        f"y must be 1-D with one class per row of X ({points.shape[0]}), "
                        f"got shape {labels.shape}"
                    )
                ranks = class_ranks(labels, self.classes, "y")
        if ax is None:
            _, ax = plt.subplots()
        mesh_kwargs = {"shading": "nearest", **kwargs}
        self.surface_ = ax.pcolormesh(
            self.xx0, self.xx1, self.response, cmap=listed, norm=norm, **mesh_kwargs
        )
        self.scatter_ = None
        if points is not None:
            style = {"edgecolors": "black", "linewidths": 0.5, "s": 18}
            if ranks is None:
                self.scatter_ = ax.scatter(points[:, 0], points[:, 1], c="white", **style)
            else:
                self.scatter_ = ax.scatter(
                    points[:, 0], points[:, 1], c=ranks, cmap=listed, norm=norm, **style
                )
        self.thin_bands_ = self.jumps_ = None
        if mark_jumps:
            self.thin_bands_ = self._mark(ax, self.jumps.thin_bands, marker="D", s=16, facecolors="none",
                                          edgecolors="magenta", linewidths=0.9,
                                          label="band thinner than a cell")
            self.jumps_ = self._mark(ax, self.jumps.jumps, marker="x", s=10, c="red", linewidths=0.7,
                                     label="jump of two or more classes")
        ax.set_xlim(self.xx0.min(), self.xx0.max())
        ax.set_ylim(self.xx1.min(), self.xx1.max())
        xlabel = self.xlabel if xlabel is None else xlabel
        ylabel = self.ylabel if ylabel is None else ylabel
        self.colorbar_ = _finish_axes(ax, self.surface_, self.classes, xlabel, ylabel, colorbar,
                                      "predicted class")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    def _mark(self, ax, pairs: NDArray[np.intp], **style):
        """A marker half-way between the two cells of each pair (None when there is none)."""
        if pairs.shape[0] == 0:
            return None
        x = (self.xx0[pairs[:, 0], pairs[:, 1]] + self.xx0[pairs[:, 2], pairs[:, 3]]) / 2.0
        y = (self.xx1[pairs[:, 0], pairs[:, 1]] + self.xx1[pairs[:, 2], pairs[:, 3]]) / 2.0
        return ax.scatter(x, y, zorder=3, **style)

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: ArrayLike,
        *,
        grid_resolution: int = 200,
        ax: Any = None,
        classes: ArrayLike | None = None,
        plot_points: bool = True,
        y: ArrayLike | None = None,
        cmap: Any = "viridis",
        eps: float | None = None,
        colorbar: bool = True,
        xlabel: str | None = None,
        ylabel: str | None = None,
        classes_order: ArrayLike | None = None,
        **kwargs: Any,
    ) -> "RegionDisplay":
        """Evaluate a fitted classifier on a grid over ``X`` and draw its predicted classes.

        Parameters
        ----------
        estimator : fitted classifier
            Anything with ``predict`` and ``classes_`` fitted on two features:
            :class:`ensemble.OTreeBagger`, :class:`trees.OrdinalTreeClassifier`,
            scikit-learn classifiers and pipelines.
        X : array-like of shape (n_samples, 2)
            Data that set the extent of the grid (and are drawn if
            ``plot_points``). A pandas DataFrame keeps its column names for the
            grid passed to ``predict`` and for the axis labels.
        grid_resolution : int, default=200
            Number of grid points along each axis (at least 2).
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if None.
        classes : array-like, default=None
            The classes in ordinal order, lowest first. ``None`` uses the
            estimator's ``classes_`` (the ordinal order of this project's
            estimators, the sorted order for scikit-learn's). It must list every
            class of ``classes_``; extra classes get a colour and a tick too.
        plot_points : bool, default=True
            Draw the points of ``X`` over the regions.
        y : array-like of shape (n_samples,), default=None
            Classes of ``X``; the points are then filled with their class colour.
        cmap : str or matplotlib Colormap, default="viridis"
            Sequential colour map sampled once per class.
        eps : float, default=None
            Margin added around the range of ``X`` on each axis. ``None`` uses 5 %
            of each axis' range (0.5 for a constant feature).
        colorbar : bool, default=True
            Add a colour bar with one tick per class.
        xlabel, ylabel : str, default=None
            Axis labels; default to the DataFrame's column names or "x1", "x2".
        classes_order : array-like, default=None
            Deprecated old name of ``classes`` (a FutureWarning says so).
        **kwargs : dict
            Passed on to :meth:`matplotlib.axes.Axes.pcolormesh`.

        Returns
        -------
        display : RegionDisplay
            Drawn, with ``ax_`` and ``figure_`` set and the grid in ``xx0``,
            ``xx1`` and ``response``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If ``estimator`` is not fitted (a subclass of ValueError).
        ValueError
            If ``X`` is not 2-D with exactly 2 columns or holds NaN/inf; if
            ``grid_resolution`` is not an integer >= 2; if ``eps`` is negative;
            if ``estimator`` has no ``classes_`` or predicts a class outside
            ``classes``; if ``classes`` misses a class, holds one twice, or is
            given together with ``classes_order``; if ``y`` is malformed.

        Notes
        -----
        One ``predict`` call on ``grid_resolution**2`` points, then one on the
        segments between neighbouring cells two or more classes apart, which
        :func:`find_jumps` sorts into jumps and bands thinner than a cell (exact
        for tree models); the cost is that of the estimator's prediction plus
        O(grid_resolution**2) for the drawing.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from sklearn.neighbors import KNeighborsClassifier
        >>> from ensemble import RegionDisplay
        >>> from ensemble.datasets import make_synthetic_ii
        >>> X, y = make_synthetic_ii(200, random_state=0)
        >>> knn = KNeighborsClassifier().fit(X, y)
        >>> disp = RegionDisplay.from_estimator(knn, X, y=y, grid_resolution=30)
        >>> sorted(set(disp.classes[disp.response].ravel().tolist()))
        [1, 2, 3]
        >>> import matplotlib.pyplot as plt; plt.close("all")
        """
        classes = _renamed_classes(classes, classes_order)
        xx0, xx1, response, classes, points, ranker = grid_response(
            estimator, X, grid_resolution, eps, classes
        )
        columns = ranker.columns
        if columns is not None:
            default_labels = (str(columns[0]), str(columns[1]))
        else:
            default_labels = ("x1", "x2")
        display = cls(
            xx0=xx0,
            xx1=xx1,
            response=response,
            classes=classes,
            xlabel=default_labels[0] if xlabel is None else xlabel,
            ylabel=default_labels[1] if ylabel is None else ylabel,
            jumps=walk_grid(estimator, xx0, xx1, response, ranker),
        )
        return display.plot(
            ax=ax,
            cmap=cmap,
            X=points,
            y=y,
            plot_points=plot_points,
            colorbar=colorbar,
            **kwargs,
        )
