"""Building trees whose sum is consistent at the data's resolution (docs/design.md section 13).

A move of one feature inside one gap between consecutive training values crosses every
threshold the trees put in that gap; the certificate (:func:`ensemble.certificates._certificates.gap_loads`)
adds up each tree's largest rise and fall there. Two pieces keep those loads small by
construction in the certified forest:

- :func:`one_threshold_per_gap`: a tree's thresholds that fall in one gap become one
  threshold, so the tree counts once there, with its largest step, not with the sum of
  its steps at several places;
- :func:`capped_leaf_values`: each face pair p of a tree across a threshold in a gap
  gets the share budget / N(p) of the gap's budget, N(p) at least the crossings (a tree
  and one of its threshold values) along any one line through p's box
  (:class:`ensemble.certificates._certificates.GapPairs`), and the tree's leaf values
  are moved, as little as possible, so that no pair steps by more than its share.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ensemble.base._kernels import compiled


__all__ = ["MAX_LP_PAIRS", "capped_leaf_values", "one_threshold_per_gap"]

#: Past this many broken pairs in one tree the linear program takes seconds to minutes (deep trees in
#: many dimensions): the midpoint of the envelopes, a feasible labelling in one pass, is used instead.
MAX_LP_PAIRS = 5_000


def one_threshold_per_gap(nodes: tuple, grid, countable: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The tree's thresholds with every threshold of one gap of ``grid`` replaced by the first of them.

    Parameters
    ----------
    nodes : tuple
        ``(left, right, feature, threshold[, missing_left])`` of the tree.
    grid : relabel.DataGrid
        The training values of every feature.
    countable : ndarray of bool
        Features whose thresholds are joined (not the categorical ones).

    Returns
    -------
    ndarray of float64, shape (n_nodes,)
        The new thresholds. Every threshold stays inside its gap between training
        values, which lies inside its node's own gap, so every training row keeps its
        side; thresholds of other trees are neither read nor met.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import DataGrid
    >>> nodes = (np.array([1, 3, -1, -1, -1]), np.array([2, 4, -1, -1, -1]), np.array([0, 0, -2, -2, -2]),
    ...          np.array([2.5, 2.7, -2.0, -2.0, -2.0]))
    >>> one_threshold_per_gap(nodes, DataGrid((np.array([2.0, 3.0]),)), np.array([True])).tolist()
    [2.5, 2.5, -2.0, -2.0, -2.0]
    """
    left, feature, threshold = np.asarray(nodes[0]), np.asarray(nodes[2]), np.array(nodes[3], dtype=np.float64)
    internal = np.flatnonzero((left >= 0) & np.isfinite(threshold))
    for f in np.unique(feature[internal]):
        if not countable[f] or grid.values[f] is None:
            continue
        at = internal[feature[internal] == f]
        gaps = grid.threshold_gaps(int(f), threshold[at])
        _, first = np.unique(gaps, return_index=True)
        lookup = dict(zip(gaps[first].tolist(), threshold[at][first].tolist(), strict=True))
        threshold[at] = [lookup[g] for g in gaps.tolist()]
    return threshold


def capped_leaf_values(value: NDArray[np.int64], a: NDArray[np.int64], b: NDArray[np.int64],
                       cap: NDArray[np.int64], weight: NDArray[np.float64] | None = None) -> NDArray[np.int64]:
    """The values closest to ``value`` (weighted L1) with ``|new[a_i] - new[b_i]| <= cap_i`` for every pair i.

    Parameters
    ----------
    value : ndarray of int64, shape (n_nodes,)
        A tree's integer values (only the leaves named in the pairs move).
    a, b : ndarray of int64, shape (P,)
        The pairs of leaves (:class:`ensemble.certificates._certificates.GapPairs`).
    cap : ndarray of int64, shape (P,)
        The largest difference allowed on each pair (>= 0).
    weight : ndarray of shape (n_nodes,), optional
        The weight of every leaf's rows (a leaf of weight 0 follows its neighbours);
        equal weights by default.

    Returns
    -------
    ndarray of int64, shape (n_nodes,)
        Values keeping every cap and minimising ``sum weight |new - value|``; the
        values as they are where they already keep the caps.

    Notes
    -----
    The leaves that can move are those of the connected components, in the graph of
    the pairs, of the pairs that break their cap; every other leaf keeps its value.
    On them the problem is a linear program whose constraints are differences of two
    values: the dual of a minimum-cost circulation (:func:`_l1_projection_by_flow`,
    OR-Tools' cost-scaling push-relabel on integers, the values read as the potentials of the
    optimal flow). Its result is accepted only when it keeps every cap and its weighted
    change equals the circulation's cost (weak duality: no values do better); else
    HiGHS's simplex solves the same program (its vertex optimum is integer, the matrix
    being totally unimodular: it is rounded and checked). Should both fail, or the
    broken pairs be more than :data:`MAX_LP_PAIRS`, the (feasible, not optimal)
    midpoint of the smallest function above ``value`` and the largest below it that
    keep the caps is returned instead.

    Examples
    --------
    >>> import numpy as np
    >>> capped_leaf_values(np.array([0, 0, 10]), np.array([1]), np.array([2]), np.array([4]),
    ...                    np.array([0.0, 3.0, 1.0])).tolist()
    [0, 0, 4]
    """
    value = np.asarray(value, dtype=np.int64)
    a, b, cap = (np.asarray(x, dtype=np.int64) for x in (a, b, cap))
    broken = np.abs(value[a] - value[b]) > cap
    if not broken.any():
        return value.copy()
    if broken.sum() > MAX_LP_PAIRS:
        return _midpoint_projection(value, a, b, cap)
    for solve in (_l1_projection_by_flow, _l1_projection):
        out = solve(value, a, b, cap, broken, weight)
        if out is not None and not np.any(np.abs(out[a] - out[b]) > cap):
            return out
    return _midpoint_projection(value, a, b, cap)


