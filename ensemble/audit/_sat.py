"""Exact audit in any dimension: a CP-SAT model of two points and the leaves holding them.

As in Kantchelian et al.'s MILP for tree ensembles (ICML 2016), a point is encoded by one
boolean per threshold of each feature, ``p[f][j] = [x_f <= t_j]`` (a chain: p_j implies
p_{j+1}), and each component (tree or group) by one boolean per box, exactly one true, the
chosen box's bounds forcing the chain. Two such points x and x' are linked by the notion:

* pointwise: on every feature their cells are at most one apart (closures meet):
  p_j implies q_{j+1} and q_j implies p_{j+1};
* resolution r: x_f <= t_j implies x'_f <= t_{j'} for the first t_{j'} >= t_j + r_f (and back);
* data's resolution: one chosen feature moves, its chain flips only at thresholds of one
  gap; every other feature keeps its cell;
* monotone on f: only f moves, x_f <= x'_f.

Categorical features keep their cell. The objective is the class of x' minus the class of
x: an optimum of at most one proves the notion, a larger one is a candidate that the
model's own ``predict`` must confirm. Scikit-learn's float leaf values are scaled to
integers with a slack of one unit per rounded term on every comparison, so the integer
model is a relaxation (a proof stays sound); a candidate ``predict`` does not confirm is
cut off and the search goes on.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

__all__ = ["sat_audit"]

_RANGE_BITS = 40


def _integer_values(reading) -> tuple[list, NDArray, NDArray | None, int]:
    """Leaf values, offset and thresholds as integers, and the slack each comparison needs."""
    if reading.integer:
        theta = None if reading.theta is None else np.asarray(reading.theta, dtype=np.int64)
        return [np.asarray(c.values, dtype=np.int64) for c in reading.components], \
            np.asarray(reading.offset, dtype=np.int64), theta, 0
    top = max(max(float(np.abs(c.values).max()) for c in reading.components), float(np.abs(reading.offset).max()))
    total = top * (len(reading.components) + 1)
    if reading.theta is not None:
        total = max(total, float(np.abs(reading.theta).max()))
    scale = 2.0 ** (_RANGE_BITS - int(np.ceil(np.log2(max(total, 1e-300)))))
    values = [np.rint(np.asarray(c.values) * scale).astype(np.int64) for c in reading.components]
    offset = np.rint(np.asarray(reading.offset) * scale).astype(np.int64)
    theta = None if reading.theta is None else np.rint(np.asarray(reading.theta) * scale).astype(np.int64)
    # Every rounded term errs by at most 1/2 unit: a comparison of two sums by at most one unit per tree.
    return values, offset, theta, len(reading.components) + 2


class _OutOfTime(Exception):
    """The time limit passed while the model was being built."""


class _Point:
    """One point's threshold chains, box choices and class in the model."""

    def __init__(self, m, reading, values, offset, theta, slack, name, deadline=np.inf):
        self.chain = []
        for f, t in enumerate(reading.thresholds):
            bits = [m.NewBoolVar(f"{name}p{f}_{j}") for j in range(t.shape[0])]
            for j in range(len(bits) - 1):
                m.AddImplication(bits[j], bits[j + 1])
            self.chain.append(bits)
        sums = [[] for _ in range(values[0].shape[1])]
        for comp, val in zip(reading.components, values, strict=True):
            if time.perf_counter() > deadline:  # building a large model takes time: stop at the limit
                raise _OutOfTime
            choice = [m.NewBoolVar("") for _ in range(val.shape[0])]
            m.AddExactlyOne(choice)
            self._bound(m, reading, comp, choice)
            for col in range(val.shape[1]):
                nz = np.flatnonzero(val[:, col])
                sums[col].extend((int(val[r, col]), choice[r]) for r in nz)
        exprs = [sum(w * v for w, v in s) + int(offset[col]) for col, s in enumerate(sums)]
        self.rank = self._class(m, reading, exprs, theta, slack)

    def _bound(self, m, reading, comp, choice):
        """A chosen box forces the chain: x_f > lower (bit of lower false) and x_f <= upper (bit true)."""
        for f, t in enumerate(reading.thresholds):
            bits = self.chain[f]
            for bounds, true in ((comp.lower[:, f], False), (comp.upper[:, f], True)):
                rows = np.flatnonzero(np.isfinite(bounds))
                at = np.searchsorted(t, bounds[rows])
                for row, j in zip(rows.tolist(), at.tolist(), strict=True):
                    m.AddImplication(choice[row], bits[j] if true else bits[j].Not())

    @staticmethod
    def _class(m, reading, exprs, theta, slack):
        K = reading.n_classes
        if reading.kind == "threshold":
            levels = []
            for a in range(K - 1):
                z = m.NewBoolVar("")
                s = exprs[int(reading.column[a])]
                m.Add(s >= int(theta[a]) - slack).OnlyEnforceIf(z)
                m.Add(s <= int(theta[a]) - 1 + slack).OnlyEnforceIf(z.Not())
                if levels:
                    m.AddImplication(z, levels[-1])
                levels.append(z)
            return sum(levels)
        pick = [m.NewBoolVar("") for _ in exprs]
        m.AddExactlyOne(pick)
        for k, y in enumerate(pick):
            for j in range(len(exprs)):
                if j != k:  # numpy's argmax: the lowest column among equal sums
                    m.Add(exprs[k] - exprs[j] >= (1 if j < k else 0) - slack).OnlyEnforceIf(y)
        return sum(int(reading.ranks[k]) * y for k, y in enumerate(pick))


