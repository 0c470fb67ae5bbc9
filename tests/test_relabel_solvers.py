"""Solver agreement on hand-made graphs, solver contract, statuses and errors."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relabel
from relabel._backends import BackendResult
from test_relabel_helpers import brute_force, check_all_solvers, fused_instance, tiny_problems

FORMS = st.tuples(st.sampled_from(relabel.FORMULATIONS), st.sampled_from(relabel.FORMULATIONS))


@given(instance=tiny_problems(), forms=FORMS)
def test_tiny_graphs_all_solvers_equal_brute_force(instance, forms):
    """Check that every solver reaches the brute-force optimum on tiny hand-made graphs."""
    counts, edges = instance
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    expected = brute_force(counts, edges, problem.C1, problem.C2)
    check_all_solvers(problem, forms, brute=expected)


@given(instance=tiny_problems(max_regions=7, max_classes=5), forms=FORMS, data=st.data())
def test_weighted_counts_custom_loss_and_penalties(instance, forms, data):
    """Check agreement with brute force under rational weights, a squared loss and custom C1, C2."""
    counts, edges = instance
    weights = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.0, 1.0 / 3, 2.25]),
                                          min_size=counts.size, max_size=counts.size)))
    counts = counts * weights.reshape(counts.shape)
    k = counts.shape[1]
    loss = data.draw(st.sampled_from([None, "squared", "asymmetric"]))
    if loss == "squared":
        loss = np.subtract.outer(np.arange(k), np.arange(k)) ** 2.0
    elif loss == "asymmetric":
        diff = np.subtract.outer(np.arange(k), np.arange(k)).astype(float)
        loss = np.where(diff > 0, 2.0 * diff, -0.5 * diff)  # under-prediction costs more
    C1 = data.draw(st.sampled_from([None, 0.0, 0.01, 0.3]))
    C2 = data.draw(st.sampled_from([None, 0.02, 0.7]))
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, C1, C2, loss=loss)
    expected = brute_force(counts, edges, problem.C1, problem.C2, problem.loss)
    check_all_solvers(problem, forms, brute=expected, loss=problem.loss)


@given(instance=tiny_problems(max_regions=7, max_classes=5), forms=FORMS, data=st.data())
def test_prior_on_empty_regions_all_solvers_equal_brute_force(instance, forms, data):
    """Check every solver against brute force when the empty regions carry class weights (a prior)."""
    counts, edges = instance
    empty = counts.sum(axis=1) == 0
    votes = np.array(data.draw(st.lists(st.integers(0, 3), min_size=counts.size, max_size=counts.size)))
    unit = data.draw(st.sampled_from([2.0**-9, 0.25, 3.0]))  # small, as OTreeBagger's, and large enough to decide
    prior = np.where(empty[:, None], unit * votes.reshape(counts.shape), 0.0)
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, prior=prior)
    np.testing.assert_array_equal(problem.empty, empty)  # the prior leaves the regions empty for the penalties
    expected = brute_force(counts, edges, problem.C1, problem.C2, prior=prior)
    check_all_solvers(problem, forms, brute=expected)


def test_prior_labels_a_free_empty_region_and_is_checked():
    """Check that an unconstrained empty region takes its prior's median, that a constrained one the nearest
    label its neighbours allow, and that a bad prior is refused with the parameter's name."""
    # Regions 0 (class 0) - 1 (empty) - 2 (class 2), and 3 (empty) alone; the prior asks 2 of both empty ones.
    counts = np.array([[5, 0, 0], [0, 0, 0], [0, 0, 5], [0, 0, 0]], dtype=float)
    prior = np.array([[0, 0, 0], [0, 0, 0.5], [0, 0, 0], [0, 0.25, 0.5]])
    for solver in relabel.SOLVERS:
        free = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, [[0, 1], [1, 2]]), solver=solver)
        led = relabel.solve(relabel.ConsistencyProblem.from_counts(counts, [[0, 1], [1, 2]], prior=prior),
                            solver=solver)
        assert list(led.labels) == [0, 1, 2, 2], solver  # region 1 is held at 1; region 3 follows its prior
        assert list(free.labels)[:3] == [0, 1, 2]  # region 3, alone and free, costs 0 with any label
    with pytest.raises(ValueError, match="prior must be zero on the regions with counts"):
        relabel.ConsistencyProblem.from_counts(counts, [[0, 1]], prior=np.ones((4, 3)))
    with pytest.raises(ValueError, match="prior must have the counts' shape"):
        relabel.ConsistencyProblem.from_counts(counts, [[0, 1]], prior=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="prior must be finite and non-negative"):
        relabel.ConsistencyProblem.from_counts(counts, [[0, 1]], prior=-prior)


