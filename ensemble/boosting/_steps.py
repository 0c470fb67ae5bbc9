"""The certified step of boosting: leaf values in integer units, the bound's budget and the step cap (docs/design.md section 10).

Shared by the single-machine fit and the Dask fit, which must take the same steps.
"""

from __future__ import annotations

import bisect

import numpy as np

from ensemble.base._kernels import compiled as _compiled
from ensemble.base._voting import UNIT_BITS

__all__ = ["PLANNED_MIN", "_Budget", "_UNIT", "_add_leaf_values", "_next_tree"]


_UNIT = 1 << UNIT_BITS


@_compiled
def _add_leaf_values(total, rows, start, stop, left, value):
    """``total[rows of leaf n] += value[n]`` for every leaf (training rows, in the grower's order)."""
    for n in range(left.shape[0]):
        if left[n] == -1:
            v = value[n]
            for j in range(start[n], stop[n]):
                total[rows[j]] += v


#: The fewest features a tree's step leaves room for (docs/design.md section 10): steps are sized
#: for max(PLANNED_MIN, twice the features split so far) features, at most d_eff.
PLANNED_MIN = 32


class _Budget:
    """The sorted jumps J_t so far: how large a new tree's jump may be while the model stays certified.

    Invariant (Theorem 10.1): the sum of the n largest jumps is at most the cut
    spacing g, n the boundaries the trees can put through one point (one per feature
    split so far, more where float64 forced a shared threshold). A new tree that
    brings the count to n may jump by ``g - (sum of the n - 1 largest)``
    (:meth:`allowance`); its jump is capped so that room stays for features not split
    yet (:meth:`cap`), and features not split yet are closed to the trees once a
    tree splitting one could no longer take a full step (:meth:`closed_to_new`).
    """

    def __init__(self, spacing: int, d_eff: int):
        self.spacing, self.d_eff, self.jumps = spacing, max(d_eff, 1), []

    def top(self, k: int) -> int:
        return int(sum(self.jumps[-k:])) if k > 0 else 0

    def allowance(self, n_boundaries: int) -> int:
        """Largest jump of a new tree that brings the boundaries to ``n_boundaries``, or -1 when the
        jumps so far already break the bound at that count."""
        k = max(n_boundaries, 1)
        if self.top(k) > self.spacing:
            return -1
        return self.spacing - self.top(k - 1)

    def planned(self, n_boundaries: int) -> int:
        """The features a tree's step leaves room for: twice those split, at least PLANNED_MIN, at most d_eff."""
        return min(self.d_eff, max(PLANNED_MIN, 2 * n_boundaries))

    def open_cap(self, n_boundaries: int) -> int:
        """Largest jump of the next tree while features not split yet may still enter: ``g / planned``,
        so that trees of this size on ``planned`` features through one point move the sum by at most g."""
        return max(self.spacing // self.planned(n_boundaries), 2)

    def cap(self, n_boundaries: int) -> int:
        """Largest jump J_t of the next tree (docs/design.md section 10): :meth:`open_cap`, and once the
        features not split yet are closed, the equal share ``g / n`` of the n boundaries the model keeps
        (the room left for new features is no longer needed)."""
        if n_boundaries > 0 and self.closed_to_new(n_boundaries):
            return max(self.spacing // n_boundaries, 2)
        return self.open_cap(n_boundaries)

    def closed_to_new(self, n_boundaries: int) -> bool:
        """Whether a tree splitting a feature not split yet could no longer take a full step."""
        return self.allowance(n_boundaries + 1) < self.open_cap(n_boundaries + 1)

    def admits(self, n_boundaries: int) -> bool:
        """Whether a tree that brings the boundaries to ``n_boundaries`` can still be added (a jump of 2 units)."""
        return self.allowance(n_boundaries) >= 2

    def add(self, jump: int) -> None:
        bisect.insort(self.jumps, int(jump))


def _next_tree(grow, budget: _Budget, book, bins, countable, countable_bins, load, spacing: int):
    """The next tree, grown by ``grow(blocked)`` within the budget, and its jump cap.

    Closed to it: the gaps whose load has less room than the cap (consistency at the
    data's resolution), and every cut of a countable feature no tree has split yet once
    the budget has no full step left for one more feature. A tree that still splits more
    features new to the model than the budget takes is grown again with those closed
    (docs/design.md section 10). The one rule of the single-machine and the Dask fit,
    which differ only in ``grow``.
    """
    n = int(book.multiplicity.sum())
    cap = budget.cap(n)
    blocked = countable_bins & (load.max(axis=0) > spacing - cap) if load is not None else None
    unsplit = np.broadcast_to((countable & (book.multiplicity == 0))[:, None], countable_bins.shape)
    if budget.closed_to_new(n):
        blocked = unsplit.copy() if blocked is None else blocked | unsplit
    grown = grow(blocked)
    if grown.left.shape[0] > 1 and not budget.admits(_boundaries_after(grown, bins, book, countable)):
        grown = grow(unsplit.copy() if blocked is None else blocked | unsplit)
    return cap, grown


def _boundaries_after(grown, bins, book, countable) -> int:
    """The boundaries the trees would have with ``grown`` added (before its thresholds are placed)."""
    inner = grown.left >= 0
    f, b = grown.feature[inner], grown.bin[inner]
    real = (b != bins.n_bins[f] - 1) & countable[f]  # the missing-only split and categories: no boundary
    new = np.unique(f[real][book.multiplicity[f[real]] == 0])
    return int(book.multiplicity.sum()) + int(new.shape[0])
