"""Tests for ensemble.metrics: MAE, zero-one error, QWK and RPS against independent computations."""

import warnings
from functools import partial

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import cohen_kappa_score

from ensemble.metrics import (
    average_mean_absolute_error,
    correct_classification_rate,
    geometric_mean_sensitivity,
    kendall_tau,
    maximum_mean_absolute_error,
    mean_absolute_error,
    mean_zero_one_error,
    minimum_sensitivity,
    one_off_accuracy,
    ordinal_scorer,
    quadratic_weighted_kappa,
    ranked_probability_score,
    spearman_rho,
    weighted_kappa,
)
from trees._labels import ClassOrderWarning

NAMES = ["very low", "low", "mid", "high", "very high", "top"]


@st.composite
def labelled_pairs(draw, min_k=2, max_k=6, max_n=40):
    """Draw (K, ordinal label names, y_true, y_pred, weights) with classes possibly absent."""
    k = draw(st.integers(min_k, max_k))
    n = draw(st.integers(1, max_n))
    codes = st.integers(0, k - 1)
    t = np.array(draw(st.lists(codes, min_size=n, max_size=n)))
    p = np.array(draw(st.lists(codes, min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), dtype=float)
    return k, NAMES[:k], t, p, w


def _direct_mae(t, p, order, w=None):
    rank = {lab: i for i, lab in enumerate(order)}
    errors = [abs(rank[a] - rank[b]) for a, b in zip(t, p)]
    w = np.ones(len(errors)) if w is None else w
    return sum(e * wi for e, wi in zip(errors, w)) / sum(w)


def _brute_rps(t, proba, order):
    rank = {lab: i for i, lab in enumerate(order)}
    k = len(order)
    total = 0.0
    for label, row in zip(t, proba):
        for j in range(k - 1):
            cumulative = sum(row[: j + 1])
            observed = 1.0 if rank[label] <= j else 0.0
            total += (cumulative - observed) ** 2
    return total / len(t)


# ---------------------------------------------------------------- MAE


@given(labelled_pairs())
def test_mae_matches_direct_rank_computation(data):
    """Check that MAE on string labels equals a direct loop over rank differences."""
    k, names, t, p, w = data
    yt = np.array(names, dtype=object)[t]
    yp = np.array(names, dtype=object)[p]
    assert mean_absolute_error(yt, yp, labels=names) == pytest.approx(_direct_mae(yt, yp, names))
    assert mean_absolute_error(yt, yp, labels=names, sample_weight=w) == pytest.approx(
        _direct_mae(yt, yp, names, w)
    )


@given(labelled_pairs())
def test_mae_on_integer_classes_with_full_labels_is_plain_absolute_error(data):
    """Check that with labels=1..K the MAE of integer classes is mean(abs(y_true - y_pred))."""
    k, _, t, p, _ = data
    got = mean_absolute_error(t + 1, p + 1, labels=np.arange(1, k + 1))
    assert got == pytest.approx(np.mean(np.abs(t - p)))


def test_mae_string_labels_use_given_order_not_alphabetical():
    """Check that "low","mid","high" are ranks 0,1,2 although alphabetical order differs."""
    labels = ["low", "mid", "high"]
    assert mean_absolute_error(["low"], ["high"], labels=labels) == 2.0
    assert mean_absolute_error(["mid"], ["high"], labels=labels) == 1.0
    # Alphabetical order (high < low < mid) would put low and high one step apart.
    with pytest.warns(ClassOrderWarning, match="'high' < 'low'"):
        assert mean_absolute_error(["low"], ["high"]) == 1.0


def test_mae_absent_class_counts_in_explicit_scale():
    """Check that a class absent from both inputs still counts as a step when listed in labels."""
    assert mean_absolute_error([1, 1], [3, 3], labels=[1, 2, 3]) == 2.0
    assert mean_absolute_error([1, 1], [3, 3]) == 1.0


def test_mae_integer_weights_equal_repetition():
    """Check that integer sample weights give the same MAE as repeating the samples."""
    rng = np.random.default_rng(0)
    t = rng.integers(1, 6, size=30)
    p = rng.integers(1, 6, size=30)
    w = rng.integers(0, 4, size=30)
    w[0] = 1
    labels = np.arange(1, 6)
    assert mean_absolute_error(t, p, labels=labels, sample_weight=w) == pytest.approx(
        mean_absolute_error(np.repeat(t, w), np.repeat(p, w), labels=labels)
    )


def test_mae_accepts_pandas_ordered_categorical_order():
    """Check that a pandas ordered Categorical supplies the label order when labels is None."""
    pd = pytest.importorskip("pandas")
    y = pd.Categorical(["low", "high", "mid"], categories=["low", "mid", "high"], ordered=True)
    assert mean_absolute_error(y, ["high", "low", "mid"]) == pytest.approx(4 / 3)


def test_zero_one_error_matches_accuracy():
    """Check that mean_zero_one_error is one minus the share of exact hits, weighted."""
    rng = np.random.default_rng(1)
    t = rng.integers(1, 5, size=50)
    p = rng.integers(1, 5, size=50)
    w = rng.random(50)
    assert mean_zero_one_error(t, p) == pytest.approx(1 - np.mean(t == p))
    assert mean_zero_one_error(t, p, sample_weight=w) == pytest.approx(
        1 - np.sum(w * (t == p)) / np.sum(w)
    )


# ---------------------------------------------------------------- QWK


@given(labelled_pairs())
def test_qwk_matches_sklearn_cohen_kappa(data):
    """Check that QWK equals scikit-learn's quadratic cohen_kappa_score with the same labels."""
    k, names, t, p, w = data
    yt = np.array(names)[t]
    yp = np.array(names)[p]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = cohen_kappa_score(yt, yp, labels=names, weights="quadratic")
        expected_w = cohen_kappa_score(
            yt, yp, labels=names, weights="quadratic", sample_weight=w
        )
        got = quadratic_weighted_kappa(yt, yp, labels=names)
        got_w = quadratic_weighted_kappa(yt, yp, labels=names, sample_weight=w)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)
    if np.isnan(expected_w):
        assert np.isnan(got_w)
    else:
        assert got_w == pytest.approx(expected_w, abs=1e-12)


