"""Tests of ensemble.RankRules and its kernels against brute-force computations over pairs."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize, minimize_scalar

from trees.utils import ClassOrderWarning
from ensemble import RankRules
from ensemble.rankrules._rankrules import TECHNIQUES, Condition, Rule
from ensemble.rankrules._core import (
    IMPURITIES,
    candidate_rank_sums,
    class_threshold_sums,
    cumulative_proba,
    fit_thresholds,
    rank_sums,
    response_closed_form,
)

# ---------------------------------------------------------------------------
# Brute-force oracles: explicit loops over pairs, written from eq. (7) and the
# pair multiplicity y_i - y_j of section 3.2, sharing no code with the library.


def pairwise_sums(codes, scores, covered):
    """W_>, W_<, W_0 and the pair counts C_>, C_< by a double loop over pairs."""
    w_gt = w_lt = w_0 = 0.0
    c_gt = c_lt = 0
    n = len(codes)
    for i in range(n):
        for j in range(n):
            if codes[i] <= codes[j]:
                continue
            mult = codes[i] - codes[j]
            w = mult * np.exp(-(scores[i] - scores[j]))
            if covered[i] and not covered[j]:
                w_gt += w
                c_gt += mult
            elif covered[j] and not covered[i]:
                w_lt += w
                c_lt += mult
            else:
                w_0 += w
    return w_gt, w_lt, w_0, c_gt, c_lt


def pairwise_loss(codes, scores, covered, alpha):
    """Exponential rank loss (7) of f + alpha * Phi, pair by pair."""
    total = 0.0
    for i, j in itertools.permutations(range(len(codes)), 2):
        if codes[i] > codes[j]:
            phi = float(covered[i]) - float(covered[j])
            total += (codes[i] - codes[j]) * np.exp(
                -(scores[i] - scores[j]) - alpha * phi
            )
    return total


def brute_force_criterion(technique, codes, scores, covered, beta):
    """The quantity each technique minimises, from its defining equation, by brute force."""
    w_gt, w_lt, w_0, c_gt, c_lt = pairwise_sums(codes, scores, covered)
    if technique == "sm":  # (7) minimised over alpha numerically
        res = minimize_scalar(
            lambda al: pairwise_loss(codes, scores, covered, al),
            bounds=(-30, 30),
            method="bounded",
            options={"xatol": 1e-10},
        )
        return res.fun
    if technique == "gd":  # first-order (11): minimise over Phi of -|sum Phi_ij w_ij|
        return -abs(w_gt - w_lt)
    if technique == "gb":  # (18): least squares sum over pairs, minimised over alpha
        pairs = []
        for i, j in itertools.permutations(range(len(codes)), 2):
            if codes[i] > codes[j]:
                w = np.exp(-(scores[i] - scores[j]))
                phi = float(covered[i]) - float(covered[j])
                pairs += [(w, phi)] * int(codes[i] - codes[j])
        w = np.array([p[0] for p in pairs])
        phi = np.array([p[1] for p in pairs])
        if not np.any(phi):
            return float(w @ w)
        alpha = (w @ phi) / (phi @ phi)
        return float(np.sum((w - alpha * phi) ** 2))
    if technique == "cs":  # (20): alpha restricted to {-beta, beta}
        return min(pairwise_loss(codes, scores, covered, s * beta) for s in (-1, 1))
    raise AssertionError(technique)


def paper_impurity(technique, codes, scores, covered, beta):
    """L_m(Phi) of a rule from the paper's equations, with the pair sums of the double loop.

    The constant W of an iteration is dropped, so that a rule affecting no pair scores 0.
    """
    w_gt, w_lt, _, c_gt, c_lt = pairwise_sums(codes, scores, covered)
    if technique == "sm":  # (7) at alpha of (9): 2 sqrt(W> W<) + W0, with W0 = W - W> - W<
        return 2.0 * math.sqrt(w_gt * w_lt) - w_gt - w_lt
    if technique == "gd":  # (12): -|sum_ij Phi(x_i, x_j) w_ij|
        return -abs(w_gt - w_lt)
    if technique == "gb":  # (18) at its least-squares alpha: -(sum Phi w)^2 / sum Phi^2 (+ sum w^2)
        return -((w_gt - w_lt) ** 2) / (c_gt + c_lt) if c_gt + c_lt else 0.0
    if technique == "cs":  # (20): alpha restricted to {-beta, beta}
        return min(math.exp(-a) * w_gt + math.exp(a) * w_lt for a in (beta, -beta)) - w_gt - w_lt
    raise AssertionError(technique)


def brute_force_thresholds(scores, codes, n_classes, weight=None):
    """Thresholds minimising the whole objective of eq. (8) numerically, and that objective.

    sum_i w_i sum_k exp(-y_ik (f_i - theta_k)) with y_ik = +1 if y_i > k else -1, minimised
    over theta in R^(K-1) by BFGS (no closed form, no per-class decomposition).
    """
    scores, codes = np.asarray(scores, float), np.asarray(codes)
    weight = np.ones(len(codes)) if weight is None else np.asarray(weight, float)
    y_ik = np.array([[1.0 if codes[i] >= k else -1.0 for k in range(1, n_classes)] for i in range(len(codes))])

    def objective(theta):
        return float(np.sum(weight[:, None] * np.exp(-y_ik * (scores[:, None] - theta[None, :]))))

    def gradient(theta):
        return np.sum(weight[:, None] * y_ik * np.exp(-y_ik * (scores[:, None] - theta[None, :])), axis=0)

    res = minimize(objective, np.zeros(n_classes - 1), jac=gradient, method="BFGS", options={"gtol": 1e-10})
    return res.x, objective


def tiny_problem(seed, n=9, n_features=2, n_classes=3):
    """Continuous data (no ties) with every class present and a non-zero score."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    codes = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    rng.shuffle(codes)
    scores = rng.normal(scale=0.7, size=n)
    return X, codes, scores


