"""Tests of the compiled RankRules kernels (ensemble.rankrules._kernels) against independent computations.

The sweep scores every cut of every attribute from running sums, four thresholds
at a time; the growth of a rule filters the presorted rows once and compacts
them after each condition. The oracles below recompute every candidate's pair
sums from its explicit covered set (``rank_sums``, O(N) per candidate, no running
sums) or by a double loop over pairs, and grow the rule by plain enumeration.
"""

import math

import numpy as np
import pytest

from ensemble import RankRules
from ensemble.rankrules._rankrules import _shifted_weights
from ensemble.rankrules._core import (
    IMPURITIES,
    candidate_rank_sums,
    grow_rule,
    presort,
    rank_sums,
)
from ensemble.rankrules._kernels import workspace


def pair_loop_sums(codes, a, b, covered):
    """W_> and W_< by a double loop over pairs y_i > y_j, weight a_i b_j, multiplicity y_i - y_j."""
    w_gt = w_lt = 0.0
    for i in range(len(codes)):
        for j in range(len(codes)):
            if codes[i] > codes[j]:
                term = (codes[i] - codes[j]) * a[i] * b[j]
                if covered[i] and not covered[j]:
                    w_gt += term
                elif covered[j] and not covered[i]:
                    w_lt += term
    return w_gt, w_lt


def impurity_by_formula(technique, w_gt, w_lt, c_gt, c_lt, beta):
    """The impurities of eq. (10), (12), (19), (20) in plain Python (lower is better)."""
    if technique == "sm":
        return -abs(math.sqrt(w_gt) - math.sqrt(w_lt))
    if technique == "gd":
        return -abs(w_gt - w_lt)
    if technique == "gb":
        return -abs(w_gt - w_lt) / math.sqrt(c_gt + c_lt) if c_gt + c_lt > 0 else 0.0
    return min(math.exp(-s) * w_gt + math.exp(s) * w_lt for s in (beta, -beta)) - w_gt - w_lt


def midpoint_cut(lo, hi, direction):
    mid = lo + (hi - lo) / 2.0
    if direction == 0:
        return lo if mid >= hi else mid
    return hi if mid <= lo else mid


def enumerated_rule(X, in_sub, codes, a, b, weight, n_classes, technique, beta, tol=1e-12):
    """Greedy growth by enumerating every cut and recomputing its sums from the covered set."""
    n_features = X.shape[1]
    sub = np.flatnonzero(in_sub)
    covered = in_sub.copy()
    lower, upper = np.full(n_features, -np.inf), np.full(n_features, np.inf)
    current, n_conditions = 0.0, 0
    while covered.sum() >= 2:
        candidates = []  # (impurity, feature, direction, kept rows, threshold), library order
        rows = np.flatnonzero(covered)
        for p in range(n_features):
            order = rows[np.argsort(X[rows, p], kind="stable")]
            xs = X[order, p]
            for direction in (0, 1):
                for t in range(1, order.size):
                    if not xs[t - 1] < xs[t]:
                        continue
                    kept = order[:t] if direction == 0 else order[t:]
                    new = np.zeros(len(codes), bool)
                    new[kept] = True
                    w_gt, w_lt, _ = rank_sums(codes[sub], a[sub], b[sub], new[sub], n_classes)
                    c_gt, c_lt, _ = rank_sums(codes[sub], weight[sub], weight[sub], new[sub], n_classes)
                    value = impurity_by_formula(technique, w_gt, w_lt, c_gt, c_lt, beta)
                    s = midpoint_cut(xs[t - 1], xs[t], direction)
                    candidates.append((value, p, direction, new, s))
        if not candidates:
            break
        best = min(c[0] for c in candidates)
        if not best < current - tol * abs(current):
            break
        value, p, direction, new, s = next(c for c in candidates if c[0] <= best + tol * abs(best))
        if direction == 0:
            upper[p] = min(upper[p], s)
        else:
            lower[p] = max(lower[p], s)
        covered, current = new, best
        n_conditions += 1
    return lower, upper, covered, n_conditions


