"""OTreeBagger: bagged groups of ordinal trees, each group's fused partition relabelled for consistency."""

from __future__ import annotations

import logging
import warnings
from dataclasses import replace
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.parallel import delayed
from sklearn.utils.validation import check_is_fitted

import relabel
from relabel import TooManyRegionsError
from ensemble.base._estimator import (MAX_SEED, OrdinalEnsemble, tree_feature_importances)
from ensemble.base._docs import fill_doc
from ensemble.otreebagger._groups import FittedGroup, _fit_group, _group_votes, _GroupJob, fit_in_sizes
from ensemble.spaces._spaces import GroupSpace, _additive_score, kernel_score
from ensemble.spaces._moves import with_ranks
from ensemble.base._parallel import one_blas_thread, run_jobs
from ensemble.otreebagger._group_jobs import GroupJobs
from ensemble.otreebagger._missing_indicators import MissingIndicators
from ensemble.otreebagger._settings import DEPRECATED, RELABEL_PARAMS, SPACE_PARAMS, resolve_settings
from ensemble.otreebagger._voter_checks import VoterChecks
from ensemble.base._voting import DEPRECATED_VOTES, VOTES, check_vote, combine_votes, vote_counts
from trees import CRITERIA

logger = logging.getLogger(__name__)

__all__ = ["FittedGroup", "GroupSizeWarning", "GroupSpace", "OTreeBagger", "TooManyRegionsError"]


#: The parameters that make the paper's oTreeBagger and its TreeBagger baseline (OTreeBagger.paper, .tree_bagger).
_PAPER = {"criterion": "gini", "max_depth": None, "projection": "none", "thresholds": "midpoint",
          "relabel_params": {"empty_regions": "paper", "formulation": "paper"}, "consistency": "pointwise"}
_TREE_BAGGER = {"relabel": False, "vote": "mode", "criterion": "gini", "projection": "none", "max_depth": None}


class GroupSizeWarning(UserWarning):
    """Some groups of an :class:`OTreeBagger` fit were made smaller to fit the size budgets."""