# ---------------------------------------------------------------------------
# Kernels


@given(
    codes=st.lists(st.integers(0, 3), min_size=2, max_size=9),
    seed=st.integers(0, 2**16),
)
def test_rank_sums_equal_pairwise_double_loop(codes, seed):
    """Check that the O(KN) sums W_>, W_<, W equal a double loop over all pairs."""
    codes = np.array(codes)
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=codes.size)
    covered = rng.random(codes.size) < 0.5
    w_gt, w_lt, w_total = rank_sums(codes, np.exp(-scores), np.exp(scores), covered, 4)
    b_gt, b_lt, b_0, _, _ = pairwise_sums(codes, scores, covered)
    np.testing.assert_allclose([w_gt, w_lt, w_total], [b_gt, b_lt, b_gt + b_lt + b_0],
                               rtol=1e-12, atol=1e-12)


def test_rank_sums_binary_is_plain_pairwise_rank_loss():
    """Check that for K = 2 the pair multiplicity is 1: W counts each pair y_i > y_j once."""
    codes = np.array([0, 1, 1, 0, 1])
    scores = np.array([0.3, -0.2, 1.0, 0.0, 0.5])
    covered = np.array([True, False, True, False, False])
    _, _, w_total = rank_sums(codes, np.exp(-scores), np.exp(scores), covered, 2)
    expected = sum(np.exp(-(scores[i] - scores[j]))
                   for i in range(5) for j in range(5) if codes[i] == 1 and codes[j] == 0)
    assert w_total == pytest.approx(expected, rel=1e-12)


def test_class_threshold_sums_by_definition():
    """Check that W_k^+, W_k^-, W_k^{0+}, W_k^{0-} match their definitions for every k."""
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 4, 30)
    a, b = rng.random(30), rng.random(30)
    covered = rng.random(30) < 0.4
    wp, wm, w0p, w0m = class_threshold_sums(codes, a, b, covered, 4)
    for k in range(1, 4):
        up = codes >= k
        assert wp[k - 1] == pytest.approx(a[covered & up].sum())
        assert wm[k - 1] == pytest.approx(b[covered & ~up].sum())
        assert w0p[k - 1] == pytest.approx(a[~covered & up].sum())
        assert w0m[k - 1] == pytest.approx(b[~covered & ~up].sum())