def problem(seed, n=36, n_features=4, n_classes=7):
    """Every class present, ties in the last feature, scores and weights spanning some range."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[:, -1] = np.round(X[:, -1])
    codes = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    rng.shuffle(codes)
    scores = rng.normal(scale=1.0, size=n)
    weight = rng.uniform(0.2, 3.0, size=n)
    return X, codes, scores, weight


@pytest.mark.parametrize("n_classes", [2, 5, 7, 10])
def test_candidate_sums_of_every_block_of_thresholds_equal_the_pair_loop(n_classes):
    """Check the W of every cut, with one to three blocks of four thresholds, against the double loop."""
    X, codes, scores, weight = problem(seed=n_classes, n=30, n_classes=n_classes)
    a, b = weight * np.exp(-scores), weight * np.exp(scores)
    covered = np.random.default_rng(1).random(len(codes)) < 0.8
    rows = np.flatnonzero(covered)
    order = rows[np.argsort(X[rows], axis=0, kind="stable").T]
    out_plus = np.array([a[~covered & (codes > k)].sum() for k in range(n_classes - 1)])
    out_minus = np.array([b[~covered & (codes <= k)].sum() for k in range(n_classes - 1)])
    w_gt, w_lt, _, _ = candidate_rank_sums(
        X.T[np.arange(X.shape[1])[:, None], order], codes[order], a[order], b[order],
        np.zeros(n_classes - 1), np.zeros(n_classes - 1),
        outside_plus=out_plus, outside_minus=out_minus,
    )
    for p in range(X.shape[1]):
        for t in range(1, rows.size):
            for direction, kept in enumerate((order[p, :t], order[p, t:])):
                new = np.zeros(len(codes), bool)
                new[kept] = True
                expected = pair_loop_sums(codes, a, b, new)
                assert w_gt[p, direction, t - 1] == pytest.approx(expected[0], rel=1e-12, abs=1e-300)
                assert w_lt[p, direction, t - 1] == pytest.approx(expected[1], rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("technique", sorted(IMPURITIES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grown_rule_equals_enumeration_of_every_cut(technique, seed):
    """Check grow_rule (subsample, weights, ties, 7 classes) against growth by explicit enumeration."""
    X, codes, scores, weight = problem(seed)
    in_sub = np.random.default_rng(seed + 10).random(len(codes)) < 0.7
    a, b = _shifted_weights(scores, np.log(weight), in_sub)
    got = grow_rule(presort(np.ascontiguousarray(X.T), codes), in_sub, codes, a, b, 7,
                    technique=technique, beta=0.3, weight=weight)
    expected = enumerated_rule(X, in_sub, codes, a, b, weight, 7, technique, 0.3)
    assert got[3] == expected[3] > 0
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(got[2], expected[2])


def test_reused_workspace_gives_the_rules_of_fresh_arrays():
    """Check that rules grown in one workspace, subsample after subsample, equal freshly allocated ones."""
    X, codes, scores, weight = problem(seed=3, n=60)
    presorted = presort(np.ascontiguousarray(X.T), codes)
    rng = np.random.default_rng(0)
    work = workspace(X.shape[1], 30, True)
    for _ in range(4):
        in_sub = np.zeros(len(codes), bool)
        in_sub[rng.choice(len(codes), 30, replace=False)] = True
        a, b = _shifted_weights(scores, np.log(weight), in_sub)
        kwargs = dict(technique="gb", weight=weight)
        shared = grow_rule(presorted, in_sub, codes, a, b, 7, work=work, **kwargs)
        fresh = grow_rule(presorted, in_sub, codes, a, b, 7, **kwargs)
        for left, right in zip(shared, fresh):
            np.testing.assert_array_equal(left, right)


def test_fit_with_many_features_and_classes_runs_the_padded_blocks():
    """Check a fit with 10 classes and 11 features: ordered thresholds, rules on signal, a useful model."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 11))
    latent = X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=600)
    y = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, 11)[1:-1])) + 1
    model = RankRules(n_rules=80, random_state=0).fit(X, y)
    assert np.all(np.diff(model.thresholds_) >= 0)
    used = {c.feature for rule in model.rules_ for c in rule.conditions}
    assert {0, 1} <= used
    assert np.mean(np.abs(model.predict(X) - y)) < 1.5


def test_threshold_between_the_extreme_floats_splits_exactly():
    """Check cuts between -1e308 and 1e308 (their difference overflows): each direction keeps its side."""
    values = np.array([[-1e308, 1e308], [-np.finfo(float).max, np.finfo(float).max]])
    ones = np.ones((2, 2))
    _, _, valid, s = candidate_rank_sums(values, np.array([[0, 1], [0, 1]]), ones, ones,
                                         np.ones(1), np.ones(1))
    assert valid.all()
    assert np.all(np.isfinite(s))
    assert np.all((values[:, :1] <= s[:, 0]) & (s[:, 0] < values[:, 1:]))  # "x <= s" keeps lo only
    assert np.all((values[:, :1] < s[:, 1]) & (s[:, 1] <= values[:, 1:]))  # "x >= s" keeps hi only
    X = np.array([[-1e308], [-1e308], [1e308], [1e308]])
    model = RankRules(n_rules=3, subsample=1.0).fit(X, [1, 1, 2, 2])
    assert model.predict(X).tolist() == [1, 1, 2, 2]
