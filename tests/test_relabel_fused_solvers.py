"""Solver agreement on fused partitions of scikit-learn trees, and the tight LP's integrality."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import relabel
from relabel._backends.cbc import lp_relaxation
from test_relabel_helpers import check_all_solvers, fused_instance, tiny_problems

FORMS = st.tuples(st.sampled_from(relabel.FORMULATIONS), st.sampled_from(relabel.FORMULATIONS))


def _problem(part, counts, contact="closure"):
    return relabel.ConsistencyProblem.from_counts(counts, relabel.adjacency_graph(part, contact))


@given(
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(3, 8),
    n_classes=st.integers(2, 5),
    seed=st.integers(0, 10_000),
    forms=FORMS,
)
def test_fused_2d_all_solvers_agree(n_trees, max_leaf_nodes, n_classes, seed, forms):
    """Check that all solvers reach the same optimum on fused 2D partitions."""
    part, _, _, _, counts = fused_instance(2, n_trees, max_leaf_nodes, n_classes, seed, n_samples=60)
    check_all_solvers(_problem(part, counts), forms)


@given(
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 4),
    n_classes=st.integers(3, 5),
    seed=st.integers(0, 10_000),
    forms=FORMS,
)
def test_fused_4d_all_solvers_agree(n_trees, max_leaf_nodes, n_classes, seed, forms):
    """Check that all solvers reach the same optimum on fused 4D partitions (many corner contacts)."""
    part, _, _, _, counts = fused_instance(4, n_trees, max_leaf_nodes, n_classes, seed, n_samples=60)
    check_all_solvers(_problem(part, counts), forms)


@given(
    n_features=st.sampled_from([2, 3]),
    n_trees=st.integers(2, 3),
    max_leaf_nodes=st.integers(3, 6),
    seed=st.integers(0, 10_000),
    contact=st.sampled_from(relabel.CONTACTS),
    forms=FORMS,
)
def test_fused_grid_data_all_solvers_agree(n_features, n_trees, max_leaf_nodes, seed, contact, forms):
    """Check agreement on partitions with shared thresholds (grid data), for both contact kinds."""
    part, _, _, _, counts = fused_instance(n_features, n_trees, max_leaf_nodes, 4, seed, n_samples=50, grid=4)
    problem = _problem(part, counts, contact)
    check_all_solvers(problem, forms)
    if contact == "face":
        # The closure problem has more constraints: its optimum can only be higher.
        closure = relabel.solve(_problem(part, counts, "closure"))
        assert closure.objective >= relabel.solve(problem).objective - 1e-9


@given(
    n_features=st.sampled_from([2, 4]),
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 6),
    seed=st.integers(0, 10_000),
    sparse=st.booleans(),
)
def test_tight_lp_relaxation_is_integral(n_features, n_trees, max_leaf_nodes, seed, sparse):
    """Check that CBC's LP relaxation of the tight form has no fractional value and the ILP optimum."""
    # Few samples leave many empty regions, exercising the linearised C|x - x'| terms.
    n_samples = 15 if sparse else 60
    part, _, _, _, counts = fused_instance(n_features, n_trees, max_leaf_nodes, 4, seed, n_samples=n_samples)
    problem = _problem(part, counts)
    values = lp_relaxation(problem, "tight")
    fractional = np.abs(values - np.round(values)) > 1e-6
    assert fractional.sum() == 0
    x = np.round(values[: problem.n_regions * (problem.n_classes - 1)]).reshape(problem.n_regions, -1)
    labels = x.sum(axis=1).astype(int)
    assert relabel.is_consistent(problem.edges, labels)
    assert np.isclose(problem.objective(labels), relabel.solve(problem).objective, rtol=1e-9)


@given(instance=tiny_problems(max_regions=8, max_classes=5))
def test_tight_lp_relaxation_integral_on_tiny_graphs(instance):
    """Check that the tight LP relaxation is integral on arbitrary small graphs too."""
    counts, edges = instance
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    values = lp_relaxation(problem, "tight")
    assert np.all(np.abs(values - np.round(values)) <= 1e-6)
    x = np.round(values[: problem.n_regions * (problem.n_classes - 1)]).reshape(problem.n_regions, -1)
    assert np.isclose(problem.objective(x.sum(axis=1).astype(int)), relabel.solve(problem).objective)


def test_paper_lp_relaxation_can_be_fractional():
    """Check that the paper form's relaxation is weaker: fractional on a fused instance where tight is not."""
    found = False
    for seed in range(6):
        part, _, _, _, counts = fused_instance(4, 3, 4, 5, seed, n_samples=40)
        problem = _problem(part, counts)
        paper = lp_relaxation(problem, "paper")
        tight = lp_relaxation(problem, "tight")
        assert np.all(np.abs(tight - np.round(tight)) <= 1e-6)
        if np.any(np.abs(paper - np.round(paper)) > 1e-6):
            found = True
            break
    assert found


@given(
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 5),
    seed=st.integers(0, 10_000),
    forms=FORMS,
)
def test_fused_3d_regressor_trees_all_solvers_agree(n_trees, max_leaf_nodes, seed, forms):
    """Check agreement on fused 3D partitions of scikit-learn regression trees."""
    from sklearn.tree import DecisionTreeRegressor

    from test_relabel_helpers import make_data
    from trees import leaf_boxes

    X, y = make_data(60, 3, 4, seed)
    rng = np.random.default_rng(seed)
    trees = [
        DecisionTreeRegressor(max_leaf_nodes=max_leaf_nodes, random_state=m).fit(X[idx], y[idx])
        for m, idx in enumerate(rng.integers(0, 60, size=(n_trees, 60)))
    ]
    part = relabel.fuse([leaf_boxes(t) for t in trees])
    region = part.locate(np.column_stack([t.apply(X) for t in trees]))
    counts = relabel.region_counts(region, y, 4, n_regions=part.n_regions)
    check_all_solvers(_problem(part, counts), forms)