@given(
    n_features=st.sampled_from([2, 4]),
    n_trees=st.integers(1, 3),
    max_leaf_nodes=st.integers(2, 3),
    seed=st.integers(0, 10_000),
    forms=FORMS,
)
def test_small_fused_partitions_equal_brute_force(n_features, n_trees, max_leaf_nodes, seed, forms):
    """Check that every solver reaches the brute-force optimum on fused partitions of at most 8 regions."""
    part, _, _, _, counts = fused_instance(n_features, n_trees, max_leaf_nodes, 4, seed, n_samples=40)
    if part.n_regions > 8:
        part_counts = counts[:8]
        edges = relabel.adjacency_edges(part).edges
        edges = edges[(edges < 8).all(axis=1)]  # the induced subgraph: still a valid instance
        counts = part_counts
    else:
        edges = relabel.adjacency_edges(part).edges
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    check_all_solvers(problem, forms, brute=brute_force(counts, edges, problem.C1, problem.C2))


def test_solve_validates_arguments():
    """Check that solve rejects an unknown solver, formulation, bad time limit, threads or problem."""
    problem = relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="solver must be one of"):
        relabel.solve(problem, solver="gurobi")
    with pytest.raises(ValueError, match="formulation must be one of"):
        relabel.solve(problem, formulation="compact")
    for bad in (0, -1.0, float("nan"), "10", True):
        with pytest.raises(ValueError, match="time_limit must be a positive number"):
            relabel.solve(problem, time_limit=bad)
    with pytest.raises(ValueError, match="threads"):
        relabel.solve(problem, threads=0)
    with pytest.raises(ValueError, match="on_solver_failure must be 'warn' or 'raise'"):
        relabel.solve(problem, on_solver_failure="ignore")
    with pytest.raises(ValueError, match="ConsistencyProblem"):
        relabel.solve(np.zeros((2, 2)))
    assert set(relabel.SOLVERS) == {"graphcut", "cbc", "cpsat"}


@pytest.mark.parametrize(
    "solver, module, package",
    [("cpsat", "ortools.sat.python", "ortools"),
     ("cbc", "pulp", "pulp")],
)
def test_missing_solver_package_names_it(monkeypatch, solver, module, package):
    """Check that a missing solver package raises an ImportError subclass naming the pip package."""
    problem = relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 1]])
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(relabel.SolverNotInstalledError, match=f"pip install {package}") as info:
        relabel.solve(problem, solver=solver)
    assert isinstance(info.value, ImportError) and info.value.package == package


def test_missing_numba_fails_at_import_naming_it():
    """Check that without numba (a dependency: fusion and the graph cut are compiled) importing relabel names it."""
    code = "import sys; sys.modules['numba'] = None\ntry:\n    import relabel\nexcept ImportError as e:\n    print(e)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert "numba" in out.stdout


def _hard_problem():
    """A 4D fused partition on which CP-SAT needs far more than a few milliseconds."""
    part, _, _, _, counts = fused_instance(4, 3, 6, 5, seed=0, n_samples=300)
    edges = relabel.adjacency_edges(part).edges
    return relabel.ConsistencyProblem.from_counts(counts, edges)


def test_time_limit_is_reported_never_hidden():
    """Check that a time-limited CP-SAT run warns or raises with TIME_LIMIT and stays consistent."""
    problem = _hard_problem()
    optimum = relabel.solve(problem).objective
    with pytest.warns(relabel.RelabelWarning, match="TIME_LIMIT"):
        result = relabel.solve(problem, solver="cpsat", formulation="paper", time_limit=0.01)
    assert result.status is relabel.SolverStatus.TIME_LIMIT
    assert relabel.is_consistent(problem.edges, result.labels)
    assert result.objective >= optimum - 1e-9
    if result.bound is not None:
        assert result.bound <= optimum + 1e-9 and result.gap >= 0
    with pytest.raises(relabel.RelabelTimeLimitError, match="TIME_LIMIT") as info:
        relabel.solve(problem, solver="cpsat", formulation="paper", time_limit=0.01, on_solver_failure="raise")
    assert isinstance(info.value, relabel.RelabelError) and isinstance(info.value, RuntimeError)
    assert relabel.is_consistent(problem.edges, info.value.result.labels)


