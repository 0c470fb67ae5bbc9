"""RankRules: boosted decision rules on the exponential rank loss.

Dembczyński, K. & Kotłowski, W. (2009). Decision rule-based algorithm for
ordinal classification based on rank loss minimization. The numerical kernels
(W sums, impurities, closed forms) live in :mod:`ensemble.rankrules._core`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from trees.utils import check_sample_weight, encode_labels, ordered_categories, validate_rows

from ensemble.base._estimator import _is_text_column
from ensemble.rankrules._kernels import workspace
from ensemble.rankrules._core import (
    IMPURITIES,
    class_threshold_sums,
    cumulative_proba,
    fit_thresholds,
    grow_rule,
    presort,
    rank_sums,
    response_closed_form,
)

__all__ = ["RankRules", "Rule", "Condition", "TECHNIQUES"]

logger = logging.getLogger(__name__)

TECHNIQUES = IMPURITIES
"""The single-rule techniques by name (the same dict that dispatches them)."""

# Impurities closer than this (relative) are rounding-level ties: such a decrease
# does not add a condition, and among tied candidates the first one wins.
_RELATIVE_TOLERANCE = 1e-12
# Bound on the number of (rows x conditions) booleans evaluated at once in predict.
_PREDICT_BLOCK = 1 << 22


@dataclass(frozen=True)
class Condition:
    """One elementary condition ``x[feature] >= threshold`` or ``x[feature] <= threshold``.

    Examples
    --------
    >>> str(Condition(feature=2, operator=">=", threshold=0.5))
    'x[2] >= 0.5'
    """

    feature: int
    operator: str
    threshold: float

    def holds(self, X: ArrayLike) -> NDArray:
        """Whether each row of ``X`` satisfies the condition.

        Examples
        --------
        >>> Condition(0, "<=", 1.0).holds([[0.0], [2.0]]).tolist()
        [True, False]
        """
        column = np.asarray(X, dtype=float)[:, self.feature]
        if self.operator == ">=":
            return column >= self.threshold
        return column <= self.threshold

    def format(self, feature_names: ArrayLike | None = None) -> str:
        """Render the condition with a feature name (or ``x[p]``).

        Examples
        --------
        >>> Condition(0, "<=", 1.0).format(["age"])
        'age <= 1'
        """
        name = f"x[{self.feature}]" if feature_names is None else str(feature_names[self.feature])
        return f"{name} {self.operator} {self.threshold:.6g}"

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True)
class Rule:
    """A decision rule ``r(x) = response * Phi(x)``, ``Phi`` a conjunction of conditions.

    ``response`` is what the rule adds to the score ``f(x)``: the shrunk value
    ``learning_rate * alpha_m`` with ``alpha_m`` from eq. (9).

    Examples
    --------
    >>> rule = Rule((Condition(0, ">=", 0.5), Condition(1, "<=", 2.0)), 0.25)
    >>> str(rule)
    'if x[0] >= 0.5 and x[1] <= 2 then f += 0.25'
    >>> rule.covers([[1.0, 1.0], [0.0, 1.0]]).tolist()
    [True, False]
    """

    conditions: tuple[Condition, ...]
    response: float

    def covers(self, X: ArrayLike) -> NDArray:
        """``Phi(x)`` for each row of ``X``: whether every condition holds.

        Examples
        --------
        >>> Rule((Condition(0, ">=", 0.0),), 1.0).covers([[1.0], [-1.0]]).tolist()
        [True, False]
        """
        X = np.asarray(X, dtype=float)
        result = np.ones(X.shape[0], dtype=bool)
        for condition in self.conditions:
            result &= condition.holds(X)
        return result

    def format(self, feature_names: ArrayLike | None = None) -> str:
        """Render the rule as ``if ... then f += response``.

        Examples
        --------
        >>> Rule((Condition(0, ">=", 0.5),), -0.1).format(["age"])
        'if age >= 0.5 then f += -0.1'
        """
        body = " and ".join(c.format(feature_names) for c in self.conditions)
        return f"if {body} then f += {self.response:.6g}"

    def __str__(self) -> str:
        return self.format()


class RankRules(ClassifierMixin, BaseEstimator):
    """Ordinal classifier: an ensemble of decision rules boosted on the exponential rank loss.

    The score ``f(x) = sum_m nu * alpha_m * Phi_m(x)`` is built rule by rule so as
    to rank the training examples by their labels (the exponential rank loss of
    Dembczyński & Kotłowski 2009, eq. 7); the classes are then read off ``f`` by
    ``K - 1`` thresholds fitted by eq. (8). A single rule is grown greedily, one
    elementary condition ``x_p >= s`` or ``x_p <= s`` at a time, as long as the
    impurity of the chosen technique decreases; its response ``alpha_m`` is the
    closed form (9) on *all* training examples, even when the conditions were
    chosen on a subsample.

    Parameters
    ----------
    n_rules : int, default=500
        Number of boosting iterations ``M``; each adds at most one rule.
    learning_rate : float in (0, 1], default=0.1
        Shrinkage ``nu`` applied to every rule's response (section 3.3).
    subsample : float in (0, 1], default=0.5
        Fraction ``zeta`` of the training examples, drawn without replacement
        for every rule, on which its conditions are chosen. 1.0 uses all of them.
    technique : {"sm", "gd", "gb", "cs"}, default="sm"
        Impurity that grows a single rule: simultaneous minimisation (eq. 10),
        gradient descent (eq. 12), gradient boosting (eq. 19) or constant-step
        minimisation (eq. 20). The names come from :data:`TECHNIQUES`.
    beta : float > 0, default=0.1
        Step length of the constant-step technique; ignored by the others.
    classes : array-like of shape (n_classes,) or None, default=None
        The classes in ordinal order (lowest first), e.g. ``["poor", "fair",
        "good"]``; every one must occur in ``y`` (the thresholds of eq. 8 need
        examples on both sides). ``None`` orders the labels as ``np.unique`` sorts
        them; a pandas ordered Categorical ``y`` carries its own order.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsamples. Pass an int for reproducible results.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        ``classes``, or ``np.unique(y)``: this order *is* the ordinal order.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Feature names, when ``X`` had string column names.
    rules_ : list of Rule
        The fitted rules in the order they were added (fewer than ``n_rules`` if
        in some iteration no condition decreased the impurity).
    rule_lower_, rule_upper_ : ndarray of shape (n_rules_fitted, n_features)
        The same rules as boxes: rule ``m`` covers ``x`` iff
        ``rule_lower_[m] <= x <= rule_upper_[m]`` (``-inf``/``inf`` where a
        feature has no condition).
    rule_response_ : ndarray of shape (n_rules_fitted,)
        ``learning_rate * alpha_m`` for each rule.
    thresholds_ : ndarray of shape (n_classes - 1,)
        ``theta_1 <= ... <= theta_{K-1}`` of eq. (8).
    train_score_ : ndarray of shape (n_rules_fitted,)
        The exponential rank loss ``log R(f_m)`` on the training set after each
        rule (natural log, to stay finite), for monitoring.

    Notes
    -----
    docs/design.md section 6. Pairs ``y_i > y_j`` are counted with multiplicity
    ``y_i - y_j``, as in the paper's O(KN) decomposition of section 3.2; the
    loss is thus the sum over ``k`` of the bipartite rank losses of
    ``{y <= k}`` vs ``{y > k}``. The impurities of eq. (10) and (12) are
    implemented with ``|sqrt(W>) - sqrt(W<)|`` and ``|W> - W<|``: the paper's
    ``+`` signs are typographical (its proofs of Theorems 1-2 use the
    difference). The regulariser of eq. (9) is the weight of one average pair,
    ``W / (number of pairs)``, the pairs counted with weight ``w_i w_j`` when
    ``fit`` gets ``sample_weight``.

    Sample weights: ``fit(X, y, sample_weight=w)`` weights the pair ``y_i > y_j``
    of the rank loss by ``w_i w_j`` and the terms of (8) by ``w_i``, so integer
    weights give the model of the repeated rows (exactly so with
    ``subsample=1.0``; with subsampling the draws differ) and zero weights the
    model without those rows. Scaling all weights by ``c`` acts like repeating
    every row ``c`` times: the conditions and thresholds do not move, the
    responses only through the regulariser of (9).

    Complexity: the attributes are sorted once, O(P N log N). Every rule
    filters the presorted rows to its subsample, O(P N), and each condition
    step costs O(P n K) for the ``n`` covered subsample examples (running sums
    along the presorted rows, compiled in :mod:`ensemble.rankrules._kernels`;
    no sort, no loop over pairs or thresholds). The covered set shrinks with
    every condition, so a rule costs O(P K) times the sum of its ``n`` (about 8
    to 9 subsample sizes on 50-feature data, growing slowly with ``N``) and
    ``fit`` grows linearly with ``N``: ``benchmarks/rankrules.py --part
    scaling``. ``predict_value`` costs O(N * total conditions).

    ``predict`` returns the class whose interval ``[theta_{k-1}, theta_k)``
    contains ``f(x)``. ``predict_proba`` inverts the link of the exponential
    loss, ``P(y > k | x) = sigmoid(2 (f(x) - theta_k))`` (a cumulative-link
    model; non-negative since the thresholds are ordered). Its *median* is the
    prediction; its argmax need not be. The probabilities are a by-product of
    the loss, not calibrated.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble import RankRules
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = np.digitize(X[:, 0] + 0.1 * rng.normal(size=200), [-0.5, 0.5]) + 1
    >>> model = RankRules(n_rules=50, random_state=0).fit(X, y)
    >>> model.classes_.tolist()
    [1, 2, 3]
    >>> bool(np.mean(model.predict(X) == y) > 0.8)
    True
    >>> print(model.rules_[0])  # doctest: +ELLIPSIS
    if x[0] ...

    Weighting the examples of the top class up makes it predicted more often:

    >>> w = np.where(y == 3, 5.0, 1.0)
    >>> heavy = RankRules(n_rules=50, random_state=0).fit(X, y, sample_weight=w)
    >>> bool(np.mean(heavy.predict(X) == 3) > np.mean(model.predict(X) == 3))
    True
    """

    _parameter_constraints: dict = {
        "n_rules": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0.0, 1.0, closed="right")],
        "subsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "technique": [StrOptions(set(TECHNIQUES))],
        "beta": [Interval(Real, 0.0, None, closed="neither")],
        "classes": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        n_rules: int = 500,
        learning_rate: float = 0.1,
        subsample: float = 0.5,
        technique: str = "sm",
        beta: float = 0.1,
        classes: ArrayLike | None = None,
        random_state=None,
    ):
        self.n_rules = n_rules
        self.learning_rate = learning_rate
        self.subsample = subsample
        self.technique = technique
        self.beta = beta
        self.classes = classes
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> "RankRules":
        """Grow ``n_rules`` rules on the exponential rank loss, then fit the thresholds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; infinite values are rejected. A missing value (NaN)
            fails every condition on its feature: a rule with a condition on a
            feature never covers a row missing it (a feature with missing values
            takes its ``>=`` conditions through a negated copy while rules grow).
        y : array-like of shape (n_samples,)
            Ordinal labels; their sorted unique values define the class order.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Non-negative, finite weights, not all zero; ``None`` gives every
            example weight 1. A pair ``y_i > y_j`` of the rank loss (7) weighs
            ``w_i w_j``, and the sums of the thresholds (8) and of the response
            (9) are weighted alike, so an integer weight acts as that many copies
            of the row and a zero weight as dropping it. The subsample of each
            rule is drawn from the rows of positive weight, uniformly as without
            weights, and its rows keep their weights.

        Returns
        -------
        self : RankRules

        Raises
        ------
        ValueError
            On invalid parameters, non-finite ``X``, mismatched lengths, fewer
            than two classes, invalid ``sample_weight`` (negative, NaN, infinite,
            wrong length or all zero), or a class of ``classes_`` whose examples
            all have zero weight.

        Notes
        -----
        Weights enter the per-class sums of section 3.2 (``a_i = w_i e^{-f_i}``,
        ``b_i = w_i e^{f_i}``), so the cost stays O(P N K) per condition. Scaling
        every weight by ``c`` scales every ``W`` by ``c^2``, which leaves the
        chosen conditions and the thresholds unchanged; the response (9) changes
        only through its regulariser, the weight of one average pair (see the
        class Notes), exactly as repeating every row ``c`` times would.

        Examples
        --------
        >>> RankRules(n_rules=5).fit([[0.0], [1.0], [2.0]], [1, 2, 3]).thresholds_.shape
        (2,)
        >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [1, 2, 2, 3]
        >>> weighted = RankRules(n_rules=5, subsample=1.0).fit(X, y, sample_weight=[1, 2, 0, 1])
        >>> repeated = RankRules(n_rules=5, subsample=1.0).fit(
        ...     [[0.0], [1.0], [1.0], [3.0]], [1, 2, 2, 3])
        >>> bool(np.allclose(weighted.predict_value(X), repeated.predict_value(X)))
        True
        """
        categories = ordered_categories(y)
        _refuse_text_columns(X)
        X, y = validate_rows(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        check_classification_targets(y)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        self.classes_, codes = encode_labels(y, self.classes if self.classes is not None else categories)
        n_classes = self.classes_.shape[0]
        absent = np.setdiff1d(np.arange(n_classes), codes)
        if absent.size and n_classes >= 2:
            raise ValueError(
                f"classes {self.classes_[absent].tolist()!r} do not occur in y; RankRules needs "
                "examples of every class in `classes` to fit its thresholds"
            )
        if n_classes < 2:
            raise ValueError(
                "RankRules needs at least 2 classes in y to rank examples; "
                f"got 1 class: {self.classes_[0]!r}."
            )
        # A zero-weight row is dropped outright rather than carried with weight 0:
        # it would still split runs of equal values in the presort (moving the
        # midpoint thresholds) and count in the subsample size.
        positive = sample_weight > 0
        if not positive.all():
            X, codes, sample_weight = X[positive], codes[positive], sample_weight[positive]
            weightless = np.setdiff1d(np.arange(n_classes), codes)
            if weightless.size:
                raise ValueError(
                    f"classes {self.classes_[weightless].tolist()!r} have only examples with "
                    "zero sample_weight; RankRules needs a positive weight in every class of "
                    "`classes_` to fit its thresholds"
                )
        log_weight = np.log(sample_weight)
        rng = check_random_state(self.random_state)
        n_samples, n_features = X.shape
        n_sub = min(n_samples, max(2, int(np.ceil(self.subsample * n_samples))))

        # The one presort of section 3.2; every rule reuses it. A missing value fails every
        # condition on its feature. It sorts last, so a ">=" cut (a suffix) of a feature with
        # missing values would cover them: such a feature takes "<=" conditions only, and a
        # negated copy of it, whose "<=" is its ">=" (folded back after growth, exactly).
        X_t = np.ascontiguousarray(X.T)
        grown, ge_allowed, gaps = _with_negated_copies(X_t)
        presorted = presort(grown, codes)
        work = workspace(grown.shape[0], n_sub, self.technique == "gb")

        pair_count = _pair_count(codes, n_classes, sample_weight)
        scores = np.zeros(n_samples)
        lower = np.full((self.n_rules, n_features), -np.inf)
        upper = np.full((self.n_rules, n_features), np.inf)
        responses = np.zeros(self.n_rules)
        losses = []
        n_fitted = 0
        for m in range(self.n_rules):
            if n_sub < n_samples:
                in_sub = np.zeros(n_samples, dtype=bool)
                in_sub[rng.choice(n_samples, size=n_sub, replace=False)] = True
            else:
                in_sub = np.ones(n_samples, dtype=bool)
            # Weights on the subsample, shifted so that exp() cannot overflow.
            a, b = _shifted_weights(scores, log_weight, in_sub)
            rule_lower, rule_upper, _, n_conditions = grow_rule(
                presorted, in_sub, codes, a, b, n_classes, technique=self.technique,
                beta=self.beta, tolerance=_RELATIVE_TOLERANCE,
                weight=sample_weight if self.technique == "gb" else None, work=work,
                ge_allowed=ge_allowed,
            )
            rule_lower, rule_upper = _fold_copies(rule_lower, rule_upper, gaps, n_features)
            if n_conditions == 0:
                logger.debug("iteration %d: no condition decreases the impurity", m)
                continue
            covered = _box_cover(X_t, rule_lower, rule_upper)
            # Response on all training examples (section 3.3), weights shifted so
            # that exp() cannot overflow; a common factor leaves (9) unchanged.
            a, b = _shifted_weights(scores, log_weight)
            w_gt, w_lt, w_total = rank_sums(codes, a, b, covered, n_classes)
            alpha = response_closed_form(w_gt, w_lt, eps=w_total / pair_count)
            response = self.learning_rate * alpha
            scores[covered] += response
            lower[n_fitted] = rule_lower
            upper[n_fitted] = rule_upper
            responses[n_fitted] = response
            n_fitted += 1
            losses.append(_log_rank_loss(scores, codes, n_classes, log_weight))
            if (m + 1) % 100 == 0:
                logger.debug("rule %d: log rank loss %.6g", m + 1, losses[-1])

        self.rule_lower_ = lower[:n_fitted]
        self.rule_upper_ = upper[:n_fitted]
        self.rule_response_ = responses[:n_fitted]
        self.rules_ = [
            _make_rule(lo, up, r)
            for lo, up, r in zip(self.rule_lower_, self.rule_upper_, self.rule_response_, strict=True)
        ]
        self.train_score_ = np.asarray(losses)
        self.thresholds_ = fit_thresholds(scores, codes, n_classes, sample_weight)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value fails every condition on its feature
        return tags

    @property
    def decision_function(self):
        """Not provided: the ordinal score is :meth:`predict_value` (renamed 2026-12-08).

        scikit-learn reads ``decision_function`` as per-class values (or, for two classes,
        one value compared with 0), and its consumers (``CalibratedClassifierCV``) prefer it
        to ``predict_proba``: the 1-D ordinal score under that name calibrated RankRules
        into a model of one class, silently. So ``hasattr(model, "decision_function")`` is
        False, and a call says where the score went.
        """
        raise AttributeError("RankRules has no decision_function: its 1-D ordinal score f(x), compared with "
                             "thresholds_, is predict_value (scikit-learn reads decision_function as per-class "
                             "values)")

    def predict_value(self, X: ArrayLike) -> NDArray:
        """The score ``f(x) = sum_m response_m * Phi_m(x)`` (higher means a higher class).

        A 1-D ordinal score, compared with ``thresholds_`` to get the class, as the
        certified forest's and boosting's ``predict_value`` is cut at their
        ``cut_points_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> model = RankRules(n_rules=5, random_state=0).fit([[0.0], [1.0], [2.0]], [1, 2, 3])
        >>> model.predict_value([[0.0], [2.0]]).shape
        (2,)
        """
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, dtype=np.float64, ensure_all_finite="allow-nan")
        return _rule_scores(X, self.rule_lower_, self.rule_upper_, self.rule_response_)

    def predict(self, X: ArrayLike) -> NDArray:
        """Class ``k`` with ``theta_{k-1} <= f(x) < theta_k``; always a member of ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> model = RankRules(n_rules=20, random_state=0).fit([[0.0], [1.0], [2.0]], [1, 2, 3])
        >>> model.predict([[0.0], [2.0]]).tolist()
        [1, 3]
        """
        scores = self.predict_value(X)
        return self.classes_[np.searchsorted(self.thresholds_, scores, side="right")]

    def predict_proba(self, X: ArrayLike) -> NDArray:
        """Class probabilities of the cumulative model ``P(y > k) = sigmoid(2 (f - theta_k))``.

        The median of each row is ``predict``'s class (up to exact ties); the
        argmax need not be.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.

        Examples
        --------
        >>> model = RankRules(n_rules=5, random_state=0).fit([[0.0], [1.0], [2.0]], [1, 2, 3])
        >>> float(model.predict_proba([[1.0]]).sum().round(12))
        1.0
        """
        return cumulative_proba(self.predict_value(X), self.thresholds_)

    def format_rules(self, feature_names: ArrayLike | None = None) -> str:
        """One line per rule, ``if <conditions> then f += <response>``, then the thresholds.

        Parameters
        ----------
        feature_names : sequence of str, optional
            Defaults to ``feature_names_in_`` when ``fit`` saw named columns.

        Returns
        -------
        str

        Examples
        --------
        >>> model = RankRules(n_rules=3, random_state=0).fit([[0.0], [1.0], [2.0]], [1, 2, 3])
        >>> print(model.format_rules(["x"]).splitlines()[-1])  # doctest: +ELLIPSIS
        thresholds: ...
        """
        check_is_fitted(self)
        if feature_names is None:
            feature_names = getattr(self, "feature_names_in_", None)
        lines = [f"{m + 1:>4}: {rule.format(feature_names)}" for m, rule in enumerate(self.rules_)]
        lines.append("thresholds: " + ", ".join(f"{t:.6g}" for t in self.thresholds_))
        return "\n".join(lines)


def _with_negated_copies(X_t: NDArray) -> tuple[NDArray, NDArray, NDArray]:
    """The attributes rules are grown on: ``X_t`` and a negated copy of every attribute with
    missing values, which may take ``<=`` conditions only (``ge_allowed`` false); returns
    ``(attributes, ge_allowed, attributes with missing values)``."""
    gaps = np.flatnonzero(np.isnan(X_t).any(axis=1))
    ge_allowed = np.concatenate([np.ones(X_t.shape[0], dtype=bool), np.zeros(gaps.size, dtype=bool)])
    ge_allowed[gaps] = False
    if not gaps.size:
        return X_t, ge_allowed, gaps
    return np.ascontiguousarray(np.vstack([X_t, -X_t[gaps]])), ge_allowed, gaps


def _fold_copies(lower: NDArray, upper: NDArray, gaps: NDArray, n_features: int) -> tuple[NDArray, NDArray]:
    """A rule grown by :func:`_with_negated_copies` in the features: ``-x <= s`` is ``x >= -s``
    (negation is exact, and a missing x fails both)."""
    if not gaps.size:
        return lower, upper
    lower = lower[:n_features].copy()
    lower[gaps] = np.maximum(lower[gaps], -upper[n_features:])
    return lower, upper[:n_features].copy()


def _box_cover(X_t, lower, upper):
    """Whether each column of ``X_t`` lies in the box, checking the bounded features only."""
    covered = np.ones(X_t.shape[1], dtype=bool)
    for p in np.flatnonzero(np.isfinite(lower) | np.isfinite(upper)):
        covered &= (X_t[p] >= lower[p]) & (X_t[p] <= upper[p])
    return covered


def _shifted_weights(scores, log_weight, mask=None):
    """``w exp(-f)`` and ``w exp(f)`` each divided by its maximum over ``mask`` (no overflow).

    The weights enter as ``log w`` inside the exponent, so that neither extreme
    weights nor extreme scores overflow; with unit weights ``log w = 0`` and the
    result is bit for bit the unweighted one.
    """
    log_a = log_weight - scores
    log_b = log_weight + scores
    ref_a = log_a if mask is None else log_a[mask]
    ref_b = log_b if mask is None else log_b[mask]
    return np.exp(log_a - ref_a.max()), np.exp(log_b - ref_b.max())


def _totals(codes, a, b, n_classes):
    """``sum a over y > k`` and ``sum b over y <= k`` over a set of examples."""
    covered = np.ones(codes.shape[0], dtype=bool)
    w_plus, w_minus, _, _ = class_threshold_sums(codes, a, b, covered, n_classes)
    return w_plus, w_minus


def _pair_count(codes, n_classes, weight):
    """Weighted number of pairs, multiplicity ``y_i - y_j``: sum_k w(y > k) w(y <= k)."""
    counts = np.bincount(codes, weights=weight, minlength=n_classes)
    below = np.cumsum(counts)[:-1]
    return float(below @ (counts.sum() - below))


def _log_rank_loss(scores, codes, n_classes, log_weight):
    """Log of the weighted rank loss ``sum_k sum_{y_i>k>=y_j} w_i w_j exp(f_j - f_i)``."""
    a, b = _shifted_weights(scores, log_weight)
    plus, minus = _totals(codes, a, b, n_classes)
    shift = (log_weight - scores).max() + (log_weight + scores).max()
    return float(np.log(plus @ minus) + shift)


def _make_rule(lower, upper, response):
    conditions = []
    for p in range(lower.shape[0]):
        if np.isfinite(lower[p]):
            conditions.append(Condition(p, ">=", float(lower[p])))
        if np.isfinite(upper[p]):
            conditions.append(Condition(p, "<=", float(upper[p])))
    return Rule(tuple(conditions), float(response))


def _rule_scores(X, lower, upper, responses):
    """Sum of the responses of the rules covering each row, from the finite bounds only."""
    n_rules = responses.shape[0]
    scores = np.zeros(X.shape[0])
    if n_rules == 0:
        return scores
    # Flatten every finite bound into one condition list, grouped by rule, so that
    # all rules are evaluated with a few array operations per block of rows.
    rule_lo, feat_lo = np.nonzero(np.isfinite(lower))
    rule_up, feat_up = np.nonzero(np.isfinite(upper))
    rule_of = np.concatenate([rule_lo, rule_up])
    feature = np.concatenate([feat_lo, feat_up])
    threshold = np.concatenate([lower[rule_lo, feat_lo], upper[rule_up, feat_up]])
    is_lower = np.concatenate([np.ones(rule_lo.size, bool), np.zeros(rule_up.size, bool)])
    order = np.argsort(rule_of, kind="stable")
    rule_of, feature, threshold, is_lower = (
        rule_of[order], feature[order], threshold[order], is_lower[order]
    )
    starts = np.searchsorted(rule_of, np.arange(n_rules))
    n_conditions = rule_of.size
    block = max(1, _PREDICT_BLOCK // max(n_conditions, 1))
    for start in range(0, X.shape[0], block):
        values = X[start:start + block, feature]
        holds = np.where(is_lower, values >= threshold, values <= threshold)
        failures = np.add.reduceat((~holds).astype(np.int32), starts, axis=1)
        scores[start:start + block] = (failures == 0) @ responses
    return scores


def _refuse_text_columns(X: ArrayLike) -> None:
    """A clear error for a DataFrame's text or category columns, which RankRules' numeric conditions cannot read."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None:
        return
    text = [str(name) for name, (_, column) in zip(X.columns, X.items(), strict=True) if _is_text_column(column)]
    if text:
        raise ValueError(f"RankRules reads numeric features only; X's columns {', '.join(map(repr, text))} hold text "
                         "or categories: code them as numbers first (OTreeBagger and the certified forest and boosting "
                         "code text columns themselves)")
