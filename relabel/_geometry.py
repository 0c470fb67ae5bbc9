"""2D regions as shapely boxes: for drawing, and as an independent adjacency oracle."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import shapely
from numpy.typing import NDArray

__all__ = ["region_polygons"]


def region_polygons(partition: Any, bounds: Sequence[float]) -> NDArray[np.object_]:
    """The regions of a 2D partition as shapely boxes clipped to a window.

    Parameters
    ----------
    partition : FusedPartition
        A partition with ``n_features == 2`` (``lower``, ``upper`` of shape (N, 2)).
    bounds : sequence of 4 floats
        The window ``(xmin, ymin, xmax, ymax)``; infinite region bounds are clipped
        to it. Choose it strictly around every finite threshold so that clipping keeps
        every contact (then the closed boxes intersect exactly when the regions are
        adjacent).

    Returns
    -------
    ndarray of shape (N,), object
        One ``shapely.Polygon`` per region (empty when the region misses the window).

    Raises
    ------
    ValueError
        If the partition is not 2D or the window is not four finite numbers with
        ``xmin < xmax`` and ``ymin < ymax``.

    Notes
    -----
    One vectorised ``shapely.box`` call: O(N).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from relabel import region_polygons
    >>> part = SimpleNamespace(lower=np.array([[-np.inf, -np.inf], [0.0, -np.inf]]),
    ...                        upper=np.array([[0.0, np.inf], [np.inf, np.inf]]))
    >>> boxes = region_polygons(part, (-1, -1, 1, 1))
    >>> [b.bounds for b in boxes]
    [(-1.0, -1.0, 0.0, 1.0), (0.0, -1.0, 1.0, 1.0)]
    >>> bool(boxes[0].intersects(boxes[1]))
    True
    """
    lower = np.asarray(partition.lower, dtype=np.float64)
    upper = np.asarray(partition.upper, dtype=np.float64)
    if lower.ndim != 2 or lower.shape[1] != 2 or upper.shape != lower.shape:
        raise ValueError(f"region_polygons needs a 2D partition (n_features == 2); got shape {lower.shape}")
    window = np.asarray(bounds, dtype=np.float64)
    if window.shape != (4,) or not np.all(np.isfinite(window)) or not (
        window[0] < window[2] and window[1] < window[3]
    ):
        raise ValueError(f"bounds must be four finite numbers (xmin, ymin, xmax, ymax) with min < max; got {bounds!r}")
    lo = np.maximum(lower, window[:2])
    hi = np.minimum(upper, window[2:])
    inside = np.all(lo < hi, axis=1)
    polygons = np.empty(lower.shape[0], dtype=object)
    polygons[:] = shapely.Polygon()
    if inside.any():
        polygons[inside] = shapely.box(lo[inside, 0], lo[inside, 1], hi[inside, 0], hi[inside, 1])
    return polygons
