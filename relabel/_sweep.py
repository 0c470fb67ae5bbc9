"""The sort-and-sweep join of intervals on hyperplanes: the adjacency search's fallback where boxes have no guillotine hierarchy."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__: list[str] = []


def _ranks(values: NDArray) -> tuple[NDArray[np.int64], int]:
    """Dense ranks of float values (exact equality), and the number of distinct values."""
    unique, inverse = np.unique(values, return_inverse=True)
    return inverse.astype(np.int64).ravel(), unique.shape[0]


def _expand(starts: NDArray[np.int64], stops: NDArray[np.int64]):
    """All (i, j) with starts[i] <= j < stops[i], vectorised."""
    counts = np.maximum(stops - starts, 0)
    total = int(counts.sum())
    owner = np.repeat(np.arange(starts.shape[0]), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.repeat(starts, counts) + offsets


def _hyperplane_join(t_a, lo_a, hi_a, t_b, lo_b, hi_b, count_only=False):
    """Pairs (i, j) with ``t_a[i] == t_b[j]`` and closed intervals [lo, hi] overlapping.

    Either b starts inside a (``lo_a <= lo_b <= hi_a``) or a starts strictly inside b
    (``lo_b < lo_a <= hi_b``); the two cases are disjoint and cover every overlap, so
    each pair is produced once. Values are replaced by dense ranks and combined with
    the group rank into one int64 key, so both cases are binary searches.
    """
    group, _ = _ranks(np.concatenate((t_a, t_b)))
    values, n_values = _ranks(np.concatenate((lo_a, hi_a, lo_b, hi_b)))
    na, nb = t_a.shape[0], t_b.shape[0]
    ga, gb = group[:na], group[na:]
    rlo_a, rhi_a = values[:na], values[na : 2 * na]
    rlo_b, rhi_b = values[2 * na : 2 * na + nb], values[2 * na + nb :]
    radix = np.int64(n_values + 1)

    key_b = gb * radix + rlo_b
    order_b = np.argsort(key_b, kind="stable")
    sorted_b = key_b[order_b]
    start1 = np.searchsorted(sorted_b, ga * radix + rlo_a, side="left")
    stop1 = np.searchsorted(sorted_b, ga * radix + rhi_a, side="right")

    key_a = ga * radix + rlo_a
    order_a = np.argsort(key_a, kind="stable")
    sorted_a = key_a[order_a]
    start2 = np.searchsorted(sorted_a, gb * radix + rlo_b, side="right")
    stop2 = np.searchsorted(sorted_a, gb * radix + rhi_b, side="right")
    if count_only:
        return int((stop1 - start1).sum() + (stop2 - start2).sum())

    i1, pos1 = _expand(start1, stop1)
    j2, pos2 = _expand(start2, stop2)
    ia = np.concatenate((i1, order_a[pos2]))
    jb = np.concatenate((order_b[pos1], j2))
    return ia, jb
