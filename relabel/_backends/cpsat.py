"""The consistency ILP through OR-Tools CP-SAT, with exactly scaled integer coefficients."""

from __future__ import annotations

import logging

import numpy as np

from relabel._backends._result import BackendResult
from relabel._errors import SolverNotInstalledError
from relabel._scaling import integer_scaling

logger = logging.getLogger(__name__)

__all__ = ["solve"]


def solve(problem, *, formulation: str, time_limit, threads: int, verbose: bool):
    """Solve the ILP with CP-SAT; see :func:`relabel.solve`. FEASIBLE is not OPTIMAL."""
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        raise SolverNotInstalledError("cpsat", "ortools") from None

    scaled = integer_scaling(problem)
    n, km = problem.n_regions, problem.n_classes - 1
    unary = np.diff(scaled.costs, axis=1)
    constant = int(scaled.costs[:, 0].sum())
    model = cp_model.CpModel()
    x = [[model.new_bool_var(f"x_{i}_{k}") for k in range(km)] for i in range(n)]
    variables, coefficients = [], []
    for i in range(n):
        for k in range(km):
            if unary[i, k] != 0:
                variables.append(x[i][k])
                coefficients.append(int(unary[i, k]))
        for k in range(km - 1):
            model.add_implication(x[i][k + 1], x[i][k])  # (2)
    weights = np.where(problem.delta1, scaled.C1, np.where(problem.delta2, scaled.C2, 0))
    for e, (i, j) in enumerate(problem.edges.tolist()):
        empty_pair = bool(problem.delta1[e] or problem.delta2[e])
        weight = int(weights[e])
        if formulation == "paper":
            difference = sum(x[i]) - sum(x[j])
            if empty_pair:
                delta = model.new_bool_var(f"delta_{i}_{j}")  # (7)-(8)
                model.add(difference <= delta)
                model.add(-difference <= delta)
                variables.append(delta)
                coefficients.append(weight)
            else:
                model.add(difference <= 1)  # (6)
                model.add(difference >= -1)
        else:
            for k in range(km - 1):
                model.add_implication(x[i][k + 1], x[j][k])
                model.add_implication(x[j][k + 1], x[i][k])
            if empty_pair and weight > 0:
                for k in range(km):
                    d = model.new_bool_var(f"d_{i}_{j}_{k}")
                    model.add(x[i][k] - x[j][k] <= d)
                    model.add(x[j][k] - x[i][k] <= d)
                    variables.append(d)
                    coefficients.append(weight)
    # Monotone pairs (docs/design.md section 4b): label(i) <= label(j), hard for empty regions.
    for i, j in problem.monotone.tolist():
        if formulation == "paper":
            model.add(sum(x[i]) <= sum(x[j]))
        else:
            for k in range(km):
                model.add_implication(x[i][k], x[j][k])
    # The objective must be integral and exactly the scaled problem's.
    assert all(isinstance(c, int) for c in coefficients)
    model.minimize(cp_model.LinearExpr.weighted_sum(variables, coefficients) + constant)
    # Warm start: the best constant labelling is always feasible.
    start = int(problem.best_constant_labels()[0]) if n else 0
    for i in range(n):
        for k in range(km):
            model.add_hint(x[i][k], k < start)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = threads
    solver.parameters.random_seed = 0
    # Full linearisation puts every constraint in CP-SAT's LP; the tight form's LP is
    # integral, and measured on fused partitions this turns time-outs into proofs.
    solver.parameters.linearization_level = 2
    solver.parameters.log_search_progress = bool(verbose)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    status = solver.solve(model)
    name = solver.status_name(status)
    message = f"CP-SAT status {name}"
    labels = None
    bound = None
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        labels = np.array(
            [sum(solver.boolean_value(v) for v in row) for row in x], dtype=np.intp
        ).reshape(n)
        bound = float(solver.best_objective_bound) / scaled.scale
    if status == cp_model.OPTIMAL:
        return BackendResult(labels, "OPTIMAL", bound, message)
    if status == cp_model.FEASIBLE:
        return BackendResult(labels, "TIME_LIMIT" if time_limit is not None else "FEASIBLE", bound, message)
    if status == cp_model.INFEASIBLE:
        return BackendResult(None, "INFEASIBLE", None, message)
    if status == cp_model.UNKNOWN and time_limit is not None:
        return BackendResult(None, "TIME_LIMIT", None, message)
    return BackendResult(None, "ERROR", None, message)
