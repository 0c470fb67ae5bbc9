"""Tests of the monotone projections of trees._isotonic and the leaf order of trees._monotone, against oracles."""

import itertools

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.isotonic import IsotonicRegression

from trees import OrdinalTreeClassifier, leaf_boxes
from trees._isotonic import isotonic_labels, isotonic_regression, max_closure
from trees._monotone import face_order


def random_dag(rng, n, density=0.4):
    """Order pairs of a random DAG on n nodes, numbered at random."""
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < density]
    perm = rng.permutation(n)
    below = np.array([perm[i] for i, _ in pairs], dtype=np.intp)
    above = np.array([perm[j] for _, j in pairs], dtype=np.intp)
    return below, above


@given(st.integers(0, 2**32 - 1))
def test_isotonic_regression_on_a_chain_equals_scikit_learn(seed):
    """Check that on a chain (a total order) the projection equals scikit-learn's pool-adjacent-violators."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    y, w = rng.normal(size=n), rng.uniform(0.1, 3.0, n)
    perm = rng.permutation(n)
    got = isotonic_regression(y, w, perm[:-1], perm[1:])
    expected = IsotonicRegression().fit_transform(np.arange(n), y[perm], sample_weight=w[perm])
    np.testing.assert_allclose(got[perm], expected, atol=1e-10)


@given(st.integers(0, 2**32 - 1))
@example(698)  # SLSQP of scipy 1.10 ends slightly infeasible here
def test_isotonic_regression_on_a_dag_equals_a_quadratic_program(seed):
    """Check the projection on random DAGs against SLSQP: feasible exactly, objective no worse, same point."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    below, above = random_dag(rng, n)
    y, w = rng.normal(size=n), rng.uniform(0.2, 2.0, n)
    got = isotonic_regression(y, w, below, above)
    assert np.all(got[below] <= got[above])
    constraints = [{"type": "ineq", "fun": lambda v, b=b, a=a: v[a] - v[b]} for b, a in zip(below, above)]
    ref = minimize(lambda v: np.sum(w * (v - y) ** 2), np.full(n, np.average(y, weights=w)),
                   constraints=constraints, method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000}).x
    # SLSQP may end a hair outside the constraints (scipy 1.10 did, by about 1e-9, on seed 698), where the
    # objective can be lower than the optimum: allow what a violation of that size can buy (a feasible
    # point lies within n times it, and the objective's gradient is 2 w (v - y)).
    violation = max(0.0, float(np.max(ref[below] - ref[above], initial=0.0)))
    slack = 1e-9 + 2 * n * float(np.sum(w * np.abs(ref - y))) * violation
    assert np.sum(w * (got - y) ** 2) <= np.sum(w * (ref - y) ** 2) + slack
    np.testing.assert_allclose(got, ref, atol=1e-5)


@given(st.integers(0, 2**32 - 1))
def test_isotonic_labels_reach_the_brute_force_optimum(seed):
    """Check that the labels are monotone and of least absolute error, by enumerating every labelling."""
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(1, 7)), int(rng.integers(2, 4))
    below, above = random_dag(rng, n)
    counts = rng.integers(0, 4, (n, K)).astype(float) * rng.choice([1.0, 0.5], (n, K))
    counts[counts.sum(axis=1) == 0, 0] = 1.0
    labels = isotonic_labels(counts, below, above)
    assert np.all(labels[below] <= labels[above])

    def cost(lab):
        return sum(counts[a, k] * abs(k - lab[a]) for a in range(n) for k in range(K))

    feasible = (lab for lab in itertools.product(range(K), repeat=n)
                if all(lab[b] <= lab[a] for b, a in zip(below, above)))
    assert cost(labels) == pytest.approx(min(cost(lab) for lab in feasible), abs=1e-9)


def test_isotonic_labels_without_order_are_the_lower_medians():
    """Check that without pairs every node gets the lower weighted median of its counts."""
    counts = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 3.0], [5.0, 0.0, 5.0], [0.0, 0.0, 1.0]])
    empty = np.empty(0, dtype=np.intp)
    assert isotonic_labels(counts, empty, empty).tolist() == [0, 2, 0, 2]


