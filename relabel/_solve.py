"""One entry point for every solver of the consistency problem."""

from __future__ import annotations

import enum
import logging
import math
import numbers
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from relabel._backends import BackendResult, cbc, cpsat, graphcut
from relabel._errors import (
    RelabelError,
    RelabelInfeasibleError,
    RelabelTimeLimitError,
    RelabelWarning,
)
from relabel._problem import ConsistencyProblem

__all__ = ["FORMULATIONS", "RelabelResult", "SOLVERS", "SolverStatus", "solve"]

logger = logging.getLogger(__name__)


class SolverStatus(enum.Enum):
    """Outcome of a solve, one enum across all solvers.

    OPTIMAL: proven optimum. FEASIBLE: a consistent labelling without proof of
    optimality. TIME_LIMIT: stopped by the time limit before proving optimality (the
    labels are the best found, or the best constant labelling). INFEASIBLE: the
    solver claimed infeasibility (impossible for a correct model). ERROR: the solver
    failed.

    Examples
    --------
    >>> from relabel import SolverStatus
    >>> SolverStatus.OPTIMAL.value
    'optimal'
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    ERROR = "error"


#: The formulations of the ILP: the paper's eq. (1)-(10) verbatim, or the tight one.
FORMULATIONS = ("paper", "tight")

#: Solver registry: name -> backend. It is also what :func:`solve` dispatches on.
#: A backend is called as ``backend(problem, formulation=..., time_limit=...,
#: threads=..., verbose=...)`` and returns a ``BackendResult(labels, status, bound,
#: message)``: ``labels`` an (N,) array of class indices or None, ``status`` a
#: :class:`SolverStatus` name, ``bound`` a proven lower bound in the problem's units
#: or None. Backends import their solver package lazily and raise
#: :class:`SolverNotInstalledError` when it is missing.
SOLVERS: dict[str, Callable[..., BackendResult]] = {
    "graphcut": graphcut.solve,
    "cbc": cbc.solve,
    "cpsat": cpsat.solve,
}


@dataclass(frozen=True, eq=False)
class RelabelResult:
    """The outcome of :func:`solve`.

    Attributes
    ----------
    labels : ndarray of shape (N,), intp
        Class index 0..K-1 of every region; always consistent.
    objective : float
        Objective (10) of ``labels``, recomputed by the problem, in its own units.
    status : SolverStatus
    solver, formulation : str
    wall_time : float
        Seconds spent in the backend (model building included).
    bound : float or None
        Best proven lower bound on the optimum when the solver reports one.
    gap : float or None
        ``(objective - bound) / max(|objective|, 1e-12)`` when the bound is known.
    message : str
        The backend's own status text.

    Examples
    --------
    >>> from relabel import ConsistencyProblem, solve
    >>> result = solve(ConsistencyProblem.from_counts([[2, 0], [0, 1]], [[0, 1]]))
    >>> result.labels.tolist(), result.objective, result.status.name
    ([0, 1], 0.0, 'OPTIMAL')
    """

    labels: NDArray[np.intp]
    objective: float
    status: SolverStatus
    solver: str
    formulation: str
    wall_time: float
    bound: float | None = None
    gap: float | None = None
    message: str = ""


def _check_time_limit(time_limit: Any) -> float | None:
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real):
        raise ValueError(f"time_limit must be a positive number of seconds or None; got {time_limit!r}")
    value = float(time_limit)
    if not (value > 0) or math.isnan(value):
        raise ValueError(f"time_limit must be a positive number of seconds or None; got {time_limit!r}")
    return None if math.isinf(value) else value


def solve(
    problem: ConsistencyProblem,
    solver: str = "graphcut",
    formulation: str = "paper",
    time_limit: float | None = None,
    threads: int = 1,
    on_solver_failure: str = "warn",
    verbose: bool = False,
    *,
    start: ArrayLike | None = None,
    on_failure: str | None = None,
) -> RelabelResult:
    """Find the optimal consistent labelling of a :class:`ConsistencyProblem`.

    Parameters
    ----------
    problem : ConsistencyProblem
        The problem (costs, edges, empty-region penalties).
    solver : {"graphcut", "cbc", "cpsat"}, default="graphcut"
        ``"graphcut"``: exact minimum s-t cut (pseudoflow max-flow compiled with numba,
        int64 capacities, every cut certified; float data without a small common
        denominator, such as balanced class weights, are rounded to integers with a
        proven bound, reported in ``bound`` and ``gap``). ``"cbc"``: the ILP through
        PuLP and CBC. ``"cpsat"``: the ILP through OR-Tools CP-SAT with exactly scaled
        integer coefficients. Names come from :data:`SOLVERS`.
    formulation : {"paper", "tight"}, default="paper"
        ``"paper"``: equations (1)-(10) verbatim. ``"tight"``: pairwise threshold
        constraints and linearised ``C |x_nk - x_mk|`` terms, whose LP relaxation is
        integral. Same optimum. The graph cut always solves the tight form (it is a
        min cut); the argument is recorded.
    time_limit : float, optional
        Seconds allowed to CBC / CP-SAT (the graph cut is exact and ignores it).
    threads : int, default=1
        Solver threads; one by default since groups are solved in parallel jobs.
    on_solver_failure : {"warn", "raise"}, default="warn"
        What to do without a proven optimum (the name OTreeBagger uses too): ``"warn"`` issues a
        :class:`RelabelWarning` naming the status and gap and returns the best
        consistent labelling found (the best constant labelling if none);
        ``"raise"`` raises :class:`RelabelTimeLimitError` (time limit or unproven),
        :class:`RelabelInfeasibleError` or :class:`RelabelError`.
    verbose : bool, default=False
        Solver logs (PuLP ``msg``, CP-SAT ``log_search_progress``).
    start : array-like of shape (N,), optional
        Class indices to start from, for ``solver="graphcut"`` only: where it solves by
        descent (four or more classes, convex costs), the descent starts at the consistent
        labelling nearest these (say, the optimum of the same regions with fewer edges).
        The result is the same smallest optimal labelling whatever the start; only the
        number of cuts changes.
    on_failure : {"warn", "raise"}, optional
        Deprecated alias of ``on_solver_failure`` (emits a FutureWarning).

    Returns
    -------
    RelabelResult
        Labels (always consistent), objective recomputed from them, status, solver,
        formulation, wall time, bound and gap when known.

    Raises
    ------
    ValueError
        On an unknown solver, formulation or ``on_solver_failure``, a non-positive time
        limit, a non-positive thread count, or a problem that is not a
        :class:`ConsistencyProblem`.
    SolverNotInstalledError
        If the solver's package is missing (an ImportError naming the pip package).
    RelabelError
        With ``on_solver_failure="raise"`` and no proven optimum.

    Notes
    -----
    docs/design.md section 4. Graph cut: O(N K + E K) arcs and one pseudoflow max-flow (its cut certified in O(arcs));
    with four or more classes and convex costs, a steepest descent of a few certified cuts of O(N + E) arcs
    instead, to the same smallest optimal labelling.
    CBC and CP-SAT solve the ILP by generic branch and bound / search and may need
    a time limit beyond a few thousand regions (see benchmarks/relabel_solvers.py). The problem always has a feasible point (a constant
    labelling), so a consistent labelling is always returned.

    Examples
    --------
    >>> import networkx as nx
    >>> from relabel import ConsistencyProblem, solve, is_consistent
    >>> graph = nx.path_graph(3)
    >>> problem = ConsistencyProblem.from_counts([[5, 0, 0], [0, 0, 0], [0, 0, 5]], graph)
    >>> result = solve(problem)
    >>> result.labels.tolist(), is_consistent(graph, result.labels)
    ([0, 1, 2], True)
    >>> solve(problem, solver="cbc").objective == result.objective
    True
    >>> solve(problem, start=[2, 2, 2]).labels.tolist()  # a start changes the work, never the labels
    [0, 1, 2]
    """
    time_limit, on_solver_failure = _check_solve_options(
        problem, solver, formulation, time_limit, threads, on_solver_failure, on_failure
    )
    hint = {}
    if start is not None:
        if solver != "graphcut":
            raise ValueError(f"start applies to solver='graphcut' only; got solver={solver!r}")
        try:
            hint["start"] = problem._check_labels(start)
        except ValueError as error:
            raise ValueError(f"start must be one class index 0..K-1 per region: {error}") from None
    began = time.perf_counter()
    out = SOLVERS[solver](
        problem, formulation=formulation, time_limit=time_limit, threads=int(threads), verbose=bool(verbose), **hint
    )
    wall_time = time.perf_counter() - began
    labels, objective, status, message = _checked_labels(problem, out)
    bound = out.bound
    gap = None
    if bound is not None:
        gap = max(objective - bound, 0.0) / max(abs(objective), 1e-12)
    result = RelabelResult(
        labels=labels, objective=objective, status=status, solver=solver, formulation=formulation,
        wall_time=wall_time, bound=bound, gap=gap, message=message,
    )
    logger.debug(
        "solve(%s, %s): N=%d E=%d status=%s objective=%.6g in %.3fs",
        solver, formulation, problem.n_regions, problem.n_edges, status.name, objective, wall_time,
    )
    if status is not SolverStatus.OPTIMAL:
        _report_failure(result, on_solver_failure)
    return result


def _check_solve_options(problem, solver, formulation, time_limit, threads, on_solver_failure, on_failure):
    """Validate :func:`solve`'s arguments; returns the time limit and the failure policy."""
    if not isinstance(problem, ConsistencyProblem):
        raise ValueError(
            f"problem must be a ConsistencyProblem (see ConsistencyProblem.from_counts); "
            f"got {type(problem).__name__}"
        )
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ValueError(f"solver must be one of {sorted(SOLVERS)}; got {solver!r}")
    if not isinstance(formulation, str) or formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}; got {formulation!r}")
    time_limit = _check_time_limit(time_limit)
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1:
        raise ValueError(f"threads must be a positive integer; got {threads!r}")
    if on_failure is not None:
        warnings.warn(
            "solve(on_failure=...) is deprecated; use on_solver_failure=... (the name OTreeBagger uses)",
            FutureWarning,
            stacklevel=3,
        )
        if on_solver_failure != "warn" and on_solver_failure != on_failure:
            raise ValueError(
                f"on_failure={on_failure!r} (deprecated) contradicts on_solver_failure={on_solver_failure!r}; "
                "pass only on_solver_failure"
            )
        on_solver_failure = on_failure
    if on_solver_failure not in ("warn", "raise"):
        raise ValueError(f"on_solver_failure must be 'warn' or 'raise'; got {on_solver_failure!r}")
    return time_limit, on_solver_failure