@compiled
def _moving_mask(n, a, b, broken):
    """Whether each of ``n`` leaves lies in a component, in the graph of the pairs, of a broken pair (union-find)."""
    parent = np.arange(n)
    for i in range(a.shape[0]):
        x, y = a[i], b[i]
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        while parent[y] != y:
            parent[y] = parent[parent[y]]
            y = parent[y]
        if x != y:
            parent[max(x, y)] = min(x, y)
    root = np.empty(n, dtype=np.int64)
    for i in range(n):
        x = i
        while parent[x] != x:
            x = parent[x]
        root[i] = x
    hit = np.zeros(n, dtype=np.bool_)
    for i in range(a.shape[0]):
        if broken[i]:
            hit[root[a[i]]] = True
    moving = np.empty(n, dtype=np.bool_)
    for i in range(n):
        moving[i] = hit[root[i]]
    return moving


def _moving_leaves(value, a, b, broken, weight):
    """The leaves of the components (in the graph of the pairs) of the broken pairs, the pairs among them, and the
    leaves' weights (1 without ``weight``, negative ones as 0)."""
    n = value.shape[0]
    moving = _moving_mask(n, np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64),
                          np.ascontiguousarray(broken, dtype=np.bool_))
    index = np.full(n, -1, dtype=np.int64)
    free = np.flatnonzero(moving)
    index[free] = np.arange(free.shape[0])
    inside = moving[a] & moving[b]  # a pair touches a component entirely or not at all
    w = np.ones(free.shape[0]) if weight is None else np.maximum(np.asarray(weight, dtype=np.float64)[free], 0.0)
    return free, index, inside, w