def _link(m, reading, x: _Point, y: _Point, notion: str, r, grid_values, cst_feature=None):
    movable = ~reading.categorical
    if notion in ("gap", "order"):
        free = [f for f in range(reading.n_features) if movable[f] and reading.thresholds[f].shape[0]
                and (notion == "order" or grid_values[f] is not None)]
        if cst_feature is not None:
            free = [cst_feature]
        pick = {f: m.NewBoolVar(f"move{f}") for f in free}
        m.AddAtMostOne(list(pick.values()))
    for f, t in enumerate(reading.thresholds):
        p, q = x.chain[f], y.chain[f]
        n = len(p)
        if not movable[f] or (notion in ("gap", "order") and f not in pick):
            for j in range(n):
                m.Add(p[j] == q[j])
            continue
        if notion in ("gap", "order"):
            s = pick[f]
            for j in range(n):
                m.Add(p[j] == q[j]).OnlyEnforceIf(s.Not())
            if notion == "order":
                for j in range(n):  # x_f <= x'_f: x' <= t implies x <= t
                    m.AddImplication(q[j], p[j])
                continue
            gaps = np.searchsorted(grid_values[f], t, side="right")
            flags = []
            for k in np.unique(gaps):
                e = m.NewBoolVar("")
                for j in np.flatnonzero(gaps == k):
                    m.AddImplication(p[j], q[j]).OnlyEnforceIf(e.Not())
                    m.AddImplication(q[j], p[j]).OnlyEnforceIf(e.Not())
                flags.append(e)
            m.AddAtMostOne(flags)
            continue
        reach = np.arange(n) + 1
        if notion == "resolution" and r is not None and r[f] > 0:
            reach = np.maximum(reach, np.searchsorted(t, t + r[f], side="left"))
        for j in range(n):
            if reach[j] < n:
                m.AddImplication(p[j], q[reach[j]])
                m.AddImplication(q[j], p[reach[j]])


def _cells(solver, point: _Point) -> NDArray[np.intp]:
    return np.array([sum(1 for b in bits if not solver.Value(b)) for bits in point.chain], dtype=np.intp)


