"""Tests of relabel.ConsistencyProblem (costs, empty-region sets, objective) and the certificate."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relabel
from test_relabel_helpers import brute_force, objective_of, tiny_problems


@given(instance=tiny_problems(max_regions=8, max_classes=5), data=st.data())
def test_costs_sets_and_objective_match_definitions(instance, data):
    """Check costs c[n,k] = sum_i |i-k| p[n,i], Delta1/Delta2, the default C1/C2 and the objective."""
    counts, edges = instance
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    n, k = counts.shape
    for region in range(n):
        for label in range(k):
            expected = sum(abs(i - label) * counts[region, i] for i in range(k))
            assert problem.costs[region, label] == expected
    empty = [counts[r].sum() == 0 for r in range(n)]
    normalised = sorted({(min(a, b), max(a, b)) for a, b in edges.tolist()})
    assert problem.edges.tolist() == [list(e) for e in normalised]
    assert problem.delta1.tolist() == [empty[a] and empty[b] for a, b in normalised]
    assert problem.delta2.tolist() == [empty[a] != empty[b] for a, b in normalised]
    assert problem.C1 == 1 / (n * (k - 1))
    assert np.isclose(problem.C2, 1 / (0.9 * n * (k - 1)), rtol=1e-15)
    assert problem.C2 > problem.C1
    labels = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    expected = objective_of(counts, edges, problem.C1, problem.C2, labels)
    got = problem.objective(labels)
    assert (np.isinf(got) and np.isinf(expected)) or np.isclose(got, expected, rtol=1e-12)
    assert np.isinf(got) == (not relabel.is_consistent(problem.edges, labels))
    constant = problem.best_constant_labels()
    assert problem.objective(constant) == problem.costs.sum(axis=0).min()


def test_custom_loss_is_used_and_checked():
    """Check that a V-shaped loss replaces |i-k| and a non-V-shaped one is refused."""
    squared = np.subtract.outer(np.arange(3), np.arange(3)) ** 2.0
    problem = relabel.ConsistencyProblem.from_counts([[1, 0, 2]], [], loss=squared)
    np.testing.assert_array_equal(problem.costs, [[8.0, 3.0, 4.0]])
    bumpy = np.array([[0, 2, 1], [1, 0, 1], [2, 1, 0]], dtype=float)
    with pytest.raises(ValueError, match="V-shaped"):
        relabel.ConsistencyProblem.from_counts([[1, 0, 2]], [], loss=bumpy)
    with pytest.raises(ValueError, match="loss must have shape"):
        relabel.ConsistencyProblem.from_counts([[1, 0, 2]], [], loss=np.eye(2))
    with pytest.raises(ValueError, match="non-negative"):
        relabel.ConsistencyProblem.from_counts([[1, 0, 2]], [], loss=-squared)


def test_from_counts_rejects_bad_input():
    """Check clear errors for negative or non-finite counts, K < 2, mismatched graphs and penalties."""
    graph = nx.path_graph(2)
    with pytest.raises(ValueError, match="non-negative"):
        relabel.ConsistencyProblem.from_counts([[1, -1], [0, 1]], graph)
    with pytest.raises(ValueError, match="finite"):
        relabel.ConsistencyProblem.from_counts([[1, np.nan], [0, 1]], graph)
    with pytest.raises(ValueError, match="finite"):
        relabel.ConsistencyProblem.from_counts([[1, np.inf], [0, 1]], graph)
    with pytest.raises(ValueError, match="K >= 2"):
        relabel.ConsistencyProblem.from_counts([[1], [2]], graph)
    with pytest.raises(ValueError, match="2-d"):
        relabel.ConsistencyProblem.from_counts([1, 2], graph)
    with pytest.raises(ValueError, match="graph nodes must be exactly"):
        relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1], [1, 1]], graph)
    with pytest.raises(ValueError, match="graph nodes must be exactly"):
        relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], nx.relabel_nodes(graph, {0: 5}))
    with pytest.raises(ValueError, match="region indices in 0..1"):
        relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 2]])
    with pytest.raises(ValueError, match="self-loops"):
        relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[1, 1]])
    with pytest.raises(ValueError, match="undirected"):
        relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], nx.DiGraph([(0, 1)]))
    for name in ("C1", "C2"):
        for bad in (-0.1, float("inf"), "0.1"):
            with pytest.raises(ValueError, match=name):
                relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], graph, **{name: bad})


def test_objective_rejects_bad_labels():
    """Check that objective refuses labels of the wrong shape or outside 0..K-1."""
    problem = relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="shape"):
        problem.objective([0])
    with pytest.raises(ValueError, match="class indices"):
        problem.objective([0, 2])
    with pytest.raises(ValueError, match="integer"):
        problem.objective([0.5, 1])


def test_certificate_lists_violations_and_checks_input():
    """Check violating_edges on a known labelling and its input validation."""
    graph = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    labels = np.array([0, 1, 2, 0])
    assert relabel.violating_edges(graph, labels).tolist() == [[0, 2], [2, 3]]
    assert not relabel.is_consistent(graph, labels)
    assert relabel.is_consistent(graph, [1, 1, 2, 1])
    assert relabel.is_consistent(np.zeros((0, 2), int), [4, 0])
    with pytest.raises(ValueError, match="4 nodes"):
        relabel.is_consistent(graph, [0, 1])
    with pytest.raises(ValueError, match="integer"):
        relabel.is_consistent(graph, [0.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="outside"):
        relabel.is_consistent(np.array([[0, 5]]), [0, 1])


def test_deprecated_violation_masks_warn_and_still_work():
    """Check that edge_violations / pair_violations warn (FutureWarning) naming the kept name, and still mask."""
    rows = np.array([[0, 1], [1, 2], [0, 2], [2, 3]])
    labels = np.array([0, 1, 2, 0])
    with pytest.warns(FutureWarning, match="violating_edges"):
        mask = relabel.edge_violations(rows, labels)
    assert mask.tolist() == [False, False, True, True]  # |0-1|, |1-2|, |0-2|, |2-0|
    with pytest.warns(FutureWarning, match="violating_pairs"):
        mask = relabel.pair_violations(rows, labels)
    assert mask.tolist() == [False, False, False, True]  # 0<=1, 1<=2, 0<=2, 2>0


@given(instance=tiny_problems(max_regions=6, max_classes=4), data=st.data())
def test_unpenalised_move_pairs_are_held_by_every_solver_at_no_cost(instance, data):
    """Check that ``moves`` pairs hold labels at most one apart, never pay the empty-region penalties, leave the
    graph's own pairs penalised where both lists hold them, and that every solver reaches the brute-force optimum."""
    counts, edges = instance
    n = counts.shape[0]
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    moves = np.array(data.draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else [],
                     dtype=int).reshape(-1, 2)
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, C1=0.3, C2=0.2, moves=moves)
    graph = {tuple(sorted(e)) for e in edges.tolist()}
    union = sorted(graph | {tuple(m) for m in moves.tolist()})
    assert problem.edges.tolist() == [list(e) for e in union]
    empty = counts.sum(axis=1) == 0
    assert problem.delta1.tolist() == [e in graph and empty[e[0]] and empty[e[1]] for e in union]
    assert problem.delta2.tolist() == [e in graph and empty[e[0]] != empty[e[1]] for e in union]
    # Added in two rounds to the problem without them: the same pairs, the same flags.
    base = relabel.ConsistencyProblem.from_counts(counts, edges, C1=0.3, C2=0.2)
    twice = base.with_moves(moves[::2]).with_moves(moves[1::2])
    assert twice.edges.tolist() == problem.edges.tolist()
    assert twice.delta1.tolist() == problem.delta1.tolist() and twice.delta2.tolist() == problem.delta2.tolist()
    assert base.edges.shape[0] == len(graph) and np.array_equal(twice.costs, base.costs)
    best = brute_force(counts, edges, 0.3, 0.2, moves=moves)
    for solver in relabel.SOLVERS:
        result = relabel.solve(problem, solver=solver)
        assert np.isclose(problem.objective(result.labels), best, rtol=1e-9, atol=1e-9), solver


def test_move_pairs_are_checked_and_errors_name_them():
    """Check that bad ``moves`` are refused by name: a region out of range, a self-pair, non-integers."""
    problem = relabel.ConsistencyProblem.from_counts([[1, 0], [0, 0], [0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match=r"moves edges must join region indices in 0\.\.2"):
        problem.with_moves([[0, 3]])
    with pytest.raises(ValueError, match="moves must not contain self-loops"):
        relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 1]], moves=[[1, 1]])
    with pytest.raises(ValueError, match="moves edge array must hold integers"):
        problem.with_moves([[0.0, 2.0]])