def test_inconsistent_backend_output_is_never_returned(monkeypatch):
    """Check that solve replaces a backend's inconsistent labelling and reports ERROR."""
    problem = relabel.ConsistencyProblem.from_counts([[5, 0, 0], [0, 0, 5]], [[0, 1]])

    def broken(problem, **kwargs):
        return BackendResult(np.array([0, 2]), "OPTIMAL", None, "deliberately inconsistent")

    monkeypatch.setitem(relabel.SOLVERS, "broken", broken)
    with pytest.warns(relabel.RelabelWarning, match="ERROR"):
        result = relabel.solve(problem, solver="broken")
    assert result.status is relabel.SolverStatus.ERROR
    assert result.labels.tolist() == problem.best_constant_labels().tolist()
    assert relabel.is_consistent(problem.edges, result.labels)
    with pytest.raises(relabel.RelabelError, match="inconsistent"):
        relabel.solve(problem, solver="broken", on_solver_failure="raise")


def test_exact_scaling_and_its_limits():
    """Check that the integer scaling is exact for the defaults and raises when impossible."""
    from relabel._scaling import integer_scaling

    n, k = 7, 4
    counts = np.arange(n * k, dtype=float).reshape(n, k) % 3
    problem = relabel.ConsistencyProblem.from_counts(counts, nx.path_graph(n))
    scaled = integer_scaling(problem)
    assert scaled.scale == 9 * n * (k - 1) and scaled.C1 == 9 and scaled.C2 == 10
    np.testing.assert_array_equal(scaled.costs, problem.costs * scaled.scale)
    # Arbitrary float weights have no small common denominator: CP-SAT refuses clearly,
    # the graph cut rounds them with a proven error bound and meets CBC (floating point).
    rng = np.random.default_rng(0)
    noisy = relabel.ConsistencyProblem.from_counts(rng.uniform(size=(30, 3)), nx.path_graph(30))
    with pytest.raises(ValueError, match="cannot be scaled"):
        relabel.solve(noisy, solver="cpsat")
    cut = relabel.solve(noisy, solver="graphcut", on_solver_failure="raise")
    reference = relabel.solve(noisy, solver="cbc", on_solver_failure="raise")
    assert cut.status is relabel.SolverStatus.OPTIMAL and "rounded" in cut.message
    assert cut.objective == pytest.approx(reference.objective, rel=1e-9)
    assert cut.bound <= cut.objective and cut.gap <= 1e-9
    huge = relabel.ConsistencyProblem.from_counts([[1e300, 0], [0, 1e300]], [[0, 1]])
    with pytest.raises(ValueError, match="too large"):
        relabel.solve(huge)


def test_whole_numbers_take_the_rational_reading():
    """Check that whole-number data (the fast path) get denominator 1 and the integers the rational reading gives."""
    from relabel._scaling import _rational, _rationalise

    rng = np.random.default_rng(1)
    for values in (rng.integers(-40, 40, (30, 5)).astype(float), np.array([[0.0, -0.0, 2.0**52, 7.0]])):
        denominator, ints = _rationalise(values, "counts")
        assert denominator == 1 and ints.dtype == np.int64
        assert [int(v) for v in ints.ravel()] == [_rational(float(v)).numerator for v in values.ravel()]
    # Not whole numbers, or too large for an exact float: the rational reading runs.
    assert _rationalise(np.array([0.5, 1.0]), "counts")[0] == 2
    assert _rationalise(np.array([2.0**60, 1.0]), "counts")[1].tolist() == [2**60, 1]


def test_graph_input_forms_agree():
    """Check that a networkx graph and its edge array give the same problem and optimum."""
    graph = nx.cycle_graph(6)
    counts = np.array([[3, 0, 0], [0, 0, 0], [0, 0, 4], [0, 0, 0], [1, 1, 1], [0, 2, 0]], dtype=float)
    from_graph = relabel.ConsistencyProblem.from_counts(counts, graph)
    from_array = relabel.ConsistencyProblem.from_counts(counts, np.array(graph.edges())[:, ::-1])
    np.testing.assert_array_equal(from_graph.edges, from_array.edges)
    assert relabel.solve(from_graph).objective == relabel.solve(from_array).objective


def test_cbc_info_names_the_binary():
    """Check that cbc_info reports the CBC command class and its path."""
    info = relabel.cbc_info()
    assert "CMD" in info and "cbc" in info.lower()