def test_qwk_absent_class_changes_scale_like_sklearn():
    """Check that listing a class absent from the data changes QWK exactly as in scikit-learn."""
    t = [1, 1, 2, 4, 4, 5]
    p = [1, 2, 2, 4, 5, 5]
    full = quadratic_weighted_kappa(t, p, labels=[1, 2, 3, 4, 5])
    assert full == pytest.approx(
        cohen_kappa_score(t, p, labels=[1, 2, 3, 4, 5], weights="quadratic")
    )
    present = quadratic_weighted_kappa(t, p)
    assert present == pytest.approx(cohen_kappa_score(t, p, weights="quadratic"))
    assert full != pytest.approx(present)


def test_qwk_perfect_and_reversed():
    """Check that QWK is 1 for perfect agreement and -1 for a fully reversed two-class rating."""
    assert quadratic_weighted_kappa([1, 2, 3], [1, 2, 3]) == 1.0
    assert quadratic_weighted_kappa([1, 1, 2, 2], [2, 2, 1, 1]) == pytest.approx(-1.0)


def test_qwk_undefined_warns_and_can_be_replaced():
    """Check that QWK warns and returns NaN (or the replacement) when both raters use one class."""
    with pytest.warns(UndefinedMetricWarning, match="undefined"):
        assert np.isnan(quadratic_weighted_kappa([2, 2], [2, 2], labels=[1, 2, 3]))
    with pytest.warns(UndefinedMetricWarning):
        assert quadratic_weighted_kappa([2, 2], [2, 2], replace_undefined_by=1.0) == 1.0


def _brute_kappa(t, p, order, w, power):
    """Weighted kappa from its definition: confusion matrix and chance matrix built by loops."""
    rank = {lab: i for i, lab in enumerate(order)}
    k = len(order)
    observed = np.zeros((k, k))
    for a, b, wi in zip(t, p, w):
        observed[rank[a], rank[b]] += wi
    total = observed.sum()
    disagreement = chance = 0.0
    for i in range(k):
        for j in range(k):
            weight = abs(i - j) ** power
            disagreement += weight * observed[i, j]
            chance += weight * observed[i, :].sum() * observed[:, j].sum() / total
    return np.nan if chance == 0 else 1.0 - disagreement / chance


