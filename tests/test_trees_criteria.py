"""Tests of the ordinal splitting criteria (docs/design.md section 3) against reference values and brute force."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import entropy as scipy_entropy

import trees
from trees import CRITERIA, OrdinalTreeClassifier
from trees.criteria import _CRITERIA, impurity, split_gain

L1, R1 = [97, 3, 1, 2], [2, 85, 5, 6]
L2, R2 = [28, 20, 1, 2], [2, 5, 35, 67]


# ---------------------------------------------------------------- brute-force definitions
def _expand(counts):
    """The sample of class indices a count vector stands for."""
    return np.repeat(np.arange(len(counts)), np.asarray(counts, dtype=int))


def brute_gini(counts):
    p = np.asarray(counts, float) / np.sum(counts)
    # Xia et al.: sum over ordered pairs of distinct classes of p_i p_j.
    return sum(p[i] * p[j] for i in range(len(p)) for j in range(len(p)) if i != j)


def brute_entropy(counts):
    return scipy_entropy(np.asarray(counts, float), base=2)


def brute_ogini(counts):
    # Summed (population) variance of the cumulative indicators [y <= k].
    y = _expand(counts)
    return sum(np.var((y <= k).astype(float)) for k in range(len(counts)))


def brute_ranking(counts):
    # Sum over unordered pairs of samples of their class distance.
    y = _expand(counts)
    return float(sum(abs(a - b) for a, b in itertools.combinations(y, 2)))


def brute_wig(counts, present, a):
    counts = np.asarray(counts, float)
    n = counts.sum()
    mode = int(np.argmax(counts))
    dist = [abs(k - mode) ** a for k in range(len(counts))]
    norm = sum(dist[u] for u in range(len(counts)) if present[u])
    total = 0.0
    for k, c in enumerate(counts):
        if c > 0 and norm > 0:
            total -= dist[k] / norm * (c / n) * np.log2(c / n)
    return total


def brute_gain(name, left, right, a=1.0):
    left, right = np.asarray(left, float), np.asarray(right, float)
    parent = left + right
    if name == "wig":
        present = parent > 0
        imp = {k: brute_wig(v, present, a) for k, v in (("P", parent), ("L", left), ("R", right))}
    else:
        f = {"gini": brute_gini, "entropy": brute_entropy, "ogini": brute_ogini, "ranking": brute_ranking}[name]
        imp = {k: f(v) if v.sum() > 0 else 0.0 for k, v in (("P", parent), ("L", left), ("R", right))}
    if name == "ranking":
        return imp["P"] - imp["L"] - imp["R"]
    n = parent.sum()
    return imp["P"] - left.sum() / n * imp["L"] - right.sum() / n * imp["R"]


# ---------------------------------------------------------------- reference values
@pytest.mark.parametrize(
    "name, left, right, power, expected",
    [
        ("gini", L1, R1, 1.0, 0.388493),
        ("ogini", L1, R1, 1.0, 0.214248),
        ("wig", L1, R1, 1.0, 0.077039),
        ("wig", L1, R1, 2.0, 0.040855),
        ("wig", L1, R1, 4.0, 0.014081),
        ("ranking", L2, R2, 1.0, 11326.0),
    ],
)
def test_reference_gains(name, left, right, power, expected):
    """Check that split_gain reproduces the reference gains of docs/design.md section 3 to 1e-6."""
    assert abs(float(split_gain(name, left, right, wig_power=power)) - expected) < 1e-6


def test_entropy_reference_gain():
    """Check that the entropy gain equals the information gain computed with scipy."""
    parent = np.add(L1, R1)
    n = parent.sum()
    expected = (
        scipy_entropy(parent, base=2)
        - sum(L1) / n * scipy_entropy(L1, base=2)
        - sum(R1) / n * scipy_entropy(R1, base=2)
    )
    assert abs(float(split_gain("entropy", L1, R1)) - expected) < 1e-12


def test_ranking_closed_form_equals_pairwise_sum():
    """Check that the ranking impurity equals the double sum over class pairs of (j - i) n_i n_j."""
    for counts in (L2, R2, np.add(L2, R2)):
        pairwise = sum((j - i) * counts[i] * counts[j] for i in range(4) for j in range(i + 1, 4))
        assert float(impurity("ranking", counts)) == pairwise


# ---------------------------------------------------------------- property tests vs brute force
counts_strategy = st.integers(2, 6).flatmap(
    lambda k: st.lists(st.integers(0, 12), min_size=k, max_size=k).filter(lambda c: sum(c) > 0)
)


@given(counts=counts_strategy)
def test_impurities_match_brute_force(counts):
    """Check that every impurity equals its brute-force definition on small count vectors."""
    assert np.isclose(impurity("gini", counts), brute_gini(counts), atol=1e-12)
    assert np.isclose(impurity("entropy", counts), brute_entropy(counts), atol=1e-12)
    assert np.isclose(impurity("ogini", counts), brute_ogini(counts), atol=1e-12)
    assert np.isclose(impurity("ranking", counts), brute_ranking(counts), atol=1e-9)
    present = np.asarray(counts) > 0
    for a in (1.0, 2.0, 0.5):
        assert np.isclose(impurity("wig", counts, wig_power=a), brute_wig(counts, present, a), atol=1e-12)


@given(
    pair=st.integers(2, 5).flatmap(
        lambda k: st.tuples(
            st.lists(st.integers(0, 9), min_size=k, max_size=k),
            st.lists(st.integers(0, 9), min_size=k, max_size=k),
        )
    ).filter(lambda p: sum(p[0]) > 0 and sum(p[1]) > 0),
    power=st.sampled_from([1.0, 2.0, 3.5]),
)
def test_split_gains_match_brute_force(pair, power):
    """Check that split_gain equals the brute-force gain for every criterion."""
    left, right = pair
    for name in CRITERIA:
        got = float(split_gain(name, left, right, wig_power=power))
        assert np.isclose(got, brute_gain(name, left, right, power), rtol=1e-10, atol=1e-10), name


def test_split_gain_is_vectorised_over_candidates():
    """Check that a stacked call gives the same gains as one call per candidate split."""
    rng = np.random.default_rng(0)
    left = rng.integers(0, 20, size=(7, 3, 5)).astype(float)
    right = rng.integers(0, 20, size=(7, 3, 5)).astype(float)
    for name in CRITERIA:
        stacked = split_gain(name, left, right, wig_power=2.0)
        assert stacked.shape == (7, 3)
        single = [[float(split_gain(name, left[i, j], right[i, j], wig_power=2.0)) for j in range(3)] for i in range(7)]
        np.testing.assert_allclose(stacked, single, rtol=1e-12, atol=1e-12)


def test_impurity_is_vectorised_and_zero_for_pure_or_empty_nodes():
    """Check that impurity broadcasts over nodes and is zero for pure and empty nodes."""
    counts = np.array([[0, 5, 0], [0, 0, 0], [2, 2, 2]], dtype=float)
    for name in CRITERIA:
        values = impurity(name, counts)
        assert values.shape == (3,)
        assert values[0] == 0 and values[1] == 0 and values[2] > 0


def test_wig_uses_parent_classes_for_children():
    """Check that wig normalises the children's weights over the classes present in the parent."""
    left, right = np.array([5.0, 1.0, 0.0]), np.array([0.0, 1.0, 4.0])
    parent = left + right
    present = parent > 0
    n = parent.sum()
    expected = (
        float(impurity("wig", parent))
        - left.sum() / n * float(impurity("wig", left, present=present))
        - right.sum() / n * float(impurity("wig", right, present=present))
    )
    assert np.isclose(float(split_gain("wig", left, right)), expected)
    # With the child's own classes the value would differ: the option matters.
    assert not np.isclose(float(impurity("wig", left)), float(impurity("wig", left, present=present)))


