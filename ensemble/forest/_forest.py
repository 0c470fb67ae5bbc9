"""The certified consistent forest: bagged trees with distinct thresholds, rounded mean.

docs/design.md section 9. Consistency comes from a bound on how much the mean of the trees
can move near any point, not from fusing partitions, so the model works in any
dimension.
"""

from __future__ import annotations

import logging
import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import sklearn
from numpy.typing import ArrayLike, NDArray
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.parallel import delayed

from ensemble.base._docs import fill_doc
from ensemble.base._estimator import (MAX_SEED, SKLEARN_ROUTES_MISSING, OrdinalEnsemble, TreeSpec, tree_feature_importances)
from ensemble.base._parallel import run_jobs
from ensemble.base._voting import UNIT_BITS, cut_spacing, fit_proba_scale
from ensemble.certificates._certificates import (MAX_LOCALISED_PAIRS, SumCertificate, gap_pairs, sum_certificate,
                                                 tree_nodes)
from ensemble.certificates._sums import SumOfTrees
from ensemble.certificates._thresholds import (RANK_GAP_ULPS, Gaps, Ranks, separate_thresholds, set_thresholds,
                                               spread_thresholds, thresholds_of, warn_crowded)
from ensemble.forest._gap_room import move_thresholds_into_room
from ensemble.forest._monotone import isotonic_leaf_values
from ensemble.forest._resolution import capped_leaf_values, one_threshold_per_gap
from ensemble.forest._split_leaves import split_capped_leaves, undo_splits
from ensemble.forest._trees import (_OutOfBag, _TreeJob, _Voter, _data_in_space, _fit_tree, clipped_index,
                                    float_reach_in_space, index_resolves_floats)
from ensemble.spaces._spaces import GroupSpace
from trees import CRITERIA

logger = logging.getLogger(__name__)

__all__ = ["ConsistentForestClassifier"]

_MIN_AUTO_TREES = 100
#: Grid of the isotonic projection of monotone trees' values: 1/16 of a class.
_ISOTONIC_STEP = 2.0 ** -4
_ORDINAL_CRITERIA = tuple(CRITERIA)
FOREST_CRITERIA = ("squared_error",) + _ORDINAL_CRITERIA


def forest_certificate(estimators: list, voters: list, n_features: int, countable: NDArray[np.bool_],
                       resolution: NDArray[np.float64] | None = None, *, exact: bool = False,
                       spacing: int | None = None, cache: dict | None = None,
                       envelopes: bool = False, grid=None, pairs=None) -> SumCertificate:
    """Oscillation certificate of a fitted forest (:func:`ensemble.certificates._certificates.sum_certificate`).

    The forest's trees are read with their integer leaf values (``voters``);
    ``spacing`` defaults to ``n_trees * unit``, the gap of the half-way cuts of
    ``floor(mean + 1/2)`` (docs/design.md section 9). With ``envelopes`` the trees
    enter the sum through their monotone envelopes, which jump only across their
    own thresholds but between any two of their leaf values: each tree's jump is
    then its value range, never the exact jump between touching leaves. With a
    ``grid`` the gaps between training values are checked too (docs/design.md
    section 13).
    """
    if spacing is None:
        spacing = len(estimators) * (1 << UNIT_BITS)
    return sum_certificate([tree_nodes(tree) for tree in estimators], [v.value for v in voters], n_features,
                           countable, spacing, resolution, exact=exact, cache=cache, ranges_only=envelopes,
                           grid=grid, pairs=pairs)