@given(labelled_pairs())
def test_weighted_kappa_matches_sklearn_and_the_definition(data):
    """Check linear and quadratic kappa against cohen_kappa_score (unweighted) and a loop (weighted)."""
    k, names, t, p, w = data
    yt, yp = np.array(names)[t], np.array(names)[p]
    for weights, power in (("linear", 1), ("quadratic", 2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = cohen_kappa_score(yt, yp, labels=names, weights=weights)
            got = weighted_kappa(yt, yp, weights=weights, labels=names)
            got_w = weighted_kappa(yt, yp, weights=weights, labels=names, sample_weight=w)
        brute_w = _brute_kappa(yt, yp, names, w, power)
        for value, reference in ((got, expected), (got_w, brute_w)):
            if np.isnan(reference):
                assert np.isnan(value)
            else:
                assert value == pytest.approx(reference, abs=1e-12)


def test_weighted_kappa_quadratic_is_qwk_and_linear_differs():
    """Check that weights='quadratic' is quadratic_weighted_kappa and that linear weights give another value."""
    t, p = [1, 1, 2, 3, 4, 4, 5], [1, 3, 2, 3, 5, 2, 5]
    assert weighted_kappa(t, p) == quadratic_weighted_kappa(t, p)
    linear = weighted_kappa(t, p, weights="linear", labels=[1, 2, 3, 4, 5])
    assert linear == pytest.approx(cohen_kappa_score(t, p, weights="linear"))
    assert linear != pytest.approx(quadratic_weighted_kappa(t, p))


def test_weighted_kappa_integer_weights_equal_repetition():
    """Check that integer sample weights give the kappa of the repeated rows."""
    t, p, w = [1, 2, 2, 3, 3], [1, 3, 2, 1, 3], [2, 1, 3, 1, 2]
    repeated_t = np.repeat(t, w)
    repeated_p = np.repeat(p, w)
    assert weighted_kappa(t, p, weights="linear", sample_weight=w) == pytest.approx(
        weighted_kappa(repeated_t, repeated_p, weights="linear"))


def test_weighted_kappa_rejects_unknown_weights_and_warns_when_undefined():
    """Check the ValueError naming weights and the undefined-kappa warning of the linear form."""
    with pytest.raises(ValueError, match="weights must be 'linear' or 'quadratic', got 'cubic'"):
        weighted_kappa([1, 2], [1, 2], weights="cubic")
    with pytest.raises(ValueError, match="weights must be 'linear' or 'quadratic', got None"):
        weighted_kappa([1, 2], [1, 2], weights=None)
    with pytest.warns(UndefinedMetricWarning, match="linear weighted kappa is undefined"):
        assert np.isnan(weighted_kappa([2, 2], [2, 2], weights="linear", labels=[1, 2, 3]))


# ---------------------------------------------------------------- GM, MS


def _brute_sensitivities(t, p, order, w):
    """Per-class sensitivity by explicit loops; None for a class without weight in y_true."""
    out = []
    for cls in order:
        hits = total = 0.0
        for a, b, wi in zip(t, p, w):
            if a == cls:
                total += wi
                hits += wi * (b == cls)
        out.append(hits / total if total > 0 else None)
    return out


@given(labelled_pairs())
def test_gm_and_ms_match_per_class_loops(data):
    """Check GM (ORCA: an absent class counts 1, root K) and MS (absent classes left out) against loops."""
    k, names, t, p, w = data
    yt, yp = np.array(names)[t], np.array(names)[p]
    for weights in (np.ones(len(t)), w):
        sens = _brute_sensitivities(yt, yp, names, weights)
        product = 1.0
        for s in sens:
            product *= 1.0 if s is None else s
        expected_gm = product ** (1.0 / k)
        expected_ms = min(s for s in sens if s is not None)
        assert geometric_mean_sensitivity(yt, yp, labels=names, sample_weight=weights) == (
            pytest.approx(expected_gm, abs=1e-12))
        assert minimum_sensitivity(yt, yp, labels=names, sample_weight=weights) == (
            pytest.approx(expected_ms, abs=1e-12))


def test_gm_and_ms_absent_classes_follow_orca():
    """Check ORCA's convention: a predicted-only or listed-only class raises GM's root and leaves MS alone."""
    t = [1, 1, 2, 2, 2, 2]
    p = [1, 3, 2, 2, 2, 1]  # class 3 is predicted, never true
    # S1 = 1/2, S2 = 3/4; class 3 has no true sample: factor 1 in GM, left out of MS.
    assert geometric_mean_sensitivity(t, p) == pytest.approx((0.5 * 0.75) ** (1 / 3))
    assert geometric_mean_sensitivity(t, p, labels=[1, 2, 3, 4]) == pytest.approx((0.5 * 0.75) ** 0.25)
    assert minimum_sensitivity(t, p) == 0.5
    assert minimum_sensitivity(t, p, labels=[1, 2, 3, 4]) == 0.5
    # A class present in y_true and never predicted right makes GM and MS 0.
    assert geometric_mean_sensitivity([1, 2, 3], [1, 1, 3]) == 0.0
    assert minimum_sensitivity([1, 2, 3], [1, 1, 3]) == 0.0
    # A class whose samples all weigh 0 is absent.
    assert minimum_sensitivity([1, 2, 3], [1, 1, 3], sample_weight=[1.0, 0.0, 1.0]) == 1.0


def test_gm_and_ms_integer_weights_equal_repetition_and_order_does_not_matter():
    """Check that integer weights equal repeated rows and that GM and MS ignore the class order."""
    t, p, w = ["lo", "lo", "mid", "hi", "hi"], ["lo", "mid", "mid", "hi", "lo"], [3, 1, 2, 2, 1]
    order = ["lo", "mid", "hi"]
    rt, rp = np.repeat(t, w), np.repeat(p, w)
    for metric in (geometric_mean_sensitivity, minimum_sensitivity):
        weighted = metric(t, p, labels=order, sample_weight=w)
        assert weighted == pytest.approx(metric(rt, rp, labels=order))
        assert weighted == pytest.approx(metric(t, p, labels=order[::-1], sample_weight=w))
    assert minimum_sensitivity(t, p, labels=order, sample_weight=w) == pytest.approx(2 / 3)


def test_gm_does_not_underflow_with_many_small_sensitivities():
    """Check that GM of 400 classes each recognised 1 time in 10 is 0.1 (a plain product underflows)."""
    t = np.repeat(np.arange(400), 10)
    p = np.where(np.arange(t.size) % 10 == 0, t, (t + 1) % 400)
    assert geometric_mean_sensitivity(t, p) == pytest.approx(0.1, rel=1e-12)


def test_gm_and_ms_warn_on_text_labels_without_an_order():
    """Check that text labels without labels= raise the ClassOrderWarning naming labels."""
    with pytest.warns(ClassOrderWarning, match="labels="):
        geometric_mean_sensitivity(["low", "high"], ["low", "low"])
    with pytest.warns(ClassOrderWarning, match="labels="):
        minimum_sensitivity(["low", "high"], ["low", "low"])


# ---------------------------------------------------------------- RPS


@given(
    st.integers(2, 6).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.lists(
                st.tuples(
                    st.integers(0, k - 1),
                    st.lists(st.floats(0.0, 1.0), min_size=k, max_size=k),
                ),
                min_size=1,
                max_size=20,
            ),
        )
    )
)
def test_rps_matches_brute_force_loop(data):
    """Check that RPS equals a brute-force double loop over samples and cumulative classes."""
    k, rows = data
    names = NAMES[:k]
    t = [names[c] for c, _ in rows]
    raw = np.array([r for _, r in rows]) + 1e-3
    proba = raw / raw.sum(axis=1, keepdims=True)
    expected = _brute_rps(t, proba, names)
    assert ranked_probability_score(t, proba, labels=names) == pytest.approx(expected)
    assert ranked_probability_score(t, proba, labels=names, normalize=True) == pytest.approx(
        expected / (k - 1)
    )


