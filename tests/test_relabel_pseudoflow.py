"""The pseudoflow max-flow of the graph cut, against networkx, OR-Tools and the equations."""

from __future__ import annotations

import itertools
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relabel
from relabel._backends import _cutgraph
from relabel._backends import _pseudoflow as pf
from relabel._backends import graphcut
from test_relabel_helpers import fused_instance, tiny_problems

# Capacities of the random graphs come from a small set, so that every (out, back)
# pair is a row of one table and the compiled signatures are those of the solver.
_VALUES = (0, 1, 2, 3, 5, 8, 1000)
_TABLE = np.array(list(itertools.product(_VALUES, _VALUES)), dtype=np.int64)


def _csr(n, arcs):
    """Half-arc lists of ``arcs`` = [(u, v, kind)], written independently of the solver's builder."""
    entries = [[] for _ in range(n)]
    for a, (u, v, _) in enumerate(arcs):
        entries[u].append((a, 0))
        entries[v].append((a, 1))
    start = np.zeros(n + 1, np.int64)
    start[1:] = np.cumsum([len(e) for e in entries])
    position = {}
    for v in range(n):
        for offset, key in enumerate(entries[v]):
            position[key] = start[v] + offset
    total = int(start[-1])
    nbr = np.empty(total, np.int32)
    mate = np.empty(total, np.int32)
    kind = np.empty(total, np.int8)
    for a, (u, v, k) in enumerate(arcs):
        i, j = position[(a, 0)], position[(a, 1)]
        nbr[i], nbr[j] = v, u
        mate[i], mate[j] = j, i
        kind[i] = k
        out, back = _TABLE[k]
        kind[j] = _VALUES.index(back) * len(_VALUES) + _VALUES.index(out)
    res = _TABLE[kind, 0].copy()
    return start, nbr, mate, kind, res


@st.composite
def flow_networks(draw):
    """Random networks: node excesses (terminal arcs) and arcs with capacities both ways."""
    n = draw(st.integers(1, 9))
    excess = np.array(draw(st.lists(st.sampled_from((-1000, -8, -3, -1, 0, 0, 1, 2, 5, 1000)),
                                    min_size=n, max_size=n)), dtype=np.int64)
    pairs = [(u, v) for u in range(n) for v in range(n) if u != v]
    chosen = draw(st.lists(st.sampled_from(pairs), max_size=3 * n)) if pairs else []
    arcs = [(u, v, draw(st.integers(0, len(_TABLE) - 1))) for u, v in chosen]  # parallel arcs allowed
    return n, excess, arcs


def _networkx_min_cut(n, excess, arcs):
    """Minimum cut value and smallest source side by networkx's preflow-push."""
    g = nx.DiGraph()
    g.add_nodes_from(range(n + 2))
    s, t = n, n + 1

    def add(u, v, c):
        if c > 0:
            g.add_edge(u, v, capacity=g.edges[u, v]["capacity"] + c if g.has_edge(u, v) else c)

    for v in range(n):
        add(s, v, max(excess[v], 0))
        add(v, t, max(-excess[v], 0))
    for u, v, k in arcs:
        add(u, v, int(_TABLE[k, 0]))
        add(v, u, int(_TABLE[k, 1]))
    residual = nx.algorithms.flow.preflow_push(g, s, t)
    value = residual.graph["flow_value"]
    reach = {s}
    stack = [s]
    while stack:
        u = stack.pop()
        for v, attr in residual[u].items():
            if v not in reach and attr["capacity"] - attr["flow"] > 0:
                reach.add(v)
                stack.append(v)
    side = np.array([v in reach for v in range(n)], dtype=bool)
    return value, side


def _run(n, excess, start, nbr, mate, res):
    left = excess.copy()
    stats = pf.pseudoflow(n, left, start, nbr, res, mate)
    side, reaches_deficit = pf.source_side(n, left, start, nbr, res)
    return stats, side, reaches_deficit


@settings(max_examples=300, deadline=None)
@given(net=flow_networks())
def test_random_networks_match_networkx(net):
    """Check the cut value and the smallest source side against networkx on random networks."""
    n, excess, arcs = net
    start, nbr, mate, kind, res = _csr(n, arcs)
    _, side, reaches_deficit = _run(n, excess, start, nbr, mate, res)
    assert not reaches_deficit
    cut = pf.certify(n, excess, start, nbr, mate, kind, _TABLE, res, side)
    value, nx_side = _networkx_min_cut(n, excess, arcs)
    assert cut == value
    assert np.array_equal(side, nx_side)


