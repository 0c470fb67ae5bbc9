"""Isotonic regression on a partial order: the exact monotone leaf values and labels.

The leaves of a tree under monotone constraints are partially ordered: leaf ``a``
is below leaf ``b`` when they share a face across a constrained feature and ``b``
lies on the side where the prediction may only grow (:func:`trees._monotone.face_order`).
Projecting the leaves' values onto that order makes the tree monotone along every
line parallel to a constrained feature.

* :func:`isotonic_regression`: the weighted least-squares projection (the mean
  class index of every leaf), by isotonic recursive partitioning: split the set
  whose values are pooled at its weighted mean by the maximum-gain upper set,
  recurse on both parts, until no upper set gains (exact for squared error:
  Luss, Rosset and Shahar, 2012).
* :func:`isotonic_labels`: the class labels minimising the weighted absolute error
  of the training rows (the monotone counterpart of the leaf median). The
  problem separates by threshold: ``label > k`` on the minimal maximum-gain
  upper set of the gains ``W(class > k) - W(class <= k)``, and these sets nest.
* :func:`max_closure`: the maximum-gain upper set itself, a minimum cut (source
  to every positive gain, every negative gain to the sink, an infinite arc along
  every order pair) solved by Dinic's algorithm.

docs/design.md section 4b states why face contacts suffice for monotonicity.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from trees._compile import compiled

__all__ = ["isotonic_labels", "isotonic_regression", "max_closure"]


@compiled
def _residual_graph(gain, below, above):
    """Arc arrays (CSR by tail) of the cut network: nodes ``0..n-1``, then the source
    and the sink. Every arc has its reverse (capacity 0); ``rev`` maps one to the other."""
    n = gain.shape[0]
    source, sink = n, n + 1
    total = 0.0
    for a in range(n):
        total += abs(gain[a])
    infinite = 2.0 * total + 1.0
    n_arcs = below.shape[0]
    for a in range(n):
        if gain[a] != 0.0:
            n_arcs += 1
    tail = np.empty(2 * n_arcs, dtype=np.intp)
    head = np.empty(2 * n_arcs, dtype=np.intp)
    cap = np.zeros(2 * n_arcs)
    i = 0
    for a in range(n):
        if gain[a] > 0.0:
            tail[i], head[i], cap[i] = source, a, gain[a]
        elif gain[a] < 0.0:
            tail[i], head[i], cap[i] = a, sink, -gain[a]
        else:
            continue
        tail[i + 1], head[i + 1] = head[i], tail[i]
        i += 2
    for e in range(below.shape[0]):
        # below in the set forces above into it: an arc below -> above that is never cut.
        tail[i], head[i], cap[i] = below[e], above[e], infinite
        tail[i + 1], head[i + 1] = head[i], tail[i]
        i += 2
    start = np.zeros(n + 3, dtype=np.intp)
    for j in range(2 * n_arcs):
        start[tail[j] + 1] += 1
    for v in range(n + 2):
        start[v + 1] += start[v]
    fill = start[:-1].copy()
    position = np.empty(2 * n_arcs, dtype=np.intp)
    for j in range(2 * n_arcs):
        position[j] = fill[tail[j]]
        fill[tail[j]] += 1
    # Arcs relabelled by their CSR position; arc j's reverse is arc j ^ 1 before relabelling.
    csr_head = np.empty(2 * n_arcs, dtype=np.intp)
    csr_cap = np.empty(2 * n_arcs)
    rev = np.empty(2 * n_arcs, dtype=np.intp)
    for j in range(2 * n_arcs):
        p = position[j]
        csr_head[p] = head[j]
        csr_cap[p] = cap[j]
        rev[p] = position[j ^ 1]
    return start, csr_head, csr_cap, rev, source, sink, total


@compiled
def _bfs_levels(start, head, cap, source, eps, level, queue):
    level[:] = -1
    level[source] = 0
    first, last = 0, 1
    queue[0] = source
    while first < last:
        v = queue[first]
        first += 1
        for p in range(start[v], start[v + 1]):
            w = head[p]
            if cap[p] > eps and level[w] < 0:
                level[w] = level[v] + 1
                queue[last] = w
                last += 1


@compiled
def _dinic(start, head, cap, rev, source, sink, eps):
    """Maximum flow (capacities updated in place to the residual ones)."""
    n = start.shape[0] - 1
    level = np.empty(n, dtype=np.intp)
    queue = np.empty(n, dtype=np.intp)
    current = np.empty(n, dtype=np.intp)
    path = np.empty(n, dtype=np.intp)
    flow = 0.0
    while True:
        _bfs_levels(start, head, cap, source, eps, level, queue)
        if level[sink] < 0:
            return flow
        current[:] = start[:-1]
        while True:
            # One augmenting path in the level graph, current-arc pointers skipping dead arcs.
            top = 0
            v = source
            pushed = 0.0
            while True:
                if v == sink:
                    bottleneck = np.inf
                    for i in range(top):
                        bottleneck = min(bottleneck, cap[path[i]])
                    for i in range(top):
                        cap[path[i]] -= bottleneck
                        cap[rev[path[i]]] += bottleneck
                    pushed = bottleneck
                    break
                advanced = False
                while current[v] < start[v + 1]:
                    p = current[v]
                    w = head[p]
                    if cap[p] > eps and level[w] == level[v] + 1:
                        path[top] = p
                        top += 1
                        v = w
                        advanced = True
                        break
                    current[v] += 1
                if not advanced:
                    if v == source:
                        break
                    level[v] = -1  # a dead end: no path to the sink through it this phase
                    top -= 1
                    v = head[rev[path[top]]]
                    current[v] += 1
            if pushed <= 0.0:
                break
            flow += pushed


@compiled
def max_closure(gain, below, above):
    """The minimal upper set of maximum total gain of nodes ``0..n-1``.

    ``(below[e], above[e])`` are order pairs: a set holding ``below[e]`` must hold
    ``above[e]``. Returns a boolean array and the set's gain. Ties go to the
    smaller set: the source side of the minimum cut reachable in the residual
    network. Dinic's algorithm: O(V^2 E), far less on these graphs.
    """
    start, head, cap, rev, source, sink, total = _residual_graph(gain, below, above)
    eps = 1e-13 * total
    _dinic(start, head, cap, rev, source, sink, eps)
    n = start.shape[0] - 1
    level = np.empty(n, dtype=np.intp)
    queue = np.empty(n, dtype=np.intp)
    _bfs_levels(start, head, cap, source, eps, level, queue)
    inside = np.zeros(gain.shape[0], dtype=np.bool_)
    value = 0.0
    for a in range(gain.shape[0]):
        if level[a] >= 0:
            inside[a] = True
            value += gain[a]
    return inside, value


@compiled
def _split_pairs(below, above, inside):
    """The pairs inside each part of a split (renumbered within the part); pairs that
    cross go from outside to inside (an upper set) and are dropped."""
    n = inside.shape[0]
    local = np.empty(n, dtype=np.intp)
    n_in = 0
    n_out = 0
    for a in range(n):
        if inside[a]:
            local[a] = n_in
            n_in += 1
        else:
            local[a] = n_out
            n_out += 1
    count_in = 0
    count_out = 0
    for e in range(below.shape[0]):
        if inside[below[e]] and inside[above[e]]:
            count_in += 1
        elif not inside[below[e]] and not inside[above[e]]:
            count_out += 1
    pairs_in = np.empty((2, count_in), dtype=np.intp)
    pairs_out = np.empty((2, count_out), dtype=np.intp)
    i = 0
    o = 0
    for e in range(below.shape[0]):
        a, b = below[e], above[e]
        if inside[a] and inside[b]:
            pairs_in[0, i], pairs_in[1, i] = local[a], local[b]
            i += 1
        elif not inside[a] and not inside[b]:
            pairs_out[0, o], pairs_out[1, o] = local[a], local[b]
            o += 1
    return pairs_in, pairs_out


@compiled
def _repair(out, below, above):
    """Raise each node to the largest value below it, in topological order (Kahn): the
    pooled means can break a pair by an ulp; this fixes exactly those."""
    n = out.shape[0]
    indegree = np.zeros(n, dtype=np.intp)
    start = np.zeros(n + 1, dtype=np.intp)
    for e in range(below.shape[0]):
        indegree[above[e]] += 1
        start[below[e] + 1] += 1
    for a in range(n):
        start[a + 1] += start[a]
    fill = start[:-1].copy()
    succ = np.empty(below.shape[0], dtype=np.intp)
    for e in range(below.shape[0]):
        succ[fill[below[e]]] = above[e]
        fill[below[e]] += 1
    ready = np.empty(n, dtype=np.intp)
    top = 0
    for a in range(n):
        if indegree[a] == 0:
            ready[top] = a
            top += 1
    while top > 0:
        top -= 1
        a = ready[top]
        for p in range(start[a], start[a + 1]):
            b = succ[p]
            if out[b] < out[a]:
                out[b] = out[a]
            indegree[b] -= 1
            if indegree[b] == 0:
                ready[top] = b
                top += 1
    return out


def isotonic_regression(
    values: NDArray[np.float64], weights: NDArray[np.float64], below: NDArray[np.intp], above: NDArray[np.intp]
) -> NDArray[np.float64]:
    """The weighted least-squares projection of ``values`` onto the order ``below <= above``.

    Parameters
    ----------
    values, weights : ndarray of shape (n_nodes,)
        The values to project and their positive weights.
    below, above : ndarray of shape (n_pairs,)
        Order pairs: the result satisfies ``out[below] <= out[above]``.

    Returns
    -------
    ndarray of shape (n_nodes,)
        Minimises ``sum(weights * (out - values) ** 2)`` under the order. Every
        pair is satisfied exactly (float rounding of the pooled means is repaired
        by a pass in topological order that only raises values by ulps).

    Notes
    -----
    Isotonic recursive partitioning: at most ``2 n_nodes`` maximum-closure cuts.

    Examples
    --------
    >>> import numpy as np
    >>> from trees._isotonic import isotonic_regression
    >>> isotonic_regression(np.array([3.0, 1.0, 2.0]), np.ones(3), np.array([0, 1]), np.array([1, 2])).tolist()
    [2.0, 2.0, 2.0]
    """
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    below = np.ascontiguousarray(below, dtype=np.intp)
    above = np.ascontiguousarray(above, dtype=np.intp)
    n = values.shape[0]
    out = values.copy()
    if below.size == 0 or n == 0:
        return out
    scale = float(np.sum(weights * np.abs(values - np.average(values, weights=weights)))) + 1e-300
    # Each part: its nodes and its own pairs, renumbered within the part.
    stack = [(np.arange(n), np.stack([below, above]))]
    while stack:
        nodes, pairs = stack.pop()
        mean = float(np.average(values[nodes], weights=weights[nodes]))
        gain = weights[nodes] * (values[nodes] - mean)
        inside, value = max_closure(gain, pairs[0], pairs[1])
        if value <= 1e-12 * scale or inside.all() or not inside.any():
            out[nodes] = mean
            continue
        pairs_in, pairs_out = _split_pairs(pairs[0], pairs[1], inside)
        stack.append((nodes[inside], pairs_in))
        stack.append((nodes[~inside], pairs_out))
    return _repair(out, below, above)


def isotonic_labels(counts: NDArray[np.float64], below: NDArray[np.intp], above: NDArray[np.intp]) -> NDArray[np.intp]:
    """Class indices minimising the weighted absolute error under the order ``below <= above``.

    Parameters
    ----------
    counts : ndarray of shape (n_nodes, n_classes)
        Weighted class counts of every node (leaf).
    below, above : ndarray of shape (n_pairs,)
        Order pairs: the result satisfies ``out[below] <= out[above]``.

    Returns
    -------
    ndarray of shape (n_nodes,)
        ``argmin sum_a sum_k counts[a, k] |k - out[a]|`` under the order; ties go to
        the lower class, so without pairs every node gets its lower weighted median.

    Notes
    -----
    One maximum closure per class threshold: ``out > k`` on the minimal upper set
    maximising ``sum W(class > k) - W(class <= k)``; these sets nest, and each is
    closed under the order, so the labels are monotone exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from trees._isotonic import isotonic_labels
    >>> counts = np.array([[0.0, 3.0], [2.0, 0.0]])  # node 0 says 1, node 1 says 0, 0 <= 1
    >>> isotonic_labels(counts, np.array([0]), np.array([1])).tolist()
    [1, 1]
    """
    counts = np.asarray(counts, dtype=np.float64)
    below = np.ascontiguousarray(below, dtype=np.intp)
    above = np.ascontiguousarray(above, dtype=np.intp)
    n, K = counts.shape
    cum = np.cumsum(counts, axis=1)
    total = cum[:, -1]
    labels = np.zeros(n, dtype=np.intp)
    for k in range(K - 1):
        gain = (total - cum[:, k]) - cum[:, k]  # W(class > k) - W(class <= k)
        upper, _ = max_closure(np.ascontiguousarray(gain), below, above)
        labels += upper
    return labels