def test_solver_threads_and_verbose_run(capfd):
    """Check that threads=2 and verbose=True still reach the optimum (logs go to the solver's output)."""
    problem = relabel.ConsistencyProblem.from_counts([[4, 0, 0], [0, 0, 0], [0, 0, 4]], nx.path_graph(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for solver in ("cbc", "cpsat"):
            result = relabel.solve(problem, solver=solver, threads=2, verbose=True)
            assert result.status is relabel.SolverStatus.OPTIMAL
            assert np.isclose(result.objective, 2 * problem.C2)


@given(
    rows=st.integers(1, 5),
    cols=st.integers(2, 6),
    n_classes=st.integers(2, 5),
    data=st.data(),
    forms=FORMS,
)
def test_king_grid_graphs_all_solvers_agree(rows, cols, n_classes, data, forms):
    """Check agreement on grid partitions with corner contacts (king's graph), many cells empty."""
    graph = nx.grid_2d_graph(rows, cols)
    graph.add_edges_from(((r, c), (r + 1, c + dc)) for r in range(rows - 1) for c in range(cols)
                         for dc in (-1, 1) if 0 <= c + dc < cols)
    graph = nx.convert_node_labels_to_integers(graph, ordering="sorted")
    n = rows * cols
    counts = np.zeros((n, n_classes))
    for cell in data.draw(st.lists(st.integers(0, n - 1), max_size=n)):
        # Ordinal structure along the columns, with noise: labels must climb smoothly.
        mean = (cell % cols) * (n_classes - 1) / max(cols - 1, 1)
        counts[cell, int(np.clip(round(mean + data.draw(st.integers(-2, 2))), 0, n_classes - 1))] += 1
    problem = relabel.ConsistencyProblem.from_counts(counts, graph)
    check_all_solvers(problem, forms)


def test_cbc_falls_back_to_pulp_bundled_command(monkeypatch):
    """Check that without a cbc on PATH the bundled PULP_CBC_CMD solves, its deprecation warning filtered."""
    import pulp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        bundled = pulp.PULP_CBC_CMD().available()
    if not bundled:  # pragma: no cover - depends on the wheel
        pytest.skip("PuLP ships no bundled CBC here")
    original = pulp.COIN_CMD.available
    # PULP_CBC_CMD subclasses COIN_CMD: hide only the PATH command.
    monkeypatch.setattr(pulp.COIN_CMD, "available", lambda self: type(self) is not pulp.COIN_CMD and original(self))
    problem = relabel.ConsistencyProblem.from_counts([[4, 0, 0], [0, 0, 0], [0, 0, 4]], nx.path_graph(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = relabel.solve(problem, solver="cbc")
    assert result.status is relabel.SolverStatus.OPTIMAL
    assert np.isclose(result.objective, 2 * problem.C2)
    assert relabel.cbc_info().startswith("PULP_CBC_CMD")


def test_on_failure_is_a_deprecated_alias():
    """Check that solve(on_failure=...) warns (FutureWarning) and still means on_solver_failure."""
    problem = relabel.ConsistencyProblem.from_counts([[5, 0, 0], [0, 0, 5]], [[0, 1]])

    def broken(problem, **kwargs):
        return BackendResult(None, "ERROR", None, "deliberately nothing")

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(relabel.SOLVERS, "broken", broken)
        with pytest.warns(FutureWarning, match="on_solver_failure"):
            with pytest.raises(relabel.RelabelError, match="ERROR"):
                relabel.solve(problem, solver="broken", on_failure="raise")
        with pytest.warns(FutureWarning, match="deprecated"):
            result = relabel.solve(problem, on_failure="warn")
        assert result.status is relabel.SolverStatus.OPTIMAL
        with pytest.warns(FutureWarning), pytest.raises(ValueError, match="contradicts on_solver_failure"):
            relabel.solve(problem, on_solver_failure="raise", on_failure="warn")


@given(numerators=st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=30), exponent=st.integers(0, 45))
def test_dyadic_fast_path_equals_the_rational_reading(numerators, exponent):
    """Check that the power-of-two shortcut gives the common denominator and numerators of the Fraction path."""
    import math
    from fractions import Fraction

    from relabel._scaling import _dyadic, _rational

    values = np.asarray(numerators, dtype=np.float64) / 2.0**exponent
    fractions = [_rational(float(v)) for v in values]
    denominator = math.lcm(*(f.denominator for f in fractions))
    fast = _dyadic(values)
    if fast is None:  # only when a binary denominator passes the rational reading's limit
        assert max(Fraction(float(v)).denominator for v in values) > 2**39
        return
    scale, table = fast
    assert scale == denominator
    assert [Fraction(int(n), scale) for n in table] == fractions