def test_certificate_rejects_wrong_flows_and_cuts():
    """Check that certify refuses a broken flow, a non-minimum side and a side with a deficit."""
    # Chain 0 -> 1 -> 2 with a bottleneck: source 5 at 0, sink 5 at 2, middle arc capacity 3.
    n = 3
    excess = np.array([5, 0, -5], np.int64)
    k3 = _VALUES.index(3) * len(_VALUES)  # (3, 0)
    k1000 = _VALUES.index(1000) * len(_VALUES)  # (1000, 0)
    arcs = [(0, 1, k1000), (1, 2, k3)]
    start, nbr, mate, kind, res = _csr(n, arcs)
    _, side, _ = _run(n, excess, start, nbr, mate, res)
    assert side.tolist() == [True, True, False]
    assert pf.certify(n, excess, start, nbr, mate, kind, _TABLE, res, side) == 3  # the middle arc
    # The flow is read from each arc's entry of smaller index: here node 1's entry to 2.
    crossing = int(np.flatnonzero((np.arange(4) < mate) & (nbr == 2))[0])
    for bad in (1, -1):  # the crossing arc not saturated; more flow than its capacity
        broken = res.copy()
        broken[crossing] = bad
        assert pf.certify(n, excess, start, nbr, mate, kind, _TABLE, broken, side) == -1
    assert pf.certify(n, excess, start, nbr, mate, kind, _TABLE, res, np.array([True, False, False])) == -1
    assert pf.certify(n, excess, start, nbr, mate, kind, _TABLE, res, np.array([True, True, True])) == -1


def _explicit_cut_graph(counts, edges):
    """The cut graph of docs/design.md section 4, from the integer counts and the edges alone.

    Node r (K-1) + j is x_{r,j+1} (label(r) > j). Returns the finite arcs
    [(tail, head, capacity)], the implication arcs [(tail, head)] (infinite capacity)
    and the node excesses (-unary coefficient: > 0 is a source arc, < 0 a sink arc),
    in units of the scale S = 9 N (K-1) that section 4 gives for integer counts and
    the default penalties.
    """
    counts = np.asarray(counts)
    assert np.array_equal(counts, np.round(counts)), "the rule S = 9 N (K-1) is for integer counts"
    n, n_classes = counts.shape
    km = n_classes - 1
    scale = 9 * n * km
    c1 = Fraction(scale, n * km)  # C1 = 1 / (N (K-1))
    c2 = Fraction(scale * 10, 9 * n * km)  # C2 = 1 / (0.9 N (K-1))
    assert c1.denominator == c2.denominator == 1

    def node(r, j):
        return r * km + j

    # c_{r,k} = sum_i |i - k| p_{r,i}; the objective's unary term of x_{r,k} is c_{r,k+1} - c_{r,k}.
    cost = [[scale * sum(abs(i - k) * int(counts[r, i]) for i in range(n_classes)) for k in range(n_classes)]
            for r in range(n)]
    excess = [cost[r][j] - cost[r][j + 1] for r in range(n) for j in range(km)]
    implications = [(node(r, j), node(r, j - 1)) for r in range(n) for j in range(1, km)]  # eq. (2)
    empty = [int(counts[r].sum()) == 0 for r in range(n)]
    finite = []
    for a, b in sorted({(min(a, b), max(a, b)) for a, b in np.asarray(edges).tolist() if a != b}):
        for j in range(1, km):  # tight form of (6)-(8): x_{a,j+1} <= x_{b,j} and x_{b,j+1} <= x_{a,j}
            implications += [(node(a, j), node(b, j - 1)), (node(b, j), node(a, j - 1))]
        penalty = c1 if empty[a] and empty[b] else c2 if empty[a] or empty[b] else 0  # Delta1, Delta2
        for j in range(km if penalty else 0):  # C |x_{a,j} - x_{b,j}|: one arc each way
            finite += [(node(a, j), node(b, j), int(penalty)), (node(b, j), node(a, j), int(penalty))]
    return sorted(finite), sorted(implications), np.array(excess, dtype=np.int64)