@given(
    codes=st.lists(st.integers(0, 2), min_size=3, max_size=8),
    values=st.lists(st.integers(0, 3), min_size=8, max_size=8),
    seed=st.integers(0, 2**16),
)
def test_candidate_sums_equal_pairwise_for_every_cut(codes, values, seed):
    """Check that the incremental W sums of every candidate condition equal the O(N^2) loop."""
    codes = np.array(codes)
    n = codes.size
    rng = np.random.default_rng(seed)
    x = np.array(values[:n], dtype=float) + 0.0  # integer values give ties
    x2 = rng.normal(size=n)
    X = np.column_stack([x, x2])
    scores = rng.normal(size=n)
    # The current rule covers a random subset; the sample is everything.
    covered = rng.random(n) < 0.7
    covered[:2] = True
    idx = np.flatnonzero(covered)
    order = np.argsort(X[idx], axis=0, kind="stable").T
    rows = idx[order]
    a, b = np.exp(-scores), np.exp(scores)
    total_plus, total_minus, _, _ = class_threshold_sums(codes, a, b, np.ones(n, bool), 3)
    w_gt, w_lt, valid, thresholds = candidate_rank_sums(
        X.T[np.arange(2)[:, None], rows], codes[rows], a[rows], b[rows], total_plus, total_minus
    )
    for p in range(2):
        for t in range(1, idx.size):
            kept = {0: rows[p, :t], 1: rows[p, t:]}
            xs = X[rows[p], p]
            assert valid[p, t - 1] == (xs[t - 1] < xs[t])
            for direction in (0, 1):
                new_cover = np.zeros(n, bool)
                new_cover[kept[direction]] = True
                b_gt, b_lt, _, _, _ = pairwise_sums(codes, scores, new_cover)
                assert w_gt[p, direction, t - 1] == pytest.approx(b_gt, rel=1e-9, abs=1e-12)
                assert w_lt[p, direction, t - 1] == pytest.approx(b_lt, rel=1e-9, abs=1e-12)
                if valid[p, t - 1]:
                    s = thresholds[p, direction, t - 1]
                    in_rule = covered & ((X[:, p] <= s) if direction == 0 else (X[:, p] >= s))
                    np.testing.assert_array_equal(in_rule, new_cover)


def test_candidate_thresholds_between_adjacent_floats():
    """Check that thresholds still split exactly at t when the two values are adjacent floats."""
    lo = 1.0
    hi = np.nextafter(lo, 2.0)
    values = np.array([[lo, hi]])
    _, _, valid, s = candidate_rank_sums(
        values, np.array([[0, 1]]), np.ones((1, 2)), np.ones((1, 2)), np.ones(1), np.ones(1)
    )
    assert valid[0, 0]
    assert lo <= s[0, 0, 0] < hi  # "x <= s" keeps lo only
    assert lo < s[0, 1, 0] <= hi  # "x >= s" keeps hi only


@pytest.mark.parametrize("technique", sorted(IMPURITIES))
def test_impurity_orders_candidates_like_its_defining_equation(technique):
    """Check that each technique's impurity ranks candidate rules as its brute-force objective does."""
    X, codes, scores = tiny_problem(seed=3, n=8, n_classes=3)
    beta = 0.3
    a, b = np.exp(-scores), np.exp(scores)
    fast, brute = [], []
    n = codes.size
    order = np.argsort(X[:, 0])
    for t in range(1, n):
        for kept in (order[:t], order[t:]):
            covered = np.zeros(n, bool)
            covered[kept] = True
            w_gt, w_lt, _ = rank_sums(codes, a, b, covered, 3)
            _, _, _, c_gt, c_lt = pairwise_sums(codes, scores, covered)
            counts = (np.array(float(c_gt)), np.array(float(c_lt)))
            fast.append(float(IMPURITIES[technique](np.array(w_gt), np.array(w_lt), counts, beta)))
            brute.append(brute_force_criterion(technique, codes, scores, covered, beta))
    fast, brute = np.array(fast), np.array(brute)
    checked = 0
    for i, j in itertools.combinations(range(fast.size), 2):
        if abs(brute[i] - brute[j]) > 1e-6 * max(1.0, abs(brute[i])):
            assert np.sign(fast[i] - fast[j]) == np.sign(brute[i] - brute[j]), (i, j)
            checked += 1
    assert checked > 50


def test_impurities_score_empty_rule_zero_and_registry_is_shared():
    """Check that every impurity gives 0 to a rule affecting no pair and the estimator uses the registry."""
    zero = np.zeros(1)
    for impurity in IMPURITIES.values():
        assert impurity(zero, zero, (zero, zero), 0.1)[0] == 0.0
    assert TECHNIQUES is IMPURITIES
    assert set(TECHNIQUES) == {"sm", "gd", "gb", "cs"}