def test_max_closure_on_a_small_graph():
    """Check the maximum closure against enumeration of every upper set, minimal on ties."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 8))
        below, above = random_dag(rng, n)
        gain = rng.integers(-3, 4, n).astype(float)
        inside, value = max_closure(gain, below, above)
        sets = [np.array(s, dtype=bool) for s in itertools.product([False, True], repeat=n)
                if all(not s[b] or s[a] for b, a in zip(below, above))]
        best = max(float(gain[s].sum()) for s in sets)
        assert value == pytest.approx(best)
        assert all(not inside[b] or inside[a] for b, a in zip(below, above))
        assert inside.sum() == min(s.sum() for s in sets if gain[s].sum() == best)


def brute_force_pairs(clf, cst):
    """Every leaf pair touching across a constrained face, by testing all pairs of leaf boxes (missing included)."""
    boxes = leaf_boxes(clf, missing=True)
    d = boxes.lower.shape[1]
    pairs = set()
    for f in np.flatnonzero(cst):
        touch = (boxes.upper[:, None, f] == boxes.lower[None, :, f]) & np.isfinite(boxes.upper[:, None, f])
        others = np.arange(d) != f
        overlap = (np.maximum(boxes.lower[:, None, others], boxes.lower[None, :, others])
                   < np.minimum(boxes.upper[:, None, others], boxes.upper[None, :, others]))
        overlap |= boxes.missing[:, None, others] & boxes.missing[None, :, others]
        for i, j in zip(*np.nonzero(touch & np.all(overlap, axis=-1))):
            a, b = boxes.leaf_ids[i], boxes.leaf_ids[j]
            pairs.add((int(a), int(b)) if cst[f] > 0 else (int(b), int(a)))
    return pairs


@pytest.mark.parametrize("cst", [[1, 0, 0, -1], [1, 1, -1, -1], [0, 0, 0, 1]])
@pytest.mark.parametrize("max_depth", [3, 7, None])
def test_face_order_equals_all_pairs_of_leaf_boxes(cst, max_depth):
    """Check the tree traversal's face pairs against testing every pair of leaf boxes."""
    rng = np.random.default_rng(4)
    X = np.round(rng.random((1500, 4)), 2)
    y = np.digitize(X[:, 0] - X[:, 3] + 0.3 * rng.standard_normal(1500), [-0.5, 0.0, 0.5])
    X[rng.random(X.shape) < 0.1] = np.nan  # missing values make the missing category of the boxes matter
    cst = np.array(cst, dtype=np.int8)
    clf = OrdinalTreeClassifier(max_depth=max_depth).fit(X, y)
    t = clf.tree_
    below, above = face_order(t.children_left, t.feature, t.threshold, t.missing_go_to_left, cst)
    got = set(zip(below.tolist(), above.tolist()))
    assert got == brute_force_pairs(clf, cst)
    assert len(got) > 0


def test_monotone_tree_labels_are_the_optimal_monotone_labels():
    """Check on tiny constrained trees that the leaf labels minimise the training MAE among monotone labellings."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        X = rng.random((40, 2))
        y = rng.integers(0, 3, 40)
        clf = OrdinalTreeClassifier(monotonic_cst=[1, -1], max_depth=3, classes=[0, 1, 2]).fit(X, y)
        leaves = np.flatnonzero(clf.tree_.children_left == -1)
        pairs = brute_force_pairs(clf, np.array([1, -1]))
        index = {leaf: i for i, leaf in enumerate(leaves)}
        counts = clf.tree_.value[leaves]

        def cost(lab, counts=counts):
            return sum(counts[a, k] * abs(k - lab[a]) for a in range(len(lab)) for k in range(3))

        best = min(cost(lab) for lab in itertools.product(range(3), repeat=len(leaves))
                   if all(lab[index[a]] <= lab[index[b]] for a, b in pairs))
        assert cost(clf.leaf_label_[leaves]) == pytest.approx(best)
