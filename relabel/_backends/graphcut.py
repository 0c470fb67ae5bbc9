"""Exact relabelling by one minimum s-t cut (OR-Tools int64 max-flow)."""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from relabel._errors import SolverNotInstalledError

logger = logging.getLogger(__name__)

__all__ = ["CutGraph", "build_cut_graph", "solve"]

_INT64_SAFE = (1 << 62) - 1


class CutGraph(NamedTuple):
    """Arcs of the min-cut model; nodes ``0..V-1`` are the x_{n,k}, then source, sink."""

    tails: NDArray[np.int32]
    heads: NDArray[np.int32]
    capacities: NDArray[np.int64]
    n_nodes: int
    source: int
    sink: int
    offset: int  # integer objective = offset + cut value
    scale: int


def build_cut_graph(problem) -> CutGraph:
    """Arcs of the tight formulation as a cut problem (DESIGN.md section 4).

    Variable x_{n,k} (label(n) > k, k = 0..K-2) is node ``n (K-1) + k``, on the source
    side when 1. A unary coefficient a > 0 is an arc node->sink, a < 0 an arc
    source->node of capacity -a; an implication x_u <= x_v is an infinite arc u->v;
    ``C |x_u - x_v|`` is a pair of arcs of capacity C. All arrays are built with numpy.
    """
    from relabel._scaling import integer_scaling

    scaled = integer_scaling(problem)
    n, k_classes = problem.n_regions, problem.n_classes
    km = k_classes - 1
    n_vars = n * km
    if n_vars + 2 >= 2**31:
        raise ValueError(f"problem too large for the graph cut ({n_vars} variables)")
    source, sink = n_vars, n_vars + 1
    costs = scaled.costs
    unary = np.diff(costs, axis=1).ravel()  # a_{n,k} = c_{n,k+1} - c_{n,k}
    var = np.arange(n_vars, dtype=np.int64)
    pos = unary > 0
    neg = unary < 0
    # A zero arc source->sink makes both terminals exist even when no other arc
    # touches them (the max-flow graph only knows nodes that appear in arcs).
    tails = [np.array([source], np.int64), var[pos], np.full(int(neg.sum()), source, np.int64)]
    heads = [np.array([sink], np.int64), np.full(int(pos.sum()), sink, np.int64), var[neg]]
    caps = [np.zeros(1, np.int64), unary[pos], -unary[neg]]
    finite_total = int(unary[pos].sum()) + int(-unary[neg].sum())

    # Pairwise |x_{n,k} - x_{m,k}| terms on edges with an empty region (eq. 7-10).
    edges = problem.edges.astype(np.int64)
    ks = np.arange(km, dtype=np.int64)
    for mask, weight in ((problem.delta1, scaled.C1), (problem.delta2, scaled.C2)):
        if weight == 0 or not mask.any():
            continue
        u = (edges[mask, 0:1] * km + ks).ravel()
        v = (edges[mask, 1:2] * km + ks).ravel()
        tails += [u, v]
        heads += [v, u]
        caps += [np.full(2 * u.shape[0], weight, np.int64)]
        finite_total += 2 * u.shape[0] * weight

    if finite_total >= _INT64_SAFE // 2:
        raise ValueError(
            "graph-cut capacities overflow int64 after exact scaling "
            f"(total {finite_total}); use solver='cbc'"
        )
    infinite = finite_total + 1
    # Implications: x_{n,k+1} <= x_{n,k} (eq. 2) and, for every edge, the pairwise
    # thresholds x_{n,k+1} <= x_{m,k}, x_{m,k+1} <= x_{n,k} (tight form of eq. 6-8).
    if km > 1:
        kk = np.arange(km - 1, dtype=np.int64)
        base = np.arange(n, dtype=np.int64)[:, None] * km
        tails.append((base + kk + 1).ravel())
        heads.append((base + kk).ravel())
        a = edges[:, 0:1] * km
        b = edges[:, 1:2] * km
        tails += [(a + kk + 1).ravel(), (b + kk + 1).ravel()]
        heads += [(b + kk).ravel(), (a + kk).ravel()]
        n_inf = n * (km - 1) + 2 * edges.shape[0] * (km - 1)
        caps.append(np.full(n_inf, infinite, np.int64))
    tails = np.concatenate(tails).astype(np.int32)
    # Arcs grouped by tail: measured 20-25% faster max-flow than the build order.
    order = np.argsort(tails, kind="stable")
    tails = tails[order]
    heads = np.concatenate(heads).astype(np.int32)[order]
    capacities = np.concatenate(caps).astype(np.int64)[order]
    offset = int(costs[:, 0].sum()) - int(-unary[neg].sum())
    return CutGraph(tails, heads, capacities, n_vars + 2, source, sink, offset, scaled.scale)


def solve(problem, *, formulation: str, time_limit, threads: int, verbose: bool):
    """Solve exactly by a minimum s-t cut; see :func:`relabel.solve`.

    ``formulation``, ``time_limit`` and ``threads`` do not apply (the cut is exact,
    single-threaded and the tight and paper forms share the optimum).
    """
    from relabel._backends import BackendResult

    try:
        from ortools.graph.python import max_flow
    except ImportError:
        raise SolverNotInstalledError("graphcut", "ortools") from None

    n, km = problem.n_regions, problem.n_classes - 1
    graph = build_cut_graph(problem)
    flow = max_flow.SimpleMaxFlow()
    flow.add_arcs_with_capacity(graph.tails, graph.heads, graph.capacities)
    status = flow.solve(graph.source, graph.sink)
    if status != flow.OPTIMAL:
        return BackendResult(None, "ERROR", None, f"max-flow status {status}")
    cut_value = int(flow.optimal_flow())
    source_side = np.asarray(flow.get_source_side_min_cut(), dtype=np.int64)
    x = np.zeros(n * km + 2, dtype=bool)
    x[source_side] = True
    labels = x[: n * km].reshape(n, km).sum(axis=1).astype(np.intp)
    integer_objective = graph.offset + cut_value
    objective = integer_objective / graph.scale
    message = f"min cut {cut_value} on {graph.n_nodes} nodes, {graph.tails.shape[0]} arcs"
    # Certificate: the labelling's own objective must equal the cut's (max-flow duality).
    own = problem.objective(labels)
    if not np.isfinite(own) or abs(own - objective) > 1e-9 * max(1.0, abs(objective)):
        return BackendResult(labels, "ERROR", None, f"{message}; cut value {objective} != labelling {own}")
    return BackendResult(labels, "OPTIMAL", objective, message)