def test_response_closed_form_minimises_pairwise_loss():
    """Check that alpha of eq. (9) is the minimiser of the pairwise loss (7) for a fixed rule."""
    X, codes, scores = tiny_problem(seed=5, n=10)
    covered = X[:, 0] > 0
    w_gt, w_lt, w_total = rank_sums(codes, np.exp(-scores), np.exp(scores), covered, 3)
    alpha = response_closed_form(w_gt, w_lt, eps=1e-300)
    res = minimize_scalar(lambda al: pairwise_loss(codes, scores, covered, al),
                          bounds=(-20, 20), method="bounded", options={"xatol": 1e-12})
    assert alpha == pytest.approx(res.x, abs=1e-6)
    # The regulariser shrinks alpha towards 0 without changing its sign.
    shrunk = response_closed_form(w_gt, w_lt, eps=w_total / 10)
    assert 0 < abs(shrunk) < abs(alpha) and np.sign(shrunk) == np.sign(alpha)


def test_response_closed_form_rejects_bad_input():
    """Check that a non-positive eps or a negative sum raises a ValueError naming it."""
    with pytest.raises(ValueError, match="eps must be positive"):
        response_closed_form(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="non-negative"):
        response_closed_form(-1.0, 1.0, 1.0)


@given(seed=st.integers(0, 2**16), n_classes=st.integers(2, 5))
def test_fit_thresholds_minimise_threshold_loss(seed, n_classes):
    """Check that eq. (8) thresholds are the numerical minimisers, non-decreasing in k."""
    rng = np.random.default_rng(seed)
    n = 12
    codes = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    scores = rng.normal(scale=2.0, size=n) + 0.5 * codes
    theta = fit_thresholds(scores, codes, n_classes)
    assert np.all(np.diff(theta) >= -1e-12)
    for k in range(1, n_classes):
        sign = np.where(codes >= k, 1.0, -1.0)
        res = minimize_scalar(lambda th, sign=sign: np.sum(np.exp(-sign * (scores - th))),
                              bounds=(-30, 30), method="bounded", options={"xatol": 1e-10})
        assert theta[k - 1] == pytest.approx(res.x, abs=1e-5)


def test_fit_thresholds_survive_large_scores():
    """Check that the log-sum-exp form stays finite where exp(f) overflows."""
    theta = fit_thresholds([-800.0, 800.0, 900.0], [0, 1, 2], 3)
    assert np.all(np.isfinite(theta))
    assert theta[0] == pytest.approx(0.0, abs=1e-9)  # halfway between -800 and 800


def test_cumulative_proba_is_a_distribution_with_median_at_the_thresholds():
    """Check that the link gives non-negative rows summing to 1 whose median matches the thresholds."""
    theta = np.array([-1.0, 0.0, 2.0])
    scores = np.linspace(-4, 4, 41) + 0.013
    proba = cumulative_proba(scores, theta)
    assert np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    median = np.argmax(np.cumsum(proba, axis=1) >= 0.5, axis=1)
    np.testing.assert_array_equal(median, np.searchsorted(theta, scores, side="right"))


# ---------------------------------------------------------------------------
# The estimator


def ordinal_data(seed=0, n=300, n_classes=4, noise=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    latent = X[:, 0] + 0.5 * X[:, 1] + noise * rng.normal(size=n)
    y = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, n_classes + 1)[1:-1])) + 1
    return X, y


def reference_rule(X, codes, scores, n_classes, technique="sm", beta=0.1):
    """Grow one rule naively: every cut of every attribute scored by the paper's L_m from O(N^2) pair loops."""
    n, n_features = X.shape
    covered = np.ones(n, bool)
    current = 0.0
    while covered.sum() >= 2:
        best = (np.inf, None)
        # Same enumeration order as the library (attribute, direction, cut), so that
        # exact ties (integer sums while f = 0) are broken the same way.
        for p in range(n_features):
            xs = np.unique(X[covered, p])
            cuts = list(zip(xs[:-1], xs[1:]))
            candidates = [covered & (X[:, p] <= lo) for lo, _ in cuts]
            candidates += [covered & (X[:, p] >= hi) for _, hi in cuts]
            for new in candidates:
                value = paper_impurity(technique, codes, scores, new, beta)
                if value < best[0] - 1e-12 * abs(best[0]) or best[1] is None:
                    best = (value, new)
        if not best[0] < current - 1e-12 * abs(current):
            break
        current, covered = best
    return covered


