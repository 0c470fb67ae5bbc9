"""Exact relabelling by steepest descent: one-level cuts instead of one cut over every threshold.

With convex costs per region (every row of the integer costs has non-negative second
differences, as the absolute loss of counts and priors gives) the objective of the
consistency problem is L-natural convex in the labels (docs/design.md section 4, "The
descent"): the unary costs are convex, and every pair term is a convex function of one
difference (|l_u - l_v| <= 1 on an edge, with the penalty C of a change; l_n <= l_m on a
monotone pair). A feasible labelling x is then optimal exactly when no set S of regions
gains by moving one class down or up together, g(x) <= g(x -+ chi_S), and each of those
two questions is one minimum cut on one node per region, with at most one arc per edge.
From a feasible start close to the optimum a few such cuts reach it; moving down by the
largest sets that lose nothing, it stops at the *smallest* optimal labelling, the one the
one-cut solve returns, so the two give the same labels.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from relabel._backends._cutgraph import DOWN, PENALTY1, PENALTY2, UP, capacity_table
from relabel._backends._pseudoflow import certify, pseudoflow, sink_side, source_side
from relabel._numba import compiled

__all__ = ["convex_rows", "descend"]

#: The most cuts one descent may take before it gives the problem back to the one-cut solve
#: (each strictly improving cut lowers an integer objective, so it ends; this bounds the time).
MAX_CUTS = 64
#: The fewest classes the descent is used for: with two the one cut has one level already; with
#: three the descent's four to six cuts of one level cost what the one cut's two levels cost on
#: OTreeBagger's groups (balance-scale, tae), and from four on less, down to a fifth at nine
#: (``python benchmarks/relabel_descent.py``, docs/design.md section 4).
MIN_CLASSES = 4


def convex_rows(costs: NDArray[np.int64]) -> bool:
    """Whether every row of integer costs is convex in the class (second differences >= 0).

    Examples
    --------
    >>> import numpy as np
    >>> convex_rows(np.array([[2, 1, 0, 1]])), convex_rows(np.array([[0, 2, 0]]))
    (True, False)
    """
    return bool(np.all(costs[:, 2:] - 2 * costs[:, 1:-1] + costs[:, :-2] >= 0)) if costs.shape[1] > 2 else True


@compiled
def _envelope(x0, start, head, step, sign):
    """The feasible labelling closest to ``x0`` on one side, by a label-correcting sweep.

    The arcs u -> head (CSR by u, ``start``) carry ``step`` 1 (an edge, listed both ways)
    or 0 (a monotone pair). ``sign`` +1: the least x >= x0 with x_w >= x_u - step on every
    arc (monotone arcs listed n -> m); ``sign`` -1: the greatest x <= x0 with
    x_w <= x_u + step (monotone arcs listed m -> n). A label only moves away from its
    start and never past the far end of ``x0``'s range, so the sweep ends.
    """
    n = x0.shape[0]
    x = x0.copy()
    queue = np.arange(n)
    waiting = np.ones(n, np.bool_)
    first, size = 0, n
    while size > 0:
        u = queue[first]
        first = (first + 1) % n
        size -= 1
        waiting[u] = False
        for i in range(start[u], start[u + 1]):
            w = head[i]
            c = x[u] - sign * step[i]
            if sign * (c - x[w]) > 0:
                x[w] = c
                if not waiting[w]:
                    waiting[w] = True
                    queue[(first + size) % n] = w
                    size += 1
    return x


@compiled
def _arcs(n, edges, monotone, upward):
    """The sweep's arcs grouped by tail (a counting sort): ``start``, and the heads and steps in that order.

    Every edge both ways with step 1; every monotone pair (n, m) as n -> m (``upward``) or
    m -> n with step 0.
    """
    start = np.zeros(n + 1, np.int64)
    for e in range(edges.shape[0]):
        start[edges[e, 0] + 1] += 1
        start[edges[e, 1] + 1] += 1
    for p in range(monotone.shape[0]):
        start[monotone[p, 0 if upward else 1] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    fill = start[:n].copy()
    heads = np.empty(start[n], np.int64)
    steps = np.empty(start[n], np.int64)
    for e in range(edges.shape[0]):
        for a, b in ((edges[e, 0], edges[e, 1]), (edges[e, 1], edges[e, 0])):
            heads[fill[a]], steps[fill[a]] = b, 1
            fill[a] += 1
    for p in range(monotone.shape[0]):
        a, b = (monotone[p, 0], monotone[p, 1]) if upward else (monotone[p, 1], monotone[p, 0])
        heads[fill[a]], steps[fill[a]] = b, 0
        fill[a] += 1
    return start, heads, steps


def start_labels(costs: NDArray[np.int64], edges: NDArray[np.intp], monotone: NDArray[np.intp],
                 hint: NDArray[np.intp] | None = None) -> NDArray[np.int64]:
    """A feasible labelling near the optimum: the midpoint of the two feasible envelopes of the rows' best classes.

    With ``hint`` (labels, consistent or not), the envelopes of the hint instead.

    The least feasible labelling above the rows' own best classes and the greatest below
    them both keep every edge one apart and every monotone pair in order; so does the
    ceiling of their mean (two labels within one of each other, halved and rounded).
    """
    n = costs.shape[0]
    x0 = np.argmin(costs, axis=1).astype(np.int64) if hint is None else np.asarray(hint, dtype=np.int64)
    edges = np.ascontiguousarray(edges.reshape(-1, 2), dtype=np.int64)
    monotone = np.ascontiguousarray(monotone.reshape(-1, 2), dtype=np.int64)
    up = _arcs(n, edges, monotone, True)
    # Without monotone pairs both sweeps follow the same arcs (every edge both ways).
    down = up if monotone.shape[0] == 0 else _arcs(n, edges, monotone, False)
    # Rounded up: from below, the descent's first moves up are large ones (5.3 cuts a descent on ESL's
    # groups against 6.6 rounded down, the same labels).
    return (_envelope(x0, *up, 1) + _envelope(x0, *down, -1) + 1) // 2


@compiled
def _arc_kind(x, direction, u, v):
    """How an edge (u, v) enters the move by ``direction`` from x: 1 if u moving brings v (an implication
    u -> v), -1 if v brings u, 0 for equal labels (then a penalty arc, if the edge has a penalty)."""
    d = x[u] - x[v]
    if d == 0:
        return 0
    return 1 if d == direction else -1


@compiled
def _step_terms(costs, x, direction, edges, kinds, c1, c2, monotone):
    """The terms of moving a set S of regions by ``direction`` (+1 or -1) from the consistent x.

    ``gain[n]`` is the change of the objective when n moves alone: its cost, and the
    penalties of its edges to regions of another label, which change by the same amount
    whichever end moves (-C for the end that follows the other: the labels meet; +C for
    the end ahead, which cannot move alone). ``movable[n]``: whether n + direction is a
    class. ``start``: the graph's entry ranges per region (:func:`_step_arcs`).
    ``infinite``: more than the cut of the empty move (the losses and every penalty).
    Returns ``(gain, movable, start, infinite)``.
    """
    n, k = costs.shape
    gain = np.zeros(n, np.int64)
    movable = np.zeros(n, np.bool_)
    for v in range(n):
        t = x[v] + direction
        if 0 <= t < k:
            movable[v] = True
            gain[v] = costs[v, t] - costs[v, x[v]]
    start = np.zeros(n + 1, np.int64)
    n_penalised = 0
    for e in range(edges.shape[0]):
        a, b = edges[e, 0], edges[e, 1]
        how = _arc_kind(x, direction, a, b)
        if how == 0 and kinds[e] == 0:
            continue
        start[a + 1] += 1
        start[b + 1] += 1
        if how == 0:
            n_penalised += 1
        elif kinds[e] != 0:
            c = c1 if kinds[e] == 1 else c2
            follower, leader = (b, a) if how == 1 else (a, b)
            gain[follower] -= c
            gain[leader] += c
    for p in range(monotone.shape[0]):
        if x[monotone[p, 0]] == x[monotone[p, 1]]:
            start[monotone[p, 0] + 1] += 1
            start[monotone[p, 1] + 1] += 1
    infinite = 1 + max(c1, c2) * n_penalised
    for v in range(n):
        if movable[v]:
            infinite += abs(gain[v])
        start[v + 1] += start[v]
    return gain, movable, start, infinite


@compiled
def _step_arcs(x, direction, edges, kinds, monotone, start, table):
    """The half-arc lists (:mod:`relabel._backends._cutgraph`'s) of the move by ``direction`` on ``start``.

    One node per region, s_n = 1 when n moves (the source side). p -> q of infinite
    capacity (``DOWN`` at p, ``UP`` at q) where p moving without q breaks a constraint
    (an edge whose ends differ by ``direction`` in that order, a monotone pair of equal
    labels: upwards the lower end brings the upper, downwards the upper the lower); an
    arc of capacity C both ways (``PENALTY1``/``PENALTY2``) for an edge of equal labels
    with a penalty. Returns ``(nbr, mate, kind, res)``.
    """
    n = start.shape[0] - 1
    fill = start[:n].copy()
    total = start[n]
    nbr = np.empty(total, np.int32)
    mate = np.empty(total, np.int32)
    kind = np.empty(total, np.int8)
    res = np.empty(total, np.int64)
    for e in range(edges.shape[0]):
        a, b = edges[e, 0], edges[e, 1]
        how = _arc_kind(x, direction, a, b)
        if how == 0:
            if kinds[e] != 0:
                penalty = PENALTY1 if kinds[e] == 1 else PENALTY2
                _arc(a, b, penalty, penalty, table, fill, nbr, mate, kind, res)
        elif how == 1:
            _arc(a, b, DOWN, UP, table, fill, nbr, mate, kind, res)
        else:
            _arc(b, a, DOWN, UP, table, fill, nbr, mate, kind, res)
    for p in range(monotone.shape[0]):
        low, high = monotone[p, 0], monotone[p, 1]
        if x[low] == x[high]:
            if direction > 0:
                _arc(low, high, DOWN, UP, table, fill, nbr, mate, kind, res)
            else:
                _arc(high, low, DOWN, UP, table, fill, nbr, mate, kind, res)
    return nbr, mate, kind, res


@compiled
def _arc(p, q, kind_p, kind_q, table, fill, nbr, mate, kind, res):
    """Write the arc p -> q: its entry at p of kind ``kind_p`` and at q of ``kind_q``, each the other's mate."""
    i, j = fill[p], fill[q]
    fill[p] += 1
    fill[q] += 1
    nbr[i], nbr[j] = q, p
    mate[i], mate[j] = j, i
    kind[i], kind[j] = kind_p, kind_q
    res[i], res[j] = table[kind_p, 0], table[kind_q, 0]


def _best_move(costs, x, direction, widest, edges, kinds, c1, c2, monotone):
    """The set S moving by ``direction`` that changes the objective least, and that change; None if uncertified.

    The smallest such set (the source side of a minimum cut reached from the excesses),
    or with ``widest`` the largest (every node that cannot reach a deficit along residual
    arcs): both are minimum cuts of the same flow, and both are certified.
    """
    gain, movable, start, infinite = _step_terms(costs, x, direction, edges, kinds, c1, c2, monotone)
    table = capacity_table(infinite, c1, c2)
    nbr, mate, kind, res = _step_arcs(x, direction, edges, kinds, monotone, start, table)
    n = gain.shape[0]
    # A region whose label cannot move has a sink arc of infinite capacity.
    excess = -np.where(movable, gain, infinite)
    flow_excess = excess.copy()
    pseudoflow(n, flow_excess, start, nbr, res, mate)
    # One search per cut; certify refuses a flow that is not maximum either way (a deficit on the source
    # side, an excess on the sink side), so the search's own test of an augmenting path is not needed.
    if widest:
        side = ~sink_side(n, flow_excess, start, nbr, mate, res)
    else:
        side = source_side(n, flow_excess, start, nbr, res)[0]
    cut = certify(n, excess, start, nbr, mate, kind, table, res, side)
    if cut < 0 or np.any(side & ~movable):
        return None
    # A cut of S pays the gains of S above zero, the losses (gains below zero) outside S and the penalties
    # S parts: the change of the objective is the cut less every loss. Both sides are minimum cuts.
    return side, cut - int(-gain[movable & (gain < 0)].sum())


def descend(problem, scaled, start: NDArray[np.intp] | None = None) -> tuple[NDArray[np.intp], int] | None:
    """The smallest optimal labelling of the integer problem ``scaled`` by steepest descent, and the cuts it took.

    ``start``: labels to start near (:func:`start_labels`); the result does not depend on them.

    None when the costs are not convex per row (the objective is then not L-natural
    convex and a local optimum need not be global), when a cut fails its certificate, or
    after :data:`MAX_CUTS` cuts: the caller solves by one cut instead.
    """
    costs = np.ascontiguousarray(scaled.costs, dtype=np.int64)
    if problem.n_classes < MIN_CLASSES or not convex_rows(costs):
        return None
    edges = np.ascontiguousarray(problem.edges.reshape(-1, 2), dtype=np.int64)
    monotone = np.ascontiguousarray(problem.monotone.reshape(-1, 2), dtype=np.int64)
    kinds = np.zeros(edges.shape[0], np.int8)
    if scaled.C1 > 0:
        kinds[problem.delta1] = 1
    if scaled.C2 > 0:
        kinds[problem.delta2] = 2
    c1, c2 = int(scaled.C1), int(scaled.C2)
    x = start_labels(costs, edges, monotone, start)
    cuts = 0
    # Down by the largest set that loses nothing (the least change, possibly none), until no
    # non-empty set loses nothing: then x lies below every minimiser (docs/design.md, Theorem 4.4c).
    # Each such move keeps g or lowers it, and lowers the sum of the labels: the phase ends.
    while True:
        down = _best_move(costs, x, -1, True, edges, kinds, c1, c2, monotone)
        cuts += 1
        if down is None or cuts >= MAX_CUTS:
            return None
        if not (down[1] <= 0 and down[0].any()):
            break
        x = x - down[0]
    # Then up by the smallest set that gains, which stays below the smallest minimiser, until none
    # gains: x is then the smallest minimiser, and no downward cut needs asking again (4.4c).
    while True:
        up = _best_move(costs, x, 1, False, edges, kinds, c1, c2, monotone)
        cuts += 1
        if up is None:
            return None
        if up[1] >= 0:
            return x.astype(np.intp), cuts
        if cuts >= MAX_CUTS:
            return None
        x = x + up[0]
