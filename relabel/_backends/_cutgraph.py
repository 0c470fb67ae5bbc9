"""The tight formulation of the consistency problem as a cut graph, in half-arc incidence lists.

Variable x_{n,k} (label(n) > k, k = 0..K-2) is node ``n (K-1) + k``; the graph is
stored as half-arcs in one incidence array (CSR) that the max-flow of
:mod:`relabel._backends._pseudoflow` scans: entry ``i`` of node ``v`` leads to
``nbr[i]`` with residual capacity ``res[i]``, ``mate[i]`` is the entry of the same arc
in the neighbour's list, and ``kind[i]`` names its capacities (a row of ``table``). A
symmetric pair of penalty arcs is one arc with capacity both ways.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from relabel._numba import compiled, index_array
from relabel._scaling import cut_scaling

__all__ = ["DOWN", "UP", "PENALTY1", "PENALTY2", "CutGraph", "arc_list", "build_cut_graph", "build_relabel_graph",
           "capacity_table"]

_INT64_SAFE = (1 << 62) - 1


# Kinds of entries of the relabelling graph; the capacities of a kind are a row of the
# (4, 2) table passed around: (capacity out of the entry's node, capacity back).
DOWN, UP, PENALTY1, PENALTY2 = 0, 1, 2, 3


def capacity_table(infinite: int, c1: int, c2: int) -> np.ndarray:
    """Capacities (out, back) of the entry kinds: implication arcs and the two penalties."""
    return np.array([[infinite, 0], [0, infinite], [c1, c1], [c2, c2]], dtype=np.int64)


@compiled
def _incident(n_regions, edges, kinds):
    """Edges and penalised edges of each region (CSR), with each edge's slot at the other end."""
    n_edges = edges.shape[0]
    e_start = np.zeros(n_regions + 1, np.int64)
    p_start = np.zeros(n_regions + 1, np.int64)
    for e in range(n_edges):
        e_start[edges[e, 0] + 1] += 1
        e_start[edges[e, 1] + 1] += 1
        if kinds[e] != 0:
            p_start[edges[e, 0] + 1] += 1
            p_start[edges[e, 1] + 1] += 1
    for r in range(n_regions):
        e_start[r + 1] += e_start[r]
        p_start[r + 1] += p_start[r]
    e_fill = e_start[:-1].copy()
    p_fill = p_start[:-1].copy()
    # int32 (region indices and slots): less fresh memory to touch on large graphs.
    e_other = np.empty(2 * n_edges, np.int32)
    e_mate = np.empty(2 * n_edges, np.int32)
    p_other = np.empty(p_start[-1], np.int32)
    p_mate = np.empty(p_start[-1], np.int32)
    p_kind = np.empty(p_start[-1], np.int8)
    for e in range(n_edges):
        a = edges[e, 0]
        b = edges[e, 1]
        e_other[e_fill[a]] = b
        e_mate[e_fill[a]] = e_fill[b] - e_start[b]
        e_other[e_fill[b]] = a
        e_mate[e_fill[b]] = e_fill[a] - e_start[a]
        e_fill[a] += 1
        e_fill[b] += 1
        if kinds[e] != 0:
            p_other[p_fill[a]] = b
            p_mate[p_fill[a]] = p_fill[b] - p_start[b]
            p_other[p_fill[b]] = a
            p_mate[p_fill[b]] = p_fill[a] - p_start[a]
            p_kind[p_fill[a]] = kinds[e] + 1
            p_kind[p_fill[b]] = kinds[e] + 1
            p_fill[a] += 1
            p_fill[b] += 1
    return e_start, e_other, e_mate, p_start, p_other, p_mate, p_kind


@compiled
def _incident_pairs(n_regions, pairs):
    """Monotone pairs of each region (CSR): the other end, its slot there, and the direction.

    ``m_out`` is 1 at the lower end n of a pair (n, m) (the arc x_{n,k} -> x_{m,k} leaves
    its node) and 0 at the upper end.
    """
    n_pairs = pairs.shape[0]
    m_start = np.zeros(n_regions + 1, np.int64)
    for e in range(n_pairs):
        m_start[pairs[e, 0] + 1] += 1
        m_start[pairs[e, 1] + 1] += 1
    for r in range(n_regions):
        m_start[r + 1] += m_start[r]
    m_fill = m_start[:-1].copy()
    m_other = np.empty(2 * n_pairs, np.int32)
    m_mate = np.empty(2 * n_pairs, np.int32)
    m_out = np.empty(2 * n_pairs, np.int8)
    for e in range(n_pairs):
        a = pairs[e, 0]
        b = pairs[e, 1]
        m_other[m_fill[a]] = b
        m_mate[m_fill[a]] = m_fill[b] - m_start[b]
        m_out[m_fill[a]] = 1
        m_other[m_fill[b]] = a
        m_mate[m_fill[b]] = m_fill[a] - m_start[a]
        m_out[m_fill[b]] = 0
        m_fill[a] += 1
        m_fill[b] += 1
    return m_start, m_other, m_mate, m_out