@pytest.mark.parametrize("technique", ["sm", "gd", "gb", "cs"])
def test_first_rules_match_naive_quadratic_growth(technique):
    """Check that fit grows the same rules and responses as a naive O(N^2) implementation."""
    X, codes, _ = tiny_problem(seed=11, n=12, n_features=2, n_classes=3)
    y = codes + 1
    n_rules = 3
    model = RankRules(n_rules=n_rules, learning_rate=0.5, subsample=1.0,
                      technique=technique, beta=0.2).fit(X, y)
    scores = np.zeros(len(y))
    for rule in model.rules_:
        covered = reference_rule(X, codes, scores, 3, technique, beta=0.2)
        np.testing.assert_array_equal(rule.covers(X), covered)
        w_gt, w_lt, w_0, _, _ = pairwise_sums(codes, scores, covered)
        eps = (w_gt + w_lt + w_0) / sum(
            (codes[i] - codes[j]) for i in range(12) for j in range(12) if codes[i] > codes[j])
        alpha = 0.5 * np.log((w_gt + eps) / (w_lt + eps))
        assert rule.response == pytest.approx(0.5 * alpha, rel=1e-9)
        scores = scores + rule.response * covered
    assert len(model.rules_) == n_rules


def test_predict_value_is_sum_of_rule_responses():
    """Check that predict_value equals sum_m response_m * Phi_m(x) computed from rules_."""
    X, y = ordinal_data(seed=2)
    model = RankRules(n_rules=60, random_state=0).fit(X, y)
    X_new = np.random.default_rng(9).normal(size=(200, 4))
    expected = np.zeros(len(X_new))
    for rule in model.rules_:
        for condition in rule.conditions:
            assert condition.operator in (">=", "<=")
        covered = np.all([X_new[:, c.feature] >= c.threshold if c.operator == ">="
                          else X_new[:, c.feature] <= c.threshold for c in rule.conditions], axis=0)
        expected += rule.response * covered
    np.testing.assert_allclose(model.predict_value(X_new), expected, rtol=0, atol=1e-12)


def test_no_decision_function_so_calibration_reads_the_probabilities():
    """Check that RankRules offers no decision_function (scikit-learn reads it as per-class values, and
    CalibratedClassifierCV, which prefers it, calibrated the 1-D score into a model of one class), that a call
    names predict_value, and that the calibrated model is then no worse than a constant."""
    from sklearn.calibration import CalibratedClassifierCV

    X, y = ordinal_data(seed=4)
    model = RankRules(n_rules=40, random_state=0)
    assert not hasattr(model.fit(X, y), "decision_function")
    with pytest.raises(AttributeError, match="predict_value"):
        model.decision_function(X)
    calibrated = CalibratedClassifierCV(RankRules(n_rules=40, random_state=0), cv=3).fit(X, y)
    assert np.unique(calibrated.predict(X)).shape[0] > 1
    assert calibrated.score(X, y) > np.mean(y == np.bincount(y).argmax())


def test_predict_reads_classes_off_the_thresholds():
    """Check that predict is the class whose threshold interval holds f(x), and thresholds_ fit eq. (8)."""
    X, y = ordinal_data(seed=3)
    model = RankRules(n_rules=40, random_state=1).fit(X, y)
    f = model.predict_value(X)
    theta, objective = brute_force_thresholds(f, y - 1, 4)
    np.testing.assert_allclose(model.thresholds_, theta, atol=1e-8)
    assert objective(model.thresholds_) <= objective(theta) * (1 + 1e-12)
    assert np.all(np.diff(model.thresholds_) >= 0)  # constraint (3)
    expected = model.classes_[np.sum(f[:, None] >= model.thresholds_[None, :], axis=1)]
    np.testing.assert_array_equal(model.predict(X), expected)


def test_training_rank_loss_never_increases():
    """Check that each rule lowers the full-data rank loss (alpha optimal on all examples, shrunk)."""
    X, y = ordinal_data(seed=4)
    model = RankRules(n_rules=80, subsample=0.3, random_state=0).fit(X, y)
    assert np.all(np.diff(model.train_score_) <= 1e-12)
    assert model.train_score_[-1] < model.train_score_[0]