def _checked_labels(problem: ConsistencyProblem, out: BackendResult):
    """The backend's labels if valid and consistent, else the best constant labelling; their objective, status, message."""
    status = SolverStatus[out.status]
    message = out.message
    labels = None
    objective = math.inf
    if out.labels is not None:
        labels = np.asarray(out.labels, dtype=np.intp)
        valid = labels.shape == (problem.n_regions,) and labels.min(initial=0) >= 0 and labels.max(
            initial=0) < problem.n_classes
        objective = problem.objective(labels) if valid else math.inf
        if not math.isfinite(objective):
            # Never hand back an inconsistent labelling, whatever the solver said.
            message = f"{message}; solver returned an invalid or inconsistent labelling".strip("; ")
            labels = None
            if status is SolverStatus.OPTIMAL:
                status = SolverStatus.ERROR
    if labels is None:
        labels = problem.best_constant_labels()
        objective = problem.objective(labels)
    return labels, objective, status, message


def _report_failure(result: RelabelResult, on_solver_failure: str) -> None:
    """Raise (``"raise"``) or warn (``"warn"``) about a result without a proven optimum."""
    gap_text = "unknown" if result.gap is None else f"{result.gap:.3g}"
    text = (
        f"solver {result.solver!r} ({result.formulation}) stopped with status {result.status.name} "
        f"(gap {gap_text}, objective {result.objective:.6g}): {result.message or 'no detail'}"
    )
    if on_solver_failure == "raise":
        if result.status in (SolverStatus.TIME_LIMIT, SolverStatus.FEASIBLE):
            raise RelabelTimeLimitError(text, result)
        if result.status is SolverStatus.INFEASIBLE:
            raise RelabelInfeasibleError(text, result)
        raise RelabelError(text, result)
    warnings.warn(text + "; returning the best consistent labelling found", RelabelWarning, stacklevel=3)
