"""Pins of the private scikit-learn behaviour the estimators rely on.

``sklearn.base._fit_context`` and ``sklearn.utils._param_validation`` are private
(scikit-learn may change them in any release); these tests fail on a release in
our supported range where the behaviour we build on changed.
"""

from numbers import Integral

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import InvalidParameterError, Interval, StrOptions

from ensemble import ConsistentForestClassifier, OTreeBagger, RankRules
from trees import OrdinalTreeClassifier

ESTIMATORS = [OrdinalTreeClassifier, OTreeBagger, RankRules, ConsistentForestClassifier]
X = np.arange(24.0).reshape(12, 2)
Y = np.repeat([1, 2, 3], 4)


def _constrained_parameters():
    for cls in ESTIMATORS:
        for name in cls._parameter_constraints:
            yield pytest.param(cls, name, id=f"{cls.__name__}-{name}")


def test_invalid_parameter_error_is_a_value_error():
    """Check that InvalidParameterError is a ValueError (our docstrings promise ValueError) and a TypeError."""
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidParameterError, TypeError)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_init_parameter_is_constrained(cls):
    """Check that every __init__ parameter has a constraint, so that fit validates all of them."""
    assert set(cls._parameter_constraints) == set(cls().get_params(deep=False))


@pytest.mark.parametrize("cls, name", list(_constrained_parameters()))
def test_fit_raises_an_error_naming_the_invalid_parameter(cls, name):
    """Check that fit raises InvalidParameterError naming the parameter and the estimator."""
    estimator = cls().set_params(**{name: object()})
    with pytest.raises(InvalidParameterError, match=rf"^The '{name}' parameter of {cls.__name__} must be "):
        estimator.fit(X, Y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_parameters_are_validated_before_the_body_of_fit(cls):
    """Check that _fit_context validates the parameters before fit looks at the data."""
    bad_X = X.copy()
    bad_X[0, 0] = np.nan
    first = sorted(cls._parameter_constraints)[0]
    estimator = cls().set_params(**{first: object()})
    with pytest.raises(InvalidParameterError, match=f"'{first}' parameter"):
        estimator.fit(bad_X, np.ones(12))
    assert not hasattr(estimator, "classes_")


@pytest.mark.parametrize(
    "params, valid",
    [
        (dict(min_samples_split=1), False),  # Interval(Integral, 2, None, closed="left")
        (dict(min_samples_split=1.0), True),  # Interval(RealNotInt, 0, 1, closed="right"): the whole node
        (dict(min_samples_leaf=1.0), False),  # Interval(RealNotInt, 0, 1, closed="neither")
        (dict(min_samples_leaf=0.5), True),
        (dict(max_depth=np.int64(3)), True),  # numpy integers are Integral
        (dict(max_depth=2.0), False),  # a float is not an Integral
        (dict(max_features="sqrt"), True),
        (dict(max_features="auto"), False),  # StrOptions lists the accepted strings
        (dict(wig_power=0.0), False),  # Interval(Real, 0, None, closed="neither")
    ],
)
def test_interval_and_options_bounds_mean_what_we_declare(params, valid):
    """Check the open/closed ends, RealNotInt and StrOptions on OrdinalTreeClassifier's declared constraints."""
    estimator = OrdinalTreeClassifier().set_params(**params)
    if valid:
        assert estimator.fit(X, Y).classes_.tolist() == [1, 2, 3]
    else:
        (name,) = params
        with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of OrdinalTreeClassifier"):
            estimator.fit(X, Y)


class _Probe(ClassifierMixin, BaseEstimator):
    """A minimal estimator recording the configuration seen inside fit."""

    _parameter_constraints: dict = {
        "alpha": [Interval(Integral, 1, None, closed="left")],
        "mode": [StrOptions({"a", "b"})],
    }

    def __init__(self, *, alpha=1, mode="a"):
        self.alpha = alpha
        self.mode = mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        self.skip_inside_ = sklearn.get_config()["skip_parameter_validation"]
        self.nested_ = OrdinalTreeClassifier(max_depth=0)
        self.nested_.fit(X, y)  # invalid max_depth: passes only when nested validation is skipped
        return self


def test_fit_context_skips_nested_validation_and_restores_the_config():
    """Check that _fit_context(prefer_skip_nested_validation=True) skips the nested checks inside fit only."""
    assert sklearn.get_config()["skip_parameter_validation"] is False
    with pytest.raises(InvalidParameterError, match="The 'alpha' parameter of _Probe must be an int in the range"):
        _Probe(alpha=0).fit(X, Y)
    probe = _Probe().fit(X, Y)
    assert probe.skip_inside_ is True
    assert sklearn.get_config()["skip_parameter_validation"] is False
    with pytest.raises(InvalidParameterError, match="The 'max_depth' parameter"):
        OrdinalTreeClassifier(max_depth=0).fit(X, Y)


def test_scikit_learn_tree_thresholds_can_be_rewritten_through_its_pickle_state():
    """Check the behaviour the certified forest relies on: Tree.__getstate__/__setstate__ rewrite thresholds."""
    import numpy as np
    from sklearn.tree import DecisionTreeRegressor

    from ensemble.certificates._thresholds import set_thresholds as _set_thresholds

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(80, 2))
    tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X[:, 0] > 0.5)
    state = tree.tree_.__getstate__()
    assert {"nodes", "values", "node_count", "max_depth"} <= set(state)
    assert "threshold" in state["nodes"].dtype.names
    moved = np.array(tree.tree_.threshold, dtype=np.float64)
    inner = tree.tree_.children_left >= 0
    moved[inner] += 1e-3
    before = tree.tree_.value.copy()
    _set_thresholds(tree, moved)
    np.testing.assert_array_equal(tree.tree_.threshold, moved)
    np.testing.assert_array_equal(tree.tree_.value, before)  # only the thresholds changed
    # A point between the old and the new root threshold now goes left: the tree uses the new one.
    point = np.full((1, 2), 0.5)
    point[0, tree.tree_.feature[0]] = moved[0] - 5e-4
    path = tree.decision_path(point.astype(np.float32)).indices
    assert tree.tree_.children_left[0] in path and tree.tree_.children_right[0] not in path


def test_scikit_learn_tree_private_fit_takes_the_missing_mask():
    """Check the behaviour the certified forest relies on: _fit(check_input=False, missing_values_in_feature_mask=)
    learns where missing values go, as the public fit does after checking its input."""
    import numpy as np
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 2)).astype(np.float32)
    y = (X[:, 0] > 0.5).astype(float)
    X[rng.uniform(size=X.shape) < 0.2] = np.nan
    y[np.isnan(X[:, 0])] = 2.0  # missing values of x0 form their own group
    public = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    private = DecisionTreeRegressor(max_depth=3, random_state=0)
    private._fit(X, y, sample_weight=None, check_input=False, missing_values_in_feature_mask=np.isnan(X).any(axis=0))
    np.testing.assert_array_equal(private.tree_.threshold, public.tree_.threshold)
    np.testing.assert_array_equal(private.tree_.missing_go_to_left, public.tree_.missing_go_to_left)
    np.testing.assert_array_equal(private.predict(X), public.predict(X))