@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
def test_every_technique_learns_an_ordinal_signal(technique):
    """Check that each technique beats predicting the median class on held-out data."""
    X, y = ordinal_data(seed=5, n=600)
    X_train, y_train, X_test, y_test = X[:300], y[:300], X[300:], y[300:]
    model = RankRules(n_rules=100, technique=technique, random_state=0).fit(X_train, y_train)
    mae = np.mean(np.abs(model.predict(X_test) - y_test))
    baseline = np.mean(np.abs(np.median(y_train) - y_test))
    assert mae < 0.6 * baseline


def test_random_state_reproducible_and_subsample_used():
    """Check that a fixed random_state reproduces the rules and another seed changes them."""
    X, y = ordinal_data(seed=6)
    first = RankRules(n_rules=20, random_state=3).fit(X, y)
    again = RankRules(n_rules=20, random_state=3).fit(X, y)
    other = RankRules(n_rules=20, random_state=4).fit(X, y)
    assert [str(r) for r in first.rules_] == [str(r) for r in again.rules_]
    assert [str(r) for r in first.rules_] != [str(r) for r in other.rules_]
    full = RankRules(n_rules=20, subsample=1.0, random_state=3).fit(X, y)
    full2 = RankRules(n_rules=20, subsample=1.0, random_state=4).fit(X, y)
    assert [str(r) for r in full.rules_] == [str(r) for r in full2.rules_]


def test_string_labels_keep_sorted_order_and_proba():
    """Check that classes_ is the sorted label set, predictions are members, probabilities are sane."""
    X, y = ordinal_data(seed=7, n_classes=3)
    names = np.array(["a_low", "b_mid", "c_high"])[y - 1]
    with pytest.warns(ClassOrderWarning, match="sorted alphabetically: 'a_low' < 'b_mid' < 'c_high'"):
        model = RankRules(n_rules=50, random_state=0).fit(X, names)
    assert model.classes_.tolist() == ["a_low", "b_mid", "c_high"]
    pred = model.predict(X)
    assert set(pred) <= set(model.classes_)
    proba = model.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    median = np.argmax(np.cumsum(proba, axis=1) >= 0.5, axis=1)
    np.testing.assert_array_equal(model.classes_[median], pred)


def test_rules_listing_is_readable():
    """Check that rules_ and format_rules print conditions with feature names and the thresholds."""
    X, y = ordinal_data(seed=8)
    model = RankRules(n_rules=5, random_state=0).fit(X, y)
    text = model.format_rules(["age", "income", "c", "d"])
    lines = text.splitlines()
    assert len(lines) == len(model.rules_) + 1
    assert lines[0].startswith("   1: if ") and " then f += " in lines[0]
    assert lines[-1].startswith("thresholds: ")
    assert "age" in text or "income" in text
    rule = Rule((Condition(1, "<=", 0.25),), 0.5)
    assert str(rule) == "if x[1] <= 0.25 then f += 0.5"


def test_feature_names_from_dataframe():
    """Check that fitting on a DataFrame names the features in the rule listing."""
    pd = pytest.importorskip("pandas")
    X, y = ordinal_data(seed=8)
    frame = pd.DataFrame(X, columns=["alpha", "beta", "gamma", "delta"])
    model = RankRules(n_rules=5, random_state=0).fit(frame, y)
    assert "x[" not in model.format_rules() and "alpha" in model.format_rules()


