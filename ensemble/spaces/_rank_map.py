"""The rank map a projected group space reads its continuous features through (docs/design.md section 13).

Training values ``v_0 < ... < v_{m-1}`` go to ``0, ..., m - 1``, linearly in between
and constant beyond both ends, so that every gap of the data's resolution is one unit
long, in floats too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["EPS", "RangeClip", "RankMap"]

#: Unit roundoff of float64 (half an ulp of 1).
EPS = 2.0**-53


@dataclass(frozen=True)
class RankMap:
    """The piecewise-linear map of each listed feature onto the ranks of its training values.

    ``q(x) = k + (x - v_k) / (v_{k+1} - v_k)`` for ``v_k <= x <= v_{k+1}``, ``0`` below
    ``v_0`` and ``m - 1`` above ``v_{m-1}``. In floats every operation is monotone, so
    ``q`` never decreases as ``x`` grows and maps the gap ``[v_k, v_{k+1}]`` into
    ``[k, k + 1]`` exactly; a training value maps to its rank exactly. Columns not
    listed pass unchanged.

    Attributes
    ----------
    features : ndarray of int
        The columns mapped.
    values : tuple of ndarray
        The sorted distinct training values of every listed column.

    Examples
    --------
    >>> import numpy as np
    >>> ranks = RankMap(np.array([0]), (np.array([1.0, 2.0, 10.0]),))
    >>> ranks.apply(np.array([[0.0, 5.0], [1.5, 5.0], [6.0, 5.0], [99.0, 5.0]])).tolist()
    [[0.0, 5.0], [0.5, 5.0], [1.5, 5.0], [2.0, 5.0]]
    """

    features: NDArray[np.intp]
    values: tuple

    @classmethod
    def from_grid(cls, grid, features: NDArray[np.intp]) -> "RankMap":
        """The map of ``features`` (those with values in ``grid``, a :class:`relabel.DataGrid`)."""
        kept = [int(f) for f in features if grid.values[f] is not None]
        return cls(np.asarray(kept, dtype=np.intp), tuple(np.asarray(grid.values[f], dtype=np.float64) for f in kept))

    def sizes(self) -> NDArray[np.float64]:
        """Per listed feature, its number of values ``m`` (the largest rank is ``m - 1``)."""
        return np.array([v.shape[0] for v in self.values], dtype=np.float64)

    def size_by_feature(self) -> dict:
        """``{feature: m}``: every listed feature's number of values."""
        return dict(zip(self.features.tolist(), self.sizes().tolist(), strict=True))

    def rank_of(self, feature: int) -> int | None:
        """Position of ``feature`` among the listed ones, or None."""
        hit = np.flatnonzero(self.features == feature)
        return int(hit[0]) if hit.shape[0] else None

    def apply(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``X`` with every listed column replaced by its ranks (a copy; NaN stays NaN)."""
        out = np.array(X, dtype=np.float64, copy=True)
        for f, v in zip(self.features, self.values, strict=True):
            out[:, f] = _ranks(X[:, f], v)
        return out

    def float_reach(self) -> NDArray[np.float64]:
        """Per listed feature, a bound on how far one float step of ``x`` moves its rank (at most 1).

        Inside the gap ``[v_k, v_{k+1}]`` one step moves ``x`` by an ulp of the larger end,
        so the rank by that over the gap's width, plus the rounding of ``k + r`` (an ulp of
        ``m``) at both points; a step never leaves one gap.
        """
        out = np.zeros(self.features.shape[0])
        for i, v in enumerate(self.values):
            if v.shape[0] > 1:
                ulp = np.spacing(np.maximum(np.abs(v[:-1]), np.abs(v[1:])))
                ratio = float(np.max(ulp / (v[1:] * 0.5 - v[:-1] * 0.5)))  # halves: no overflow
                out[i] = min(1.0, ratio * (1 + 8 * EPS) + 4 * float(np.spacing(float(v.shape[0]))))
        return out

    def window_reach(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per listed feature, the largest rank change over a move of at most ``r[i]`` (a bound, in floats).

        ``q`` is piecewise linear and non-decreasing, so ``q(a + r) - q(a)`` is largest
        with ``a`` or ``a + r`` at a training value: the largest of ``q(v_k + r) - k`` and
        ``k - q(v_k - r)``, plus the rounding of both evaluations; never above ``m - 1``.

        Examples
        --------
        >>> import numpy as np
        >>> ranks = RankMap(np.array([0]), (np.array([0.0, 1.0, 1.5, 10.0]),))
        >>> [round(float(v), 6) for v in ranks.window_reach(np.array([0.5]))]
        [1.0]
        """
        out = np.zeros(self.features.shape[0])
        one_float = self.float_reach()
        for i, v in enumerate(self.values):
            m = v.shape[0]
            if m < 2 or r[i] <= 0:
                continue
            k = np.arange(m, dtype=np.float64)
            with np.errstate(over="ignore"):
                up = _ranks(v + r[i], v) - k
                down = k - _ranks(v - r[i], v)
            # The rounding of v +- r (one float step of x, at most) and of both ranks (an ulp of m each).
            slack = 2 * one_float[i] + 4 * float(np.spacing(float(m)))
            out[i] = min(float(m - 1), float(max(np.max(up), np.max(down))) + slack)
        return out

    def lipschitz(self) -> NDArray[np.float64]:
        """Per listed feature, a bound on ``|dq / dx|``: one over its narrowest gap (0 with one value)."""
        out = np.zeros(self.features.shape[0])
        for i, v in enumerate(self.values):
            if v.shape[0] > 1:
                # Halved, so that a gap from -1e308 to 1e308 does not overflow.
                out[i] = 0.5 / np.min(np.diff(v * 0.5)) * (1 + 4 * EPS)
        return out