@fill_doc
class ConsistentForestClassifier(SumOfTrees, OrdinalEnsemble):
    """Bagged trees with distinct thresholds whose rounded mean is certified consistent.

    Each of the B trees predicts a value in [0, K - 1]: the mean class index of its
    leaf (a regression tree on the class index, or an ordinal tree of
    :mod:`trees`). Every split threshold is drawn uniformly inside the gap between
    the two training values it separates, and drawn again where it would coincide
    with another tree's threshold on the same feature, so that at most one tree per
    feature has a boundary through any point. The prediction cuts the mean of the
    trees' values into classes: half-way, ``floor(mean + 1/2)``, or at cut points
    learned out of bag. Near any point the mean moves by at most
    ``bound = (sum of the n largest per-tree jumps J_t) / B``, n the number of trees
    that can have a boundary through one point (d when the thresholds are
    distinct, more where float64 leaves no room to separate them); when the bound is at
    most the smallest gap between cut points (1 for the half-way cuts) no two
    neighbouring points get classes two apart (docs/design.md section 9). No partition is
    fused, so the model works in any dimension.

    Parameters
    ----------
    n_estimators : int or "auto", default="auto"
        Number of trees B. ``"auto"`` grows 100 trees, then more while the bound
        exceeds 1, so the model is always certified (B >= d (K - 1) suffices for
        any data; the measured jumps usually certify B = 100). An integer is
        respected; :meth:`is_consistent` then tells whether it is certified, and
        ``fit`` warns when it is not.
    criterion : {"squared_error", "ogini", "gini", "entropy", "wig", "ranking"}, \
default="squared_error"
        ``"squared_error"``: scikit-learn's regression tree on the class index;
        the others: :class:`trees.OrdinalTreeClassifier` with that splitting
        criterion, its leaf value the mean class index. Measured on 14 data sets
        (``benchmarks/forest_criteria.py``): squared error, ogini, gini, entropy
        and wig within 0.006 of each other in mean MAE (ogini 0.578, squared
        error 0.583; median paired difference 0.002), ranking 0.621. The default
        is squared error because its model is 1.3x the size of a
        ``RandomForestRegressor`` with the same trees, against 3.1-3.5x for the
        others, which store each leaf's class distribution.
    max_depth : int or None, default=None
        Maximum depth of the trees.
    min_samples_leaf : int, default=1
        Minimum number of bootstrap rows in a leaf.
    max_features : int, float, {"sqrt", "log2"} or None, default=1.0
        Features drawn per split, as in scikit-learn's forests.
    bootstrap : bool, default=True
        Grow every tree on a bootstrap sample (else on all rows; the trees then
        differ only through ``max_features`` and their thresholds).
    cut_points : {"auto", "oob", "half"}, default="auto"
        Where the mean of the trees' values is cut into classes. ``"half"``:
        half-way between classes, ``floor(mean + 1/2)`` (docs/design.md section 9).
        ``"oob"``: cut points learned on the out-of-bag means of the training
        rows (each cut minimises the absolute error of its binary decision "class
        above k"), which undoes the mean's pull towards the middle classes; they
        are kept at least ``consistency_bound_`` apart, and
        ``n_estimators="auto"`` grows enough trees for the learned spacing (at
        most about twice the trees of ``"half"``). ``"auto"`` is ``"oob"`` with
        ``bootstrap=True``, else ``"half"``.
    {categorical_features}
    monotonic_cst : array-like of int, dict or None, default=None
        Monotone constraints: +1 (a larger value never lowers the class), -1
        or 0 per feature, or a dict by feature name. Every tree is monotone, so
        their mean and its cut classes are monotone, and so are the cumulative
        probabilities of :meth:`predict_proba`; certified by
        :meth:`is_monotone`. A categorical feature cannot be constrained.
    monotonic_method : {"envelope", "isotonic", "basic"}, default="envelope"
        How a tree is made monotone. ``"envelope"``: grown free, and read
        through its monotone envelope: half of the trees give at x the largest
        leaf value below x along the constrained features (the other features
        held), the other half the smallest above x
        (:func:`ensemble.base._kernels.tree_envelope`). A tree's values change only
        where a violation is, and only on the part of a leaf the violation
        reaches, so the forest loses far less accuracy on monotone data
        (``benchmarks/monotone.py``: synthetic 10 features, free 0.664,
        envelope 0.70, isotonic 0.85); the certificate counts each tree's value
        range as its jump. ``"isotonic"``: grown free, then its leaf
        values replaced by their isotonic projection onto the order of its
        leaves' face contacts along the constrained features (the monotone
        values closest in weighted absolute deviation, on a grid of 1/16 of a
        class; :func:`ensemble.forest._monotone.isotonic_leaf_values`). ``"basic"``:
        grown under scikit-learn's rule (children's values clipped to bounds
        passed down), which restricts deep trees far more: on monotone data
        (``benchmarks/monotone.py``) it cost the forest 0.12 MAE against the
        free model, the projection about none.
    monotonic_space : {"auto", "index", "axes"}, default="auto"
        Where two or more features are constrained: ``"axes"`` grows the trees
        on the features themselves; ``"index"`` replaces the constrained
        features by one column, their monotone index (a combination whose
        weight on each has its constraint's sign and the size of its
        correlation with the class index, 0 where that goes against the
        constraint: :meth:`GroupSpace.monotone_index`), made monotone by
        ``monotonic_method`` along that one column (the map is linear, so the
        model is monotone along every constrained feature and consistent in
        the features, docs/design.md section 9). The index suits data whose
        constrained features act through one score (``benchmarks/monotone.py``:
        synthetic 10 features, test MAE 0.55 against 0.70 on the axes and 0.66
        unconstrained); the axes suit interactions, such as a class that
        follows the smaller of two features. ``"auto"`` grows the first
        round of trees (100 under ``n_estimators="auto"``) each way and lets
        the one whose out-of-bag predictions err less
        (``monotonic_space_scores_``) grow on, at up to twice the fit time; without
        ``bootstrap`` (no out-of-bag rows) it takes the index. The axes are
        kept where no index can be formed: a constrained feature with missing
        values, or none following its direction on the training rows (with a
        warning when ``"index"`` was asked for).
    resolution : float, array-like or None, default=None
        r-consistency (docs/design.md section 4c): no classes two apart between points
        closer than r_f along every feature (one value for all features or one
        per feature, in the features' units). The thresholds that fall in one
        gap between training values are then spread evenly across it (not
        drawn at random), and the bound counts the trees with a threshold in
        one window of width r_f and the jumps between r-neighbouring leaves;
        ``n_estimators="auto"`` grows the trees this needs. ``None`` is the
        paper's pointwise consistency.
    {consistency}
    {classes}
    {class_weight}
    {n_jobs}
    {random_state}
    verbose : int, default=0
        ``verbose >= 1`` shows a progress bar over the trees.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels in ordinal order.
    n_classes_ : int
        Number of classes K.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.
    estimators_ : list of tree estimators
        The fitted trees, thresholds moved (each accepted by :func:`trees.leaf_boxes`).
        Under ``monotonic_method="envelope"`` the model reads them through their
        envelopes: a tree's own ``predict`` and :meth:`apply` give its free leaves.
        With a monotone index (``space_``) they split ``space_.transform(X)``.
    space_ : GroupSpace or None
        The coordinates the trees split: the monotone index (its
        ``projected`` features and ``weights``) followed by the other features
        (``kept``), or ``None``: the features themselves.
    monotonic_space_ : {"index", "axes"} or None
        Where the constrained features went (``None`` with fewer than two).
    monotonic_space_scores_ : dict or None
        With ``monotonic_space="auto"`` where both spaces were grown: the
        out-of-bag MAE of each after the first round of trees (``"index"``,
        ``"axes"``); the smaller grew on, the index on a tie.
    n_estimators_ : int
        The number of trees B actually grown.
    consistency_bound_ : float
        ``(sum of the n_boundaries_ largest jumps) / B`` (docs/design.md section
        9), and under ``consistency="data"`` the largest gap load (section 13) if
        larger, divided by the smallest gap between consecutive cut points (1
        class for ``cut_points="half"``): certified when at most 1.
    consistency_notion_ : {"data", "pointwise"} or None
        The notion the fit certified: ``"data"``, consistency at the data's
        resolution (docs/design.md section 13); ``"pointwise"``, only the paper's;
        None, neither.
    cut_points_ : ndarray of shape (n_classes_ - 1,)
        The mean value from which each class above the first starts.
    n_boundaries_ : int
        The largest number of trees that can have a boundary through one point
        (one per split feature when the thresholds are distinct).
    threshold_multiplicity_ : ndarray of shape (n_features_in_,)
        Per feature, the largest number of trees sharing one threshold (0 for a
        feature no tree splits on, or a categorical one).
    categorical_features_ : ndarray of int
        The features treated as categorical (given, or found by ``"auto"``).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Mean of the trees' impurity-decrease importances, summing to 1.

    Notes
    -----
    Fitting costs B tree fits plus O(n depth) per tree to find the threshold gaps;
    the certificate sorts the thresholds of each feature and, only when the value
    ranges of the trees do not already certify, computes the jumps J_t by a pruned
    search of each tree's touching leaves. Tree values are integer multiples of
    2**-20, so the mean, its rounding and the bound are exact.

    Examples
    --------
    >>> from ensemble import ConsistentForestClassifier
    >>> from ensemble.datasets import make_synthetic_i
    >>> X, y = make_synthetic_i(300, random_state=0)
    >>> model = ConsistentForestClassifier(random_state=0).fit(X, y)
    >>> model.is_consistent(), model.n_estimators_
    (True, 100)
    >>> model.predict(X[:3]).shape
    (3,)
    """

    def _trees_nodes(self) -> list[tuple]:
        return [tree_nodes(tree) for tree in self.estimators_]

    def _trees_values(self) -> list[NDArray[np.int64]]:
        return [voter.value for voter in self._voters]

    @property
    def _sum_scale(self) -> int:
        return self.n_estimators_ << UNIT_BITS

    @property
    def _supports_missing(self) -> bool:
        # Every criterion's trees learn where missing values go, and the certificates route
        # them the same way. scikit-learn's trees before 1.8 route NaN at prediction unlike
        # in training when given sample weights (the forest's bootstrap), so their leaf
        # statistics would not be those of the rows that reach the leaf.
        return self.criterion != "squared_error" or SKLEARN_ROUTES_MISSING

    def _missing_hint(self) -> str:
        return ("criterion='squared_error' needs scikit-learn >= 1.8 for missing values (older trees send NaN "
                f"at prediction elsewhere than in training; installed: {sklearn.__version__}); upgrade "
                "scikit-learn, use an ordinal criterion such as criterion='ogini', or fill them in first")

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "criterion": [StrOptions(set(FOREST_CRITERIA))],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "bootstrap": ["boolean"],
        "cut_points": [StrOptions({"auto", "half", "oob"})],
        "monotonic_method": [StrOptions({"envelope", "isotonic", "basic"})],
        "monotonic_space": [StrOptions({"auto", "index", "axes"})],
        **OrdinalEnsemble._parameter_constraints,
    }

    def __init__(
        self,
        *,
        n_estimators: int | str = "auto",
        criterion: str = "squared_error",
        max_depth: int | None = None,
        min_samples_leaf: int = 1,
        max_features: int | float | str | None = 1.0,
        bootstrap: bool = True,
        cut_points: str = "auto",
        categorical_features: ArrayLike | str | None = "auto",
        monotonic_cst: ArrayLike | dict | None = None,
        monotonic_method: str = "envelope",
        monotonic_space: str = "auto",
        resolution: float | ArrayLike | None = None,
        consistency: str = "data",
        classes: ArrayLike | None = None,
        class_weight: str | dict | None = None,
        n_jobs: int | None = None,
        random_state: Any = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.cut_points = cut_points
        self.categorical_features = categorical_features
        self.monotonic_cst = monotonic_cst
        self.monotonic_method = monotonic_method
        self.monotonic_space = monotonic_space
        self.resolution = resolution
        self.consistency = consistency
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "ConsistentForestClassifier":
        """Grow the trees, separate their thresholds and certify the rounded mean.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; NaN and infinite values are rejected.
        y : array-like of shape (n_samples,)
            Ordinal class labels (order: ``classes`` or sorted).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative finite weights; each tree is grown with (bootstrap
            multiplicity x weight). A row of weight 0 influences neither the
            trees nor the threshold gaps.

        Returns
        -------
        self : ConsistentForestClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            On invalid data or parameters, a single class, a bad
            ``categorical_features`` or a bad ``sample_weight``.
        """
        data = self._validate_training(X, y, sample_weight)
        spaces = self._candidate_spaces(data)
        self.monotonic_space_scores_ = None
        growths = {name: self._grow_in_space(data, name, space) for name, space in spaces.items()}
        if len(growths) > 1:
            # "auto" with an index to offer: the first round of trees in each space, then the
            # space whose out-of-bag predictions err less grows on (each growth keeps its own
            # state on the model: the kept one is put back before it resumes).
            states, scores = {}, {}
            for name, growth in growths.items():
                scores[name] = next(growth)
                states[name] = dict(vars(self))
            chosen = "axes" if scores["axes"] < scores["index"] else "index"
            vars(self).update(states[chosen])
            self.monotonic_space_scores_ = scores
            logger.info("monotonic_space='auto': out-of-bag MAE %s, chose %s", scores, chosen)
        else:
            chosen = next(iter(growths))
        for _ in growths[chosen]:  # grow until certified
            pass
        self._warn_uncertified(*vars(self).pop("_last_fit"))  # a certificate, not a fitted attribute
        self._warn_if_one_class(data)
        return self

    def _candidate_spaces(self, data) -> dict:
        """The spaces the forest may grow its trees in: ``{"index"|"axes"|None: GroupSpace or None}``.

        An index needs two or more constrained features without missing values
        (:meth:`GroupSpace.monotone_index`); ``"auto"`` offers both only where
        out-of-bag rows can choose (``bootstrap=True``).
        """
        if data.monotonic is None or np.count_nonzero(data.monotonic) < 2:
            return {None: None}
        if self.monotonic_space == "axes":
            return {"axes": None}
        index = None
        missing = np.isnan(data.X[:, data.monotonic != 0]).any()
        if not missing:
            rows = np.arange(data.n_samples) if data.sample_weight is None else np.flatnonzero(data.sample_weight > 0)
            index = clipped_index(data.X, data.y, rows, data.monotonic)
            if index is not None and self.monotonic_space == "auto" and not index_resolves_floats(index, data.X[rows]):
                # One float step of a feature would move the index across many thresholds at once.
                return {"axes": None}
        if index is None:
            if self.monotonic_space == "index":
                why = ("a constrained feature has missing values" if missing else
                       "no constrained feature follows its direction on the training rows")
                warnings.warn(f"monotonic_space='index' cannot form the monotone index ({why}): the trees split "
                              "the features' own axes", UserWarning, stacklevel=3)
            return {"axes": None}
        if self.monotonic_space == "index" or not self.bootstrap:
            return {"index": index}
        return {"axes": None, "index": index}

    def _grow_in_space(self, data, name: str | None, space: GroupSpace | None):
        """Grow and certify the forest on the coordinates of ``space`` (``name``), in rounds.

        A generator: it yields the out-of-bag MAE of the first round of trees (``inf``
        without out-of-bag rows), and when resumed grows on until the bound certifies.
        """
        self.monotonic_space_, self.space_ = name, space
        # On the index, every certificate covers one float step of any feature (section 9, in floats).
        self._float_reach = None if space is None else float_reach_in_space(space)
        data = _data_in_space(data, space)
        self._split_mask = data.categorical
        # The data's resolution is certified on the features' own axes (docs/design.md section 13).
        self._grid = data.grid
        rng = check_random_state(self.random_state)
        job, X_walk = self._tree_job(data)
        auto = self.n_estimators == "auto"
        target = _MIN_AUTO_TREES if auto else int(self.n_estimators)
        # B >= d (K - 1) certifies any forest with distinct thresholds and half-way cuts (at
        # most twice that with learned cuts): a cap of twice more only binds with a resolution.
        cap = max(4 * int((~data.categorical).sum()) * (self.n_classes_ - 1), 2 * _MIN_AUTO_TREES)
        jumps: dict = {}  # exact J_t by tree, kept across the rounds of growth
        self.estimators_, self._voters = [], []
        self._grown_values, self._oob_leaves = [], []
        self._too_many_pairs = False
        oob = _OutOfBag(data.y, np.zeros(data.n_samples, np.int64), np.zeros(data.n_samples, np.int64),
                        data.sample_weight)
        countable = ~data.categorical
        certify_at = data.resolution  # the resolution certified; 0 when r cannot be reached
        self._given_up_resolution = False
        first_round = True
        while True:
            if target > len(self.estimators_):
                self._grow(target - len(self.estimators_), rng, job, countable, oob)
                if data.resolution is not None:
                    spread_thresholds(self.estimators_, X_walk, countable, rng,
                                       float32=self.criterion == "squared_error")
                    jumps.clear()  # every tree's thresholds moved: its contacts may have changed
                    if self._isotonic is not None:  # and so may the order of its leaves
                        self._voters = [v._replace(value=self._project(t, v))
                                        for t, v in zip(self.estimators_, self._voters, strict=True)]
            n_trees = len(self.estimators_)
            _, wanted = self._cut_points(None, n_trees, oob)
            certificate = self._certificate(wanted, certify_at, cache=jumps)
            self._cuts, _ = self._cut_points(certificate.bound, n_trees, oob)
            if first_round:
                first_round = False
                yield self._oob_error(oob, n_trees)
            if not auto or certificate.bound <= wanted:
                break
            # Enough trees for the wanted cut spacing; new trees may raise the bound again.
            target = max(n_trees + 1, -(-(certificate.bound * n_trees) // wanted))
            if target > cap:
                if certify_at is None:
                    break
                # With r-consistency, trees sharing gaps narrower than r keep the bound up however
                # many there are: certify pointwise consistency (r = 0) instead, and say so.
                certify_at, target, self._given_up_resolution = None, n_trees, True
                jumps.clear()
                continue
            logger.info("bound %d > spacing %d with %d trees: growing %d", certificate.bound, wanted,
                        n_trees, target)
        # The data's resolution, once the trees are final: their steps across the gaps capped (smoothing
        # only brings leaves closer, which the pointwise bound is checked on), cut points the largest load apart.
        certificate = None
        if self._smoothing():
            self._smooth(countable, oob, job.X, rng, job.sample_weight)
            jumps.clear()  # the values moved: so may the exact jumps
        elif self._spreading_only():
            grown = [np.array(tree_nodes(tree)[3], dtype=np.float64) for tree in self.estimators_]
            self._spread_into_room(countable, self._gap_budget(n_trees), job.X, job.sample_weight, rng)
            jumps.clear()
            _, wanted = self._cut_points(None, n_trees, oob)
            certificate = self._certificate(wanted, certify_at, cache=jumps, grid=self._grid)
            if not certificate.certified:
                # Not enough room for the data's resolution: the moves bought nothing, undo them.
                for tree, thresholds in zip(self.estimators_, grown, strict=True):
                    set_thresholds(tree, thresholds)
                jumps.clear()
                certificate = None
        if certificate is None:
            _, wanted = self._cut_points(None, n_trees, oob)
            # A pointwise forest only names the notion its trees reach: the data's verdict at its cut points (the
            # loop's, from the same pointwise bound), not the loads, which nothing of it reads.
            pointwise = self.consistency == "pointwise"
            certificate = self._certificate(cut_spacing(self._cuts) if pointwise else wanted, certify_at, cache=jumps,
                                            grid=self._grid, pairs=self.__dict__.pop("_pairs", None),
                                            verdict_only=pointwise)
        self._set_cuts(self._cut_points(self._enforced(certificate), n_trees, oob)[0], n_trees << UNIT_BITS)
        del self._grown_values, self._oob_leaves
        self._store_certificate(certificate)
        self._proba_scale = self._fit_proba_scale(data, oob) if data.monotonic is not None else None
        self._last_fit = (certificate, auto, cap)

    def _oob_error(self, oob: "_OutOfBag", n_trees: int) -> float:
        """Mean absolute error of the cut out-of-bag means (weighted), ``inf`` when no row is out of bag."""
        values, y, weight = oob.means(n_trees)
        if values.shape[0] == 0:
            return float("inf")
        return float(np.average(np.abs(self._class_index(values) - y), weights=weight))

    def _check_params(self) -> None:
        self._cut_rule = ("oob" if self.bootstrap else "half") if self.cut_points == "auto" else self.cut_points
        if self._cut_rule == "oob" and not self.bootstrap:
            raise ValueError("cut_points='oob' learns from out-of-bag rows and needs bootstrap=True")

    def _tree_job(self, data) -> tuple:
        """The frozen job the tree workers share, and the raw rows of positive weight."""
        keep = slice(None) if data.sample_weight is None else data.sample_weight > 0
        # Trees grow on the ranks of the training values (units do not matter); thresholds
        # go into the float64 gaps between the raw values of the rows of positive weight.
        # Values too close for many distinct thresholds share a rank: no tree splits between them.
        ranks = Ranks.fit(data.X[keep], min_gap_ulps=RANK_GAP_ULPS)
        warn_crowded(self, ranks.crowded(), data.categorical)
        X_fit = ranks.transform(data.X)
        if self.criterion != "squared_error":
            X_fit = X_fit.astype(np.float64)
        self._constrained = data.monotonic is not None
        # "isotonic": free trees whose leaf values are projected once their thresholds are final.
        self._isotonic = data.monotonic if self.monotonic_method == "isotonic" else None
        # "envelope": free trees read through their monotone envelopes (upper for even
        # trees, lower for odd ones), so their leaf values stay as grown.
        envelope = data.monotonic is not None and self.monotonic_method == "envelope"
        self._envelope = data.monotonic.astype(np.int64) if envelope else None
        basic = data.monotonic is not None and self.monotonic_method == "basic"
        spec = TreeSpec(self.criterion, self.max_depth, self.min_samples_leaf, self.max_features, self.n_classes_,
                        monotonic_cst=data.monotonic.astype(np.int64) if basic else None)
        job = _TreeJob(spec, self.bootstrap, self._cut_rule, data.X, X_fit,
                       np.ascontiguousarray(X_fit[keep], dtype=np.float64), ranks, np.isnan(data.X).any(axis=0),
                       data.y, data.sample_weight)
        return job, np.ascontiguousarray(data.X[keep])

    def _warn_uncertified(self, certificate: SumCertificate, auto: bool, cap: int) -> None:
        n_trees = len(self.estimators_)
        if self.consistency == "data" and self._certified and self.consistency_notion_ != "data":
            why = ("its trees split a monotone index" if self.space_ is not None else
                   f"its trees have more than {MAX_LOCALISED_PAIRS} face pairs, too many to cap their steps"
                   if self.__dict__.get("_too_many_pairs") else
                   "monotone trees keep their values (capping their steps could break their order), and "
                   "their thresholds found too few gaps with room for their value ranges")
            warnings.warn(
                "ConsistentForestClassifier is certified pointwise only, not at the data's resolution: "
                f"{why}, and a move inside one gap between training values may change the class by two "
                "(consistency_notion_='pointwise'); ConsistentGradientBoostingClassifier(monotonic_cst=...) "
                "and OTreeBagger(projection='none', monotonic_cst=...) certify it",
                UserWarning,
                stacklevel=3,
            )
        if self._given_up_resolution and self._certified:
            warnings.warn(
                f"ConsistentForestClassifier is not certified at the given resolution (it would need "
                f"more than {cap} trees: thresholds of many trees lie within r_f of one another), only at "
                f"r = 0 (consistency_notion_={self.consistency_notion_!r}, consistency_bound_="
                f"{self.consistency_bound_:.3f}); use a smaller resolution, or "
                "OTreeBagger(resolution=...) whose relabelling enforces it",
                UserWarning,
                stacklevel=3,
            )
        if not self._certified:
            if auto and self.resolution is not None:
                advice = (f"the bound would need more than {cap} trees; with resolution, thresholds of many "
                          "trees within r_f of one another keep it up: use a smaller resolution, or "
                          "OTreeBagger(resolution=...) whose relabelling enforces it")
            elif auto:
                shared = np.flatnonzero(self.threshold_multiplicity_ > 1)
                advice = (f"the bound would need more than {cap} trees: trees share thresholds on feature(s) "
                          f"{shared.tolist()} (threshold_multiplicity_), where training values are too close for "
                          "float64 to separate them; rescale or centre those features, or declare them categorical")
            else:
                needed = -(-certificate.bound * n_trees // max(cut_spacing(self._cuts), 1))
                advice = f"use n_estimators='auto' or at least {needed} trees"
            holds = ("" if self.resolution is None or self.consistency_notion_ is None else
                     f" (at r = 0 it is: consistency_notion_={self.consistency_notion_!r})")
            warnings.warn(
                f"ConsistentForestClassifier with {n_trees} trees is not certified consistent"
                f"{'' if self.resolution is None else ' at this resolution'}{holds}: "
                f"consistency_bound_={self.consistency_bound_:.3f} > 1; {advice}",
                UserWarning,
                stacklevel=3,
            )

    def _grow(self, n_new: int, rng, job: _TreeJob, countable, oob: "_OutOfBag") -> None:
        """Grow ``n_new`` trees, move their thresholds away from every other tree's, keep them."""
        seeds = rng.randint(MAX_SEED, size=(n_new, 2))
        jobs = (delayed(_fit_tree)(job, s) for s in seeds)
        # scikit-learn's tree builder releases the GIL: threads, as in its forests.
        batch = run_jobs(jobs, n_jobs=self.n_jobs, total=n_new, desc="ConsistentForest trees",
                         verbose=self.verbose, prefer="threads")
        first = len(self.estimators_)
        internal = [np.asarray(tree_nodes(tree)[0]) >= 0 for tree, *_ in batch]
        new = Gaps(
            feature=np.concatenate([np.asarray(tree_nodes(b[0])[2])[i] for b, i in zip(batch, internal, strict=True)]),
            threshold=np.concatenate([b[1][i] for b, i in zip(batch, internal, strict=True)]),
            lo=np.concatenate([b[2] for b in batch]),
            hi=np.concatenate([b[3] for b in batch]),
            owner=np.repeat(np.arange(first, first + len(batch)), [int(i.sum()) for i in internal]),
        )
        separate_thresholds(new, *thresholds_of(self.estimators_), rng, countable)
        start = 0
        smooth = self._smoothing()
        for (tree, moved, _, _, voter, out_of_bag), inner in zip(batch, internal, strict=True):
            # Results may come back read-only (joblib's Ray backend shares them zero-copy).
            moved = np.array(moved, dtype=np.float64)
            moved[inner] = new.threshold[start : start + int(inner.sum())]
            start += int(inner.sum())
            if smooth:
                # One threshold per gap between training values: the tree counts once there.
                moved = one_threshold_per_gap(tree_nodes(tree)[:3] + (moved,), self._grid, countable)
            set_thresholds(tree, moved)
            if self._isotonic is not None:
                # The leaves' face contacts are final once the thresholds are: project now.
                voter = voter._replace(value=self._project(tree, voter))
            if smooth:
                # The values as grown and the out-of-bag leaves: the caps depend on every tree.
                self._grown_values.append(voter.value)
                self._oob_leaves.append(out_of_bag)
            if out_of_bag is not None:
                if self._envelope is None:
                    values = voter.value[out_of_bag[1]]
                else:
                    values = self._envelope_values(len(self.estimators_), tree_nodes(tree), voter.value,
                                                   job.X[out_of_bag[0]])
                np.add.at(oob.sums, out_of_bag[0], values)
                np.add.at(oob.counts, out_of_bag[0], 1)
            self.estimators_.append(tree)
            self._voters.append(voter)

    def _smoothing(self) -> bool:
        """Whether the trees' steps across the gaps between training values are capped (:meth:`_smooth`).

        Monotone trees keep their values (capping could break their order), and so do
        trees on a monotone index, whose moves the grid of the features does not describe.
        """
        return self.consistency == "data" and self._grid is not None and not self._constrained

    def _spreading_only(self) -> bool:
        """Whether the thresholds move to gaps with room, with no caps (:meth:`_spread_into_room`).

        Trees read through their monotone envelopes stay monotone wherever their thresholds
        are, and their steps are their value ranges, which capping would not change: at the
        data's resolution on the features' own axes their thresholds move and the
        certificate says whether every gap has room.
        """
        return (self.consistency == "data" and self._grid is not None and self._envelope is not None
                and self.space_ is None)

    def _gap_budget(self, n_trees: int) -> int:
        """The load a gap may carry: the smallest spacing the cut points may take (docs/design.md section 13)."""
        scale = n_trees << UNIT_BITS
        return scale if self._cut_rule == "half" else scale // 2

    def _smooth(self, countable: NDArray[np.bool_], oob: "_OutOfBag", X: NDArray[np.float64], rng,
                sample_weight: NDArray[np.float64] | None) -> None:
        """Spread the thresholds over gaps with room, cap every tree's steps across every gap, sum the out-of-bag values again.

        Thresholds first move to the nearest gap whose loads have room for their steps
        (:meth:`_spread_into_room`); the leaves of the pairs over their caps are cut at their faces' slabs
        (:func:`split_capped_leaves`); then every face pair p across a threshold in a gap steps by at most
        budget / N(p) (:func:`capped_leaf_values`), N(p) bounded per feature (``exact_limit=0`` of :func:`gap_pairs`:
        exact counts cost O(n^2) per gap and bought no accuracy, design section 13), so every gap's load is at
        most the budget, the spacing the cut points keep (:func:`ensemble.certificates._certificates.gap_loads`).
        """
        budget = self._gap_budget(len(self.estimators_))
        self._spread_into_room(countable, budget, X, sample_weight, rng)
        nodes = [tree_nodes(tree) for tree in self.estimators_]
        # Which pairs break their caps, and by how much, needs only their counts: the others' are
        # left coarse (as often as not the leaves are cut, and every pair is counted again).
        pairs = gap_pairs(nodes, self._grid, countable, max_pairs=MAX_LOCALISED_PAIRS, exact_limit=0,
                          within=(self._grown_values, budget))
        if pairs is None:
            # Deep trees in many dimensions have hundreds of thousands of face pairs each: their
            # caps would cost minutes. The trees keep their values; the certificate says what holds.
            self._too_many_pairs = True
            return
        cap = budget // np.maximum(pairs.neighbours, 1)
        # The leaves over their caps give their slabs at the capped faces to leaves of their own (design section 13).
        lists = (self.estimators_, self._voters, self._grown_values, self._oob_leaves)
        undo = [] if pairs.tree.shape[0] > MAX_LOCALISED_PAIRS // 2 else split_capped_leaves(
            *lists, pairs, cap, X, sample_weight)
        # The capping and the certificate read every pair's cap: all counted, on the trees as they now are.
        final = gap_pairs([tree_nodes(tree) for tree in self.estimators_], self._grid, countable,
                          max_pairs=MAX_LOCALISED_PAIRS, exact_limit=0)
        if final is None:
            undo_splits(undo, *lists)  # too many pairs to cap: the trees as grown
            final = gap_pairs(nodes, self._grid, countable, max_pairs=MAX_LOCALISED_PAIRS, exact_limit=0)
        pairs, cap = final, budget // np.maximum(final.neighbours, 1)
        self._pairs = pairs  # the final certificate reads them again: they depend on the thresholds only
        order = np.argsort(pairs.tree, kind="stable")
        bounds = np.searchsorted(pairs.tree[order], np.arange(len(self.estimators_) + 1))
        oob.sums[:] = 0
        oob.counts[:] = 0
        for i, (value, out_of_bag) in enumerate(zip(self._grown_values, self._oob_leaves, strict=True)):
            weight = self.estimators_[i].tree_.weighted_n_node_samples
            mine = order[bounds[i]:bounds[i + 1]]
            smoothed = capped_leaf_values(value, pairs.a[mine], pairs.b[mine], cap[mine], weight)
            self._voters[i] = self._voters[i]._replace(value=smoothed)
            if out_of_bag is not None:
                np.add.at(oob.sums, out_of_bag[0], smoothed[out_of_bag[1]])
                np.add.at(oob.counts, out_of_bag[0], 1)

    def _spread_into_room(self, countable: NDArray[np.bool_], budget: int, X: NDArray[np.float64],
                          weight: NDArray[np.float64] | None, rng) -> None:
        """Move thresholds to nearby gaps with room for their steps (:func:`move_thresholds_into_room`)."""
        move_thresholds_into_room(self.estimators_, [voter.value for voter in self._voters], self._oob_leaves,
                                  self._grid, countable, budget, X, weight, rng, ranges_only=self._envelope is not None,
                                  float32=self.criterion == "squared_error")

    def _project(self, tree, voter: _Voter) -> NDArray[np.int64]:
        """A tree's integer leaf values, isotonic along the constraints (:func:`isotonic_leaf_values`)."""
        unit = float(1 << UNIT_BITS)
        values = isotonic_leaf_values(tree_nodes(tree), voter.value / unit, tree.tree_.weighted_n_node_samples,
                                      self._split_categorical.shape[0], self._isotonic, step=_ISOTONIC_STEP)
        return np.rint(values * unit).astype(np.int64)

    def _cut_points(self, bound: int | None, n_trees: int, oob: "_OutOfBag") -> tuple:
        """The cut points on the sum of the trees' values, and the spacing ``bound`` should not exceed.

        ``"half"``: the half-way cuts of ``floor(mean + 1/2)``, spaced ``n_trees * unit``.
        ``"oob"``: cuts learned on the out-of-bag means (:func:`learn_cut_points`);
        the wanted spacing is the learned one, but at least half a class (so that
        ``n_estimators="auto"`` grows at most about twice the trees), and with a
        ``bound`` the cuts are moved apart to at least ``min(bound, n_trees * unit)``.
        """
        scale = n_trees << UNIT_BITS
        half = self._choose_cuts(scale)
        if self._cut_rule == "half":
            return half, cut_spacing(half)
        cuts = self._choose_cuts(scale, bound, oob.means(n_trees))
        return cuts, min(max(cut_spacing(cuts), scale // 2), cut_spacing(half))

    def _fit_proba_scale(self, data, oob: "_OutOfBag") -> float:
        """Spread of the cumulative probabilities of a monotone forest, fitted on out-of-bag sums.

        Without bootstrap there are no out-of-bag rows: the training sums are used
        (their spread is smaller than on new data).
        """
        n_trees = len(self.estimators_)
        values, y, weight = oob.means(n_trees)
        if values.shape[0] == 0:
            rows = slice(None) if data.sample_weight is None else data.sample_weight > 0
            values, y = self._sums(data.X[rows]).astype(np.float64), data.y[rows]
            weight = None if data.sample_weight is None else data.sample_weight[rows]
        return fit_proba_scale(values, y, self._cuts, weight, unit=float(n_trees << UNIT_BITS))

    def _store_certificate(self, certificate: SumCertificate) -> None:
        self.n_estimators_ = len(self.estimators_)
        super()._store_certificate(certificate)

    def _leaf_proba(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The mean of the trees' leaf class distributions (the forest without constraints)."""
        total = np.zeros((X.shape[0], self.n_classes_))
        for leaf, voter in zip(self._leaves(X), self._voters, strict=True):
            total += voter.proba[voter.leaf_row[leaf]]
        return total / self.n_estimators_

    def _axis_importances(self) -> NDArray[np.float64]:
        """Mean of the trees' impurity-decrease importances (each tree's summing to 1), as scikit-learn's forests."""
        return np.mean([tree_feature_importances(t, self._n_axes) for t in self.estimators_], axis=0)

    def apply(self, X: ArrayLike) -> NDArray[np.int64]:
        """Leaf id reached in every tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, n_estimators_)
            Node id of the leaf of each sample in each tree (as the tree's own ``apply``).
        """
        X = self._validate_X_predict(X)
        return np.column_stack(list(self._leaves(X)))
