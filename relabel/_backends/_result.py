"""What every solver backend returns: the contract of :data:`relabel.SOLVERS`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["BackendResult"]


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

    Examples
    --------
    >>> from relabel._backends import BackendResult
    >>> BackendResult(None, "ERROR", None, "no model").status
    'ERROR'
    """

    labels: NDArray[np.intp] | None
    status: str
    bound: float | None
    message: str
