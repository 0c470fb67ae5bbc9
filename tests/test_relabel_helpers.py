"""Shared helpers for the relabel tests: instances, brute force and naive oracles."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import relabel
from trees import leaf_boxes


def fit_trees(X, y, n_trees, max_leaf_nodes, seed, regressor=False):
    """Bootstrap scikit-learn trees (a realistic source of partitions)."""
    rng = np.random.default_rng(seed)
    trees = []
    for _ in range(n_trees):
        idx = rng.integers(0, X.shape[0], X.shape[0])
        cls = DecisionTreeRegressor if regressor else DecisionTreeClassifier
        tree = cls(max_leaf_nodes=max_leaf_nodes, random_state=int(rng.integers(1 << 30)))
        trees.append(tree.fit(X[idx], y[idx]))
    return trees


def make_data(n_samples, n_features, n_classes, seed, grid=None):
    """Ordinal data: a noisy monotone score cut into classes; optional coarse grid
    values so that trees share thresholds and many corner contacts appear."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_samples, n_features))
    if grid:
        X = np.round(X * grid) / grid
    score = X.mean(axis=1) + rng.normal(0, 0.15, n_samples)
    y = np.clip((score * n_classes).astype(int), 0, n_classes - 1)
    return X, y


def fused_instance(n_features, n_trees, max_leaf_nodes, n_classes, seed, n_samples=120, grid=None):
    """Fuse bootstrap trees and return (partition, trees, X, y, counts)."""
    X, y = make_data(n_samples, n_features, n_classes, seed, grid)
    trees = fit_trees(X, y, n_trees, max_leaf_nodes, seed)
    part = relabel.fuse([leaf_boxes(t) for t in trees])
    leaves = np.column_stack([t.apply(X) for t in trees])
    counts = relabel.region_counts(part.locate(leaves), y, n_classes, n_regions=part.n_regions)
    return part, trees, X, y, counts


def naive_adjacency(lower, upper):
    """All-pairs closure test: (E, 2) edges (n < m, sorted) and the face flag."""
    lo_a, hi_a = lower[:, None, :], upper[:, None, :]
    lo_b, hi_b = lower[None, :, :], upper[None, :, :]
    meet = np.all((lo_a <= hi_b) & (lo_b <= hi_a), axis=2)
    n_touch = np.sum((hi_a == lo_b) | (hi_b == lo_a), axis=2)
    a, b = np.nonzero(np.triu(meet, k=1))
    return np.column_stack((a, b)).reshape(-1, 2), n_touch[a, b] == 1


def _with_prior(counts, prior):
    """(the weights that cost, the empty regions): a prior adds to the empty regions only, which stay empty."""
    empty = counts.sum(axis=1) == 0
    return (counts if prior is None else counts + np.where(empty[:, None], prior, 0.0)), empty


def brute_force(counts, edges, C1, C2, loss=None, monotone=None, prior=None, moves=None):
    """Minimum of eq. (10) over all K^N labellings, computed from scratch; ``monotone``
    pairs (n, m) exclude the labellings with label(n) > label(m); ``prior`` weights of the
    empty regions cost as counts but leave them empty for the penalties; ``moves`` pairs
    exclude labels two apart and cost nothing."""
    counts = np.asarray(counts, dtype=float)
    n, k = counts.shape
    if loss is None:
        loss = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    weights, empty = _with_prior(counts, prior)
    cost = np.einsum("ni,ik->nk", weights, loss)
    labellings = np.array(list(itertools.product(range(k), repeat=n)), dtype=int)
    total = cost[np.arange(n), labellings].sum(axis=1)
    for a, b in np.asarray(edges).reshape(-1, 2):
        gap = np.abs(labellings[:, a] - labellings[:, b])
        total = np.where(gap > 1, np.inf, total)
        if empty[a] and empty[b]:
            total = total + C1 * (gap > 0)
        elif empty[a] or empty[b]:
            total = total + C2 * (gap > 0)
    for a, b in np.asarray(monotone if monotone is not None else []).reshape(-1, 2):
        total = np.where(labellings[:, a] > labellings[:, b], np.inf, total)
    for a, b in np.asarray(moves if moves is not None else []).reshape(-1, 2):
        total = np.where(np.abs(labellings[:, a] - labellings[:, b]) > 1, np.inf, total)
    return float(total.min())


