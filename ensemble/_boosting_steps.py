"""The certified step of boosting: leaf values in integer units, the bound's budget and the step cap (docs/design.md section 10).

Shared by the single-machine fit and the Dask fit, which must take the same steps.
"""

from __future__ import annotations

import bisect

from ensemble._kernels import compiled as _compiled
from ensemble._voting import UNIT_BITS

__all__ = ["_Budget", "_UNIT", "_add_leaf_values", "_step_cap"]


_UNIT = 1 << UNIT_BITS


@_compiled
def _add_leaf_values(total, rows, start, stop, left, value):
    """``total[rows of leaf n] += value[n]`` for every leaf (training rows, in the grower's order)."""
    for n in range(left.shape[0]):
        if left[n] == -1:
            v = value[n]
            for j in range(start[n], stop[n]):
                total[rows[j]] += v


class _Budget:
    """The sorted jumps J_t so far: how large a new tree's jump may be while the model stays certified.

    Invariant: the sum of the k largest jumps is at most the cut spacing g, with
    k = max(d_eff, n_boundaries). A new tree may then jump by
    ``g - (sum of the k - 1 largest)`` (docs/design.md section 10).
    """

    def __init__(self, spacing: int, d_eff: int):
        self.spacing, self.d_eff, self.jumps = spacing, max(d_eff, 1), []

    def top(self, k: int) -> int:
        return int(sum(self.jumps[-k:])) if k > 0 else 0

    def allowance(self, n_boundaries: int) -> int:
        """Largest jump of a new tree, or -1 when the trees so far already fill the bound."""
        k = max(self.d_eff, n_boundaries)
        if self.top(k) > self.spacing:
            return -1
        return self.spacing - self.top(k - 1)

    def add(self, jump: int) -> None:
        bisect.insort(self.jumps, int(jump))


def _step_cap(spacing: int, d_eff: int) -> int:
    """Largest jump J_t of one tree: ``g / d_eff``, so that d_eff trees with boundaries through one point move
    the sum by at most g (docs/design.md section 10)."""
    return max(spacing // max(d_eff, 1), 2)