@fill_doc
class OTreeBagger(VoterChecks, GroupJobs, MissingIndicators, OrdinalEnsemble):
    """Bagged ordinal trees whose fused group partitions are relabelled to be consistent.

    The ``n_estimators`` bootstrap trees are split into ``n_estimators // group_size``
    groups of ``group_size`` trees. The leaves of each group are intersected into a
    fused partition, every region counts the training points of the group's
    bootstrap samples, and the regions are relabelled by the consistency ILP of
    Sousa & Cardoso (2011), eq. (10) under (2), (3), (6)-(8): adjacent regions
    differ by at most one class. The ensemble predicts the lower median of the
    group labels, which keeps consistency (Theorem 1).

    Parameters
    ----------
    n_estimators : int, default=100
        Number of bootstrap trees B.
    group_size : int, default=3
        Trees per fused group M; must not exceed ``n_estimators``. Trees beyond
        ``group_size * (n_estimators // group_size)`` are not grown. Measured
        (``python benchmarks/ensemble_accuracy.py``, the paper's protocol, 9
        settings, with :meth:`paper`'s settings): M = 2 to 4 err least in 8 of
        them; single relabelled trees over-regularise small samples (syntheticI
        at 10%: test MAE 0.415 against 0.242 with M = 3).
    criterion : {"ogini", "gini", "entropy", "wig", "ranking"}, default="ogini"
        Splitting criterion of the trees (see :data:`trees.CRITERIA`).
    max_depth : int or None, default=12
        Maximum depth of every tree (``None``: grown until pure). Depth 12 bounds
        a tree at 4,096 leaves, so a group's fused partition and its contacts
        stay within the budgets at 100,000 rows, and is within 0.006 test MAE of
        full depth on each of the 12 shared data sets; depth 8 errs more (mean
        0.612 against 0.598) and fits up to 4x faster (benchmarks page, section 5).
    min_samples_leaf : int, default=1
        Minimum number of (distinct) bootstrap rows in a leaf.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features considered per split, as in :class:`trees.OrdinalTreeClassifier`.
    relabel : bool, default=True
        ``False`` gives plain bagged trees (each tree a voter, no consistency).
    vote : {"median", "mode", "mean"}, default="median"
        How voters are combined (:func:`ensemble.base._voting.combine_votes`): the
        lower median; the rounded mean ``floor(mean + 1/2)`` of the voters'
        class indices, consistent too (docs/design.md section 9); or ``"mode"``
        (the most frequent class, lowest on ties: the majority vote, with trees
        labelling leaves by their mode), only allowed with ``relabel=False``: with
        ``criterion="gini"`` it is the paper's TreeBagger baseline. The mode can
        break consistency, the median and the mean cannot. ``"majority"`` is the
        deprecated name of ``"mode"``.
    solver : {"graphcut", "cbc", "cpsat"}, default="graphcut"
        Backend of :func:`relabel.solve`; all reach the same optimum, so the
        model is the same. Measured (``python benchmarks/relabel_solvers.py``):
        on a 4D group of 1,207 regions the graph cut takes 0.02 s, CBC 49 s and
        CP-SAT 46 s; the graph cut relabels 100,000 regions in 0.8 s (2D) to 4 s (4D).
    bootstrap : bool, default=True
        Draw bootstrap samples; ``False`` grows every tree on the whole training
        set (with ``n_estimators=group_size=1``: the single-tree relabelling of
        Cardoso & Sousa, 2010).
    time_limit : float or None, default=None
        Seconds per group for the solver; ``None`` means no limit.
    projection : {"auto", "additive", "pls", "none"}, default="auto"
        The space every group's trees split. ``"additive"``: the first
        component is an additive score of the continuous features, one smooth
        curve per feature (cubic B-splines with knots at its quantiles, fitted
        once on all training rows by ridge regression of the class index; a
        constrained feature's curve only moves in its constraint's direction),
        and the other ``n_components - 1`` are PLS directions of what the score
        leaves of the class index on the group's rows, over the free
        continuous features, or the features that carry what it leaves
        (``residual_axes``); categorical features keep their own axes. The
        score is continuous and every constrained curve monotone, so
        consistency (and monotonicity, the score rising along it) in the
        group's space is consistency (and monotonicity) in the features
        (docs/design.md section 5). ``"pls"``: the group fits
        ``n_components`` partial least squares directions of the class index
        on its bootstrap rows, over the features that are neither categorical
        nor constrained; constrained features keep their own axes, or two or
        more form one more component (``monotonic_space``), the monotone index.
        ``"none"``: the features themselves. A relabelled group reads every
        continuous feature of a projected space through its ranks among the
        training values (linear in between, constant beyond), so that a move
        inside one gap of the training values is one rank unit and the
        certificates hold in floats (docs/design.md section 13). ``"auto"``:
        ``"none"`` where the fit enforces consistency at the data's resolution
        on at most four continuous features (``consistency``), else
        ``"additive"`` when the groups are relabelled and 3 or more features
        are continuous, else ``"none"`` (bagged trees without relabelling fuse
        nothing, and a projection only loses information). On synthetic data of 20 to 100
        features and 20,000 rows the additive space errs 0.31-0.34 where PLS
        erred 0.93-1.03, at the same fit time (``benchmarks/additive_space.py``).
    n_components : int, default=3
        Number of components of a group's space (the additive score counts as
        one). Under monotone constraints with ``projection="pls"`` the
        constrained features take components' places (at least one PLS
        component remains), so fused partitions stay as small as without
        constraints: their monotone index one place, or each constrained axis
        one (``monotonic_space``). Likewise at the data's resolution the features
        that keep their own axes beside the additive score (two values, or a steep
        gap) take components' places (at least the score remains).
    thresholds : {"slab", "gap", "midpoint", "auto"}, default="slab"
        Where a relabelled group's trees put their thresholds. ``"gap"``: drawn
        uniformly inside the gap between the two training values a split
        separates, the group's trees sharing two places per gap of its values, so
        that two trees splitting one gap do so at different places and their
        fusion holds a thin empty region the relabelling may give an intermediate
        class (docs/design.md section 5). ``"slab"``: on the features' own axes,
        one drawn place per gap, corners held two classes apart and a slab one
        float wide above every threshold (section 5, "Slabs"): the gap draws'
        accuracy at a quarter of the regions; a group that cannot keep slabs (in a
        projected space, with monotone constraints, missing values, face contacts
        or a resolution) keeps the gap draws. ``"midpoint"``: half-way between the
        two values. ``"auto"`` holds out a quarter of the rows, fits 8 groups both ways (gap,
        midpoint) on the others and keeps the rule whose vote errs less on them
        (``threshold_scores_``; below 8,000 rows up to four quarters, 4 groups each). Slabs
        measured best and cheapest (docs/benchmarks.md section 2d); only relabelled groups are affected.
    relabel_params : dict or None, default=None
        Settings of every group's relabelling besides ``solver`` and
        ``time_limit``, by key (a key left out keeps its default; an unknown key
        is an error). The defaults are what measured best or safest; the paper's
        own settings are one call away (:meth:`paper`). The keys:

        ``formulation`` : {"paper", "tight"}, default="paper"
            ILP formulation for CBC and CP-SAT (the graph cut is exact for both).
        ``contact`` : {"closure", "face"}, default="closure"
            Regions are adjacent when their closures meet (faces, edges or corners),
            or with ``"face"`` only when they share a face (weaker: corner contacts
            are then unconstrained, a move of one feature may jump two classes, and
            no notion is certified: a warning, ``consistency_notion_`` None).
        ``relabel_counts`` : {"bootstrap", "train"}, default="bootstrap"
            Region counts from the union of the group's bootstrap samples (each
            point once), or from every training point once.
        ``empty_regions`` : {"leaves", "paper"}, default="leaves"
            How the relabelling weighs the regions no counted row falls in (most
            regions of a fused group; a quarter of the test rows of stock10 land in
            one). ``"leaves"``: such a region costs ``2**-9`` times the counted rows
            of the trees' leaves that hold it, so it follows the trees wherever the
            consistency constraints leave it free; ``"paper"``: it costs nothing,
            only the penalties ``C1`` and ``C2`` label it, and it takes whatever its
            neighbours make cheapest. Measured (``python
            benchmarks/otreebagger_levers.py --levers empty``, 12 shared data sets,
            3 splits): mean test MAE 0.607 against 0.624 with ``"paper"``.
        ``C1``, ``C2`` : float or None, default=None
            Penalties for label changes between two empty regions (C1) and between an
            empty and a non-empty region (C2); ``None`` gives the paper's
            ``1 / (N (K - 1))`` and ``1 / (0.9 N (K - 1))``, in units of one row of
            weight 1 (scaling every weight by c without them moves the balance
            between the penalties and the ``empty_regions="leaves"`` prior).
        ``on_solver_failure`` : {"warn", "raise"}, default="warn"
            When a solver stops without a proven optimum: warn and keep the best
            consistent labelling found, or raise :class:`relabel.RelabelError`.
        ``max_regions`` : int, default=1_000_000
            Largest fused partition a group may build; the fusion stops before
            allocating a larger one (:class:`relabel.TooManyRegionsError`).
        ``max_edges`` : int, default=1_000_000
            Largest adjacency graph a group may build, its contacts and the move
            pairs it solves with together (about 0.4 KB of graph-cut memory per edge
            with K = 5); the search stops before the solver allocates a larger one.
            Past it a group costs far more than its trees while fusing them gains
            little (docs/design.md section 5, "Size budgets").
        ``on_budget`` : {"adapt", "raise"}, default="adapt"
            What a group does when it passes ``max_regions`` or ``max_edges``:
            ``"adapt"`` fuses fewer trees (halving the group), then shallower trees
            (halving their depth), until it fits, records it in ``groups_info_``
            (``"adapted"``) and warns once per fit (:class:`GroupSizeWarning`); when
            one of the first two groups fuses fewer trees, the later ones are formed at
            that size from all their trees; ``"raise"`` raises :class:`relabel.TooManyRegionsError`.
    space_params : dict or None, default=None
        Settings of the group space besides ``projection``, ``n_components`` and
        ``thresholds``, by key (a key left out keeps its default; an unknown key
        is an error). Each ``"auto"`` is decided on held-out rows
        (:mod:`ensemble.otreebagger._selection`); fixing it skips those probe fits. The keys:

        ``score_model`` : {"auto", "additive", "kernel"}, default="auto"
            In the additive space, how the first component scores the continuous
            features: ``"additive"``, one curve per feature (above), or
            ``"kernel"``, kernel ridge regression of the class index on Gaussian
            kernels centred on up to 500 training rows (standardised features,
            width ``1 / n_features``), which follows interactions between
            features too and is as smooth, so consistency in the group's space is
            still consistency in the features. Its curves have no certified
            direction: under monotone constraints the score is additive
            (``"kernel"`` is then an error). ``"auto"`` scores each score (and,
            with ``residual_axes="auto"``, each kind of axes beside it: the two
            choices are made together) on held-out rows as ``thresholds="auto"``
            does and keeps the one that errs less (``score_model_scores_``;
            additive on a tie). Measured in ``benchmarks/additive_space.py``.
        ``residual_axes`` : {"auto", "pls", "features"}, default="auto"
            In the additive space, what the ``n_components - 1`` axes beside the
            score are: ``"pls"``, PLS directions of what the score leaves of the
            class index (linear, so blind to interactions: a class that follows
            the sign of ``x_0 * x_1`` leaves no linear trace), or ``"features"``,
            the features a regression tree of that residual on the group's rows
            uses most, on their own axes (trees split them as the paper's groups
            split raw features, so interactions between them are learnt).
            ``"auto"`` scores each way on held-out rows as ``thresholds="auto"``
            does, together with ``score_model="auto"``, and keeps the one that
            errs less (``residual_axes_scores_``; PLS on a tie). Measured in ``benchmarks/additive_space.py`` (interaction data
            and the 12 shared data sets).
        ``monotonic_space`` : {"auto", "index", "axes"}, default="auto"
            With ``projection="pls"`` and two or more constrained features (the
            additive space holds them in its score, as monotone curves): ``"index"`` combines them into one monotone
            component (weights of their constraints' signs), ``"axes"`` keeps each
            as its own axis in a component's place. The index suits data whose
            constrained features act through one score (it fuses in fewer
            dimensions: ``benchmarks/monotone.py``, machine10 test MAE 0.881
            against 1.192 with axes); the axes suit interactions such as a class
            that follows the smaller of two features (0.45 against 0.58 on such
            data). ``"auto"`` scores each way on held-out rows as
            ``thresholds="auto"`` does and keeps the one that errs less
            (``monotonic_space_scores_``).
    {categorical_features}
    monotonic_cst : array-like of int, dict or None, default=None
        Monotone constraints: +1 (a larger value never lowers the class), -1
        (never raises it) or 0 per feature, or a dict by feature name. Enforced
        exactly in every group's relabelling (one more implication per face
        contact along the feature), so the median and the mean vote are
        monotone too; certified by :meth:`is_monotone`. A categorical feature
        cannot be constrained.
    resolution : float, array-like or None, default=None
        r-consistency (docs/design.md section 4c): classes two apart are forbidden
        between any points closer than r_f along every feature f (one value for
        all features or one per feature, in the features' units); ``None`` is
        the paper's pointwise consistency.
    consistency : {"auto", "data", "pointwise"}, default="auto"
        What the fit guarantees. ``"data"``: consistency at the data's
        resolution (docs/design.md section 13): moving one feature anywhere
        between two consecutive distinct training values of it, the others
        fixed, never changes the class by more than one, besides the paper's
        pointwise consistency; on more than four continuous features the
        groups split a rank-mapped projected space whose relabelling pairs
        every two regions one move inside a gap can join (Theorem 13.3; features
        of two values keep axes of their own there, and ``score_model="auto"``
        the additive score). ``"pointwise"``: the paper's notion only, in any
        group space (a kernel score too), exact between adjacent floats.
        ``"auto"``: ``"data"``, but ``"pointwise"`` for an explicit
        ``score_model="kernel"`` in the additive space (its certified swing inside
        one gap pairs every region). :meth:`is_consistent`
        checks either notion; ``consistency_notion_`` says which the fit certified.
    {classes}
    {class_weight}
    {n_jobs}
    {random_state}
    verbose : int, default=0
        Log progress; ``verbose >= 1`` shows a progress bar over groups.
    formulation, contact, relabel_counts, empty_regions, C1, C2, on_solver_failure, \
    max_regions, max_edges, on_budget, score_model, residual_axes, monotonic_space : deprecated
        Deprecated in 0.1, removed in 0.3: the keys of ``relabel_params`` and
        ``space_params`` of the same names (a FutureWarning says which).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels in ordinal order.
    n_classes_ : int
        Number of classes K.
    n_features_in_ : int
        Number of features seen in ``fit``.
    estimators_ : list of OrdinalTreeClassifier
        All fitted trees, group by group.
    group_size_ : int
        Trees per group: ``group_size``, or 1 without relabelling or when every
        feature is categorical (no move between two values of a categorical
        feature is small, so consistency constrains nothing and each tree,
        relabelled alone, is its own group).
    groups_ : list of FittedGroup
        The voters: their trees, fused partition, region labels and edges.
    consistency_notion_ : {"data", "pointwise"} or None
        The notion the fit enforced: ``"data"``, consistency at the data's
        resolution (docs/design.md section 13: every voter relabelled with the
        neighbours at the data's resolution, on the features' own axes or in its
        rank-mapped space, among its constraints); ``"pointwise"``, only the
        paper's (``consistency="pointwise"``, or an explicit kernel score); None,
        neither (``relabel=False``, or ``contact="face"``).
    relabel_params_ : dict
        The relabelling's settings in effect: every key of ``relabel_params``,
        the defaults filled in.
    space_params_ : dict
        The group space's settings as given, every key of ``space_params`` with
        the defaults filled in (the values the ``"auto"`` ones took are
        ``score_model_``, ``residual_axes_`` and ``monotonic_space_``).
    groups_info_ : list of dict
        Per group: ``n_regions``, ``n_edges`` (the contacts and the move pairs its last
        solve held), ``n_empty``, ``objective``, ``status``, ``solver`` and
        ``solve_time`` (seconds, over every round) and ``n_solves`` (the rounds).
    threshold_scores_ : dict or None
        With ``thresholds="auto"``: the held-out MAE of the probe groups with each rule
        (``"midpoint"``, ``"gap"``); the smaller was kept.
    score_model_ : {"additive", "kernel"} or None
        The first component's score in the additive space (``None`` outside it).
    score_model_scores_ : dict or None
        With ``score_model="auto"`` in the additive space without monotone
        constraints: the held-out MAE of the probe groups with each score
        (``"additive"``, ``"kernel"``), with the axes chosen beside it
        (midpoint thresholds when those are chosen too); the smaller was kept.
    residual_axes_ : {"pls", "features"} or None
        The axes beside the additive score (``None`` outside the additive space).
    residual_axes_scores_ : dict or None
        With ``residual_axes="auto"`` in the additive space: the held-out MAE
        of the probe groups each way (``"pls"``, ``"features"``), with the score chosen
        beside them; the smaller was kept.
    monotonic_space_ : {"index", "axes"} or None
        How the groups place their constrained features (``None`` when they
        are not projected or fewer than two features are constrained).
    monotonic_space_scores_ : dict or None
        With ``monotonic_space="auto"`` where it applies: the held-out MAE of
        the probe groups each way (``"index"``, ``"axes"``, midpoint thresholds when
        those are chosen too); the smaller was kept, the index on a tie.
    categorical_features_ : ndarray of int
        The features treated as categorical.
    missing_features_ : ndarray of int
        The features with a missing value (NaN) in training. Each gets a
        categorical "is missing" column of its own in the groups' features, and
        its missing values are filled with its training median: "missing" is a
        category, consistency holds on every slice of a fixed missing pattern
        (docs/design.md section 11). A value missing at prediction in another
        feature is read as that feature's training median; a text category unseen
        in fit is read as missing in these features and is an error in the others.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Impurity-decrease importances (see the property).

    Notes
    -----
    Fit costs B tree fits, then per group a fusion and an adjacency sweep
    (near-linear in the regions N) and a minimum cut on N (K - 1) nodes.
    Prediction applies the B trees and looks each point's region up by its tuple
    of leaf ids: no geometry.

    Examples
    --------
    >>> from ensemble import OTreeBagger
    >>> from ensemble.datasets import make_synthetic_i
    >>> X, y = make_synthetic_i(300, random_state=0)
    >>> model = OTreeBagger(n_estimators=12, group_size=3, random_state=0).fit(X, y)
    >>> model.is_consistent()
    True
    >>> model.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "group_size": [Interval(Integral, 1, None, closed="left")],
        "criterion": [StrOptions(set(CRITERIA))],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "relabel": ["boolean"],
        "vote": [StrOptions(set(VOTES) | set(DEPRECATED_VOTES), deprecated=set(DEPRECATED_VOTES))],
        "solver": [StrOptions(set(relabel.SOLVERS))],
        "bootstrap": ["boolean"],
        "time_limit": [Interval(Real, 0.0, None, closed="neither"), None],
        "projection": [StrOptions({"auto", "pls", "additive", "none"})],
        "thresholds": [StrOptions({"gap", "midpoint", "slab", "auto"})],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "relabel_params": [dict, None],
        "space_params": [dict, None],
        **{name: [Hidden(StrOptions({DEPRECATED})), *rule]
           for name, (_, rule) in {**RELABEL_PARAMS, **SPACE_PARAMS}.items()},
        **OrdinalEnsemble._parameter_constraints,
        "consistency": [StrOptions({"auto", "data", "pointwise"})],
    }

    def __init__(
        self,
        *,
        n_estimators: int = 100,
        group_size: int = 3,
        criterion: str = "ogini",
        max_depth: int | None = 12,
        min_samples_leaf: int = 1,
        max_features: int | float | str | None = None,
        relabel: bool = True,
        vote: str = "median",
        solver: str = "graphcut",
        bootstrap: bool = True,
        time_limit: float | None = None,
        projection: str = "auto",
        n_components: int = 3,
        thresholds: str = "slab",
        relabel_params: dict | None = None,
        space_params: dict | None = None,
        categorical_features: ArrayLike | str | None = "auto",
        monotonic_cst: ArrayLike | dict | None = None,
        resolution: float | ArrayLike | None = None,
        consistency: str = "auto",
        classes: ArrayLike | None = None,
        class_weight: str | dict | None = None,
        n_jobs: int | None = None,
        random_state: Any = None,
        verbose: int = 0,
        formulation: Any = DEPRECATED,
        contact: Any = DEPRECATED,
        relabel_counts: Any = DEPRECATED,
        empty_regions: Any = DEPRECATED,
        C1: Any = DEPRECATED,
        C2: Any = DEPRECATED,
        on_solver_failure: Any = DEPRECATED,
        max_regions: Any = DEPRECATED,
        max_edges: Any = DEPRECATED,
        on_budget: Any = DEPRECATED,
        score_model: Any = DEPRECATED,
        residual_axes: Any = DEPRECATED,
        monotonic_space: Any = DEPRECATED,
    ) -> None:
        self.n_estimators = n_estimators
        self.group_size = group_size
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.relabel = relabel
        self.vote = vote
        self.solver = solver
        self.bootstrap = bootstrap
        self.time_limit = time_limit
        self.projection = projection
        self.n_components = n_components
        self.thresholds = thresholds
        self.relabel_params = relabel_params
        self.space_params = space_params
        self.categorical_features = categorical_features
        self.monotonic_cst = monotonic_cst
        self.resolution = resolution
        self.consistency = consistency
        self.classes = classes
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.formulation = formulation
        self.contact = contact
        self.relabel_counts = relabel_counts
        self.empty_regions = empty_regions
        self.C1 = C1
        self.C2 = C2
        self.on_solver_failure = on_solver_failure
        self.max_regions = max_regions
        self.max_edges = max_edges
        self.on_budget = on_budget
        self.score_model = score_model
        self.residual_axes = residual_axes
        self.monotonic_space = monotonic_space

    def __setstate__(self, state: dict) -> None:
        # A model saved before relabel_params and space_params existed holds its settings in the
        # deprecated parameters of the same names, which a refit reads (and warns of).
        state.setdefault("relabel_params", None)
        state.setdefault("space_params", None)
        super().__setstate__(state)
        if "groups_" in self.__dict__ and "estimators_" not in self.__dict__:
            self._views_of_groups()

    def __getstate__(self) -> dict:
        # estimators_ and groups_info_ are views of groups_, rebuilt on load: a model file held
        # every tree twice (once per list), and loaded two copies of each.
        state = dict(super().__getstate__())  # a copy: object.__getstate__ may return __dict__ itself
        if "groups_" in state:
            state.pop("estimators_", None)
            state.pop("groups_info_", None)
        return state

    def _views_of_groups(self) -> None:
        self.estimators_ = [tree for group in self.groups_ for tree in group.trees]
        self.groups_info_ = [group.info for group in self.groups_]

    @classmethod
    def paper(cls, **params: Any) -> "OTreeBagger":
        """The oTreeBagger of Sousa & Cardoso (2011), as published: ``OTreeBagger.paper(group_size=5)``.

        Full-depth Gini trees on the features themselves (no learned space), split
        half-way between training values, ``group_size`` of them fused per group,
        every fused partition relabelled by the paper's binary ILP (equations 1-10,
        empty regions only held by the penalties C1 and C2), the groups bagged by the
        median vote; certified with the paper's pointwise consistency. Every other
        parameter keeps its default and any of them can be given.

        Measured (``python benchmarks/otreebagger_cost.py``, 12 shared sets): see the
        benchmarks page (docs/benchmarks.md); the default ``OTreeBagger()`` errs less
        on most of them, at a higher cost.

        Examples
        --------
        >>> from ensemble import OTreeBagger
        >>> from ensemble.datasets import make_synthetic_i
        >>> X, y = make_synthetic_i(300, random_state=0)
        >>> model = OTreeBagger.paper(n_estimators=10, group_size=5, random_state=0).fit(X, y)
        >>> model.get_params()["criterion"], model.consistency_notion_, model.is_consistent()
        ('gini', 'pointwise', True)
        """
        settings = {**_PAPER, **params}
        # The user's relabelling keys refine the paper's, rather than replacing them all.
        settings["relabel_params"] = {**_PAPER["relabel_params"], **(params.get("relabel_params") or {})}
        return cls(**settings)

    @classmethod
    def tree_bagger(cls, **params: Any) -> "OTreeBagger":
        """The paper's TreeBagger baseline: bagged full-depth Gini trees, majority vote, no relabelling.

        Examples
        --------
        >>> from ensemble import OTreeBagger
        >>> OTreeBagger.tree_bagger(n_estimators=10).get_params()["vote"]
        'mode'
        """
        return cls(**{**_TREE_BAGGER, **params})

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "OTreeBagger":
        """Grow the bootstrap trees, relabel every group and keep the voters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; infinite values are rejected. A missing value (NaN)
            is its own category of its feature (see the class's Notes).
        y : array-like of shape (n_samples,)
            Ordinal class labels (order: ``classes`` or sorted).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative finite weights; ``None`` weighs every sample 1. Each
            tree is grown with (bootstrap multiplicity x weight), and the region
            counts p_{n,i} (docs/design.md section 4, "Costs") are weighted too: for
            ``relabel_counts="bootstrap"`` every row of the union of the group's
            bootstrap samples counts once times its weight, for ``"train"``
            every row counts its weight. A row of weight 0 influences neither
            the trees nor the counts. Its label still enters ``classes_``, as
            in scikit-learn: the classes are a property of ``y`` (and of
            ``classes``), so ``predict_proba`` keeps the same columns whatever
            the weights.

        Returns
        -------
        self : OTreeBagger
            The fitted estimator.

        Raises
        ------
        ValueError
            On invalid data or parameters, a single class, ``group_size`` larger
            than ``n_estimators``, ``vote="mode"`` with relabelling, or a
            ``sample_weight`` that is negative, NaN, infinite, of the wrong
            length or all zero.
        relabel.TooManyRegionsError
            If a fused partition would exceed ``max_regions``.
        relabel.RelabelError
            If a solver fails and ``on_solver_failure="raise"``.

        Examples
        --------
        >>> import numpy as np
        >>> from ensemble import OTreeBagger
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
        >>> y = np.array([1, 1, 2, 2, 3, 3])
        >>> w = np.array([1.0, 0.5, 2.0, 1 / 3, 1.0, 0.0])
        >>> model = OTreeBagger(n_estimators=2, group_size=2, random_state=0)
        >>> model = model.fit(X, y, sample_weight=w)
        >>> model.is_consistent()
        True
        >>> model.classes_
        array([1, 2, 3])
        """
        given = self._validate_training(X, y, sample_weight)
        data = self._encode_missing(given)
        rng = check_random_state(self.random_state)
        # With every feature categorical no move is small, so consistency asks nothing of
        # a group: fusing trees would only cut their leaves into smaller regions labelled
        # from fewer rows (car, 21 one-hot columns, 3 hold-out splits: test MAE 0.028 in
        # groups of 3, 0.023 with each tree its own group).
        self.group_size_ = self.group_size if self.relabel and not data.categorical.all() else 1
        n_groups = self.n_estimators // self.group_size_
        seeds = rng.randint(MAX_SEED, size=(n_groups, self.group_size_, 2))
        with one_blas_thread():
            job = self._select(data, self._group_job(data, index=self.space_params_["monotonic_space"] != "axes"), seeds)
            self.groups_ = self._fit_groups(data, job, seeds)
        self._views_of_groups()
        self._store_notion(data, job)
        changed = [i["adapted"] for i in self.groups_info_ if i.get("adapted")]
        if changed:
            budget = self.relabel_params_
            warnings.warn(
                f"{len(changed)} of {len(self.groups_)} groups passed max_regions={budget['max_regions']} or "
                f"max_edges={budget['max_edges']} and were made smaller (e.g. {changed[0]}); see groups_info_. "
                "A smaller group_size or max_depth avoids this"
                # Only the raw features can be traded for a smaller space: every projection
                # already fuses in n_components axes plus the categorical ones.
                + (", as does projection='auto'"
                   if self.projection == "none" and np.count_nonzero(~data.categorical) > 2 else ""),
                GroupSizeWarning,
                stacklevel=3,
            )
        if self.relabel:
            logger.info("fitted %d groups: %d regions and %d edges on average", len(self.groups_),
                        *(np.mean([i[k] for i in self.groups_info_]) for k in ("n_regions", "n_edges")))
        self._warn_if_one_class(given)
        return self

    #: What a model saved before the data's resolution existed was fitted for.
    consistency = "pointwise"

    def _fit_groups(self, data, job: "_GroupJob", seeds: NDArray, additive_scores: dict | None = None) -> list:
        """Fit one group per row of ``seeds`` (in parallel through joblib).

        ``additive_scores``: scores already fitted on ``data`` and their values on it, by
        their model, features and signs; a new one is added (the probes of two spaces
        share one score and its values).
        """
        if seeds.shape[0] == 0:
            return []
        score = None if job.additive is None else job.additive.value(data.X)
        ranked = None if job.ranks is None else job.ranks.apply(data.X)  # once for every group
        if job.projection == "additive" and job.additive is None:
            # One score for every group, fitted on the rows this fit may use (a held-out
            # probe's zero-weight rows are left out); constrained features get monotone curves.
            signs = None if job.monotonic_cst is None else job.monotonic_cst[job.score_features]
            key = (job.score_model, job.ranks is None, job.score_features.tobytes(),
                   None if signs is None else np.asarray(signs).tobytes())
            fitted = {} if additive_scores is None else additive_scores
            if key not in fitted:
                weight = np.ones(data.n_samples) if data.sample_weight is None else data.sample_weight
                rows = np.flatnonzero(weight > 0)
                # A rank-mapped space's score is fitted on the ranks and reads them through the map.
                X = data.X if ranked is None else ranked
                if job.score_model == "kernel":
                    # Landmarks drawn from the first group's seed: every fit with this
                    # random_state (and each of its probes) draws the same ones.
                    fitted_score = kernel_score(X, data.y, rows, job.score_features, weight,
                                                seed=int(seeds[0, 0, 1]))
                else:
                    fitted_score = _additive_score(X, data.y, rows, job.score_features, weight, signs, job.ranks is not None)
                if fitted_score is not None and job.ranks is not None:
                    fitted_score = with_ranks(fitted_score, job.ranks)
                fitted[key] = fitted_score, None if fitted_score is None else fitted_score.value(data.X)
            fitted_score, score = fitted[key]
            job = replace(job, additive=fitted_score)
        return fit_in_sizes(seeds, lambda some, name: run_jobs(
            (delayed(_fit_group)(data.X, data.y, self.n_classes_, s, job, data.sample_weight, score, ranked)
             for s in some), n_jobs=self.n_jobs, total=some.shape[0], desc=f"OTreeBagger {name}", verbose=self.verbose),
            job.on_budget)

    @property
    def _vote(self) -> str:
        # The vote's current name (a deprecated one is translated; fit warned of it).
        return check_vote(self.vote, warn=False)

    def _check_params(self) -> None:
        check_vote(self.vote)
        self.relabel_params_ = resolve_settings(self, "relabel_params", RELABEL_PARAMS)
        self.space_params_ = resolve_settings(self, "space_params", SPACE_PARAMS)
        self._threshold_rule = self.thresholds if self.relabel else "midpoint"
        if self.relabel and self.group_size > self.n_estimators:
            raise ValueError(f"group_size={self.group_size} must not exceed n_estimators={self.n_estimators}: a group "
                             "fuses group_size of the trees (3 by default); pass a smaller group_size or more trees")
        if not VOTES[self._vote].keeps_consistency and self.relabel:
            raise ValueError(
                f"vote={self.vote!r} breaks the consistency that relabelling guarantees; "
                "use vote='median' or relabel=False"
            )

    def _votes(self, X: ArrayLike) -> NDArray[np.intp]:
        """Class index of every voter for every sample, shape (n_samples, n_voters)."""
        X = self._validate_X_predict(X)
        return _group_votes(self.groups_, X)

    def voter_predictions(self, X: ArrayLike) -> NDArray:
        """The class every voter (relabelled group, or tree without relabelling) predicts for every row.

        ``predict`` combines these columns by ``vote``; the first L columns are the
        model with the first L voters (seeds are drawn voter by voter), so curves of
        the error against the number of trees need one fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_voters)
            Class labels (of ``classes_``).

        Examples
        --------
        >>> import numpy as np
        >>> from ensemble import OTreeBagger
        >>> from ensemble.datasets import make_synthetic_i
        >>> X, y = make_synthetic_i(200, random_state=0)
        >>> model = OTreeBagger(n_estimators=9, random_state=0).fit(X, y)
        >>> votes = model.voter_predictions(X[:5])
        >>> votes.shape, bool(np.all(np.sort(votes, axis=1)[:, 1] == model.predict(X[:5])))
        ((5, 3), True)
        """
        return self.classes_[self._votes(X)]

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """Mean over the trees of their impurity-decrease importances, in the features of ``X``.

        A tree grown on a group's PLS components gives each component's importance
        to the projected features in proportion to how far the component moves
        along each (:meth:`GroupSpace.importances`); kept features keep their own.
        Every tree's importances sum to 1. Relabelling is not reflected: for the
        importance of a feature to the relabelled model's predictions use
        :func:`sklearn.inspection.permutation_importance`
        (``examples/plot_importances.py``).
        """
        check_is_fitted(self)
        d = self.n_features_in_
        columns = d + self.missing_features_.shape[0]
        per_tree = []
        for group in self.groups_:
            for tree in group.trees:
                z = tree_feature_importances(tree, tree.n_features_in_)
                per_tree.append(z if group.space is None else group.space.importances(z, columns))
        mean = np.mean(per_tree, axis=0)
        # A missing-value indicator's importance is its feature's.
        out = mean[:d].copy()
        np.add.at(out, self.missing_features_, mean[d:])
        return out

    def predict(self, X: ArrayLike) -> NDArray:
        """Predict the lower median (or the rounded mean, or the majority) of the voters' classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Members of ``classes_``.
        """
        votes = self._votes(X)  # checks fitting before classes_ is read
        return self.classes_[combine_votes(votes, self.n_classes_, self._vote)]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Share of voters per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Vote shares in ``classes_`` order; rows sum to 1.
        """
        votes = self._votes(X)
        return vote_counts(votes, self.n_classes_) / votes.shape[1]

