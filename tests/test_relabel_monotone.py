"""Monotone constraints: pairs from face contacts, every solver and formulation, certificates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relabel
from test_relabel_adjacency_options import categorical_oracle
from test_relabel_helpers import brute_force, check_all_solvers, fit_trees, make_data, tiny_problems
from trees import leaf_boxes


def face_pairs_oracle(lower, upper, cst):
    """All ordered pairs from face contacts along constrained features, one pair of boxes at a time."""
    n, d = lower.shape
    pairs = set()
    for a in range(n):
        for b in range(n):
            for f in range(d):
                if cst[f] == 0 or upper[a, f] != lower[b, f]:
                    continue
                others = [g for g in range(d) if g != f]
                if all(max(lower[a, g], lower[b, g]) < min(upper[a, g], upper[b, g]) for g in others):
                    pairs.add((a, b) if cst[f] > 0 else (b, a))
    return np.array(sorted(pairs), dtype=int).reshape(-1, 2)


def region_of(part, points):
    """Region index of every point by box containment (geometry only, no keys, no pairs)."""
    inside = np.all((part.lower[None] < points[:, None]) & (points[:, None] <= part.upper[None]), axis=2)
    assert np.all(inside.sum(axis=1) == 1)
    return inside.argmax(axis=1)


def fused(n_features, n_trees, max_leaf_nodes, seed, n_samples=80, n_classes=4):
    X, y = make_data(n_samples, n_features, n_classes, seed, grid=None)
    trees = fit_trees(X, y, n_trees, max_leaf_nodes, seed)
    part = relabel.fuse([leaf_boxes(t) for t in trees])
    region = part.locate(np.column_stack([t.apply(X) for t in trees]))
    counts = relabel.region_counts(region, y, n_classes, n_regions=part.n_regions)
    return part, counts


@given(
    n_features=st.integers(1, 4),
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 10),
    seed=st.integers(0, 10_000),
    data=st.data(),
)
def test_monotone_pairs_equal_face_contact_oracle(n_features, n_trees, max_leaf_nodes, seed, data):
    """Check that monotone_pairs are exactly the oriented face contacts along the constrained features."""
    part, _ = fused(n_features, n_trees, max_leaf_nodes, seed)
    cst = np.array(data.draw(st.lists(st.sampled_from([-1, 0, 1]), min_size=n_features, max_size=n_features)))
    got = relabel.monotone_pairs(part, cst)
    np.testing.assert_array_equal(got, face_pairs_oracle(part.lower, part.upper, cst))
    assert got.dtype == np.intp
    # Every such pair is also a face edge of the adjacency graph.
    faces = {tuple(e) for e in relabel.adjacency_edges(part, contact="face").edges.tolist()}
    assert all((min(a, b), max(a, b)) in faces for a, b in got.tolist())


@st.composite
def monotone_problems(draw, max_regions=6, max_classes=4):
    counts, edges = draw(tiny_problems(max_regions=max_regions, max_classes=max_classes))
    n = counts.shape[0]
    ordered = [(a, b) for a in range(n) for b in range(n) if a != b]
    pairs = draw(st.lists(st.sampled_from(ordered), unique=True, max_size=6)) if ordered else []
    return counts, edges, np.array(pairs, dtype=int).reshape(-1, 2)


@settings(max_examples=12)  # four CBC / CP-SAT solves per example
@given(instance=monotone_problems())
def test_monotone_all_solvers_both_formulations_equal_brute_force(instance):
    """Check that graph cut, CBC and CP-SAT in both formulations reach the brute-force optimum with monotone pairs."""
    counts, edges, pairs = instance
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, monotone=pairs)
    expected = brute_force(counts, edges, problem.C1, problem.C2, monotone=pairs)
    free = brute_force(counts, edges, problem.C1, problem.C2)
    assert expected >= free  # constraints never help
    for forms in (("paper", "tight"), ("tight", "paper")):
        check_all_solvers(problem, forms, brute=expected)


@settings(max_examples=12)
@given(
    n_features=st.sampled_from([2, 3]),
    n_trees=st.integers(1, 3),
    seed=st.integers(0, 10_000),
    data=st.data(),
)
def test_fused_monotone_problems_all_solvers_agree(n_features, n_trees, seed, data):
    """Check solver agreement and both certificates on small fused partitions with monotone pairs from geometry."""
    part, counts = fused(n_features, n_trees, 3, seed, n_samples=40)
    cst = np.array(data.draw(st.lists(st.sampled_from([-1, 0, 1]), min_size=n_features, max_size=n_features)))
    pairs = relabel.monotone_pairs(part, cst)
    edges = relabel.adjacency_edges(part).edges
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, monotone=pairs)
    np.testing.assert_array_equal(problem.monotone, pairs)
    optimum = check_all_solvers(problem, (data.draw(st.sampled_from(relabel.FORMULATIONS)),) * 2)
    labels = relabel.solve(problem).labels
    assert relabel.is_monotone(face_pairs_oracle(part.lower, part.upper, cst), labels)
    assert optimum >= relabel.solve(relabel.ConsistencyProblem.from_counts(counts, edges)).objective - 1e-12


@settings(max_examples=12)
@given(seed=st.integers(0, 10_000), sign=st.sampled_from([-1, 1]), axis=st.integers(0, 1),
       categorical=st.booleans())
def test_line_probes_never_go_the_wrong_way(seed, sign, axis, categorical):
    """Check on random lines parallel to the constrained feature that predictions are monotone (geometry only)."""
    X, y = make_data(150, 3, 5, seed)
    rng = np.random.default_rng(seed)
    X[:, 2] = rng.integers(0, 2, X.shape[0])  # a one-hot style column
    trees = fit_trees(X, y, 3, 12, seed)
    part = relabel.fuse([leaf_boxes(t) for t in trees])
    counts = relabel.region_counts(part.locate(np.column_stack([t.apply(X) for t in trees])), y, 5,
                                   n_regions=part.n_regions)
    cst = np.zeros(3, dtype=int)
    cst[axis] = sign
    cat = [2] if categorical else None
    edges = relabel.adjacency_edges(part, categorical_features=cat).edges
    problem = relabel.ConsistencyProblem.from_counts(
        counts, edges, monotone=relabel.monotone_pairs(part, cst, categorical_features=cat))
    labels = relabel.solve(problem, on_solver_failure="raise").labels
    # Both certificates on contacts re-derived from the boxes by the all-pairs oracles.
    oracle_edges, _ = categorical_oracle(part.lower, part.upper, relabel.check_categorical_features(cat, 3))
    assert relabel.is_consistent(oracle_edges, labels)
    assert relabel.is_monotone(face_pairs_oracle(part.lower, part.upper, cst), labels)
    # Random lines parallel to the constrained axis, through the thresholds too.
    t = np.linspace(-0.2, 1.2, 400)
    t = np.sort(np.concatenate((t, part.upper[np.isfinite(part.upper[:, axis]), axis])))
    for _ in range(10):
        base = rng.uniform(-0.1, 1.1, 3)
        base[2] = rng.integers(0, 2)
        points = np.repeat(base[None], t.shape[0], axis=0)
        points[:, axis] = t
        along = labels[region_of(part, points)]
        assert np.all(sign * np.diff(along) >= 0), along


def test_certificate_catches_a_planted_violation():
    """Check that is_monotone, violating_pairs and objective() catch one swapped pair."""
    part, counts = fused(2, 2, 6, seed=3)
    pairs = relabel.monotone_pairs(part, [1, 1])
    problem = relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_edges(part).edges, monotone=pairs)
    labels = relabel.solve(problem).labels.copy()
    assert relabel.is_monotone(pairs, labels) and np.isfinite(problem.objective(labels))
    # Plant: the lower end of a pair one class above the upper end.
    n, m = pairs[0]
    labels[:] = 1
    labels[n], labels[m] = 2, 1
    assert not relabel.is_monotone(pairs, labels)
    np.testing.assert_array_equal(relabel.violating_pairs(pairs, labels), pairs[labels[pairs[:, 0]] > labels[pairs[:, 1]]])
    assert [n, m] in relabel.violating_pairs(pairs, labels).tolist()
    assert problem.objective(labels) == np.inf
    assert relabel.is_consistent(problem.edges, labels)  # consistent, yet not monotone


def test_monotone_is_hard_for_empty_regions():
    """Check that an empty region cannot carry a decreasing step (no penalty buys it)."""
    counts = np.array([[0, 0, 9], [0, 0, 0], [9, 0, 0]], dtype=float)
    free = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, [[0, 1], [1, 2]]))
    assert free.labels.tolist() == [2, 1, 0]
    problem = relabel.ConsistencyProblem.from_counts(counts, [[0, 1], [1, 2]], monotone=[[0, 1], [1, 2]])
    for solver in relabel.SOLVERS:
        for formulation in relabel.FORMULATIONS:
            result = relabel.solve(problem, solver=solver, formulation=formulation, on_solver_failure="raise")
            assert result.labels[0] <= result.labels[1] <= result.labels[2]
            assert result.objective == pytest.approx(18.0)


def test_monotone_input_is_validated():
    """Check clear errors naming monotonic_cst (and the monotone pairs of from_counts)."""
    part, counts = fused(2, 1, 4, seed=0)
    with pytest.raises(ValueError, match="monotonic_cst must have one entry per feature"):
        relabel.monotone_pairs(part, [1])
    with pytest.raises(ValueError, match="monotonic_cst must hold only -1, 0 or \\+1"):
        relabel.monotone_pairs(part, [2, 0])
    with pytest.raises(ValueError, match="monotonic_cst must hold -1, 0 or \\+1"):
        relabel.monotone_pairs(part, ["up", "down"])
    with pytest.raises(ValueError, match="monotonic_cst must be an array-like .* resolved by the estimators"):
        relabel.monotone_pairs(part, {"x0": 1})
    with pytest.raises(ValueError, match="monotonic_cst constrains feature\\(s\\) \\[1\\].*categorical"):
        relabel.monotone_pairs(part, [0, -1], categorical_features=[1])
    with pytest.raises(ValueError, match="monotonic_cst constrains"):
        relabel.check_monotonic_cst([1, 0], 2, categorical_features=[True, False])
    edges = relabel.adjacency_edges(part).edges
    with pytest.raises(ValueError, match="monotone must be an \\(n_pairs, 2\\)"):
        relabel.ConsistencyProblem.from_counts(counts, edges, monotone=[0, 1, 2])
    with pytest.raises(ValueError, match="monotone pairs must join region indices"):
        relabel.ConsistencyProblem.from_counts(counts, edges, monotone=[[0, counts.shape[0]]])
    with pytest.raises(ValueError, match="two different regions"):
        relabel.ConsistencyProblem.from_counts(counts, edges, monotone=[[1, 1]])
    with pytest.raises(ValueError, match="monotone must hold integer"):
        relabel.ConsistencyProblem.from_counts(counts, edges, monotone=[[0.0, 1.0]])
    with pytest.raises(ValueError, match="pairs refer to regions outside"):
        relabel.is_monotone([[0, 5]], [0, 1])
    # Duplicates collapse; (n, m) and (m, n) together force equal labels.
    problem = relabel.ConsistencyProblem.from_counts([[3, 0], [0, 1]], [[0, 1]], monotone=[[1, 0], [1, 0], [0, 1]])
    assert problem.monotone.tolist() == [[0, 1], [1, 0]] and problem.n_monotone == 2
    assert relabel.solve(problem).labels.tolist() == [0, 0]


def test_cut_graph_holds_one_infinite_arc_per_class_threshold():
    """Check that the graph-cut builder adds x_{n,k} -> x_{m,k} for every pair and k, with mutual mates."""
    from relabel._backends import _cutgraph, graphcut

    counts = np.array([[2, 0, 1], [0, 0, 0], [0, 3, 0], [1, 1, 1]], dtype=float)
    edges = [[0, 1], [1, 2], [2, 3]]
    pairs = [[0, 2], [3, 1], [2, 0]]
    plain = graphcut.build_cut_graph(relabel.ConsistencyProblem.from_counts(counts, edges))
    g = graphcut.build_cut_graph(relabel.ConsistencyProblem.from_counts(counts, edges, monotone=pairs))
    total = int(g.start[-1])
    owner = np.repeat(np.arange(g.n_nodes), np.diff(g.start))
    assert np.array_equal(g.mate[g.mate], np.arange(total))
    assert np.array_equal(g.nbr[g.mate], owner)
    assert np.array_equal(g.table[g.kind, 1], g.table[g.kind[g.mate], 0])
    arcs = lambda graph: sorted(zip(*(a.tolist() for a in _cutgraph.arc_list(graph.n_nodes, graph.start, graph.nbr,  # noqa: E731
                                                                      graph.kind, graph.table))))
    infinite = int(g.table[0, 0])
    km = 2
    expected = sorted(arcs(plain) + [(n * km + k, m * km + k, infinite) for n, m in pairs for k in range(km)])
    assert arcs(g) == expected
