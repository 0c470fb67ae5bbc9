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
from numba import njit
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


def _region_lists(n_regions, pairs, kinds, directed):
    """Per-region lists of the pairs, with each pair's slot at the other end.

    Undirected (edges): both ends list every edge in the edge list, and the edges with
    ``kinds != 0`` in the penalty list. Directed (monotone pairs): the lower end
    ``pairs[e, 0]`` lists the pair in the out-list, the upper end in the in-list. A list
    is ``(start, other, mate, kind)``: region r's slots are ``start[r]:start[r + 1]``,
    ``other`` the other end, ``mate`` the slot in the other end's list (the other list
    when directed) and ``kind`` the pair's kind. Returns the two lists.
    """
    sizes = (pairs.shape[0],) * 2 if directed else (2 * pairs.shape[0], 2 * int(np.count_nonzero(kinds)))
    # int32 (region indices and slots): less fresh memory to touch on large graphs.
    lists = [(np.zeros(n_regions + 1, dtype=np.int64), np.empty(size, np.int32), np.empty(size, np.int32),
              np.empty(size, np.int8)) for size in sizes]
    _fill_lists(pairs, kinds, directed, *lists[0], *lists[1], np.empty(n_regions + 1, np.int64),
                np.empty(n_regions + 1, np.int64))
    return lists


@compiled
def _fill_lists(pairs, kinds, directed, a_start, a_other, a_mate, a_kind, b_start, b_other, b_mate, b_kind,
                a_fill, b_fill):
    """The lists of :func:`_region_lists` (``kinds`` is 1 for monotone pairs): counts, starts, then slots in pair order."""
    for e in range(pairs.shape[0]):
        a = pairs[e, 0]
        b = pairs[e, 1]
        a_start[a + 1] += 1
        if directed:
            b_start[b + 1] += 1
        else:
            a_start[b + 1] += 1
            if kinds[e] != 0:
                b_start[a + 1] += 1
                b_start[b + 1] += 1
    for r in range(a_start.shape[0] - 1):
        a_start[r + 1] += a_start[r]
        b_start[r + 1] += b_start[r]
    for r in range(a_start.shape[0]):
        a_fill[r] = a_start[r]
        b_fill[r] = b_start[r]
    for e in range(pairs.shape[0]):
        a = pairs[e, 0]
        b = pairs[e, 1]
        if directed:
            _link(a, b, kinds[e], a_start, a_fill, a_other, a_mate, a_kind, b_start, b_fill, b_other, b_mate, b_kind)
        else:
            _link(a, b, kinds[e], a_start, a_fill, a_other, a_mate, a_kind, a_start, a_fill, a_other, a_mate, a_kind)
            if kinds[e] != 0:
                _link(a, b, kinds[e], b_start, b_fill, b_other, b_mate, b_kind,
                      b_start, b_fill, b_other, b_mate, b_kind)


@njit(inline="always")
def _link(a, b, kind, a_start, a_fill, a_other, a_mate, a_kind, b_start, b_fill, b_other, b_mate, b_kind):
    """List the pair (a, b) at a (in the a lists) and at b (in the b lists), each slot naming the other."""
    sa = a_fill[a]
    a_fill[a] = sa + 1
    sb = b_fill[b]
    b_fill[b] = sb + 1
    a_other[sa] = b
    a_mate[sa] = sb - b_start[b]
    a_kind[sa] = kind
    b_other[sb] = a
    b_mate[sb] = sa - a_start[a]
    b_kind[sb] = kind


def _layout(km, e_start, p_start, mo_start, mi_start):
    """Entry ranges of every node: ``start`` (N km + 1) and ``blocks`` (N km, 2), its first penalty and UP entries.

    Node (r, j) holds its DOWN block, then its penalty block, then its UP block:
    DOWN = [x_{r,j-1}] + [x_{o,j-1} per edge] + [x_{o,j} per monotone pair (r, o)],
    penalties = [x_{o,j} per penalised edge], UP = [x_{r,j+1}] + [x_{o,j+1} per edge]
    + [x_{o,j} per monotone pair (o, r)], the implication blocks present only when
    j >= 1 (DOWN) and j <= km - 2 (UP).
    """
    j = np.arange(km)
    implications = 1 + np.diff(e_start)[:, None]
    down = np.where(j >= 1, implications, 0) + np.diff(mo_start)[:, None]
    rise = np.where(j <= km - 2, implications, 0) + np.diff(mi_start)[:, None]
    penalties = np.broadcast_to(np.diff(p_start)[:, None], down.shape)
    start = np.zeros(down.size + 1, dtype=np.int64)
    np.cumsum((down + penalties + rise).ravel(), out=start[1:])
    blocks = np.empty((down.size, 2), dtype=np.int64)
    blocks[:, 0] = start[:-1] + down.ravel()
    blocks[:, 1] = blocks[:, 0] + penalties.ravel()
    return start, blocks