def test_rps_known_cases():
    """Check that a perfect forecast scores 0 and a one-hot forecast d classes off scores d."""
    labels = [1, 2, 3, 4, 5]
    eye = np.eye(5)
    assert ranked_probability_score([1, 3, 5], eye[[0, 2, 4]], labels=labels) == 0.0
    assert ranked_probability_score([2], eye[[2]], labels=labels) == 1.0
    assert ranked_probability_score([2], eye[[0]], labels=labels) == 1.0
    assert ranked_probability_score([1], eye[[4]], labels=labels) == 4.0
    assert ranked_probability_score([1], eye[[4]], labels=labels, normalize=True) == 1.0
    # Uniform forecast over 3 classes, truth the middle: (1/3)^2 + (2/3 - 1)^2 = 2/9.
    uniform = [[1 / 3, 1 / 3, 1 / 3]]
    assert ranked_probability_score([2], uniform, labels=[1, 2, 3]) == pytest.approx(2 / 9)


def test_rps_class_absent_from_y_true_needs_and_uses_labels():
    """Check that RPS handles a class absent from y_true once labels names every column."""
    proba = [[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]]
    with pytest.raises(ValueError, match="pass labels"), pytest.warns(ClassOrderWarning):
        ranked_probability_score(["a", "c"], proba)
    got = ranked_probability_score(["a", "c"], proba, labels=["a", "b", "c"])
    assert got == pytest.approx(_brute_rps(["a", "c"], proba, ["a", "b", "c"]))


def test_rps_follows_label_order_not_sorted_order():
    """Check that proba columns are read in the order of labels, lowest class first."""
    labels = ["low", "mid", "high"]
    # All mass on "high" (third column), truth "high": perfect.
    assert ranked_probability_score(["high"], [[0, 0, 1]], labels=labels) == 0.0
    assert ranked_probability_score(["low"], [[0, 0, 1]], labels=labels) == 2.0


