"""Exact relabelling by steepest descent: one-level cuts instead of one cut over every threshold.

With convex costs per region (every row of the integer costs has non-negative second
differences, as the absolute loss of counts and priors gives) the objective of the
consistency problem is L-natural convex in the labels (docs/design.md section 4, "The
descent"): the unary costs are convex, and every pair term is a convex function of one
difference (|l_u - l_v| <= 1 on an edge, with the penalty C of a change; l_n <= l_m on a
monotone pair). A feasible labelling x is then optimal exactly when no set S of regions
gains by moving one class down or up together, g(x) <= g(x -+ chi_S), and each of those
two questions is one minimum cut on one node per region, with at most one arc per edge.
From a feasible start close to the optimum a few such cuts reach it; a last descent with
the widest non-losing sets reaches the *smallest* optimal labelling, the one the one-cut
solve returns, so the two give the same labels.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from relabel._backends._cutgraph import build_relabel_graph, capacity_table
from relabel._backends._pseudoflow import certify, pseudoflow, source_side
from relabel._numba import compiled

__all__ = ["convex_rows", "descend"]

#: The most cuts one descent may take before it gives the problem back to the one-cut solve
#: (each strictly improving cut lowers an integer objective, so it ends; this bounds the time).
MAX_CUTS = 64
#: The fewest classes the descent is used for: it takes five to eight cuts of one level where the
#: one cut has K - 1 levels, so it pays from four classes on (measured on OTreeBagger's groups,
#: docs/design.md section 4).
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
def _by_tail(n, tail, head, step):
    """The arcs grouped by tail (a counting sort): ``start``, and the heads and steps in that order."""
    start = np.zeros(n + 1, np.int64)
    for e in range(tail.shape[0]):
        start[tail[e] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    fill = start[:n].copy()
    heads = np.empty(tail.shape[0], np.int64)
    steps = np.empty(tail.shape[0], np.int64)
    for e in range(tail.shape[0]):
        heads[fill[tail[e]]] = head[e]
        steps[fill[tail[e]]] = step[e]
        fill[tail[e]] += 1
    return start, heads, steps


def start_labels(costs: NDArray[np.int64], edges: NDArray[np.intp], monotone: NDArray[np.intp]) -> NDArray[np.int64]:
    """A feasible labelling near the optimum: the midpoint of the two feasible envelopes of the rows' best classes.

    The least feasible labelling above the rows' own best classes and the greatest below
    them both keep every edge one apart and every monotone pair in order; so does the
    floor of their mean (two labels within one of each other, halved and floored).
    """
    n = costs.shape[0]
    x0 = np.argmin(costs, axis=1).astype(np.int64)
    a, b = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
    low, high = monotone[:, 0].astype(np.int64), monotone[:, 1].astype(np.int64)
    ones, zeros = np.ones(2 * a.shape[0], np.int64), np.zeros(low.shape[0], np.int64)
    up = _by_tail(n, np.concatenate([a, b, low]), np.concatenate([b, a, high]), np.concatenate([ones, zeros]))
    down = _by_tail(n, np.concatenate([a, b, high]), np.concatenate([b, a, low]), np.concatenate([ones, zeros]))
    return (_envelope(x0, *up, 1) + _envelope(x0, *down, -1)) // 2


@compiled
def _step_terms(costs, x, direction, edges, kinds, c1, c2, monotone):
    """The binary problem of moving a set S of regions by ``direction`` (+1 or -1) from the feasible x.

    Returns ``(gain, movable, implied, penalised, penalty_kind)``: ``gain[n]`` the change
    of the objective when n moves alone (its cost, and the penalties of its edges to
    regions of another label, which move by the same amount whichever end moves:
    +C when the labels part, -C when they meet), ``movable[n]`` whether n + direction is
    a class; ``implied`` the pairs (p, q) where p moving without q breaks a constraint
    (an edge whose ends differ by ``direction`` in that order, a monotone pair of equal
    labels); ``penalised`` the edges of equal labels with a penalty, which cost C when
    exactly one end moves.
    """
    n, k = costs.shape
    gain = np.zeros(n, np.int64)
    movable = np.zeros(n, np.bool_)
    for v in range(n):
        t = x[v] + direction
        if 0 <= t < k:
            movable[v] = True
            gain[v] = costs[v, t] - costs[v, x[v]]
    n_implied, n_penalised = 0, 0
    for e in range(edges.shape[0]):
        d = x[edges[e, 0]] - x[edges[e, 1]]
        if d != 0:
            n_implied += 1
        elif kinds[e] != 0:
            n_penalised += 1
    for p in range(monotone.shape[0]):
        if x[monotone[p, 0]] == x[monotone[p, 1]]:
            n_implied += 1
    implied = np.empty((n_implied, 2), np.int64)
    penalised = np.empty((n_penalised, 2), np.int64)
    penalty_kind = np.empty(n_penalised, np.int8)
    i, j = 0, 0
    for e in range(edges.shape[0]):
        u, v = edges[e, 0], edges[e, 1]
        d = x[u] - x[v]
        if d == 0:
            if kinds[e] != 0:
                penalised[j, 0], penalised[j, 1] = u, v
                penalty_kind[j] = kinds[e]
                j += 1
            continue
        # The end whose label moves towards the other's must bring it along: u -> v when d == direction.
        if d == direction:
            implied[i, 0], implied[i, 1] = u, v
        else:
            implied[i, 0], implied[i, 1] = v, u
        i += 1
        if kinds[e] != 0:
            c = c1 if kinds[e] == 1 else c2
            # Moving the end that follows the other makes them meet (-C), moving the end ahead parts them (+C).
            gain[implied[i - 1, 1]] -= c
            gain[implied[i - 1, 0]] += c
    for p in range(monotone.shape[0]):
        low, high = monotone[p, 0], monotone[p, 1]
        if x[low] == x[high]:
            # label(low) <= label(high): up, low brings high along; down, high brings low.
            if direction > 0:
                implied[i, 0], implied[i, 1] = low, high
            else:
                implied[i, 0], implied[i, 1] = high, low
            i += 1
    return gain, movable, implied, penalised, penalty_kind


def _best_move(costs, x, direction, widest, edges, kinds, c1, c2, monotone):
    """The set S moving by ``direction`` that changes the objective least, and that change; None if uncertified.

    The smallest such set (the source side of a minimum cut reached from the excesses),
    or with ``widest`` the largest (every node that cannot reach a deficit along residual
    arcs): both are minimum cuts of the same flow, and both are certified.
    """
    gain, movable, implied, penalised, penalty_kind = _step_terms(costs, x, direction, edges, kinds, c1, c2,
                                                                  monotone)
    n = gain.shape[0]
    # Above any cut of finite arcs (the cut of the empty move is at most the sum of |gain|).
    infinite = int(np.abs(gain[movable]).sum()) + max(c1, c2) * penalised.shape[0] + 1
    excess = -np.where(movable, gain, infinite)
    table = capacity_table(infinite, c1, c2)
    start, nbr, mate, kind, res = build_relabel_graph(n, 1, penalised, penalty_kind, table, implied)
    flow_excess = excess.copy()
    pseudoflow(n, flow_excess, start, nbr, res, mate)
    side, reaches_deficit = source_side(n, flow_excess, start, nbr, res)
    if reaches_deficit:
        return None
    if widest:
        side = ~_reaching_deficit(start, nbr, mate, res, flow_excess)
    if certify(n, excess, start, nbr, mate, kind, table, res, side) < 0 or np.any(side & ~movable):
        return None
    # The change of the objective, from the set itself: its regions' gains and the penalties it parts.
    parted = side[penalised[:, 0]] != side[penalised[:, 1]]
    return side, int(gain[side].sum()) + int(np.where(penalty_kind[parted] == 1, c1, c2).sum())


@compiled
def _reaching_deficit(start, nbr, mate, res, excess):
    """The nodes from which a deficit is reached along residual arcs (a search backwards from the deficits)."""
    n = excess.shape[0]
    seen = excess < 0
    queue = np.empty(n, np.int64)
    end = 0
    for v in range(n):
        if seen[v]:
            queue[end] = v
            end += 1
    q = 0
    while q < end:
        w = queue[q]
        q += 1
        for i in range(start[w], start[w + 1]):
            u = nbr[i]
            if res[mate[i]] > 0 and not seen[u]:  # the arc u -> w has room
                seen[u] = True
                queue[end] = u
                end += 1
    return seen


def descend(problem, scaled) -> tuple[NDArray[np.intp], int] | None:
    """The smallest optimal labelling of the integer problem ``scaled`` by steepest descent, and the cuts it took.

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
    x = start_labels(costs, edges, monotone)
    cuts = 0
    while cuts < MAX_CUTS - 1:
        # Down by the largest set that loses nothing (the least change, possibly none); else up by the
        # smallest set that gains. Neither: x is optimal (no set gains either way: the L-natural optimality
        # criterion), and the smallest optimum (lowering its regions above the smallest optimum would lose
        # nothing). Each move gains, or keeps the objective and lowers the sum of the labels: the loop ends.
        down = _best_move(costs, x, -1, True, edges, kinds, c1, c2, monotone)
        cuts += 1
        if down is None:
            return None
        if down[1] <= 0 and down[0].any():
            x = x - down[0]
            continue
        up = _best_move(costs, x, 1, False, edges, kinds, c1, c2, monotone)
        cuts += 1
        if up is None:
            return None
        if up[1] >= 0:
            return x.astype(np.intp), cuts
        x = x + up[0]
    return None