def test_constant_features_give_no_rules_but_valid_predictions():
    """Check that with nothing to split on fit keeps no rule and predicts a valid class."""
    X = np.zeros((10, 2))
    y = np.array([1, 2, 3, 1, 2, 3, 1, 2, 3, 2])
    model = RankRules(n_rules=5, random_state=0).fit(X, y)
    assert model.rules_ == []
    assert set(model.predict(X)) <= {1, 2, 3}


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_rules": 0}, "n_rules"),
        ({"n_rules": -3}, "n_rules"),
        ({"n_rules": 2.5}, "n_rules"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"learning_rate": -0.1}, "learning_rate"),
        ({"learning_rate": 1.5}, "learning_rate"),
        ({"subsample": 0.0}, "subsample"),
        ({"subsample": 1.2}, "subsample"),
        ({"technique": "newton"}, "technique"),
        ({"beta": 0.0}, "beta"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_invalid_parameters_are_rejected(params, match):
    """Check that each invalid parameter raises a ValueError naming it."""
    X, y = ordinal_data(seed=0, n=30)
    with pytest.raises(ValueError, match=match):
        RankRules(**params).fit(X, y)


def test_bad_data_are_rejected():
    """Check that inf, mismatched lengths, one class and wrong widths raise clear ValueErrors (NaN is a
    missing value: tests/test_ensemble_missing.py)."""
    X, y = ordinal_data(seed=0, n=30)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        RankRules(n_rules=2).fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        RankRules(n_rules=2).fit(X, y[:-1])
    with pytest.raises(ValueError, match="at least 2 classes"):
        RankRules(n_rules=2).fit(X, np.ones(30))
    with pytest.raises(ValueError, match="Unknown label type"):
        RankRules(n_rules=2).fit(X, np.linspace(0, 1, 30))
    model = RankRules(n_rules=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
    bad_test = X[:3].copy()
    bad_test[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        model.predict_value(bad_test)


# ---------------------------------------------------------------------------
# scikit-learn's common checks

def test_binary_problem_predicts_by_the_single_threshold():
    """Check that with two classes the prediction is f(x) >= theta_1 and proba[:, 1] is monotone in f."""
    X, y = ordinal_data(seed=12, n_classes=2)
    model = RankRules(n_rules=30, random_state=0).fit(X, y - 1)
    f = model.predict_value(X)
    assert model.thresholds_.shape == (1,)
    np.testing.assert_array_equal(model.predict(X), (f >= model.thresholds_[0]).astype(int))
    order = np.argsort(f)
    assert np.all(np.diff(model.predict_proba(X)[order, 1]) >= 0)


def test_single_class_subsamples_are_skipped():
    """Check that iterations whose subsample cannot rank anything add no rule and break nothing."""
    X = np.arange(6, dtype=float).reshape(-1, 1)
    y = np.array([1, 1, 1, 1, 1, 2])
    model = RankRules(n_rules=30, subsample=0.2, random_state=0).fit(X, y)
    assert 0 < len(model.rules_) < 30  # 2-point subsamples often miss the lone class 2
    f = model.predict_value(X)
    assert f[5] > f[0]  # the lone class-2 point is ranked above the class-1 points
    assert set(model.predict(X)) <= {1, 2}


def test_string_classes_follow_the_given_order():
    """Check that classes= sets the ordinal order of string labels and predictions are members of it."""
    rng = np.random.RandomState(3)
    X = rng.uniform(size=(150, 2))
    idx = np.searchsorted([0.7, 1.3], X.sum(axis=1))
    names = np.array(["low", "mid", "high"])[idx]
    model = RankRules(n_rules=30, classes=["low", "mid", "high"], random_state=0).fit(X, names)
    assert model.classes_.tolist() == ["low", "mid", "high"]
    pred_idx = np.searchsorted(["high", "low", "mid"], model.predict(X))  # alphabetical positions
    rank = np.array([2, 0, 1])[pred_idx]
    assert np.mean(np.abs(rank - idx)) < 0.5
    # The alphabetical order would put "high" between "low" and "mid": a different model.
    with pytest.warns(ClassOrderWarning, match="sorted alphabetically"):
        alpha = RankRules(n_rules=30, random_state=0).fit(X, names)
    assert alpha.classes_.tolist() == ["high", "low", "mid"]
    with pytest.raises(ValueError, match="do not occur in y"):
        RankRules(n_rules=5, classes=["low", "mid", "high", "top"]).fit(X, names)
    with pytest.raises(ValueError, match="classes is missing label"):
        RankRules(n_rules=5, classes=["low", "mid"]).fit(X, names)


def test_text_columns_get_an_error_naming_them():
    """Check that a DataFrame's text and category columns are refused naming them (numpy's "could not convert
    string to float" named neither), and that numeric, nullable-integer and boolean columns fit."""
    import pandas as pd

    frame = pd.DataFrame({"a": np.arange(10.0), "b": list("xyxyxyxyxy"), "c": pd.Categorical(list("pqpqpqpqpq")),
                          "d": pd.array([1, 2] * 5, dtype="Int64"), "e": [True, False] * 5})
    with pytest.raises(ValueError, match="columns 'b', 'c' hold text or categories"):
        RankRules(n_rules=3).fit(frame, [1, 2] * 5)
    assert RankRules(n_rules=3).fit(frame[["a", "d", "e"]], [1, 2] * 5).n_features_in_ == 3