def _ranks(column: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
    m = v.shape[0]
    if m <= 1:
        return np.where(np.isnan(column), np.nan, 0.0)
    k = np.clip(np.searchsorted(v, column, side="right") - 1, 0, m - 2)
    lo, hi = v[k], v[k + 1]
    with np.errstate(over="ignore", invalid="ignore"):
        width = hi - lo
        offset = column - lo
        # Past the float range the halves keep the order (and halving is monotone).
        wide = ~np.isfinite(width) | ~np.isfinite(offset)
        width = np.where(wide, hi * 0.5 - lo * 0.5, width)
        offset = np.where(wide, column * 0.5 - lo * 0.5, offset)
        inside = k + offset / width
    out = np.where(column <= v[0], 0.0, np.where(column >= v[-1], float(m - 1), inside))
    return np.where(np.isnan(column), np.nan, out)


@dataclass(frozen=True)
class RangeClip:
    """Each listed feature clipped to its training range ``[low, high]``; the others pass unchanged.

    The certified forest's monotone index reads its features through it
    (docs/design.md section 9): clipping is monotone in floats and moves no point of
    the range, and it bounds what one float step of ``x`` does to the index everywhere
    (:meth:`float_step`). A space's resolution is unchanged by it (a move of r moves the
    clipped value by at most r): :meth:`window_reach`.

    Examples
    --------
    >>> import numpy as np
    >>> clip = RangeClip(np.array([0]), np.array([1.0]), np.array([4.0]))
    >>> clip.apply(np.array([[-5.0, 7.0], [2.5, 7.0], [1e300, 7.0]])).tolist()
    [[1.0, 7.0], [2.5, 7.0], [4.0, 7.0]]
    """

    features: NDArray[np.intp]
    low: NDArray[np.float64]
    high: NDArray[np.float64]

    def apply(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``X`` with every listed column clipped (a copy; NaN stays NaN)."""
        out = np.array(X, dtype=np.float64, copy=True)
        out[:, self.features] = np.clip(out[:, self.features], self.low, self.high)
        return out

    def float_step(self) -> NDArray[np.float64]:
        """Per listed feature, the largest distance one float step of ``x`` moves its clipped value."""
        return np.spacing(np.maximum(np.abs(self.low), np.abs(self.high)))

    def window_reach(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per listed feature, the largest change of the clipped value over a move of at most ``r[i]``."""
        return np.minimum(np.asarray(r, dtype=np.float64), self.high - self.low)