@compiled
def _node_starts(n_regions, km, e_start, p_start, m_start):
    n = n_regions * km
    start = np.zeros(n + 1, np.int64)
    for r in range(n_regions):
        de = e_start[r + 1] - e_start[r]
        dp = p_start[r + 1] - p_start[r]
        dm = m_start[r + 1] - m_start[r]
        for j in range(km):
            w = (1 if j >= 1 else 0) + (1 if j <= km - 2 else 0)
            start[r * km + j + 1] = w * (1 + de) + dp + dm
    for v in range(n):
        start[v + 1] += start[v]
    return start


@compiled
def _fill(n_regions, km, start, e_start, e_other, e_mate, p_start, p_other, p_mate, p_kind,
          m_start, m_other, m_mate, m_out, table, nbr, mate, kind, res):
    # Layout of node (r, j): [down to (r, j-1)] [up from (r, j+1)], then per incident edge
    # [down to (o, j-1)] [up from (o, j+1)], then one entry per penalised edge; the mate
    # of an entry is found from this layout.
    for r in range(n_regions):
        de = e_start[r + 1] - e_start[r]
        for j in range(km):
            v = r * km + j
            nd = 1 if j >= 1 else 0
            nu = 1 if j <= km - 2 else 0
            w = nd + nu
            base = start[v]
            if nd:
                u = v - 1
                nbr[base] = u
                kind[base] = DOWN
                mate[base] = start[u] + (1 if j - 1 >= 1 else 0)
            if nu:
                u = v + 1
                nbr[base + nd] = u
                kind[base + nd] = UP
                mate[base + nd] = start[u]
            for t in range(de):
                o = e_other[e_start[r] + t]
                s = e_mate[e_start[r] + t]
                pos = base + w + t * w
                if nd:
                    u = o * km + j - 1
                    nd_u = 1 if j - 1 >= 1 else 0
                    nbr[pos] = u
                    kind[pos] = DOWN
                    mate[pos] = start[u] + (nd_u + 1) * (1 + s) + nd_u
                if nu:
                    u = o * km + j + 1
                    w_u = 1 + (1 if j + 1 <= km - 2 else 0)
                    nbr[pos + nd] = u
                    kind[pos + nd] = UP
                    mate[pos + nd] = start[u] + w_u * (1 + s)
            pen = base + w * (1 + de)
            for t in range(p_start[r + 1] - p_start[r]):
                o = p_other[p_start[r] + t]
                u = o * km + j
                nbr[pen + t] = u
                kind[pen + t] = p_kind[p_start[r] + t]
                mate[pen + t] = start[u] + w * (1 + e_start[o + 1] - e_start[o]) + p_mate[p_start[r] + t]
            # Monotone pairs: x_{n,j} -> x_{m,j} is an implication arc, DOWN (out-capacity
            # infinite) at n and UP at m, after the penalty entries of the node.
            mono = pen + p_start[r + 1] - p_start[r]
            for t in range(m_start[r + 1] - m_start[r]):
                o = m_other[m_start[r] + t]
                u = o * km + j
                nbr[mono + t] = u
                kind[mono + t] = DOWN if m_out[m_start[r] + t] == 1 else UP
                mate[mono + t] = (start[u] + w * (1 + e_start[o + 1] - e_start[o]) + p_start[o + 1] - p_start[o]
                                  + m_mate[m_start[r] + t])
    for i in range(start[-1]):
        res[i] = table[kind[i], 0]


def build_relabel_graph(n_regions: int, km: int, edges: np.ndarray, kinds: np.ndarray, table: np.ndarray,
                        monotone: np.ndarray | None = None):
    """Half-arc incidence lists of the cut graph of a consistency problem (tight form).

    Node ``r km + j`` is x_{r,j} (label(r) > j). Arcs: x_{r,j} -> x_{r,j-1} and, for every
    edge (a, b), x_{a,j} -> x_{b,j-1} and x_{b,j} -> x_{a,j-1} (the implications of eq. 2
    and the tight eq. 6-8, kind DOWN seen from the tail, UP from the head); for an edge
    with ``kinds[e]`` = 1 or 2, x_{a,j} -- x_{b,j} with penalty C1 or C2 both ways
    (eq. 7-10); for every monotone pair (n, m), x_{n,j} -> x_{m,j} (docs/design.md section 4b,
    label(n) <= label(m)). Entries of a node are written in a fixed order, so the mate of every
    entry is computed, not searched: O(N K + E K) sequential work, 17 bytes per entry
    (``mate`` is int32 below 2**31 entries).

    Returns ``start, nbr, mate, kind, res`` with ``res`` the capacities ``table[kind, 0]``.
    """
    inc = _incident(n_regions, edges, kinds)
    monotone = np.zeros((0, 2), np.int64) if monotone is None else index_array(np.reshape(monotone, (-1, 2)))
    mono = _incident_pairs(n_regions, monotone)
    start = _node_starts(n_regions, km, inc[0], inc[3], mono[0])
    total = int(start[-1])
    nbr = np.empty(total, np.int32)
    mate = np.empty(total, np.int32 if total < 2**31 else np.int64)
    kind = np.empty(total, np.int8)
    res = np.empty(total, np.int64)
    _fill(n_regions, km, start, *inc, *mono, table, nbr, mate, kind, res)
    return start, nbr, mate, kind, res