@compiled
def _fill(km, start, blocks, e_start, e_other, e_mate, p_start, p_other, p_mate, p_kind,
          mo_start, mo_other, mo_mate, mi_start, mi_other, mi_mate, table, nbr, mate, kind, res):
    """Write every entry of the layout of :func:`_layout`; the mate of each is computed, not searched.

    ``res`` starts at the out-capacity of each entry's kind (``table[kind, 0]``).
    """
    infinite = table[DOWN, 0]
    for r in range(e_start.shape[0] - 1):
        e0 = e_start[r]
        de = e_start[r + 1] - e0
        p0 = p_start[r]
        dp = p_start[r + 1] - p0
        for j in range(km):
            v = r * km + j
            i = start[v]
            if j >= 1:
                # x_{r,j} -> x_{r,j-1}, x_{r,j} -> x_{o,j-1}: mates in the UP block of the head.
                _entry(i, v - 1, blocks[v - 1, 1], DOWN, infinite, nbr, mate, kind, res)
                for t in range(de):
                    u = e_other[e0 + t] * km + j - 1
                    _entry(i + 1 + t, u, blocks[u, 1] + 1 + e_mate[e0 + t], DOWN, infinite, nbr, mate, kind, res)
                i += 1 + de
            for t in range(mo_start[r], mo_start[r + 1]):
                # Monotone pair (r, o): x_{r,j} -> x_{o,j}; the mate is among o's in-pairs.
                o = mo_other[t]
                u = o * km + j
                skip = 1 + e_start[o + 1] - e_start[o] if j <= km - 2 else 0
                _entry(i, u, blocks[u, 1] + skip + mo_mate[t], DOWN, infinite, nbr, mate, kind, res)
                i += 1
            for t in range(dp):
                u = p_other[p0 + t] * km + j
                k = PENALTY1 + p_kind[p0 + t] - 1
                _entry(i + t, u, blocks[u, 0] + p_mate[p0 + t], k, table[k, 0], nbr, mate, kind, res)
            i += dp
            if j <= km - 2:
                _entry(i, v + 1, start[v + 1], UP, 0, nbr, mate, kind, res)
                for t in range(de):
                    u = e_other[e0 + t] * km + j + 1
                    _entry(i + 1 + t, u, start[u] + 1 + e_mate[e0 + t], UP, 0, nbr, mate, kind, res)
                i += 1 + de
            for t in range(mi_start[r], mi_start[r + 1]):
                # Monotone pair (o, r): x_{o,j} -> x_{r,j}; the mate is among o's out-pairs.
                o = mi_other[t]
                u = o * km + j
                skip = 1 + e_start[o + 1] - e_start[o] if j >= 1 else 0
                _entry(i, u, start[u] + skip + mi_mate[t], UP, 0, nbr, mate, kind, res)
                i += 1


@njit(inline="always")
def _entry(i, head, mate_entry, entry_kind, capacity, nbr, mate, kind, res):
    nbr[i] = head
    mate[i] = mate_entry
    kind[i] = entry_kind
    res[i] = capacity


def build_relabel_graph(n_regions: int, km: int, edges: np.ndarray, kinds: np.ndarray, table: np.ndarray,
                        monotone: np.ndarray | None = None):
    """Half-arc incidence lists of the cut graph of a consistency problem (tight form).

    Node ``r km + j`` is x_{r,j} (label(r) > j). Arcs: x_{r,j} -> x_{r,j-1} and, for every
    edge (a, b), x_{a,j} -> x_{b,j-1} and x_{b,j} -> x_{a,j-1} (the implications of eq. 2
    and the tight eq. 6-8, kind DOWN seen from the tail, UP from the head); for an edge
    with ``kinds[e]`` = 1 or 2, x_{a,j} -- x_{b,j} with penalty C1 or C2 both ways
    (eq. 7-10); for every monotone pair (n, m), x_{n,j} -> x_{m,j} (docs/design.md section 4b,
    label(n) <= label(m)). Entries of a node are written in a fixed order (:func:`_layout`),
    so the mate of every entry is computed, not searched: O(N K + E K) sequential work,
    17 bytes per entry.

    Returns ``start, nbr, mate, kind, res`` with ``res`` the capacities ``table[kind, 0]``.
    """
    edges = index_array(np.reshape(edges, (-1, 2)))
    pairs = np.zeros((0, 2), np.int64) if monotone is None else index_array(np.reshape(monotone, (-1, 2)))
    (e_start, e_other, e_mate, _), (p_start, p_other, p_mate, p_kind) = _region_lists(
        n_regions, edges, np.array(kinds, dtype=np.int8), False
    )
    (mo_start, mo_other, mo_mate, _), (mi_start, mi_other, mi_mate, _) = _region_lists(
        n_regions, pairs, np.ones(pairs.shape[0], np.int8), True
    )
    start, blocks = _layout(km, e_start, p_start, mo_start, mi_start)
    total = int(start[-1])
    if total >= 2**31:
        raise ValueError(f"problem too large for the graph cut ({total} arc entries, more than 2**31)")
    nbr = np.empty(total, np.int32)
    mate = np.empty(total, np.int32)
    kind = np.empty(total, np.int8)
    res = np.empty(total, np.int64)
    _fill(km, start, blocks, e_start, e_other, e_mate, p_start, p_other, p_mate, p_kind,
          mo_start, mo_other, mo_mate, mi_start, mi_other, mi_mate, table, nbr, mate, kind, res)
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
    mate: NDArray[np.int32]
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


def build_cut_graph(problem, scaled=None) -> CutGraph:
    """The tight formulation as a cut graph (docs/design.md section 4).

    Variable x_{n,k} (label(n) > k, k = 0..K-2) is node ``n (K-1) + k``, on the source
    side when 1. A unary coefficient a > 0 is an arc node->sink, a < 0 an arc
    source->node of capacity -a; an implication x_u <= x_v is an arc u->v of "infinite"
    capacity (one more than the cut of the all-zero labelling, so no minimum cut
    crosses it), among them one arc x_{n,k} -> x_{m,k} per k for every monotone pair
    (n, m) (docs/design.md section 4b); ``C |x_u - x_v|`` is one arc with capacity C both
    ways. O(N K + (E + P) K). ``scaled``: the problem's integer form when already made
    (:func:`relabel._scaling.cut_scaling`).
    """
    n, km = problem.n_regions, problem.n_classes - 1
    # Exact integers when the data allow; float data without a small common
    # denominator (e.g. balanced class weights) are rounded with a proven error bound.
    scaled = cut_scaling(problem) if scaled is None else scaled
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