@st.composite
def tiny_problems(draw, max_regions=8, max_classes=4):
    """Hand-made graphs of at most ``max_regions`` nodes with random counts."""
    n = draw(st.integers(1, max_regions))
    k = draw(st.integers(2, max_classes))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    rows = []
    for _ in range(n):
        if draw(st.booleans()):
            rows.append([0] * k)  # empty region: exercises Delta1 / Delta2
        else:
            rows.append(draw(st.lists(st.integers(0, 6), min_size=k, max_size=k)))
    return np.array(rows, dtype=float), np.array(edges, dtype=int).reshape(-1, 2)


def test_brute_force_path():
    """Check that the brute-force oracle finds the hand-computed optimum of a path."""
    # Regions 0 and 2 want labels 0 and 2; region 1 is empty: both transitions are
    # Delta2 edges, so the optimum is 2 * C2.
    counts = [[4, 0, 0], [0, 0, 0], [0, 0, 4]]
    assert brute_force(counts, [[0, 1], [1, 2]], C1=0.1, C2=0.2) == 0.4
    # Without the empty middle region the labels 0 and 2 cannot be adjacent: one
    # region must move by one class at cost 4.
    assert brute_force([[4, 0, 0], [0, 0, 4]], [[0, 1]], C1=0.1, C2=0.2) == 4.0


def test_naive_adjacency_quadrants():
    """Check that the naive oracle classifies the four quadrants' contacts."""
    inf = np.inf
    lower = np.array([[-inf, -inf], [0, -inf], [-inf, 0], [0, 0]], dtype=float)
    upper = np.array([[0, 0], [inf, 0], [0, inf], [inf, inf]], dtype=float)
    edges, face = naive_adjacency(lower, upper)
    assert edges.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert face.tolist() == [True, True, False, False, True, True]


def objective_of(counts, edges, C1, C2, labels, loss=None, monotone=None, prior=None):
    """Eq. (10) of one labelling computed from scratch (inf when inconsistent or not monotone);
    ``prior`` weights of the empty regions cost as counts."""
    counts = np.asarray(counts, dtype=float)
    k = counts.shape[1]
    if loss is None:
        loss = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    for a, b in np.asarray(monotone if monotone is not None else []).reshape(-1, 2):
        if labels[a] > labels[b]:
            return np.inf
    weights, empty = _with_prior(counts, prior)
    total = sum(float(weights[n] @ loss[:, labels[n]]) for n in range(counts.shape[0]))
    for a, b in np.asarray(edges).reshape(-1, 2):
        gap = abs(int(labels[a]) - int(labels[b]))
        if gap > 1:
            return np.inf
        if gap and empty[a] and empty[b]:
            total += C1
        elif gap and (empty[a] or empty[b]):
            total += C2
    return total


def check_all_solvers(problem, formulations=("paper", "tight"), brute=None, loss=None):
    """Run graph cut (both forms), CBC and CP-SAT and check agreement and certificates.

    ``formulations`` gives the form used for (CBC, CP-SAT); the graph cut runs both.
    Returns the common objective.
    """
    runs = [("graphcut", "paper"), ("graphcut", "tight"), ("cbc", formulations[0]), ("cpsat", formulations[1])]
    results = [relabel.solve(problem, solver=s, formulation=f, on_solver_failure="raise") for s, f in runs]
    reference = results[0].objective
    for (solver, formulation), result in zip(runs, results):
        assert result.status is relabel.SolverStatus.OPTIMAL, (solver, formulation, result.message)
        assert result.solver == solver and result.formulation == formulation
        assert result.labels.shape == (problem.n_regions,)
        assert result.labels.min() >= 0 and result.labels.max() < problem.n_classes
        assert relabel.is_consistent(problem.edges, result.labels)
        assert relabel.is_monotone(problem.monotone, result.labels)
        own = objective_of(problem.counts, problem.edges, problem.C1, problem.C2, result.labels, loss,
                           problem.monotone, problem.prior)
        assert np.isclose(result.objective, own, rtol=1e-12, atol=1e-12)
        assert np.isclose(result.objective, reference, rtol=1e-9, atol=1e-12), (solver, formulation)
        assert result.wall_time >= 0
    # Both max-flow engines of the graph cut return the smallest optimal labelling.
    from relabel._backends import graphcut

    alternative = graphcut.solve(problem, formulation="tight", time_limit=None, threads=1, verbose=False,
                                 engine="ortools")
    assert alternative.status == "OPTIMAL" and np.array_equal(alternative.labels, results[0].labels)
    if brute is None and problem.n_regions <= 8:
        # Every instance of at most 8 regions is also checked against enumeration.
        brute = brute_force(problem.counts, problem.edges, problem.C1, problem.C2, problem.loss, problem.monotone,
                            problem.prior)
    if brute is not None:
        assert np.isclose(reference, brute, rtol=1e-9, atol=1e-12)
    return reference
