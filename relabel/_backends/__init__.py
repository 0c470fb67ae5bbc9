"""Solver backends: the only modules that import PuLP and OR-Tools (lazily).

Each backend module exposes ``solve(problem, *, formulation, time_limit, threads,
verbose) -> BackendResult``; :data:`relabel.SOLVERS` maps the public names to them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray


class BackendResult(NamedTuple):
    """What a backend hands back to :func:`relabel.solve`.

    Attributes
    ----------
    labels : ndarray of shape (N,) or None
        Class indices found, or None when the solver found no labelling.
    status : str
        A :class:`relabel.SolverStatus` member name.
    bound : float or None
        Proven lower bound on the optimum (problem units), when known.
    message : str
        The solver's own status text.
    """

    labels: NDArray[np.intp] | None
    status: str
    bound: float | None
    message: str


from relabel._backends import cbc, cpsat, graphcut  # noqa: E402

__all__ = ["BackendResult", "cbc", "cpsat", "graphcut"]