def test_rps_integer_weights_equal_repetition():
    """Check that integer sample weights give the same RPS as repeating the samples."""
    rng = np.random.default_rng(3)
    t = rng.integers(1, 5, size=20)
    proba = rng.dirichlet(np.ones(4), size=20)
    w = rng.integers(1, 4, size=20)
    labels = [1, 2, 3, 4]
    assert ranked_probability_score(t, proba, labels=labels, sample_weight=w) == pytest.approx(
        ranked_probability_score(np.repeat(t, w), np.repeat(proba, w, axis=0), labels=labels)
    )


def test_rps_single_class_is_zero():
    """Check that with one class there is no cumulative term and RPS is 0."""
    with pytest.warns(ClassOrderWarning, match="'x'"):
        assert ranked_probability_score(["x", "x"], [[1.0], [1.0]]) == 0.0
    with pytest.warns(ClassOrderWarning, match="'x'"):
        assert ranked_probability_score(["x"], [[1.0]], normalize=True) == 0.0


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "metric",
    [
        mean_absolute_error,
        mean_zero_one_error,
        quadratic_weighted_kappa,
        partial(weighted_kappa, weights="linear"),
        average_mean_absolute_error,
        maximum_mean_absolute_error,
        geometric_mean_sensitivity,
        minimum_sensitivity,
        kendall_tau,
        spearman_rho,
        one_off_accuracy,
        correct_classification_rate,
    ],
)
def test_pair_metrics_reject_bad_input(metric):
    """Check that the label-pair metrics raise ValueError naming the faulty argument."""
    with pytest.raises(ValueError, match="y_true and y_pred have different lengths"):
        metric([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="y_pred contains labels that are not in labels"):
        metric([1, 2], [1, 7], labels=[1, 2, 3])
    with pytest.raises(ValueError, match="y_true contains labels that are not in labels"):
        metric(["a", "z"], ["a", "b"], labels=["a", "b"])
    with pytest.raises(ValueError, match="y_true contains NaN"):
        metric([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="y_pred contains missing values"):
        metric(["a", "b"], np.array(["a", None], dtype=object), labels=["a", "b"])
    with pytest.raises(ValueError, match="labels must not contain duplicates"):
        metric([1, 2], [1, 2], labels=[1, 2, 2])
    with pytest.raises(ValueError, match="mix strings and numbers"):
        metric([1, 2], ["1", "2"])
    with pytest.raises(ValueError, match="y_true is empty"):
        metric([], [])
    with pytest.raises(ValueError, match="y_true must be 1-dimensional"):
        metric([[1, 2], [2, 1]], [1, 2])
    with pytest.raises(ValueError, match="sample_weight has 1 entries"):
        metric([1, 2], [1, 2], sample_weight=[1.0])
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        metric([1, 2], [1, 2], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="sample_weight must be finite"):
        metric([1, 2], [1, 2], sample_weight=[1.0, np.nan])
    with pytest.raises(ValueError, match="sample_weight must contain at least one non-zero weight"):
        metric([1, 2], [1, 2], sample_weight=[0.0, 0.0])


def test_rps_rejects_bad_input():
    """Check that RPS raises ValueError naming proba, y_true, labels or normalize."""
    good = [[0.5, 0.5], [0.1, 0.9]]
    with pytest.raises(ValueError, match="proba must be 2-dimensional"):
        ranked_probability_score([1, 2], [0.5, 0.5])
    with pytest.raises(ValueError, match="y_true and proba have different lengths"):
        ranked_probability_score([1, 2, 2], good)
    with pytest.raises(ValueError, match="proba has 2 columns but labels has 3 entries"):
        ranked_probability_score([1, 2], good, labels=[1, 2, 3])
    with pytest.raises(ValueError, match="proba rows must sum to 1; row 1"):
        ranked_probability_score([1, 2], [[0.5, 0.5], [0.5, 0.6]])
    with pytest.raises(ValueError, match="proba contains NaN"):
        ranked_probability_score([1, 2], [[0.5, 0.5], [np.nan, 1.0]])
    with pytest.raises(ValueError, match="proba contains negative values"):
        ranked_probability_score([1, 2], [[0.5, 0.5], [-0.5, 1.5]])
    with pytest.raises(ValueError, match="y_true contains labels that are not in labels"):
        ranked_probability_score([1, 3], good, labels=[1, 2])
    with pytest.raises(ValueError, match="y_true contains NaN"):
        ranked_probability_score([1.0, np.nan], good)
    with pytest.raises(ValueError, match="normalize must be a bool"):
        ranked_probability_score([1, 2], good, normalize="yes")
    with pytest.raises(ValueError, match="proba must contain numbers"):
        ranked_probability_score([1, 2], [["a", "b"], ["c", "d"]])


# ---------------------------------------------------------------- AMAE, MMAE


def _brute_per_class_mae(t, p, order, w):
    """Per-class MAE by explicit loops over the classes and samples (classes without weight left out)."""
    rank = {lab: i for i, lab in enumerate(order)}
    out = []
    for cls in order:
        num = den = 0.0
        for a, b, wi in zip(t, p, w):
            if a == cls:
                num += wi * abs(rank[a] - rank[b])
                den += wi
        if den > 0:
            out.append(num / den)
    return out


@given(labelled_pairs())
def test_amae_and_mmae_match_per_class_loops(data):
    """Check that AMAE and MMAE equal the mean and max of per-class MAEs computed by loops, weighted or not."""
    k, names, t, p, w = data
    yt = np.array(names, dtype=object)[t]
    yp = np.array(names, dtype=object)[p]
    for weights in (np.ones(len(t)), w):
        per_class = _brute_per_class_mae(yt, yp, names, weights)
        assert average_mean_absolute_error(yt, yp, labels=names, sample_weight=weights) == pytest.approx(
            np.mean(per_class)
        )
        assert maximum_mean_absolute_error(yt, yp, labels=names, sample_weight=weights) == pytest.approx(
            max(per_class)
        )


def test_amae_leaves_out_classes_absent_from_y_true_but_keeps_their_rank():
    """Check that a class absent from y_true is not averaged over, yet still counts as a step between others."""
    t = [1, 1, 3]
    p = [1, 3, 3]
    # Class 1: errors 0 and 2 -> 1.0; class 3: 0 -> 0.0; class 2 is absent: (1 + 0) / 2.
    assert average_mean_absolute_error(t, p, labels=[1, 2, 3]) == pytest.approx(0.5)
    assert maximum_mean_absolute_error(t, p, labels=[1, 2, 3]) == pytest.approx(1.0)
    # Without class 2 in labels, 1 and 3 are one step apart.
    assert average_mean_absolute_error(t, p) == pytest.approx(0.25)
    # A class present only in y_pred is not a true class either.
    assert average_mean_absolute_error([1, 1], [2, 2], labels=[1, 2, 3]) == pytest.approx(1.0)


def test_amae_differs_from_mae_on_imbalanced_classes():
    """Check that AMAE weighs each class equally where MAE weighs each sample equally."""
    t = [1] * 9 + [3]
    p = [1] * 9 + [1]
    assert mean_absolute_error(t, p, labels=[1, 2, 3]) == pytest.approx(0.2)
    assert average_mean_absolute_error(t, p, labels=[1, 2, 3]) == pytest.approx(1.0)


def test_amae_integer_weights_equal_repetition_including_zero():
    """Check that integer weights (zeros included) give the AMAE and MMAE of repeated rows."""
    rng = np.random.default_rng(4)
    t = rng.integers(1, 6, size=40)
    p = rng.integers(1, 6, size=40)
    w = rng.integers(0, 4, size=40)
    w[t == 5] = 0  # class 5 then has no weight: it must drop out as in the repeated data
    labels = np.arange(1, 6)
    for metric in (average_mean_absolute_error, maximum_mean_absolute_error):
        assert metric(t, p, labels=labels, sample_weight=w) == pytest.approx(
            metric(np.repeat(t, w), np.repeat(p, w), labels=labels)
        )


# ---------------------------------------------------------------- tau-b and rho


def _scipy_or_nan(function, a, b):
    """scipy's statistic (NaN for constant input, its warning silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(a, b)[0]


@given(labelled_pairs(min_k=2))
def test_kendall_tau_and_spearman_rho_match_scipy(data):
    """Check that tau-b and rho on string classes equal scipy.stats on the class ranks, unweighted."""
    from scipy import stats

    k, names, t, p, _ = data
    yt = np.array(names)[t]
    yp = np.array(names)[p]
    for ours, theirs in ((kendall_tau, partial(stats.kendalltau, variant="b")), (spearman_rho, stats.spearmanr)):
        expected = _scipy_or_nan(theirs, t, p)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            got = ours(yt, yp, labels=names)
        if np.isnan(expected):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(expected, abs=1e-12)


@given(labelled_pairs(min_k=2))
def test_kendall_tau_and_spearman_rho_weights_equal_repeated_rows(data):
    """Check that integer weights give tau-b and rho of the repeated rows (and scipy's value on them)."""
    from scipy import stats

    k, names, t, p, w = data
    wi = w.astype(int)
    for ours, theirs in ((kendall_tau, partial(stats.kendalltau, variant="b")), (spearman_rho, stats.spearmanr)):
        expected = _scipy_or_nan(theirs, np.repeat(t, wi), np.repeat(p, wi))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            got = ours(t, p, labels=range(k), sample_weight=w)
            repeated = ours(np.repeat(t, wi), np.repeat(p, wi), labels=range(k))
        if np.isnan(expected):
            assert np.isnan(got) and np.isnan(repeated)
        else:
            assert got == pytest.approx(expected, abs=1e-12)
            assert got == pytest.approx(repeated, abs=1e-12)


def test_rank_correlations_follow_the_label_order():
    """Check that reversing the class order negates tau-b and rho, and an absent class changes neither."""
    t = ["low", "mid", "high", "high", "mid"]
    p = ["low", "high", "high", "mid", "mid"]
    order = ["low", "mid", "high"]
    for metric in (kendall_tau, spearman_rho):
        forward = metric(t, p, labels=order)
        assert metric(t, p, labels=order[::-1]) == pytest.approx(forward)
        assert metric(t, p[::-1], labels=order) != pytest.approx(forward)
        # Only the order matters: an unused class in between changes nothing.
        assert metric(t, p, labels=["low", "mid", "unused", "high"]) == pytest.approx(forward)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman_rho([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_rank_correlations_undefined_warn_and_can_be_replaced():
    """Check that tau-b and rho warn and return NaN (or the replacement) when one side has a single class."""
    for metric in (kendall_tau, spearman_rho):
        with pytest.warns(UndefinedMetricWarning, match="undefined"):
            assert np.isnan(metric([1, 2, 3], [2, 2, 2]))
        with pytest.warns(UndefinedMetricWarning):
            assert metric([1, 1], [1, 2], replace_undefined_by=0.0) == 0.0
        with pytest.warns(UndefinedMetricWarning):
            # The other classes are present only with weight 0: no repeated row holds them.
            assert np.isnan(metric([1, 2, 3], [1, 2, 3], sample_weight=[1, 0, 0]))


# ---------------------------------------------------------------- one-off, CCR


@given(labelled_pairs())
def test_one_off_accuracy_and_ccr_match_direct_loops(data):
    """Check that one-off accuracy and CCR equal weighted loops over |rank difference| <= 1 and == 0."""
    from sklearn.metrics import accuracy_score

    k, names, t, p, w = data
    yt = np.array(names, dtype=object)[t]
    yp = np.array(names, dtype=object)[p]
    near = sum(wi for a, b, wi in zip(t, p, w) if abs(a - b) <= 1) / w.sum()
    assert one_off_accuracy(yt, yp, labels=names, sample_weight=w) == pytest.approx(near)
    assert correct_classification_rate(yt, yp, labels=names, sample_weight=w) == pytest.approx(
        accuracy_score(yt, yp, sample_weight=w)
    )
    assert correct_classification_rate(yt, yp, labels=names) == pytest.approx(
        1 - mean_zero_one_error(yt, yp, labels=names)
    )


def test_one_off_accuracy_counts_an_absent_class_as_a_step():
    """Check that one step means one place in labels: an absent class between two makes them two apart."""
    assert one_off_accuracy([1, 3], [3, 3]) == 1.0
    assert one_off_accuracy([1, 3], [3, 3], labels=[1, 2, 3]) == 0.5


# ---------------------------------------------------------------- scorer


def _string_data(n=150, seed=0):
    from ensemble.datasets import make_synthetic_i

    X, y = make_synthetic_i(n, random_state=seed)
    # Five ordered classes whose alphabetical order (best, fair, good, great, poor) is not the ordinal one.
    names = np.array(["poor", "fair", "good", "great", "best"])
    return X, names[y - 1], list(names)


def test_ordinal_scorer_in_grid_search_uses_the_fitted_class_order():
    """Check that GridSearchCV with ordinal_scorer('mae') on string classes scores each fold in classes_ order."""
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from ensemble import OTreeBagger

    X, y, order = _string_data()
    assert order != sorted(order)
    cv = StratifiedKFold(n_splits=3)
    base = OTreeBagger(n_estimators=3, group_size=3, random_state=0, classes=order)
    search = GridSearchCV(base, {"max_depth": [2, 4]}, scoring=ordinal_scorer("mae"), cv=cv)
    search.fit(X, y)
    rank = {c: i for i, c in enumerate(order)}
    alpha = {c: i for i, c in enumerate(sorted(order))}
    for i, depth in enumerate([2, 4]):
        ordinal, alphabetical = [], []
        for train, test in cv.split(X, y):
            pred = clone(base).set_params(max_depth=depth).fit(X[train], y[train]).predict(X[test])
            ordinal.append(-np.mean([abs(rank[a] - rank[b]) for a, b in zip(y[test], pred)]))
            alphabetical.append(-np.mean([abs(alpha[a] - alpha[b]) for a, b in zip(y[test], pred)]))
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(np.mean(ordinal))
        assert np.mean(ordinal) != pytest.approx(np.mean(alphabetical))


@pytest.mark.parametrize(
    "name, metric, sign",
    [
        ("mae", mean_absolute_error, -1),
        ("amae", average_mean_absolute_error, -1),
        ("mmae", maximum_mean_absolute_error, -1),
        ("zero_one", mean_zero_one_error, -1),
        ("qwk", quadratic_weighted_kappa, 1),
        ("linear_kappa", partial(weighted_kappa, weights="linear"), 1),
        ("gm", geometric_mean_sensitivity, 1),
        ("ms", minimum_sensitivity, 1),
        ("kendall_tau", kendall_tau, 1),
        ("spearman_rho", spearman_rho, 1),
        ("one_off_accuracy", one_off_accuracy, 1),
        ("ccr", correct_classification_rate, 1),
    ],
)
def test_ordinal_scorer_is_the_signed_metric_in_classes_order(name, metric, sign):
    """Check that every named scorer returns the metric (negated for losses) with labels=classes_, weights passed."""
    from sklearn.tree import DecisionTreeClassifier

    X, y, order = _string_data(80, seed=2)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    w = np.arange(1, len(y) + 1, dtype=float)
    pred = model.predict(X)
    scorer = ordinal_scorer(name)
    assert scorer(model, X, y) == pytest.approx(sign * metric(y, pred, labels=model.classes_))
    assert scorer(model, X, y, sample_weight=w) == pytest.approx(
        sign * metric(y, pred, labels=model.classes_, sample_weight=w)
    )
    assert repr(scorer) == f"ordinal_scorer({name!r})"


def test_ordinal_scorer_rps_reads_predict_proba():
    """Check that the RPS scorer is minus the RPS of predict_proba in the estimator's class order."""
    from ensemble import OTreeBagger

    X, y, order = _string_data(120, seed=3)
    model = OTreeBagger(n_estimators=6, group_size=3, max_depth=3, random_state=0, classes=order).fit(X, y)
    expected = -ranked_probability_score(y, model.predict_proba(X), labels=order)
    assert ordinal_scorer("rps")(model, X, y) == pytest.approx(expected)
    alphabetical = -ranked_probability_score(y, model.predict_proba(X), labels=sorted(order))
    assert expected != pytest.approx(alphabetical)


def test_ordinal_scorer_rejects_unknown_names_and_unfitted_estimators():
    """Check that an unknown metric name and an estimator without classes_ raise ValueError."""
    from sklearn.linear_model import LinearRegression

    with pytest.raises(ValueError, match="name must be one of .*'mae'"):
        ordinal_scorer("neg_mae")
    regressor = LinearRegression().fit([[0.0], [1.0]], [0.0, 1.0])
    with pytest.raises(ValueError, match="needs a fitted classifier with classes_"):
        ordinal_scorer("mae")(regressor, [[0.0]], [0.0])


def test_ordinal_scorer_places_a_class_the_fold_never_saw():
    """Check that a test fold holding a numeric class its training fold lacked is scored (the scorer raised and a
    search scored every candidate NaN, keeping the first), as scikit-learn's MAE scores it; the probabilities
    get a zero column for it; text classes with no known place are a clear error."""
    from sklearn.metrics import mean_absolute_error
    from sklearn.tree import DecisionTreeClassifier

    from ensemble.metrics import ordinal_scorer

    X = np.arange(12.0)[:, None]
    model = DecisionTreeClassifier(random_state=0).fit(X, [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4])
    X_test, y_test = np.array([[0.0], [11.0], [11.0]]), np.array([1, 5, 4])
    assert ordinal_scorer("mae")(model, X_test, y_test) == -mean_absolute_error(y_test, model.predict(X_test))
    assert np.isfinite(ordinal_scorer("rps")(model, X_test, y_test))
    text = DecisionTreeClassifier(random_state=0).fit(X, ["a", "b", "c"] * 4)
    with pytest.raises(ValueError, match=r"holds \['z'\], classes the estimator was not fitted on"):
        ordinal_scorer("mae")(text, X_test, np.array(["a", "z", "b"]))
