"""Tests of RankRules.fit(sample_weight=...) against repeated rows and weighted O(N^2) pair loops."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

from ensemble import RankRules
from ensemble.rankrules._rankrules import (
    TECHNIQUES,
    _log_rank_loss,
    _pair_count,
    _shifted_weights,
    _totals,
)
from ensemble.rankrules._core import candidate_rank_sums, fit_thresholds, rank_sums
from test_ensemble_rankrules import brute_force_thresholds

# ---------------------------------------------------------------------------
# Oracles written from the definitions, sharing no code with the library: a pair
# y_i > y_j weighs w_i w_j exp(f_j - f_i) and counts y_i - y_j times (section 3.2).


def weighted_pair_sums(codes, scores, weight, covered):
    """W_>, W_<, W_0 and the weighted pair count by a double loop over pairs."""
    w_gt = w_lt = w_0 = count = 0.0
    for i in range(len(codes)):
        for j in range(len(codes)):
            if codes[i] <= codes[j]:
                continue
            mult = codes[i] - codes[j]
            term = mult * weight[i] * weight[j] * np.exp(scores[j] - scores[i])
            count += mult * weight[i] * weight[j]
            if covered[i] and not covered[j]:
                w_gt += term
            elif covered[j] and not covered[i]:
                w_lt += term
            else:
                w_0 += term
    return w_gt, w_lt, w_0, count


def ordinal_data(seed, n=40, n_features=3, n_classes=3):
    """Continuous features (no ties), every class present, a learnable ordinal signal."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    latent = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)
    cuts = np.quantile(latent, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(latent, cuts) + 1


def assert_same_model(left, right, X):
    """Same conditions exactly; responses, thresholds and outputs up to float rounding."""
    assert len(left.rules_) == len(right.rules_)
    np.testing.assert_array_equal(left.rule_lower_, right.rule_lower_)
    np.testing.assert_array_equal(left.rule_upper_, right.rule_upper_)
    np.testing.assert_allclose(left.rule_response_, right.rule_response_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(left.thresholds_, right.thresholds_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(left.train_score_, right.train_score_, rtol=1e-9)
    np.testing.assert_allclose(
        left.predict_value(X), right.predict_value(X), rtol=1e-9, atol=1e-10
    )
    np.testing.assert_allclose(left.predict_proba(X), right.predict_proba(X), atol=1e-9)
    np.testing.assert_array_equal(left.predict(X), right.predict(X))


# ---------------------------------------------------------------------------
# Equivalences of the fitted model


@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
def test_integer_weights_equal_repeated_rows(technique):
    """Check that integer weights (zeros included) fit the model of the repeated rows."""
    X, y = ordinal_data(seed=1)
    rng = np.random.default_rng(2)
    w = rng.integers(0, 4, size=len(y))
    w[np.searchsorted(np.sort(y), [1, 2, 3])] += 1  # no class loses all its rows
    params = dict(n_rules=40, learning_rate=0.3, subsample=1.0, technique=technique, beta=0.2)
    weighted = RankRules(**params).fit(X, y, sample_weight=w)
    repeated = RankRules(**params).fit(X.repeat(w, axis=0), y.repeat(w))
    assert len(weighted.rules_) > 10
    X_new = np.random.default_rng(3).normal(size=(200, 3))
    assert_same_model(weighted, repeated, np.vstack([X, X_new]))


@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
def test_sklearn_weight_equivalence_check_without_subsampling(technique):
    """Check that scikit-learn's own repeated-rows check passes once subsampling is off."""
    check_sample_weight_equivalence_on_dense_data(
        "RankRules", RankRules(n_rules=60, subsample=1.0, technique=technique, random_state=0)
    )


@pytest.mark.parametrize("subsample", [1.0, 0.5])
def test_zero_weight_equals_dropping_rows(subsample):
    """Check that zero-weight rows change nothing, even the random subsamples."""
    X, y = ordinal_data(seed=4, n=60)
    rng = np.random.default_rng(5)
    w = rng.uniform(0.5, 2.0, size=len(y))
    dropped = rng.random(len(y)) < 0.3
    dropped[np.searchsorted(np.sort(y), [1, 2, 3])] = False
    w[dropped] = 0.0
    # Outliers with zero weight would pull the thresholds if they counted at all.
    X_zero = X.copy()
    X_zero[dropped] += 5.0
    params = dict(n_rules=30, subsample=subsample, random_state=7)
    weighted = RankRules(**params).fit(X_zero, y, sample_weight=w)
    kept = RankRules(**params).fit(X[~dropped], y[~dropped], sample_weight=w[~dropped])
    assert_same_model(weighted, kept, X)


def test_none_is_unit_weights():
    """Check that sample_weight=None and all ones fit the identical model (bit for bit)."""
    X, y = ordinal_data(seed=6)
    default = RankRules(n_rules=25, random_state=0).fit(X, y)
    ones = RankRules(n_rules=25, random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(default.rule_response_, ones.rule_response_)
    np.testing.assert_array_equal(default.thresholds_, ones.thresholds_)
    np.testing.assert_array_equal(default.rule_lower_, ones.rule_lower_)


def test_scaled_weights_act_as_repeating_every_row():
    """Check that weights 3w fit the model of every row repeated 3 times with weights w."""
    X, y = ordinal_data(seed=8)
    w = np.random.default_rng(9).uniform(0.2, 3.0, size=len(y))
    params = dict(n_rules=40, subsample=1.0)
    scaled = RankRules(**params).fit(X, y, sample_weight=3 * w)
    tripled = RankRules(**params).fit(
        np.repeat(X, 3, axis=0), np.repeat(y, 3), sample_weight=np.repeat(w, 3)
    )
    assert_same_model(scaled, tripled, X)


@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
def test_scaled_weights_keep_conditions_and_thresholds(technique):
    """Check that w and 3w choose the same first rule and that eq. (8) ignores the scale."""
    # Only the regulariser of (9), W / (weighted number of pairs), depends on the
    # scale (it falls by 1/9 relative to W> when the weights triple, as it does
    # when every row is repeated 3 times), so equal models hold rule by rule only
    # as long as the scores agree: the first rule.
    X, y = ordinal_data(seed=10)
    w = np.random.default_rng(11).uniform(0.2, 3.0, size=len(y))
    params = dict(n_rules=1, subsample=1.0, technique=technique, beta=0.2)
    one = RankRules(**params).fit(X, y, sample_weight=w)
    three = RankRules(**params).fit(X, y, sample_weight=3 * w)
    np.testing.assert_array_equal(one.rule_lower_, three.rule_lower_)
    np.testing.assert_array_equal(one.rule_upper_, three.rule_upper_)
    scores = np.random.default_rng(12).normal(size=len(y))
    np.testing.assert_allclose(
        fit_thresholds(scores, y - 1, 3, w), fit_thresholds(scores, y - 1, 3, 3 * w), rtol=1e-12
    )


# ---------------------------------------------------------------------------
# Weighted formulas against independent computations


@pytest.mark.parametrize("seed", range(4))
def test_weighted_incremental_sums_equal_pair_loop(seed):
    """Check that the O(KN) weighted W sums of every candidate equal the weighted O(N^2) loop."""
    rng = np.random.default_rng(seed)
    n, n_classes = 14, 4
    codes = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 4, size=n).astype(float)])
    scores = rng.normal(scale=1.5, size=n)
    w = rng.uniform(0.05, 5.0, size=n)
    log_w = np.log(w)
    # The estimator's weights, shifted by a common factor that the loop undoes.
    a, b = _shifted_weights(scores, log_w)
    scale = np.exp((log_w - scores).max() + (log_w + scores).max())

    covered = rng.random(n) < 0.7
    covered[:2] = True
    w_gt, w_lt, w_total = rank_sums(codes, a, b, covered, n_classes)
    l_gt, l_lt, l_0, count = weighted_pair_sums(codes, scores, w, covered)
    assert w_gt * scale == pytest.approx(l_gt, rel=1e-10)
    assert w_lt * scale == pytest.approx(l_lt, rel=1e-10)
    assert w_total * scale == pytest.approx(l_gt + l_lt + l_0, rel=1e-10)
    assert _pair_count(codes, n_classes, w) == pytest.approx(count, rel=1e-12)
    assert _log_rank_loss(scores, codes, n_classes, log_w) == pytest.approx(
        np.log(l_gt + l_lt + l_0), rel=1e-12)

    # Every cut of every attribute of the current rule, with the outside sums
    # passed as the estimator passes them and derived from the totals.
    idx = np.flatnonzero(covered)
    rows = idx[np.argsort(X[idx], axis=0, kind="stable").T]
    total_plus, total_minus = _totals(codes, a, b, n_classes)
    out_plus, out_minus = _totals(codes[~covered], a[~covered], b[~covered], n_classes)
    args = (X.T[np.arange(2)[:, None], rows], codes[rows], a[rows], b[rows], total_plus, total_minus)
    given = candidate_rank_sums(*args, outside_plus=out_plus, outside_minus=out_minus)
    derived = candidate_rank_sums(*args)
    for p in range(2):
        for t in range(1, idx.size):
            for direction, kept in enumerate((rows[p, :t], rows[p, t:])):
                new_cover = np.zeros(n, bool)
                new_cover[kept] = True
                l_gt, l_lt, _, _ = weighted_pair_sums(codes, scores, w, new_cover)
                for cand_gt, cand_lt, _, _ in (given, derived):
                    assert cand_gt[p, direction, t - 1] * scale == pytest.approx(
                        l_gt, rel=1e-9, abs=1e-12)
                    assert cand_lt[p, direction, t - 1] * scale == pytest.approx(
                        l_lt, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_weighted_thresholds_minimise_weighted_threshold_loss(seed):
    """Check that fit_thresholds with weights minimises sum_i w_i exp(-y_ik (f_i - theta_k))."""
    rng = np.random.default_rng(seed)
    n, n_classes = 30, 4
    codes = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    scores = rng.normal(size=n)
    w = rng.uniform(0.0, 4.0, size=n)
    w[:n_classes] += 0.5
    theta = fit_thresholds(scores, codes, n_classes, w)
    for k in range(1, n_classes):
        sign = np.where(codes >= k, 1.0, -1.0)
        res = minimize_scalar(lambda th, sign=sign: np.sum(w * np.exp(-sign * (scores - th))),
                              bounds=(-20, 20), method="bounded", options={"xatol": 1e-10})
        assert theta[k - 1] == pytest.approx(res.x, abs=1e-6)


def test_first_rule_response_is_weighted_closed_form():
    """Check that the first rule's response is nu * (9) with weighted sums and weighted eps."""
    X, y = ordinal_data(seed=13, n=25)
    codes = y - 1
    w = np.random.default_rng(14).uniform(0.1, 4.0, size=len(y))
    model = RankRules(n_rules=2, learning_rate=0.5, subsample=1.0).fit(X, y, sample_weight=w)
    scores = np.zeros(len(y))
    for rule in model.rules_:
        covered = rule.covers(X)
        w_gt, w_lt, w_0, count = weighted_pair_sums(codes, scores, w, covered)
        eps = (w_gt + w_lt + w_0) / count
        assert rule.response == pytest.approx(0.5 * 0.5 * np.log((w_gt + eps) / (w_lt + eps)),
                                              rel=1e-9)
        scores = scores + rule.response * covered
    theta, objective = brute_force_thresholds(scores, codes, 3, w)
    np.testing.assert_allclose(model.thresholds_, theta, atol=1e-8)
    assert objective(model.thresholds_) <= objective(theta) * (1 + 1e-12)


def test_weights_steer_the_model():
    """Check that up-weighting the top class makes it predicted more often (weights are used)."""
    X, y = ordinal_data(seed=15, n=120)
    plain = RankRules(n_rules=60, random_state=0).fit(X, y)
    heavy = RankRules(n_rules=60, random_state=0).fit(
        X, y, sample_weight=np.where(y == 3, 10.0, 1.0))
    assert np.mean(heavy.predict(X) == 3) > np.mean(plain.predict(X) == 3)


# ---------------------------------------------------------------------------
# Bad weights


@pytest.mark.parametrize(
    "weight, match",
    [
        (-np.ones(20), "sample_weight"),
        (np.r_[np.nan, np.ones(19)], "sample_weight"),
        (np.r_[np.inf, np.ones(19)], "sample_weight"),
        (np.ones(19), "sample_weight"),
        (np.ones((20, 2)), "1D array"),
        (np.zeros(20), "sample_weight must contain at least one non-zero"),
    ],
    ids=["negative", "nan", "inf", "length", "2d", "all-zero"],
)
def test_bad_weights_are_rejected(weight, match):
    """Check that negative, NaN, infinite, misshapen or all-zero weights raise a ValueError."""
    X, y = ordinal_data(seed=16, n=20)
    with pytest.raises(ValueError, match=match):
        RankRules(n_rules=3).fit(X, y, sample_weight=weight)


def test_class_with_only_zero_weights_is_rejected():
    """Check that a class whose rows all weigh zero raises a ValueError naming the class."""
    X, y = ordinal_data(seed=17, n=30)
    w = np.where(y == 2, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"classes \[2\] have only examples with zero sample_weight"):
        RankRules(n_rules=3).fit(X, y, sample_weight=w)