def sat_audit(reading, notion: str, r, grid_values: list, deadline: float, check, *, cst_feature=None,
              sign: int = 1, workers: int = 1, first: bool = False) -> dict:
    """Largest jump (or monotone fall) by CP-SAT; ``check(ci, cj, how)`` confirms a candidate with ``predict``.

    ``first``: any jump of two or more instead of the largest (a feasibility problem,
    stopped at the first candidate ``predict`` confirms; infeasible proves at most one).

    Returns ``{"jump": best confirmed, "bound": proven upper bound, "where": (ci, cj, how) or None,
    "optimal": bool}``.
    """
    from ortools.sat.python import cp_model

    values, offset, theta, slack = _integer_values(reading)
    m = cp_model.CpModel()
    try:
        x = _Point(m, reading, values, offset, theta, slack, "x", deadline)
        y = _Point(m, reading, values, offset, theta, slack, "y", deadline)
    except _OutOfTime:
        return {"jump": 0, "bound": reading.n_classes - 1, "where": None, "optimal": False}
    how = {"pointwise": "contact", "resolution": "resolution", "data": "gap", "order": "order"}[notion]
    _link(m, reading, x, y, "gap" if notion == "data" else notion, r, grid_values, cst_feature)
    # x is the lower point along a constrained feature: an increasing one falls when x's class is larger.
    objective = (x.rank - y.rank) if notion == "order" and sign > 0 else (y.rank - x.rank)
    if first:
        m.Add(objective >= 2)
    m.Maximize(objective)  # with ``first`` too: the first solution ends the search
    best, where, bound, optimal, cuts = 0, None, reading.n_classes - 1, False, 0
    while True:
        left = deadline - time.perf_counter()
        if left <= 0.05:
            break
        solver = _solver(left, workers, first)
        status = solver.Solve(m)
        if status == cp_model.INFEASIBLE:
            # OR-Tools 9.15's presolve called a feasible model of this kind infeasible (a jump of 2 the
            # search without presolve finds at once): an infeasibility is a proof, so it is checked again.
            solver = _solver(deadline - time.perf_counter(), workers, first, presolve=False)
            status = solver.Solve(m)
        if status == cp_model.INFEASIBLE and first:  # no jump of two is left: at most one
            bound = max(best, 1)
            break
        if status == cp_model.INFEASIBLE and cuts:  # nothing above the confirmed jumps but the cut-off candidates
            optimal = True
            break
        if first and status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            ci, cj = _cells(solver, x), _cells(solver, y)
            confirmed = check(ci, cj, how)
            if confirmed >= 2:
                best, where = confirmed, (ci, cj, how)
                break
            m.AddBoolOr([b.Not() if solver.Value(b) else b for bits in x.chain + y.chain for b in bits])
            cuts += 1
            continue
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break
        bound = min(bound, int(np.floor(solver.BestObjectiveBound() + 1e-9)))
        value = int(round(solver.ObjectiveValue()))
        ci, cj = _cells(solver, x), _cells(solver, y)
        confirmed = check(ci, cj, how)
        if confirmed >= value:
            best, where = max(best, confirmed), (ci, cj, how)
            optimal = status == cp_model.OPTIMAL
            break
        if confirmed > best:
            best, where = confirmed, (ci, cj, how)
        if value <= max(best, 1):
            optimal = status == cp_model.OPTIMAL
            break
        # A relaxed candidate predict does not confirm: cut it off (its two cells) and search on.
        lits = [b.Not() if solver.Value(b) else b for bits in x.chain + y.chain for b in bits]
        m.AddBoolOr(lits)
        cuts += 1
        m.Add(objective >= best + 1)
    if optimal:
        bound = best
    return {"jump": best, "bound": max(bound, best), "where": where, "optimal": optimal}


def _solver(seconds: float, workers: int, first: bool, presolve: bool = True):
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(seconds, 0.01)
    solver.parameters.num_workers = workers
    solver.parameters.stop_after_first_solution = first
    solver.parameters.cp_model_presolve = presolve
    return solver

