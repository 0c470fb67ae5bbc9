"""The data's resolution: each feature's distinct training values and the closed gaps between them.

docs/design.md section 13. Users move a feature to a neighbouring value they have seen,
by one unit on integer data, or by one float; none of these moves crosses a training
value. A classifier is *consistent at the data's resolution* when it is pointwise
consistent and, moving one feature anywhere inside one closed gap between consecutive
distinct training values of that feature (the others fixed), its class changes by at
most one. :class:`DataGrid` holds the values and answers the two questions every
certificate asks: which gap a threshold lies in, and which gaps a closed interval meets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["DataGrid", "grid_rule"]


@dataclass(frozen=True, eq=False)
class DataGrid:
    """Per feature, the sorted distinct finite training values, or ``None`` where no move is small.

    Gaps of feature f with values ``v_0 < ... < v_{m-1}`` are numbered 0..m: gap 0 is
    ``(-inf, v_0]``, gap k (1 <= k <= m-1) is ``[v_{k-1}, v_k]``, gap m is
    ``[v_{m-1}, +inf)``; a feature without any value has the single gap 0, the whole
    line. A training value belongs to the two gaps it ends. A feature whose entry is
    ``None`` (a categorical feature, a missing-value indicator) has no gaps: moving it
    is never a small move.

    Parameters
    ----------
    values : sequence of (ndarray or None)
        One entry per feature.

    Examples
    --------
    >>> import numpy as np
    >>> grid = DataGrid.from_data(np.array([[1.0, 0.0], [2.0, 1.0], [4.0, 0.0]]), categorical=[False, True])
    >>> grid.values[0].tolist(), grid.values[1] is None
    ([1.0, 2.0, 4.0], True)
    >>> grid.threshold_gaps(0, np.array([1.5, 2.0, 3.9])).tolist()  # a threshold t splits x <= t from x > t
    [1, 2, 2]
    >>> [g.tolist() for g in grid.interval_gaps(0, np.array([-np.inf, 2.0]), np.array([2.0, 3.0]))]
    [[0, 2], [2, 2]]
    """

    values: tuple

    @classmethod
    def from_data(cls, X: ArrayLike, *, categorical: ArrayLike | None = None,
                  sample_weight: ArrayLike | None = None) -> "DataGrid":
        """The grid of the rows of positive weight of ``X`` (NaN is no value; categorical features get ``None``).

        Examples
        --------
        >>> import numpy as np
        >>> DataGrid.from_data(np.array([[3.0], [np.nan], [1.0], [3.0]]), sample_weight=[1, 1, 0, 1]).values[0]
        array([3.])
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional; got shape {X.shape}")
        mask = np.zeros(X.shape[1], dtype=bool) if categorical is None else np.asarray(categorical, dtype=bool)
        if mask.shape != (X.shape[1],):
            raise ValueError(f"categorical must be a boolean mask of length {X.shape[1]}; got shape {mask.shape}")
        if sample_weight is not None:
            X = X[np.asarray(sample_weight, dtype=np.float64) > 0]
        values = []
        for f in range(X.shape[1]):
            if mask[f]:
                values.append(None)
                continue
            column = X[:, f]
            values.append(np.unique(column[np.isfinite(column)]))
        return cls(tuple(values))

    @classmethod
    def check(cls, grid: Any, n_features: int) -> "DataGrid | None":
        """``grid`` as a :class:`DataGrid` of ``n_features`` features (a sequence of arrays is accepted), or None.

        Raises
        ------
        ValueError
            Naming ``grid``: the wrong number of features, or values that are not
            finite and strictly increasing.
        """
        if grid is None:
            return None
        entries: Sequence = grid.values if isinstance(grid, DataGrid) else grid
        try:
            entries = list(entries)
        except TypeError:
            raise ValueError(f"grid must be a DataGrid or a sequence of arrays, one per feature; got {grid!r}") from None
        if len(entries) != n_features:
            raise ValueError(f"grid must have one entry per feature ({n_features}); got {len(entries)}")
        out = []
        for f, v in enumerate(entries):
            if v is None:
                out.append(None)
                continue
            v = np.asarray(v, dtype=np.float64).ravel()
            if not np.all(np.isfinite(v)) or np.any(np.diff(v) <= 0):
                raise ValueError(f"grid values of feature {f} must be finite and strictly increasing")
            out.append(v)
        return grid if isinstance(grid, DataGrid) else cls(tuple(out))

    def around(self, thresholds: Sequence) -> "DataGrid":
        """The values that bracket the given thresholds (per feature): all a certificate of them needs.

        For every threshold t of feature f, the two training values ending its gap
        (:meth:`threshold_gaps`) are kept. Thresholds in one gap of this grid are then
        in one gap of the smaller one, thresholds in different gaps in different gaps
        (a kept value lies between them), in the same order, and an interval whose
        ends are such thresholds (or infinite) meets the same gaps: so the gap loads
        and the neighbours at the data's resolution of partitions cut by these
        thresholds are the same on both grids, and a fitted model keeps only these.

        Examples
        --------
        >>> import numpy as np
        >>> grid = DataGrid((np.arange(10.0),))
        >>> grid.around([np.array([2.5, 7.0])]).values[0].tolist()
        [2.0, 3.0, 7.0, 8.0]
        """
        out = []
        for f, v in enumerate(self.values):
            if v is None:
                out.append(None)
                continue
            t = np.asarray(thresholds[f], dtype=np.float64)
            k = self.threshold_gaps(f, t[np.isfinite(t)])
            keep = np.unique(np.concatenate((k - 1, k)))
            out.append(v[keep[(keep >= 0) & (keep < v.shape[0])]])
        return DataGrid(tuple(out))

    @property
    def n_features(self) -> int:
        return len(self.values)

    def n_gaps(self, f: int) -> int:
        """Number of gaps of feature f (m + 1 for m values; 0 without a grid)."""
        v = self.values[f]
        return 0 if v is None else v.shape[0] + 1

    def threshold_gaps(self, f: int, thresholds: NDArray[np.float64]) -> NDArray[np.int64]:
        """The gap a move crosses a threshold t in: t in ``[v_{k-1}, v_k)`` lies in gap k.

        A move inside ``[v_{k-1}, v_k]`` crosses t exactly when ``v_{k-1} <= t < v_k``
        (``x <= t`` goes left).
        """
        return np.searchsorted(self.values[f], thresholds, side="right").astype(np.int64)

    def interval_gaps(self, f: int, lower: NDArray[np.float64], upper: NDArray[np.float64]) -> tuple:
        """First and last gap (inclusive) holding a point of each half-open interval ``(lower, upper]``.

        Gap k, ``[e_k, e_{k+1}]``, holds a point of it exactly when ``lower < e_{k+1}``
        and ``upper >= e_k``.
        """
        v = self.values[f]
        return (np.searchsorted(v, lower, side="right").astype(np.int64),
                np.searchsorted(v, upper, side="right").astype(np.int64))

    def gap_ends(self, f: int, first: NDArray[np.int64], last: NDArray[np.int64]) -> tuple:
        """The lower end of gap ``first`` and the upper end of gap ``last`` (infinite at the ends)."""
        v = self.values[f]
        low = np.concatenate(([-np.inf], v))
        high = np.concatenate((v, [np.inf]))
        return low[first], high[last]


def grid_rule(lo_a, hi_a, lo_b, hi_b, grid, f, categorical):
    """Whether boxes a and b are neighbours along feature f at the data's resolution, per pair.

    Both half-open boxes hold points of one line parallel to f inside one closed gap
    between consecutive training values of f (``grid``, a :class:`relabel.DataGrid`):
    their intervals on f hold points of a common gap, and their intervals on every
    other feature overlap with positive length (a line has one coordinate there,
    which both half-open intervals must hold). A move of x_f inside that gap can then
    go from one box to the other (docs/design.md section 13). Arrays of shape (P, d)
    for the bounds; ``categorical`` is accepted for the signature's sake (every
    other feature already asks an open overlap).
    """
    first_a, last_a = grid.interval_gaps(f, lo_a[:, f], hi_a[:, f])
    first_b, last_b = grid.interval_gaps(f, lo_b[:, f], hi_b[:, f])
    on_f = np.maximum(first_a, first_b) <= np.minimum(last_a, last_b)
    others = np.maximum(lo_a, lo_b) < np.minimum(hi_a, hi_b)
    others[:, f] = True
    return on_f & np.all(others, axis=1)