@pytest.mark.parametrize("n_features, n_trees, n_classes, seed", [(2, 3, 5, 0), (4, 2, 3, 1), (3, 2, 2, 2), (1, 3, 4, 3)])
def test_builder_writes_the_equations(n_features, n_trees, n_classes, seed):
    """Check that the half-arc lists hold exactly the arcs of docs/design.md section 4, with mutual mates."""
    part, _, _, _, counts = fused_instance(n_features, n_trees, 8, n_classes, seed)
    edges = relabel.adjacency_edges(part).edges
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    assert problem.delta1.any() or problem.delta2.any()
    g = graphcut.build_cut_graph(problem)
    total = int(g.start[-1])
    owner = np.repeat(np.arange(g.n_nodes), np.diff(g.start))
    assert np.array_equal(g.mate[g.mate], np.arange(total))
    assert np.array_equal(g.nbr[g.mate], owner)
    assert np.array_equal(g.table[g.kind, 1], g.table[g.kind[g.mate], 0])
    assert np.array_equal(g.res, g.table[g.kind, 0])
    finite, implications, excess = _explicit_cut_graph(counts, edges)
    assert np.array_equal(g.excess, excess)
    tail, head, cap = _cutgraph.arc_list(g.n_nodes, g.start, g.nbr, g.kind, g.table)
    arcs = list(zip(tail.tolist(), head.tolist(), cap.tolist()))
    # An implication is "infinite" when no minimum cut can cross it: its capacity must
    # exceed the cut of the all-zero labelling (every source arc), and all are equal.
    all_zero_cut = int(excess[excess > 0].sum())
    assert all_zero_cut > 10
    infinite = [arc for arc in arcs if arc[2] > all_zero_cut]
    assert len({arc[2] for arc in infinite}) <= 1  # none when K = 2
    assert sorted((t, h) for t, h, _ in infinite) == implications
    assert sorted(arc for arc in arcs if arc[2] <= all_zero_cut) == finite


@settings(max_examples=60, deadline=None)
@given(instance=tiny_problems(max_regions=10, max_classes=5))
def test_engines_give_identical_labels(instance):
    """Check that pseudoflow and OR-Tools return the same (smallest) optimal labelling."""
    counts, edges = instance
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    runs = [graphcut.solve(problem, formulation="tight", time_limit=None, threads=1, verbose=False, engine=e)
            for e in graphcut.ENGINES]
    assert all(r.status == "OPTIMAL" for r in runs), [r.message for r in runs]
    assert runs[0].bound == runs[1].bound
    assert np.array_equal(runs[0].labels, runs[1].labels)


def test_large_partition_engines_agree():
    """Check both engines on a 4D fused partition with many empty regions (penalty-heavy)."""
    part, _, _, _, counts = fused_instance(4, 5, 15, 5, seed=7, n_samples=400)
    problem = relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_edges(part).edges)
    assert problem.n_regions > 1000 and (counts.sum(axis=1) == 0).mean() > 0.5
    runs = [graphcut.solve(problem, formulation="tight", time_limit=None, threads=1, verbose=False, engine=e)
            for e in graphcut.ENGINES]
    assert all(r.status == "OPTIMAL" for r in runs)
    assert runs[0].bound == runs[1].bound
    assert np.array_equal(runs[0].labels, runs[1].labels)
    assert relabel.is_consistent(problem.edges, runs[0].labels)


def test_unknown_engine_is_refused():
    """Check that a wrong engine name raises a ValueError naming the choices."""
    problem = relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="engine must be one of"):
        graphcut.solve(problem, formulation="tight", time_limit=None, threads=1, verbose=False, engine="bk")


def test_uncertified_cut_is_reported_not_returned(monkeypatch):
    """Check that a cut whose certificate fails gives status ERROR and a consistent fallback."""
    counts = [[5, 0, 0], [0, 0, 0], [0, 0, 5], [0, 4, 0]]
    problem = relabel.ConsistencyProblem.from_counts(counts, [[0, 1], [1, 2], [2, 3]])
    monkeypatch.setattr(graphcut, "certify", lambda *args: -1)
    with pytest.warns(relabel.RelabelWarning, match="certificate failed"):
        result = relabel.solve(problem)
    assert result.status is relabel.SolverStatus.ERROR
    assert relabel.is_consistent(problem.edges, result.labels)
    with pytest.raises(relabel.RelabelError, match="certificate failed"):
        relabel.solve(problem, on_solver_failure="raise")


@settings(max_examples=60, deadline=None)
@given(instance=tiny_problems(max_regions=7, max_classes=4), data=st.data())
def test_float_counts_are_rounded_with_a_proven_bound(instance, data):
    """Check that counts with no exact int64 scaling still reach the brute-force optimum."""
    from test_relabel_helpers import brute_force

    counts, edges = instance
    noise = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=counts.size, max_size=counts.size)))
    counts = counts + np.pi * noise.reshape(counts.shape) * (counts > 0)
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    result = relabel.solve(problem, on_solver_failure="raise")
    best = brute_force(problem.counts, problem.edges, problem.C1, problem.C2)
    assert result.objective == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert result.bound <= result.objective + 1e-12