class CutGraph(NamedTuple):
    """The min-cut model on the variables x_{n,k} (node ``n (K-1) + k``), as half-arcs.

    Terminal arcs are folded into ``excess``: a node with ``excess > 0`` has an arc from
    the source of that capacity (x = 0 costs it), one with ``excess < 0`` an arc to the
    sink (x = 1 costs it). Entry ``i`` of node ``v`` (``start[v] <= i < start[v+1]``)
    is an arc to ``nbr[i]`` with capacities ``table[kind[i]]`` (out, back); ``mate[i]``
    is the same arc seen from ``nbr[i]``, and ``res`` the residual capacities (the
    out-capacities until a max-flow runs on them). The integer objective is
    ``offset + cut value``, the problem's objective that divided by ``scale``, exactly
    (``error = 0``) or within ``error`` when float data had to be rounded.
    """

    excess: NDArray[np.int64]
    start: NDArray[np.int64]
    nbr: NDArray[np.int32]
    mate: NDArray[np.integer]
    kind: NDArray[np.int8]
    table: NDArray[np.int64]
    res: NDArray[np.int64]
    offset: int
    scale: int
    error: float = 0.0

    @property
    def n_nodes(self) -> int:
        return int(self.excess.shape[0])

    @property
    def n_arcs(self) -> int:
        """Arcs counted once (a penalty arc has capacity both ways)."""
        return int(self.start[-1]) // 2


def build_cut_graph(problem) -> CutGraph:
    """The tight formulation as a cut graph (docs/design.md section 4).

    Variable x_{n,k} (label(n) > k, k = 0..K-2) is node ``n (K-1) + k``, on the source
    side when 1. A unary coefficient a > 0 is an arc node->sink, a < 0 an arc
    source->node of capacity -a; an implication x_u <= x_v is an arc u->v of "infinite"
    capacity (one more than the cut of the all-zero labelling, so no minimum cut
    crosses it), among them one arc x_{n,k} -> x_{m,k} per k for every monotone pair
    (n, m) (docs/design.md section 4b); ``C |x_u - x_v|`` is one arc with capacity C both
    ways. O(N K + (E + P) K).
    """
    n, km = problem.n_regions, problem.n_classes - 1
    # Exact integers when the data allow; float data without a small common
    # denominator (e.g. balanced class weights) are rounded with a proven error bound.
    scaled = cut_scaling(problem)
    costs = scaled.costs
    unary = np.diff(costs, axis=1).ravel()  # a_{n,k} = c_{n,k+1} - c_{n,k}
    source_total = -int(unary[unary < 0].sum())
    kinds = np.zeros(problem.n_edges, np.int8)
    if scaled.C1 > 0:
        kinds[problem.delta1] = 1
    if scaled.C2 > 0:
        kinds[problem.delta2] = 2
    penalty_total = 2 * km * (scaled.C1 * int(problem.delta1.sum()) + scaled.C2 * int(problem.delta2.sum()))
    if source_total + int(unary[unary > 0].sum()) + penalty_total >= _INT64_SAFE // 2:
        raise ValueError("graph-cut capacities overflow int64 after scaling; use solver='cbc'")
    if n * km >= 2**31:
        raise ValueError(f"problem too large for the graph cut ({n * km} variables)")
    edges = index_array(problem.edges.reshape(-1, 2))
    table = capacity_table(source_total + 1, scaled.C1, scaled.C2)
    monotone = getattr(problem, "monotone", None)
    start, nbr, mate, kind, res = build_relabel_graph(n, km, edges, kinds, table, monotone)
    offset = int(costs[:, 0].sum()) - source_total
    return CutGraph(-unary, start, nbr, mate, kind, table, res, offset, scaled.scale, scaled.error)


@compiled
def arc_list(n, start, nbr, kind, table):
    """One (tail, head, capacity) per half-arc with positive capacity (for other max-flow codes)."""
    count = 0
    for i in range(start[n]):
        if table[kind[i], 0] > 0:
            count += 1
    tail = np.empty(count, np.int32)
    head = np.empty(count, np.int32)
    capacity = np.empty(count, np.int64)
    at = 0
    for v in range(n):
        for i in range(start[v], start[v + 1]):
            c = table[kind[i], 0]
            if c > 0:
                tail[at] = v
                head[at] = nbr[i]
                capacity[at] = c
                at += 1
    return tail, head, capacity

