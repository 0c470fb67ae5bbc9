"""OTreeBagger: bagged groups of ordinal trees, each group's fused partition relabelled for consistency."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import delayed
from sklearn.utils.validation import check_is_fitted, validate_data

import relabel
from relabel import TooManyRegionsError
from ensemble._base import MAX_SEED, bootstrap_weights, encode_target
from ensemble._docs import fill_doc
from ensemble._parallel import run_jobs
from ensemble._voting import VOTES, combine_votes, vote_counts, voters_certificate
from trees import CRITERIA, OrdinalTreeClassifier, leaf_boxes
from trees._labels import ordered_categories
from trees._validation import check_sample_weight

logger = logging.getLogger(__name__)

__all__ = ["OTreeBagger", "TooManyRegionsError"]


# Measured (benchmarks/memory.py and the relabel benchmark, K = 5): a group's peak
# memory is driven by its adjacency edges. With OR-Tools' max-flow it was about
# 1 KB per edge (10.3 M edges in 4D: 10.9 GB; 1.7 M edges in 2D: 2.2 GB); the
# pseudoflow graph cut needs about 0.4 KB per edge (2.84 M edges in 4D: 1.14 GB
# above the data), plus about 0.3 KB per region. These budgets keep one group well
# under 6 GB, so two parallel jobs fit a 24 GB machine with room to spare.
DEFAULT_MAX_REGIONS = 1_000_000
DEFAULT_MAX_EDGES = 5_000_000


@dataclass
class FittedGroup:
    """One relabelled group of ``M`` trees (an :class:`OTreeBagger` voter).

    Attributes
    ----------
    trees : list of OrdinalTreeClassifier
        The group's trees, fitted on bootstrap weights.
    partition : relabel.FusedPartition or None
        The fused partition of the trees' leaves (``None`` without relabelling).
    labels : ndarray of shape (n_regions,)
        Class index of every region after relabelling (or the single tree's leaf
        labels by node id when ``relabel=False``).
    edges : ndarray of shape (n_edges, 2)
        Region adjacency used by the consistency constraints.
    counts : ndarray of shape (n_regions, n_classes) or None
        Training class counts per region (the p_{n,i} of the ILP).
    info : dict
        Regions, edges, empty regions, objective, solver status and solve time.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble import OTreeBagger
    >>> X = np.random.RandomState(0).uniform(size=(60, 2)); y = (X.sum(axis=1) > 1).astype(int)
    >>> group = OTreeBagger(n_estimators=2, group_size=2, random_state=0).fit(X, y).groups_[0]
    >>> group.predict_index(X[:4]).shape, group.info["status"]
    ((4,), 'optimal')
    """

    trees: list
    partition: Any
    labels: NDArray[np.intp]
    edges: NDArray[np.intp]
    counts: NDArray[np.float64] | None = None
    info: dict = field(default_factory=dict)

    def leaves(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """Matrix of leaf ids, one column per tree, for already validated float64 ``X``."""
        # The structures' own apply skips per-tree input validation: the
        # ensemble validated X once.
        return np.column_stack([tree.tree_.apply(X) for tree in self.trees])

    def predict_index(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """Class index predicted by this group: a lookup, no geometry."""
        if self.partition is None:
            return self.labels[self.trees[0].tree_.apply(X)]
        return self.labels[self.partition.locate(self.leaves(X))]


def _fit_group(X, y, n_classes, seeds, params, sample_weight=None) -> FittedGroup:
    """Grow, fuse, count and relabel one group. Module level so that joblib can pickle it."""
    trees, weights = [], []
    for bootstrap_seed, tree_seed in seeds:
        w = bootstrap_weights(X.shape[0], bootstrap_seed, params["bootstrap"], sample_weight)
        if sample_weight is not None:
            # Bootstrap multiplicity times the user's weight: zero-weight rows never reach a tree.
            w = w * sample_weight
        tree = OrdinalTreeClassifier(
            criterion=params["criterion"],
            max_depth=params["max_depth"],
            min_samples_leaf=params["min_samples_leaf"],
            max_features=params["max_features"],
            leaf_label=params["leaf_label"],
            classes=np.arange(n_classes),
            random_state=tree_seed,
        )
        tree.fit(X, y, sample_weight=w)
        trees.append(tree)
        weights.append(w)

    if not params["relabel"]:
        # The tree votes with its own leaf labels; indexed by node id for apply().
        labels = np.asarray(trees[0].leaf_label_, dtype=np.intp)
        info = {"n_regions": int(trees[0].get_n_leaves()), "n_edges": 0, "n_empty": 0,
                "objective": np.nan, "status": "not relabelled", "solver": None, "solve_time": 0.0}
        return FittedGroup(trees, None, labels, np.empty((0, 2), np.intp), None, info)

    partition = relabel.fuse([leaf_boxes(tree) for tree in trees], max_regions=params["max_regions"])
    user_weight = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    if params["relabel_counts"] == "train":
        count_weight = user_weight.copy()
    else:
        # The union of the group's bootstrap samples, each point once, times its weight.
        count_weight = np.where(np.sum(weights, axis=0) > 0, user_weight, 0.0)
    rows = np.flatnonzero(count_weight)
    region = partition.locate(np.column_stack([tree.tree_.apply(X[rows]) for tree in trees]))
    counts = relabel.region_counts(region, y[rows], n_classes, count_weight[rows],
                                   n_regions=partition.n_regions)
    edges, _ = relabel.adjacency_edges(partition, contact=params["contact"], max_edges=params["max_edges"])
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, C1=params["C1"], C2=params["C2"])
    result = relabel.solve(
        problem,
        solver=params["solver"],
        formulation=params["formulation"],
        time_limit=params["time_limit"],
        threads=1,
        on_solver_failure=params["on_solver_failure"],
    )
    info = {
        "n_regions": int(partition.n_regions),
        "n_edges": int(edges.shape[0]),
        "n_empty": int(np.sum(counts.sum(axis=1) == 0)),
        "objective": float(result.objective),
        "status": result.status.name.lower(),
        "solver": result.solver,
        "solve_time": float(result.wall_time),
    }
    return FittedGroup(trees, partition, np.asarray(result.labels, dtype=np.intp), edges, counts, info)


@fill_doc
class OTreeBagger(ClassifierMixin, BaseEstimator):
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
        ``group_size * (n_estimators // group_size)`` are not grown.
    criterion : {"ogini", "gini", "entropy", "wig", "ranking"}, default="ogini"
        Splitting criterion of the trees (see :data:`trees.CRITERIA`).
    max_depth : int or None, default=None
        Maximum depth of every tree.
    min_samples_leaf : int, default=1
        Minimum number of (distinct) bootstrap rows in a leaf.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features considered per split, as in :class:`trees.OrdinalTreeClassifier`.
    relabel : bool, default=True
        ``False`` gives plain bagged trees (each tree a voter, no consistency).
    vote : {"median", "majority", "mean"}, default="median"
        How voters are combined (:func:`ensemble._voting.combine_votes`): the
        lower median; the rounded mean ``floor(mean + 1/2)`` of the voters'
        class indices, consistent too (DESIGN.md section 9); or ``"majority"``
        (the most frequent class, lowest on ties, with trees labelling leaves by
        their mode), only allowed with ``relabel=False``: with
        ``criterion="gini"`` it is the paper's TreeBagger baseline. Majority
        voting can break consistency, the median and the mean cannot.
    solver : {"graphcut", "cbc", "cpsat"}, default="graphcut"
        Backend of :func:`relabel.solve`; all reach the same optimum.
    formulation : {"paper", "tight"}, default="paper"
        ILP formulation for CBC and CP-SAT (the graph cut is exact for both).
    contact : {"closure", "face"}, default="closure"
        Regions are adjacent when their closures meet (faces, edges or corners),
        or with ``"face"`` only when they share a face (weaker: corner contacts
        are then unconstrained and the model may jump two classes at a corner).
    relabel_counts : {"bootstrap", "train"}, default="bootstrap"
        Region counts from the union of the group's bootstrap samples (each
        point once), or from every training point once.
    bootstrap : bool, default=True
        Draw bootstrap samples; ``False`` grows every tree on the whole training
        set (with ``n_estimators=group_size=1``: the single-tree relabelling of
        Cardoso & Sousa, 2010).
    C1, C2 : float or None, default=None
        Penalties for label changes between two empty regions (C1) and between an
        empty and a non-empty region (C2); ``None`` gives the paper's
        ``1 / (N (K - 1))`` and ``1 / (0.9 N (K - 1))``.
    time_limit : float or None, default=None
        Seconds per group for the solver; ``None`` means no limit.
    on_solver_failure : {"warn", "raise"}, default="warn"
        When a solver stops without a proven optimum: warn and keep the best
        consistent labelling found, or raise :class:`relabel.RelabelError`.
    max_regions : int, default=1_000_000
        Largest fused partition a group may build; a larger one raises
        :class:`relabel.TooManyRegionsError` (a ``ValueError``) before allocating it.
    max_edges : int, default=5_000_000
        Largest adjacency graph a group may build (about 0.4 KB of graph-cut memory
        per edge with K = 5); a larger one raises :class:`relabel.TooManyRegionsError` before the
        solver allocates. High-dimensional data with deep trees and large groups
        reach it first: lower ``group_size`` or ``max_depth``.
    {classes}
    {n_jobs}
    {random_state}
    verbose : int, default=0
        Log progress; ``verbose >= 1`` shows a progress bar over groups.

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
    groups_ : list of FittedGroup
        The voters: their trees, fused partition, region labels and edges.
    groups_info_ : list of dict
        Per group: ``n_regions``, ``n_edges``, ``n_empty``, ``objective``,
        ``status``, ``solver`` and ``solve_time`` (seconds).

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
        "vote": [StrOptions(set(VOTES))],
        "solver": [StrOptions(set(relabel.SOLVERS))],
        "formulation": [StrOptions(set(relabel.FORMULATIONS))],
        "contact": [StrOptions(set(relabel.CONTACTS))],
        "relabel_counts": [StrOptions({"bootstrap", "train"})],
        "bootstrap": ["boolean"],
        "C1": [Interval(Real, 0.0, None, closed="neither"), None],
        "C2": [Interval(Real, 0.0, None, closed="neither"), None],
        "time_limit": [Interval(Real, 0.0, None, closed="neither"), None],
        "on_solver_failure": [StrOptions({"warn", "raise"})],
        "max_regions": [Interval(Integral, 1, None, closed="left")],
        "max_edges": [Interval(Integral, 0, None, closed="left")],
        "classes": ["array-like", None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_estimators: int = 100,
        group_size: int = 3,
        criterion: str = "ogini",
        max_depth: int | None = None,
        min_samples_leaf: int = 1,
        max_features: int | float | str | None = None,
        relabel: bool = True,
        vote: str = "median",
        solver: str = "graphcut",
        formulation: str = "paper",
        contact: str = "closure",
        relabel_counts: str = "bootstrap",
        bootstrap: bool = True,
        C1: float | None = None,
        C2: float | None = None,
        time_limit: float | None = None,
        on_solver_failure: str = "warn",
        max_regions: int = DEFAULT_MAX_REGIONS,
        max_edges: int = DEFAULT_MAX_EDGES,
        classes: ArrayLike | None = None,
        n_jobs: int | None = None,
        random_state: Any = None,
        verbose: int = 0,
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
        self.formulation = formulation
        self.contact = contact
        self.relabel_counts = relabel_counts
        self.bootstrap = bootstrap
        self.C1 = C1
        self.C2 = C2
        self.time_limit = time_limit
        self.on_solver_failure = on_solver_failure
        self.max_regions = max_regions
        self.max_edges = max_edges
        self.classes = classes
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "OTreeBagger":
        """Grow the bootstrap trees, relabel every group and keep the voters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; NaN and infinite values are rejected.
        y : array-like of shape (n_samples,)
            Ordinal class labels (order: ``classes`` or sorted).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative finite weights; ``None`` weighs every sample 1. Each
            tree is grown with (bootstrap multiplicity x weight), and the region
            counts p_{n,i} (DESIGN.md section 4, "Costs") are weighted too: for
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
            than ``n_estimators``, ``vote="majority"`` with relabelling, or a
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
        categories = ordered_categories(y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if self.relabel and self.group_size > self.n_estimators:
            raise ValueError(
                f"group_size={self.group_size} must not exceed n_estimators={self.n_estimators}"
            )
        if self.vote == "majority" and self.relabel:
            raise ValueError(
                "vote='majority' breaks the consistency that relabelling guarantees; "
                "use vote='median' or relabel=False"
            )
        y_idx = encode_target(self, y, categories)
        X = np.ascontiguousarray(X)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X.shape[0])

        rng = check_random_state(self.random_state)
        if self.relabel:
            n_groups, size = self.n_estimators // self.group_size, self.group_size
        else:
            n_groups, size = self.n_estimators, 1
        seeds = rng.randint(MAX_SEED, size=(n_groups, size, 2))
        params = {
            "criterion": self.criterion,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
            "max_features": self.max_features,
            "leaf_label": "mode" if self.vote == "majority" else "median",
            "relabel": self.relabel,
            "bootstrap": self.bootstrap,
            "relabel_counts": self.relabel_counts,
            "contact": self.contact,
            "solver": self.solver,
            "formulation": self.formulation,
            "C1": self.C1,
            "C2": self.C2,
            "time_limit": self.time_limit,
            "on_solver_failure": self.on_solver_failure,
            "max_regions": self.max_regions,
            "max_edges": self.max_edges,
        }
        jobs = (
            delayed(_fit_group)(X, y_idx, self.n_classes_, seeds[g], params, sample_weight)
            for g in range(n_groups)
        )
        self.groups_ = run_jobs(jobs, n_jobs=self.n_jobs, total=n_groups, desc="OTreeBagger groups",
                                verbose=self.verbose)
        self.estimators_ = [tree for group in self.groups_ for tree in group.trees]
        self.groups_info_ = [group.info for group in self.groups_]
        if self.relabel:
            logger.info(
                "fitted %d groups: %d regions and %d edges on average",
                n_groups,
                np.mean([i["n_regions"] for i in self.groups_info_]),
                np.mean([i["n_edges"] for i in self.groups_info_]),
            )
        return self

    def _votes(self, X: ArrayLike) -> NDArray[np.intp]:
        """Class index of every voter for every sample, shape (n_samples, n_voters)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, order="C")
        return np.column_stack([group.predict_index(X) for group in self.groups_])

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
        return self.classes_[combine_votes(votes, self.n_classes_, self.vote)]

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

    def is_consistent(self, contact: str = "closure") -> bool:
        """Certify the model from its fitted geometry, not from the solver's edges.

        For every group the contacts of its fused partition are derived again
        from the regions' boxes (:func:`relabel.adjacency_edges`) and every
        contact's two labels must differ by at most one; then the median or the
        rounded mean of the groups is consistent (Theorem 1; DESIGN.md
        sections 4 and 9).

        Parameters
        ----------
        contact : {"closure", "face"}, default="closure"
            ``"closure"`` is the paper's pointwise consistency (regions whose
            closures meet, at a face, an edge or a corner), whatever contact the
            model was fitted with: a ``contact="face"`` model usually fails it.
            ``"face"`` is the weaker check that only shared faces are
            consistent.

        Returns
        -------
        bool
            True when certified. Always False for ``relabel=False`` and
            ``vote="majority"`` models, which carry no guarantee.

        Raises
        ------
        ValueError
            If ``contact`` is not one of :data:`relabel.CONTACTS`.

        Examples
        --------
        >>> from ensemble import OTreeBagger
        >>> from ensemble.datasets import make_synthetic_i
        >>> X, y = make_synthetic_i(200, random_state=0)
        >>> model = OTreeBagger(n_estimators=6, contact="face", random_state=0).fit(X, y)
        >>> model.is_consistent(contact="face")
        True
        """
        check_is_fitted(self)
        if contact not in relabel.CONTACTS:
            raise ValueError(f"contact must be one of {relabel.CONTACTS}; got {contact!r}")
        if not self.relabel:
            return False
        checks = (
            relabel.is_consistent(relabel.adjacency_edges(group.partition, contact=contact).edges, group.labels)
            for group in self.groups_
        )
        return voters_certificate(checks, self.vote)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