def _l1_projection_by_flow(value, a, b, cap, broken, weight):
    """The weighted L1 projection as the potentials of a minimum-cost circulation, or None.

    Nodes: the moving leaves and a root of potential 0. A pair (a, b) with cap c is two
    arcs a -> b and b -> a of cost c and unbounded capacity; leaf i has an arc root -> i
    of cost value_i and one i -> root of cost -value_i, both of capacity its weight. The
    dual of the circulation is: potentials x with x_b - x_a <= c on every pair arc, and
    sum_i weight_i |x_i - value_i| smallest, our problem. Potentials read from the
    shortest distances from and to the root in the residual graph of an optimal flow
    are optimal. Weights are
    integers: row counts as they are, other weights rounded to 16 bits of the largest;
    a leaf without rows weighs 1/64 of one row, so that it follows its neighbours.
    """
    from ortools.graph.python import min_cost_flow

    free, index, inside, w = _moving_leaves(value, a, b, broken, weight)
    m = free.shape[0]
    top = float(w.max(initial=0.0))
    whole = top <= 1 << 16 and np.array_equal(w, np.rint(w))
    w_int = np.rint(w if whole or top == 0 else w * ((1 << 16) / top)).astype(np.int64) * 64
    w_int[w_int == 0] = 1  # a leaf without rows follows its neighbours (1/64 of one row's pull)
    v = value[free]
    ia, ib, c = index[a[inside]], index[b[inside]], cap[inside]
    root = m
    unbounded = int(w_int.sum()) + 1  # more than any flow: every pair arc stays residual
    tail = np.concatenate([ia, ib, np.full(m, root), np.arange(m)]).astype(np.int64)
    head = np.concatenate([ib, ia, np.arange(m), np.full(m, root)]).astype(np.int64)
    cost = np.concatenate([c, c, v, -v]).astype(np.int64)
    capacity = np.concatenate([np.full(2 * ia.shape[0], unbounded), w_int, w_int]).astype(np.int64)
    flow_solver = min_cost_flow.SimpleMinCostFlow()
    arcs = flow_solver.add_arcs_with_capacity_and_unit_cost(tail, head, capacity, cost)
    if flow_solver.solve() != flow_solver.OPTIMAL:
        return None
    flow = np.asarray(flow_solver.flows(arcs), dtype=np.int64)
    ahead, back = flow < capacity, flow > 0
    r_tail, r_head = np.concatenate([tail[ahead], head[back]]), np.concatenate([head[ahead], tail[back]])
    r_cost = np.concatenate([cost[ahead], -cost[back]])
    # The optimal potentials are those with x_v - x_u <= cost on every residual arc u -> v: the largest are the
    # distances from the root, the smallest minus the distances to it. Their midpoint, rounded down, is optimal
    # too (the objective is L-natural convex), and takes no side where optima tie.
    highest = _shortest_from(m + 1, r_tail, r_head, r_cost, root)
    lowest = _shortest_from(m + 1, r_head, r_tail, r_cost, root)
    if highest is None or lowest is None:
        return None
    # Clipping to the values' range keeps every cap and no change grows: the potentials stay optimal.
    x = np.clip((highest[:m] - lowest[:m]) // 2, v.min(), v.max())
    if int(np.sum(w_int * np.abs(x - v))) != -flow_solver.optimal_cost():
        return None
    out = value.copy()
    out[free] = x
    return out


@compiled
def _shortest_distances(n, tail, head, cost, source):
    """Bellman-Ford from ``source`` (rounds until nothing changes): distances, and whether they settled."""
    unreached = np.iinfo(np.int64).max
    distance = np.full(n, unreached, dtype=np.int64)
    distance[source] = 0
    for _ in range(n):
        changed = False
        for e in range(tail.shape[0]):
            u = tail[e]
            if distance[u] != unreached and distance[u] + cost[e] < distance[head[e]]:
                distance[head[e]] = distance[u] + cost[e]
                changed = True
        if not changed:
            return distance, True
    return distance, False


def _shortest_from(n, tail, head, cost, source):
    """Shortest distances from ``source`` in a graph of no negative cycle, or None (a node unreached, or no
    settling: a negative cycle)."""
    distance, settled = _shortest_distances(n, tail, head, cost, source)
    if not settled or np.any(distance == np.iinfo(np.int64).max):
        return None
    return distance


def _l1_projection(value, a, b, cap, broken, weight):
    """The same projection by HiGHS's simplex on the components of the broken pairs, or None."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    free, index, inside, w = _moving_leaves(value, a, b, broken, weight)
    ia, ib, c = index[a[inside]], index[b[inside]], cap[inside].astype(np.float64)
    m = free.shape[0]
    w = w + 1e-6 * max(float(w.max(initial=0.0)), 1.0)  # weightless leaves follow their neighbours
    # Variables: new values (m), then absolute deviations (m).
    k = ia.shape[0]
    rows = np.concatenate([np.arange(k), np.arange(k), k + np.arange(k), k + np.arange(k),
                           2 * k + np.arange(m), 2 * k + np.arange(m), 2 * k + m + np.arange(m),
                           2 * k + m + np.arange(m)])
    cols = np.concatenate([ia, ib, ib, ia, np.arange(m), m + np.arange(m), np.arange(m), m + np.arange(m)])
    data = np.concatenate([np.ones(k), -np.ones(k), np.ones(k), -np.ones(k),
                           np.ones(m), -np.ones(m), -np.ones(m), -np.ones(m)])
    v0 = value[free].astype(np.float64)
    rhs = np.concatenate([c, c, v0, -v0])
    A = coo_matrix((data, (rows, cols)), shape=(2 * k + 2 * m, 2 * m)).tocsr()
    lo, hi = float(value[free].min()), float(value[free].max())
    bounds = [(lo, hi)] * m + [(0.0, None)] * m
    result = linprog(np.concatenate([np.zeros(m), w]), A_ub=A, b_ub=rhs, bounds=bounds, method="highs-ds")
    if result.status != 0:
        return None
    out = value.copy()
    out[free] = np.rint(result.x[:m]).astype(np.int64)
    return out


def _midpoint_projection(value, a, b, cap):
    """The midpoint of the smallest function above ``value`` and the largest below it keeping the caps."""
    upper, lower = value.copy(), value.copy()
    for _ in range(value.shape[0] + 1):
        moved = False
        for x, z in ((a, b), (b, a)):
            raised = np.maximum(upper[x], upper[z] - cap)
            if np.any(raised != upper[x]):
                np.maximum.at(upper, x, raised)
                moved = True
            lowered = np.minimum(lower[x], lower[z] + cap)
            if np.any(lowered != lower[x]):
                np.minimum.at(lower, x, lowered)
                moved = True
        if not moved:
            break
    # Both keep the caps, so does their mean, and so does its floor: floor(p) - floor(q) < p - q + 1.
    return (upper + lower) // 2
