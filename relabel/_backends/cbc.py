"""The consistency ILP through PuLP and CBC (paper or tight formulation)."""

from __future__ import annotations

import logging
import shutil
import subprocess
import warnings

import numpy as np

from relabel._backends._result import BackendResult
from relabel._errors import SolverNotInstalledError

logger = logging.getLogger(__name__)

__all__ = ["build_model", "cbc_info", "lp_relaxation", "solve"]


def _pulp():
    try:
        import pulp
    except ImportError:
        raise SolverNotInstalledError("cbc", "pulp") from None
    return pulp


def _command(pulp, *, mip=True, time_limit=None, threads=1, verbose=False):
    """The CBC command: an installed ``cbc`` (COIN_CMD) first, PuLP's bundled one else."""
    options = dict(mip=mip, msg=bool(verbose), timeLimit=time_limit, threads=threads)
    command = pulp.COIN_CMD(**options)
    if command.available():
        return command
    with warnings.catch_warnings():
        # PuLP 3.x deprecates PULP_CBC_CMD in favour of COIN_CMD; it is only the fallback.
        warnings.filterwarnings("ignore", message=".*PULP_CBC_CMD.*", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*PULP_CBC_CMD.*", category=FutureWarning)
        command = pulp.PULP_CBC_CMD(**options)
    if command.available():
        return command
    raise SolverNotInstalledError("cbc", "pulp[cbc]")


def cbc_info() -> str:
    """Which CBC PuLP will run, and its banner line (for CI logs).

    Returns
    -------
    str
        ``"<command class>: <path> (<version banner>)"``.

    Raises
    ------
    SolverNotInstalledError
        If PuLP or a CBC binary is missing.

    Examples
    --------
    >>> from relabel import cbc_info
    >>> "cbc" in cbc_info().lower()
    True
    """
    pulp = _pulp()
    command = _command(pulp)
    path = command.path if hasattr(command, "path") else "?"
    resolved = shutil.which(path) or path
    banner = ""
    try:
        run = subprocess.run([resolved], input="quit\n", capture_output=True, text=True, timeout=20)
        lines = [line.strip() for line in run.stdout.splitlines() if line.strip()]
        banner = next((line for line in lines if "version" in line.lower() or "cbc" in line.lower()), "")
    except (OSError, subprocess.SubprocessError):  # pragma: no cover - informational only
        banner = "banner unavailable"
    return f"{type(command).__name__}: {resolved} ({banner}); PuLP {pulp.__version__}"


def build_model(problem, formulation: str, relax: bool = False):
    """Build the PuLP model of eq. (1)-(10) (``"paper"``) or the tight form.

    Returns ``(prob, x, extra)``: ``x[n][k]`` the variables x_{n,k+1}, ``extra`` the
    list of delta (paper) or |difference| (tight) variables. With ``relax`` every
    variable is continuous in [0, 1] (the LP relaxation).
    """
    pulp = _pulp()
    n, km = problem.n_regions, problem.n_classes - 1
    prob = pulp.LpProblem("relabel", pulp.LpMinimize)
    category = "Continuous" if relax else "Binary"
    x = [[prob.add_variable(f"x_{i}_{k}", 0, 1, category) for k in range(km)] for i in range(n)]
    costs = problem.costs
    unary = np.diff(costs, axis=1)
    terms = [(x[i][k], float(unary[i, k])) for i in range(n) for k in range(km) if unary[i, k] != 0]
    constant = float(costs[:, 0].sum())
    # (2) x_{n,k+1} <= x_{n,k}
    for i in range(n):
        for k in range(km - 1):
            prob += x[i][k + 1] - x[i][k] <= 0
    extra = []
    penalty = np.where(problem.delta1, problem.C1, np.where(problem.delta2, problem.C2, 0.0))
    for e, (i, j) in enumerate(problem.edges.tolist()):
        empty_pair = problem.delta1[e] or problem.delta2[e]
        if formulation == "paper":
            s_i = pulp.lpSum(x[i])
            s_j = pulp.lpSum(x[j])
            if empty_pair:
                # (7)-(8): the deviation is allowed but paid by delta in (10).
                delta = prob.add_variable(f"delta_{i}_{j}", 0, 1, category)
                extra.append(delta)
                prob += s_i - s_j - delta <= 0
                prob += s_j - s_i - delta <= 0
                terms.append((delta, float(penalty[e])))
            else:
                # (6)
                prob += s_i - s_j <= 1
                prob += s_j - s_i <= 1
        else:
            for k in range(km - 1):
                prob += x[i][k + 1] - x[j][k] <= 0
                prob += x[j][k + 1] - x[i][k] <= 0
            if empty_pair and penalty[e] > 0:
                for k in range(km):
                    d = prob.add_variable(f"d_{i}_{j}_{k}", 0, 1, "Continuous")
                    extra.append(d)
                    prob += x[i][k] - x[j][k] - d <= 0
                    prob += x[j][k] - x[i][k] - d <= 0
                    terms.append((d, float(penalty[e])))
    # Monotone pairs (docs/design.md section 4b): label(n) <= label(m), hard for empty regions.
    for i, j in problem.monotone.tolist():
        if formulation == "paper":
            prob += pulp.lpSum(x[i]) - pulp.lpSum(x[j]) <= 0
        else:
            for k in range(km):
                prob += x[i][k] - x[j][k] <= 0
    prob += pulp.LpAffineExpression(terms, constant=constant)
    return prob, x, extra


def lp_relaxation(problem, formulation: str) -> np.ndarray:
    """Values of all variables at an optimal vertex of the LP relaxation (CBC/CLP).

    Used to show that the tight formulation's relaxation is integral.
    """
    pulp = _pulp()
    prob, x, extra = build_model(problem, formulation, relax=True)
    prob.solve(_command(pulp, mip=False))
    if prob.status != pulp.LpStatusOptimal:
        raise RuntimeError(f"LP relaxation not solved: {pulp.LpStatus[prob.status]}")
    values = [v.value() for row in x for v in row] + [v.value() for v in extra]
    return np.array([0.0 if v is None else v for v in values], dtype=np.float64)


def solve(problem, *, formulation: str, time_limit, threads: int, verbose: bool):
    """Solve the ILP with CBC; see :func:`relabel.solve`. Status decided on ``sol_status``."""

    pulp = _pulp()
    prob, x, _ = build_model(problem, formulation)
    command = _command(pulp, time_limit=time_limit, threads=threads, verbose=verbose)
    try:
        prob.solve(command)
    except pulp.PulpSolverError as exc:
        return BackendResult(None, "ERROR", None, f"CBC failed: {exc}")
    sol = prob.sol_status
    message = f"CBC status {pulp.LpStatus.get(prob.status, prob.status)!r}, solution {pulp.LpSolution.get(sol, sol)!r}"
    labels = None
    if sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        values = np.array(
            [[0.0 if v.value() is None else v.value() for v in row] for row in x], dtype=np.float64
        ).reshape(problem.n_regions, problem.n_classes - 1)
        labels = np.rint(values).sum(axis=1).astype(np.intp)
    if sol == pulp.LpSolutionOptimal:
        return BackendResult(labels, "OPTIMAL", None, message)
    if sol == pulp.LpSolutionIntegerFeasible:
        return BackendResult(labels, "TIME_LIMIT" if time_limit is not None else "FEASIBLE", None, message)
    if sol == pulp.LpSolutionNoSolutionFound:
        return BackendResult(None, "TIME_LIMIT" if time_limit is not None else "ERROR", None, message)
    if sol == pulp.LpSolutionInfeasible:
        return BackendResult(None, "INFEASIBLE", None, message)
    return BackendResult(None, "ERROR", None, message)
