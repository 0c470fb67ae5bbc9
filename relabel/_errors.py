"""Exceptions and warnings of the relabel package (a small networkx-style hierarchy)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "RelabelError",
    "RelabelInfeasibleError",
    "RelabelTimeLimitError",
    "RelabelWarning",
    "SolverNotInstalledError",
    "TooManyRegionsError",
]


class RelabelError(RuntimeError):
    """A solver did not deliver a proven optimum.

    The best labelling found (always consistent) is kept in ``result`` when there is one.

    Examples
    --------
    >>> from relabel import RelabelError, RelabelTimeLimitError
    >>> issubclass(RelabelTimeLimitError, RelabelError)
    True
    """

    def __init__(self, message: str, result: Any = None):
        super().__init__(message)
        self.result = result


class RelabelTimeLimitError(RelabelError):
    """The solver stopped (time limit) before proving optimality.

    Examples
    --------
    >>> from relabel import RelabelTimeLimitError
    >>> str(RelabelTimeLimitError("stopped"))
    'stopped'
    """


class RelabelInfeasibleError(RelabelError):
    """The solver declared the problem infeasible (impossible for a correct model).

    Examples
    --------
    >>> from relabel import RelabelInfeasibleError
    >>> isinstance(RelabelInfeasibleError("x"), RuntimeError)
    True
    """


class RelabelWarning(UserWarning):
    """Issued when ``on_solver_failure="warn"`` and the result is not a proven optimum.

    Examples
    --------
    >>> from relabel import RelabelWarning
    >>> issubclass(RelabelWarning, UserWarning)
    True
    """


class SolverNotInstalledError(ImportError):
    """A solver's Python package is missing; the message names the pip package.

    Examples
    --------
    >>> from relabel import SolverNotInstalledError
    >>> err = SolverNotInstalledError("cpsat", "ortools")
    >>> err.package, "pip install ortools" in str(err)
    ('ortools', True)
    """

    def __init__(self, solver: str, package: str):
        super().__init__(
            f"solver {solver!r} needs the package {package!r}, which is not installed "
            f"(pip install {package})",
            name=package,
        )
        self.solver = solver
        self.package = package


class TooManyRegionsError(ValueError):
    """A fused partition would exceed its ``max_regions`` or ``max_edges`` budget.

    Raised by :func:`relabel.fuse` while pushing boxes down and by
    :func:`relabel.adjacency_edges` while sweeping, before the large arrays (and
    the solver's graph) are allocated.

    Examples
    --------
    >>> from relabel import TooManyRegionsError
    >>> issubclass(TooManyRegionsError, ValueError)
    True
    """
