"""Tests of the one sample-weight validator shared by the estimators (trees._validation)."""

import numpy as np
import pytest

from ensemble import ConsistentForestClassifier, OTreeBagger, RankRules
from trees import OrdinalTreeClassifier
from trees._validation import check_sample_weight

BAD_WEIGHTS = [
    (-np.r_[1.0, np.ones(5)], r"sample_weight must be non-negative; got a minimum of -1\.0"),
    (np.r_[np.nan, np.ones(5)], "sample_weight must be finite; got NaN or infinite values"),
    (np.r_[np.inf, np.ones(5)], "sample_weight must be finite; got NaN or infinite values"),
    (np.ones(5), "sample_weight has 5 entries but there are 6 samples"),
    (np.ones((6, 1)), r"sample_weight must be a 1D array of shape \(n_samples,\) = \(6,\) or a scalar; "
     r"got an array of shape \(6, 1\)"),
    (np.array(["1"] * 6), "sample_weight must hold real numbers; got an array of dtype <U1"),
    (np.full(6, 1 + 1j), "sample_weight must hold real numbers; got an array of dtype complex128"),
    (np.array([None] * 6), "sample_weight must be finite"),
    (np.zeros(6), "sample_weight must contain at least one non-zero weight; all 6 are zero"),
    (-2.0, "sample_weight must be non-negative"),
    (float("nan"), "sample_weight must be finite"),
]
BAD_IDS = ["negative", "nan", "inf", "length", "2d", "strings", "complex", "none-entries", "all-zero",
           "negative-scalar", "nan-scalar"]


def test_valid_weights_come_back_as_a_fresh_float64_array():
    """Check that valid weights are returned as a new float64 array equal to the input."""
    for raw in ([1, 0, 2], np.array([1, 0, 2], dtype=np.int32), np.array([1.0, 0.0, 2.0], dtype=np.float32),
                np.array([1, 0, 2], dtype=object), [True, False, True]):
        out = check_sample_weight(raw, 3)
        assert out.dtype == np.float64 and out.shape == (3,) and out.flags.c_contiguous
        np.testing.assert_array_equal(out, np.asarray(raw, dtype=float))
    original = np.array([1.0, 2.0, 3.0])
    out = check_sample_weight(original, 3)
    out[0] = 99.0
    assert original[0] == 1.0


def test_none_and_scalars_are_broadcast():
    """Check that None gives unit weights and a scalar is repeated for every sample."""
    np.testing.assert_array_equal(check_sample_weight(None, 4), np.ones(4))
    np.testing.assert_array_equal(check_sample_weight(2.5, 3), np.full(3, 2.5))
    np.testing.assert_array_equal(check_sample_weight(np.int64(3), 2), np.full(2, 3.0))


def test_all_zero_weights_are_accepted_only_when_allowed():
    """Check that all-zero weights pass with allow_all_zero=True and raise without it."""
    np.testing.assert_array_equal(check_sample_weight(np.zeros(3), 3, allow_all_zero=True), np.zeros(3))
    np.testing.assert_array_equal(check_sample_weight(0.0, 2, allow_all_zero=True), np.zeros(2))
    with pytest.raises(ValueError, match="all 3 are zero"):
        check_sample_weight(np.zeros(3), 3)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        check_sample_weight([-1.0, 0.0], 2, allow_all_zero=True)


@pytest.mark.parametrize("weight, match", BAD_WEIGHTS, ids=BAD_IDS)
def test_bad_weights_raise_a_message_naming_sample_weight(weight, match):
    """Check that every kind of bad weight raises a ValueError naming sample_weight and what was expected."""
    with pytest.raises(ValueError, match=match):
        check_sample_weight(weight, 6)


@pytest.mark.parametrize("n_samples", [-1, 2.0, "3", None, True])
def test_bad_n_samples_raises(n_samples):
    """Check that n_samples that is not a non-negative integer raises a ValueError naming it."""
    with pytest.raises(ValueError, match="n_samples must be a non-negative integer"):
        check_sample_weight(None, n_samples)


@pytest.mark.parametrize(
    "estimator",
    [OrdinalTreeClassifier(), OTreeBagger(n_estimators=2, group_size=1), RankRules(n_rules=2),
     ConsistentForestClassifier(n_estimators=2)],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.parametrize("weight, match", BAD_WEIGHTS[:5] + BAD_WEIGHTS[8:9], ids=BAD_IDS[:5] + BAD_IDS[8:9])
def test_every_estimator_gives_the_validator_message(estimator, weight, match):
    """Check that the estimators reject bad weights with the shared validator's message."""
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([1, 1, 2, 2, 3, 3])
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, y, sample_weight=weight)
