"""The fused partition of one OTreeBagger group drawn region by region, with its contacts."""

from __future__ import annotations

import logging
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_array, check_is_fitted

from ensemble.plots._display import _discrete_colormap, _finish_axes
from trees.utils import check_classes

logger = logging.getLogger("ensemble.plots._display")

__all__ = ["PartitionDisplay"]


def _partition_bounds(lower: NDArray[np.float64], upper: NDArray[np.float64], X: Any) -> NDArray:
    """A drawing window around every finite threshold (and the points of ``X``, if given)."""
    lows, highs = [], []
    for axis in range(2):
        values = np.concatenate([lower[:, axis], upper[:, axis]])
        values = values[np.isfinite(values)]
        if X is not None:
            values = np.concatenate([values, X[:, axis]])
        if values.size == 0:
            values = np.array([0.0])
        lo, hi = values.min(), values.max()
        # The window must lie strictly outside every threshold so that clipped boxes keep
        # all their contacts; 5 % of the span (or 0.5 when degenerate) does that.
        margin = 0.05 * (hi - lo) if hi > lo else 0.5
        lows.append(lo - margin)
        highs.append(hi + margin)
    return np.array([lows[0], lows[1], highs[0], highs[1]])


class PartitionDisplay:
    """A fused 2D partition drawn as shapely boxes coloured by label, with its adjacency graph.

    Build it with :meth:`from_partition` (any box partition and region labels)
    or :meth:`from_estimator` (one group of a fitted :class:`ensemble.OTreeBagger`).
    Regions are filled with the colour of their class on the same discrete
    ordinal scale as :class:`RegionDisplay`. Adjacent regions are joined by a
    segment between their box centres: solid for a face contact, dotted for a
    corner contact, and red for a violation of ordinal consistency (labels more
    than one class apart), so a consistent labelling shows no red segment.

    Parameters
    ----------
    polygons : ndarray of shape (n_regions,), object
        One ``shapely`` box per region, clipped to ``bounds`` (empty if outside).
    labels : ndarray of int of shape (n_regions,)
        Class rank (index into ``classes``) of each region.
    classes : ndarray of shape (n_classes,)
        The classes in ordinal order.
    edges : ndarray of shape (n_edges, 2)
        Adjacent region pairs.
    is_face : ndarray of bool of shape (n_edges,)
        True for a face contact, False for a corner contact.
    bounds : ndarray of shape (4,)
        The window ``(xmin, ymin, xmax, ymax)``.

    Attributes
    ----------
    violations : ndarray of shape (n_violations, 2)
        The edges whose labels differ by more than one.
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    regions_ : matplotlib PolyCollection
        The filled boxes.
    edges_ : matplotlib LineCollection or None
        The adjacency segments (None when ``show_edges=False``).
    colorbar_ : matplotlib Colorbar or None
        Colour bar with one tick per class.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from ensemble import PartitionDisplay
    >>> inf = np.inf
    >>> part = SimpleNamespace(  # four quadrants around (0, 0)
    ...     lower=np.array([[-inf, -inf], [0, -inf], [-inf, 0], [0, 0]]),
    ...     upper=np.array([[0, 0], [inf, 0], [0, inf], [inf, inf]]))
    >>> disp = PartitionDisplay.from_partition(part, [0, 1, 1, 2], classes=["lo", "mid", "hi"])
    >>> len(disp.edges), disp.violations.tolist()  # 4 faces, 2 corners; 0-3 is a corner jump
    (6, [[0, 3]])
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """

    def __init__(
        self,
        *,
        polygons: NDArray[np.object_],
        labels: NDArray[np.intp],
        classes: ArrayLike,
        edges: NDArray[np.intp],
        is_face: NDArray[np.bool_],
        bounds: NDArray[np.float64],
    ) -> None:
        self.polygons = polygons
        self.labels = labels
        self.classes = np.asarray(classes)
        self.edges = edges
        self.is_face = is_face
        self.bounds = bounds
        jumps = np.abs(labels[edges[:, 0]] - labels[edges[:, 1]]) if len(edges) else np.array([])
        self.violations = edges[jumps > 1] if len(edges) else edges

    def plot(
        self,
        *,
        ax: Any = None,
        cmap: Any = "viridis",
        show_edges: bool = True,
        colorbar: bool = True,
        xlabel: str | None = "x1",
        ylabel: str | None = "x2",
    ) -> "PartitionDisplay":
        """Draw the boxes, the adjacency segments and a colour bar labelled by class.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if None.
        cmap : str or matplotlib Colormap, default="viridis"
            Sequential map sampled once per class.
        show_edges : bool, default=True
            Draw the adjacency graph (face solid, corner dotted, violation red).
        colorbar : bool, default=True
            Add a colour bar with one tick per class.
        xlabel, ylabel : str or None, default="x1", "x2"
            Axis labels.

        Returns
        -------
        self : PartitionDisplay
            With ``ax_``, ``figure_``, ``regions_``, ``edges_`` and ``colorbar_`` set.

        Raises
        ------
        ValueError
            If ``cmap`` is unknown.

        Notes
        -----
        O(n_regions + n_edges) drawing primitives, in two collections.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np, shapely
        >>> from ensemble import PartitionDisplay
        >>> disp = PartitionDisplay(
        ...     polygons=np.array([shapely.box(0, 0, 1, 1)]), labels=np.array([0]),
        ...     classes=[1], bounds=np.array([0, 0, 1, 1]),
        ...     edges=np.empty((0, 2), int), is_face=np.empty(0, bool)).plot()
        >>> len(disp.regions_.get_paths())
        1
        >>> import matplotlib.pyplot as plt; plt.close("all")
        """
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection, PolyCollection

        n_classes = self.classes.shape[0]
        listed, norm = _discrete_colormap(cmap, n_classes)
        if ax is None:
            _, ax = plt.subplots()
        drawn = np.array([not p.is_empty for p in self.polygons], dtype=bool)
        vertices = [np.asarray(p.exterior.coords) for p in self.polygons[drawn]]
        self.regions_ = PolyCollection(
            vertices, cmap=listed, norm=norm, edgecolors="white", linewidths=0.4
        )
        self.regions_.set_array(self.labels[drawn])
        ax.add_collection(self.regions_)
        self.edges_ = None
        if show_edges and len(self.edges):
            centres = np.array(
                [
                    [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2] if not p.is_empty else [np.nan, np.nan]
                    for p, b in ((p, p.bounds) for p in self.polygons)
                ]
            )
            segments = centres[self.edges]
            jumps = np.abs(self.labels[self.edges[:, 0]] - self.labels[self.edges[:, 1]])
            bad = jumps > 1
            colors = np.where(bad[:, None], [[0.85, 0.1, 0.1, 1.0]], [[0.2, 0.2, 0.2, 0.8]])
            styles = [
                "solid" if face or wrong else "dotted" for face, wrong in zip(self.is_face, bad, strict=True)
            ]
            widths = np.where(bad, 1.6, 0.6)
            self.edges_ = LineCollection(
                segments, colors=colors, linestyles=styles, linewidths=widths
            )
            ax.add_collection(self.edges_)
        ax.set_xlim(self.bounds[0], self.bounds[2])
        ax.set_ylim(self.bounds[1], self.bounds[3])
        self.colorbar_ = _finish_axes(ax, self.regions_, self.classes, xlabel, ylabel, colorbar,
                                      "region label")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_partition(
        cls,
        partition: Any,
        labels: ArrayLike,
        *,
        classes: ArrayLike | None = None,
        edges: Any = None,
        contact: str = "closure",
        bounds: ArrayLike | None = None,
        X: ArrayLike | None = None,
        ax: Any = None,
        cmap: Any = "viridis",
        show_edges: bool = True,
        colorbar: bool = True,
    ) -> "PartitionDisplay":
        """Draw a 2D box partition with region labels and its adjacency graph.

        Parameters
        ----------
        partition : relabel.FusedPartition or similar
            Anything with ``lower`` and ``upper`` arrays of shape (n_regions, 2)
            describing disjoint half-open boxes.
        labels : array-like of int of shape (n_regions,)
            Class rank of each region, ``0 .. n_classes - 1`` (the labels of
            :func:`relabel.solve`).
        classes : array-like, default=None
            Class names in ordinal order for the colour bar; ``None`` names the
            ranks 1..K as in the paper, with ``K = max(labels) + 1``.
        edges : networkx.Graph, array-like of shape (n_edges, 2) or None
            The adjacency graph. A graph's ``contact`` edge attribute tells face
            from corner contacts; an array is taken as given, with contact kinds
            recomputed. ``None`` computes :func:`relabel.adjacency_edges`.
        contact : {"closure", "face"}, default="closure"
            Adjacency kind when ``edges`` is None.
        bounds : array-like of 4 floats, default=None
            Window ``(xmin, ymin, xmax, ymax)``; ``None`` takes 5 % around every
            finite threshold and the points of ``X``.
        X : array-like of shape (n_samples, 2), default=None
            Data whose range the default window must include.
        ax, cmap, show_edges, colorbar
            As in :meth:`plot`.

        Returns
        -------
        display : PartitionDisplay
            Drawn, with ``violations`` listing the inconsistent edges.

        Raises
        ------
        ValueError
            If the partition is not 2D, ``labels`` has the wrong length or holds
            ranks outside ``classes``, ``edges`` refers to unknown regions, or
            ``bounds`` is malformed.

        Notes
        -----
        Boxes come from :func:`relabel.region_polygons` (shapely). Computing the
        adjacency is near-linear in the number of regions (docs/design.md section 4);
        drawing is O(n_regions + n_edges).

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from types import SimpleNamespace
        >>> from ensemble import PartitionDisplay
        >>> part = SimpleNamespace(lower=np.array([[-np.inf, -np.inf], [0.0, -np.inf]]),
        ...                        upper=np.array([[0.0, np.inf], [np.inf, np.inf]]))
        >>> disp = PartitionDisplay.from_partition(part, [0, 1], bounds=(-1, -1, 1, 1))
        >>> [p.bounds for p in disp.polygons], disp.classes.tolist()
        ([(-1.0, -1.0, 0.0, 1.0), (0.0, -1.0, 1.0, 1.0)], [1, 2])
        >>> import matplotlib.pyplot as plt; plt.close("all")
        """
        import relabel

        lower = np.asarray(getattr(partition, "lower", None), dtype=np.float64)
        upper = np.asarray(getattr(partition, "upper", None), dtype=np.float64)
        if lower.ndim != 2 or lower.shape[1] != 2 or upper.shape != lower.shape:
            raise ValueError(
                "partition must have lower and upper bounds of shape (n_regions, 2); got "
                f"{lower.shape}"
            )
        n_regions = lower.shape[0]
        region_labels = np.asarray(labels)
        if region_labels.shape != (n_regions,) or region_labels.dtype.kind not in "iu":
            raise ValueError(
                f"labels must be {n_regions} integer class ranks (one per region), got "
                f"shape {region_labels.shape} and dtype {region_labels.dtype}"
            )
        region_labels = region_labels.astype(np.intp)
        if classes is None:
            n_classes = int(region_labels.max()) + 1 if n_regions else 1
            class_names = np.arange(1, n_classes + 1)
        else:
            class_names = check_classes(classes, "classes")
        if n_regions and (region_labels.min() < 0 or region_labels.max() >= len(class_names)):
            raise ValueError(
                f"labels must be ranks in 0..{len(class_names) - 1} (one per class); got "
                f"values in {region_labels.min()}..{region_labels.max()}"
            )

        edge_pairs, is_face = cls._edges(partition, edges, contact, n_regions)
        points = None if X is None else check_array(X, dtype=np.float64, input_name="X")
        if bounds is None:
            window = _partition_bounds(lower, upper, points)
        else:
            window = np.asarray(bounds, dtype=np.float64)
            if window.shape != (4,) or not np.isfinite(window).all() or not (
                window[0] < window[2] and window[1] < window[3]
            ):
                raise ValueError(
                    "bounds must be four finite numbers (xmin, ymin, xmax, ymax) with "
                    f"xmin < xmax and ymin < ymax, got {bounds!r}"
                )
        polygons = relabel.region_polygons(partition, tuple(window))
        display = cls(
            polygons=polygons,
            labels=region_labels,
            classes=class_names,
            edges=edge_pairs,
            is_face=is_face,
            bounds=window,
        )
        return display.plot(ax=ax, cmap=cmap, show_edges=show_edges, colorbar=colorbar)

    @staticmethod
    def _edges(partition: Any, edges: Any, contact: str, n_regions: int):
        """Edge pairs and face flags from a graph, an array or the partition itself."""
        import relabel

        if edges is None:
            found = relabel.adjacency_edges(partition, contact=contact)
            return np.asarray(found.edges, dtype=np.intp).reshape(-1, 2), np.asarray(
                found.is_face, dtype=bool
            )
        if hasattr(edges, "edges") and hasattr(edges, "nodes"):
            data = list(edges.edges(data="contact"))
            pairs = np.array([(u, v) for u, v, _ in data], dtype=np.intp).reshape(-1, 2)
            is_face = np.array([kind != "corner" for _, _, kind in data], dtype=bool)
        else:
            pairs = np.asarray(edges)
            if pairs.size == 0:
                pairs = pairs.reshape(0, 2)
            if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
                raise ValueError(
                    f"edges must be a networkx graph or integer pairs of shape (n_edges, 2), "
                    f"got shape {pairs.shape}"
                )
            pairs = pairs.astype(np.intp)
            # Contact kinds are not in a bare array: read them off the full adjacency.
            full = relabel.adjacency_edges(partition, contact="closure")
            kind = {
                (int(a), int(b)): bool(f)
                for (a, b), f in zip(np.asarray(full.edges), np.asarray(full.is_face), strict=True)
            }
            is_face = np.array(
                [kind.get((min(a, b), max(a, b)), True) for a, b in pairs.tolist()], dtype=bool
            )
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n_regions):
            raise ValueError(
                f"edges refer to regions outside 0..{n_regions - 1}"
            )
        return pairs, is_face

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: ArrayLike | None = None,
        *,
        group: int = 0,
        ax: Any = None,
        cmap: Any = "viridis",
        show_edges: bool = True,
        colorbar: bool = True,
        bounds: ArrayLike | None = None,
    ) -> "PartitionDisplay":
        """Draw the relabelled fused partition of one group of a fitted OTreeBagger.

        Parameters
        ----------
        estimator : fitted ensemble.OTreeBagger
            Fitted on two features with relabelling on.
        X : array-like of shape (n_samples, 2), default=None
            Data whose range the window must include (e.g. the training set).
        group : int, default=0
            Which group of ``estimator.groups_`` to draw.
        ax, cmap, show_edges, colorbar, bounds
            As in :meth:`from_partition`.

        Returns
        -------
        display : PartitionDisplay
            Drawn; ``violations`` is empty for a consistent group.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If ``estimator`` is not fitted.
        ValueError
            If the estimator has no relabelled groups, ``group`` is out of range,
            or the data are not 2D.

        Notes
        -----
        Reads the group's ``partition``, ``labels`` and ``edges`` and the
        estimator's ``classes_`` and ``contact``; contact kinds are recomputed from
        the partition. Cost as in :meth:`from_partition`.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from ensemble import OTreeBagger
        >>> from ensemble import PartitionDisplay
        >>> from ensemble.datasets import make_synthetic_i
        >>> X, y = make_synthetic_i(200, random_state=0)
        >>> model = OTreeBagger(n_estimators=3, group_size=3, random_state=0).fit(X, y)
        >>> PartitionDisplay.from_estimator(model, X).violations.size
        0
        >>> import matplotlib.pyplot as plt; plt.close("all")
        """
        check_is_fitted(estimator)
        groups = getattr(estimator, "groups_", None)
        if not groups:
            raise ValueError(
                "estimator must be a fitted OTreeBagger with groups_, got "
                f"{type(estimator).__name__}"
            )
        if isinstance(group, bool) or not isinstance(group, numbers.Integral) or not (
            -len(groups) <= group < len(groups)
        ):
            raise ValueError(f"group must be an integer in 0..{len(groups) - 1}, got {group!r}")
        chosen = groups[group]
        if getattr(chosen, "partition", None) is None:
            raise ValueError("this estimator was fitted without relabelling: no partition to draw")
        return cls.from_partition(
            chosen.partition,
            chosen.labels,
            classes=estimator.classes_,
            edges=getattr(chosen, "edges", None),
            contact=_fitted_contact(estimator),
            bounds=bounds,
            X=X,
            ax=ax,
            cmap=cmap,
            show_edges=show_edges,
            colorbar=colorbar,
        )


def _fitted_contact(estimator: Any) -> str:
    """The contact an OTreeBagger was fitted with (a model saved before ``relabel_params`` keeps it in ``contact``)."""
    settings = getattr(estimator, "relabel_params_", None)
    return settings["contact"] if settings else getattr(estimator, "contact", "closure")
