"""The steepest descent of the graph cut: the same smallest optimum as one cut over every threshold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relabel
from relabel._backends import _descent, graphcut
from relabel._scaling import cut_scaling
from test_relabel_helpers import brute_force, fused_instance

KW = {"formulation": "tight", "time_limit": None, "threads": 1, "verbose": False}


@st.composite
def convex_problems(draw, max_regions=7, min_classes=4, max_classes=6):
    """Random problems of convex costs: counts, priors, both penalties, move pairs and monotone pairs."""
    n = draw(st.integers(1, max_regions))
    k = draw(st.integers(min_classes, max_classes))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    counts = np.array([[0] * k if draw(st.booleans()) else draw(st.lists(st.integers(0, 6), min_size=k, max_size=k))
                       for _ in range(n)], dtype=float)
    prior = None
    if draw(st.booleans()):
        prior = np.array(draw(st.lists(st.lists(st.integers(0, 3), min_size=k, max_size=k), min_size=n, max_size=n)),
                         dtype=float) / 4
        prior[counts.sum(axis=1) > 0] = 0  # a prior weighs the empty regions only
    monotone = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=3)) if pairs else []
    monotone = [pair[::-1] if draw(st.booleans()) else pair for pair in monotone]
    C1 = draw(st.sampled_from([0.0, 0.25, 1.0, 3.0]))
    C2 = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))
    return counts, np.array(edges, dtype=int).reshape(-1, 2), prior, np.array(monotone, dtype=int).reshape(-1, 2), C1, C2


def _problem(counts, edges, prior, monotone, C1, C2):
    return relabel.ConsistencyProblem.from_counts(counts, edges, C1=C1, C2=C2, prior=prior,
                                                  monotone=monotone if monotone.shape[0] else None)


@settings(max_examples=150, deadline=None)
@given(instance=convex_problems())
def test_descent_reaches_the_smallest_optimum_of_the_one_cut(instance):
    """Check the descent against one cut (the smallest optimal labelling, same bound) and brute force."""
    counts, edges, prior, monotone, C1, C2 = instance
    problem = _problem(counts, edges, prior, monotone, C1, C2)
    descent = graphcut.solve(problem, **KW)
    one_cut = graphcut.solve(problem, descent=False, **KW)
    assert descent.message.startswith("descent by"), descent.message
    assert descent.status == one_cut.status == "OPTIMAL"
    assert np.array_equal(descent.labels, one_cut.labels)
    assert descent.bound == one_cut.bound
    expected = brute_force(counts, edges, C1, C2, monotone=monotone, prior=prior)
    assert problem.objective(descent.labels) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(instance=convex_problems(max_regions=12))
def test_start_labels_are_feasible(instance):
    """Check that the start of the descent keeps every edge one apart and every monotone pair in order."""
    counts, edges, prior, monotone, C1, C2 = instance
    problem = _problem(counts, edges, prior, monotone, C1, C2)
    start = _descent.start_labels(cut_scaling(problem).costs, problem.edges, problem.monotone)
    assert np.isfinite(problem.objective(start))


def test_descent_on_a_fused_partition_with_moves():
    """Check a 4D fused partition of many empty regions, with penalties and extra pairs, against one cut."""
    part, _, _, _, counts = fused_instance(4, 5, 15, 6, seed=3, n_samples=400)
    edges = relabel.adjacency_edges(part).edges
    prior = np.where(counts.sum(axis=1, keepdims=True) > 0, 0.0, 1e-3)
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, prior=np.broadcast_to(prior, counts.shape))
    problem = problem.with_moves(np.column_stack([np.arange(0, problem.n_regions - 7), np.arange(7, problem.n_regions)]))
    assert problem.n_regions > 1000 and problem.empty.mean() > 0.5
    descent = graphcut.solve(problem, **KW)
    one_cut = graphcut.solve(problem, descent=False, **KW)
    assert descent.message.startswith("descent by") and descent.status == "OPTIMAL"
    assert np.array_equal(descent.labels, one_cut.labels) and descent.bound == one_cut.bound


def test_non_convex_costs_and_three_classes_take_one_cut():
    """Check that a loss without convex rows, and three classes, are solved by one cut, exactly."""
    counts = np.array([[3, 0, 0, 2], [0, 0, 0, 0], [1, 0, 4, 0]], dtype=float)
    edges = np.array([[0, 1], [1, 2]])
    zero_one = 1.0 - np.eye(4)
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, 1.0, 1.0, loss=zero_one)
    assert not _descent.convex_rows(cut_scaling(problem).costs)
    result = graphcut.solve(problem, **KW)
    assert "min cut" in result.message and result.status == "OPTIMAL"
    assert problem.objective(result.labels) == pytest.approx(brute_force(counts, edges, 1.0, 1.0, loss=zero_one))
    three = relabel.ConsistencyProblem.from_counts(counts[:, :3], edges)
    assert "min cut" in graphcut.solve(three, **KW).message


def test_a_step_that_cannot_rise_is_caught_by_the_oracle(monkeypatch):
    """Check that the comparison has teeth: a descent that never moves up stops short of the optimum."""
    counts = np.array([[0, 0, 0, 5], [0, 0, 0, 5], [5, 0, 0, 0]], dtype=float)
    problem = relabel.ConsistencyProblem.from_counts(counts, [[0, 1]], 1.0, 1.0)
    original = _descent._best_move

    def never_up(costs, x, direction, *args):
        found = original(costs, x, direction, *args)
        return (np.zeros_like(found[0]), 0) if direction > 0 else found

    monkeypatch.setattr(_descent, "start_labels", lambda costs, edges, monotone, hint: np.zeros(costs.shape[0], np.int64))
    monkeypatch.setattr(_descent, "_best_move", never_up)
    broken = graphcut.solve(problem, **KW)
    assert problem.objective(broken.labels) > brute_force(counts, [[0, 1]], 1.0, 1.0)


@settings(max_examples=80, deadline=None)
@given(instance=convex_problems(max_regions=9), data=st.data())
def test_any_start_reaches_the_same_optimum(instance, data):
    """Check that labels given as ``start`` (consistent or not) change the cuts, never the result."""
    counts, edges, prior, monotone, C1, C2 = instance
    problem = _problem(counts, edges, prior, monotone, C1, C2)
    start = np.array(data.draw(st.lists(st.integers(0, problem.n_classes - 1), min_size=problem.n_regions,
                                        max_size=problem.n_regions)))
    plain = relabel.solve(problem)
    started = relabel.solve(problem, start=start)
    assert np.array_equal(plain.labels, started.labels) and plain.objective == started.objective
    assert started.status is relabel.SolverStatus.OPTIMAL


def test_a_wrong_start_is_refused():
    """Check the errors for a start of the wrong shape or classes, and for a solver that does not use it."""
    problem = relabel.ConsistencyProblem.from_counts(np.eye(4), [[0, 1], [1, 2], [2, 3]])
    with pytest.raises(ValueError, match="start must be one class index"):
        relabel.solve(problem, start=[0, 1, 2])
    with pytest.raises(ValueError, match="start must be one class index"):
        relabel.solve(problem, start=[0, 1, 2, 4])
    with pytest.raises(ValueError, match="start applies to solver='graphcut' only"):
        relabel.solve(problem, solver="cbc", start=[0, 1, 2, 3])


def test_a_flow_that_is_not_maximum_is_refused(monkeypatch):
    """Check that every cut of the descent is certified: with a max-flow that pushes nothing, no cut passes,
    the descent gives up and the one cut solves the problem."""
    part, _, _, _, counts = fused_instance(3, 3, 8, 5, seed=1, n_samples=200)
    problem = relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_edges(part).edges)
    scaled = cut_scaling(problem)
    assert _descent.descend(problem, scaled) is not None
    monkeypatch.setattr(_descent, "pseudoflow", lambda *args: (0, 0, 0, 0))
    assert _descent.descend(problem, scaled) is None
    result = graphcut.solve(problem, **KW)
    assert "min cut" in result.message and result.status == "OPTIMAL"