def test_ogini_is_scaled_like_sklearn_regression_impurity():
    """Check that ogini impurity equals the summed squared-error impurity of the cumulative indicators."""
    from sklearn.tree import DecisionTreeRegressor

    y = np.array([0, 0, 1, 2, 2, 2, 3])
    indicators = np.stack([(y <= k).astype(float) for k in range(3)], axis=1)
    reg = DecisionTreeRegressor(max_depth=1).fit(np.zeros((7, 1)), indicators)
    # A single node (constant X): sklearn's impurity is the mean over outputs, ours the sum.
    assert np.isclose(float(impurity("ogini", np.bincount(y))), reg.tree_.impurity[0] * 3)


# ---------------------------------------------------------------- registry and errors
def test_criteria_tuple_comes_from_the_registry():
    """Check that trees.CRITERIA lists the registry's names and the estimator accepts exactly those."""
    assert CRITERIA == tuple(_CRITERIA) == ("gini", "entropy", "ogini", "wig", "ranking")
    assert trees.criteria.CRITERIA is CRITERIA
    options = OrdinalTreeClassifier._parameter_constraints["criterion"][0].options
    assert options == set(CRITERIA)


def test_criterion_function_errors():
    """Check that bad criterion names and bad counts raise a ValueError naming the problem."""
    with pytest.raises(ValueError, match="criterion must be one of"):
        impurity("mse", [1, 2])
    with pytest.raises(ValueError, match="criterion must be one of"):
        split_gain("twoing", [1, 2], [2, 1])
    with pytest.raises(ValueError, match="counts must be finite and non-negative"):
        impurity("gini", [1, -2])
    with pytest.raises(ValueError, match="left_counts must be finite and non-negative"):
        split_gain("gini", [1, np.nan], [2, 1])
    with pytest.raises(ValueError, match="same number of classes"):
        split_gain("ogini", [1, 2, 3], [2, 1])
    with pytest.raises(ValueError, match="classes along its last axis"):
        impurity("gini", 3.0)
