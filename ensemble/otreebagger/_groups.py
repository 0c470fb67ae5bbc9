"""OTreeBagger's voters: the paper's pipeline for one group of trees, in the group's space.

Everything one worker does for one group of M bootstrap trees (docs/design.md
section 5): the group's coordinates (a space of :mod:`ensemble.spaces._spaces`, or the features), the trees
grown there, their thresholds (midpoints or drawn in their gaps), the fused
partition, its region counts and contacts, the consistency problem and its
solution, and the budget adaptation when a partition grows too large.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

import relabel
from relabel import TooManyRegionsError
from ensemble.base._estimator import TreeSpec, bootstrap_weights, draw_in_gaps, grow_tree, place_in_gaps
from ensemble.certificates._certificates import tree_nodes
from ensemble.base._kernels import node_gaps
from trees import leaf_boxes
from ensemble.spaces._rank_map import RankMap
from ensemble.spaces._moves import move_search
from ensemble.otreebagger._slabs import relabel_slabs, slab_labels, slab_tops

# The score spaces are named here too: model files written before they moved to
# ensemble.spaces._spaces refer to these names (ensemble.model_files._model_file trusts both).
from ensemble.spaces._spaces import (AdditiveScore, GroupSpace, KernelScore, _constraints_in_space,  # noqa: F401
                              _in_space, _residual_features, _resolution_in_space, grid_in_space)

__all__ = ["FittedGroup"]


@dataclass
class FittedGroup:
    """One relabelled group of ``M`` trees (an :class:`OTreeBagger` voter).

    Attributes
    ----------
    trees : list of OrdinalTreeClassifier
        The group's trees, fitted on bootstrap weights in the group's space.
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
        Regions, edges, empty regions, objective, solver status, solve time, and
        what was adapted to fit the size budgets.
    space : GroupSpace or None
        The coordinates the trees split (``None``: the features themselves).
    monotone : ndarray of shape (n_pairs, 2) or None
        Region pairs (n, m) with label(n) <= label(m) from the monotone constraints.
    slabs : tuple of ndarray or None
        With ``thresholds="slab"``, per feature the slab tops t' = nextafter(t) of the
        trees' thresholds t: a point on one reads its class from the corners of its slab
        (:func:`ensemble.otreebagger._slabs.slab_labels`); None for a plain group.

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
    space: GroupSpace | None = None
    monotone: NDArray[np.intp] | None = None
    slabs: tuple | None = None

    def __getstate__(self) -> dict:
        # A saved model keeps what prediction needs: the trees, the partition's lookup
        # tables and the labels. The regions' boxes, contacts and training counts are
        # derived from the trees again when a certificate needs them (:meth:`geometry`):
        # fusion is deterministic, so the regions come back in the same order.
        state = self.__dict__.copy()
        if self.partition is not None:
            d = self.partition.n_features
            state["partition"] = replace(self.partition, lower=np.empty((0, d)), upper=np.empty((0, d)),
                                         exact_lower=None, exact_upper=None, exact_region=None)
        state.update(edges=None, counts=None, monotone=None,
                     labels=self.labels.astype(np.int16 if self.labels.max(initial=0) > 127 else np.int8))
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.labels = np.asarray(self.labels, dtype=np.intp)

    def geometry(self, grid: relabel.DataGrid | None = None):
        """The group's fused partition with its regions' boxes (fused again after loading a saved model).

        ``grid``: the data's grid on the group's axes, which the fit snapped inside (a model saved
        before it snapped so is fused without one when the grid gives other regions).
        """
        if self.partition is None or self.partition.lower.shape[0] == self.partition.n_regions:
            return self.partition
        boxes = [leaf_boxes(tree) for tree in self.trees]
        partition = relabel.fuse(boxes, grid=grid)
        if grid is not None and not np.array_equal(partition.keys, self.partition.keys):
            partition = relabel.fuse(boxes)
        if not np.array_equal(partition.keys, self.partition.keys):
            raise RuntimeError("the trees of a loaded OTreeBagger group fuse into another partition")
        self.partition = partition
        return partition

    def coordinates(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None,
                    ranked: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """Validated float64 rows in the group's space (``score``: its additive score's value on them, if known;
        ``ranked``: its rank map applied to them, if known)."""
        return X if self.space is None else self.space.transform(X, score, ranked)

    def leaves(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None,
               ranked: NDArray[np.float64] | None = None) -> NDArray[np.intp]:
        """Matrix of leaf ids, one column per tree, for already validated float64 ``X``."""
        # The structures' own apply skips per-tree input validation: the
        # ensemble validated X once.
        Z = self.coordinates(X, score, ranked)
        return np.column_stack([tree.tree_.apply(Z) for tree in self.trees])

    def predict_index(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None,
                      ranked: NDArray[np.float64] | None = None) -> NDArray[np.intp]:
        """Class index predicted by this group: a lookup, no geometry.

        ``score``: the value of the group's additive score on ``X``, when the caller
        computed it once for every group that shares the score.
        """
        if self.partition is None:
            return self.labels[self.trees[0].tree_.apply(self.coordinates(X, score, ranked))]
        labels = self.partition_index(X, score, ranked)
        if self.slabs is not None:  # on the features' own axes: X is the group's space
            labels = slab_labels(self.slabs, X, labels, self.partition_index)
        return labels

    def partition_index(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None,
                        ranked: NDArray[np.float64] | None = None) -> NDArray[np.intp]:
        """The class of the fused partition's region of each row: :meth:`predict_index` but for slab tops."""
        return self.labels[self.partition.locate(self.leaves(X, score, ranked))]


def _group_space(X, y, weights, job, score) -> GroupSpace | None:
    """The group's space: PLS components of the projectable features of its bootstrap rows.

    With an additive score (``projection="additive"``) the score first, then PLS
    directions of what it leaves of the class index (``score``: its value on X).
    """
    projected = job.projected
    if projected.shape[0] == 0 and job.additive is None:
        return None
    weight = np.sum(weights, axis=0)
    rows = np.flatnonzero(weight > 0)
    if job.additive is not None:
        residual = y - score
        if job.residual_axes == "features":
            axes = _residual_features(X, residual, rows, weight, projected, job.n_components - 1)
            return GroupSpace.with_additive(job.additive, X, residual, rows, projected,
                                            np.concatenate([job.kept, axes]), 0)
        return GroupSpace.with_additive(job.additive, X, residual, rows, projected, job.kept,
                                        job.n_components - 1)
    return GroupSpace.pls(X, y, rows, projected, job.kept, job.n_components, monotone=job.monotonic_cst)


def _grow(Z, y, seeds, weights, job: "_GroupJob", max_depth, space=None):
    """The group's trees, grown in its space on their bootstrap weights (thresholds moved if asked)."""
    spec = replace(job.spec, max_depth=max_depth)
    # The trees differ only in their integer seeds: their parameters are checked once.
    trees = [grow_tree(spec, Z, y, w, tree_seed, validate=i == 0)
             for i, ((_, tree_seed), w) in enumerate(zip(seeds, weights, strict=True))]
    if job.thresholds in ("gap", "slab"):
        # Slab groups align their faces: one place per gap. A group that cannot keep slabs keeps the gap
        # draws' two places, and with them their thin regions (one place would be midpoint's accuracy).
        places = 1 if _may_keep_slabs(Z, space, job) else _PLACES_PER_GAP
        _draw_thresholds(trees, Z, weights, [tree_seed for _, tree_seed in seeds], places)
    return trees


#: Places the trees of a group share in one gap of its values (docs/design.md section 5,
#: "Thresholds"): two suffice to part every corner where two trees split one gap.
_PLACES_PER_GAP = 2


def _draw_thresholds(trees: list, Z: NDArray[np.float64], weights: list, tree_seeds: list,
                     places: int = _PLACES_PER_GAP) -> None:
    """Move every threshold from its midpoint to a draw inside its gap, ``places`` places per gap of the group.

    Each threshold is drawn uniformly inside its node's gap between training values
    (the rows of the tree's bootstrap sample keep their sides). The gap of the group's
    values that holds the draw then fixes the place: the j-th tree (in the group's
    order) to split inside that gap puts its thresholds there at the group's draw
    number j mod 2 for that gap. Each threshold keeps the law of a uniform draw in its
    node's gap; trees that split one gap part it at two places at most, so the fused
    partition holds one thin empty region per such gap (which the relabelling may give
    an intermediate class) rather than one per tree.
    """
    internals, thresholds, features, draws = [], [], [], []
    for tree, w, seed in zip(trees, weights, tree_seeds, strict=True):
        left, right, feature, threshold, missing = tree_nodes(tree)
        lo, hi = node_gaps(left, right, feature, threshold, missing, np.ascontiguousarray(Z[w > 0]))
        internal = np.flatnonzero(np.asarray(left) >= 0)
        internals.append(internal)
        thresholds.append(np.array(threshold, dtype=np.float64))
        features.append(np.asarray(feature)[internal])
        draws.append(draw_in_gaps(np.random.RandomState(seed), lo[internal], hi[internal]))
    # Every internal node of the group's trees at once: its tree, feature and draw.
    owner_sizes = [d.shape[0] for d in draws]
    owner = np.repeat(np.arange(len(trees)), owner_sizes)
    feature, x = np.concatenate(features), np.concatenate(draws)
    # Each draw's gap of the group's values (k: between values k and k + 1), on the features split only.
    rows = np.flatnonzero(np.sum(weights, axis=0) > 0)
    k, lo, hi, offset = (np.zeros(x.shape[0], dtype=np.int64), np.zeros(x.shape[0]), np.zeros(x.shape[0]),
                         np.zeros(x.shape[0], dtype=np.int64))
    inside = np.zeros(x.shape[0], dtype=bool)
    n_keys = 0
    for f in np.unique(feature):
        at = np.flatnonzero(feature == f)
        column = Z[rows, f]
        values = np.unique(column[np.isfinite(column)])
        k[at] = np.searchsorted(values, x[at], side="right") - 1
        ok = (k[at] >= 0) & (k[at] + 1 < values.shape[0])
        inside[at] = ok
        lo[at[ok]], hi[at[ok]] = values[k[at[ok]]], values[k[at[ok]] + 1]
        offset[at] = n_keys
        n_keys += values.shape[0] + 1
    # The rank of each tree among the trees that split inside the gap, in the group's order.
    pairs, pair_of = np.unique(np.column_stack([offset + k + 1, owner]), axis=0, return_inverse=True)
    first = np.searchsorted(pairs[:, 0], pairs[:, 0], side="left")
    slot = (np.arange(pairs.shape[0]) - first) % places
    place = np.random.RandomState([*tree_seeds, places]).random_sample((pairs.shape[0], places))
    # The draws of a gap's first pair are the gap's: one pair of places per gap.
    share = place[first, slot][pair_of.ravel()]
    x[inside] = place_in_gaps(lo[inside], hi[inside], share[inside])
    for tree, internal, moved, placed in zip(trees, internals, thresholds, np.split(x, np.cumsum(owner_sizes)[:-1]),
                                             strict=True):
        moved[internal] = placed
        tree.tree_.set_thresholds(moved)


#: Weight of a leaf's counts in the empty regions it holds: small, so that the rows decide
#: wherever they reach (docs/design.md section 4), and a power of two, so that the graph
#: cut's integer scaling of unit weights stays exact.
PRIOR_WEIGHT = 2.0**-9

#: Rounds of adding the move pairs a labelling breaks before all of them are added at once.
_LAZY_ROUNDS = 8


def _leaf_prior(partition, counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Class weights of the empty regions: the counted rows of the trees' leaves that hold them.

    An empty region n gets ``PRIOR_WEIGHT * sum_t counts(leaf_t(n))``, the weighted
    class counts of the group's counted rows in each tree's leaf around it (zero
    rows elsewhere). Linear in the weights: class weights weigh in, and weights
    scaled by c or integer weights repeated as rows give the same labels.
    """
    prior = np.zeros_like(counts)
    empty = counts.sum(axis=1) == 0
    if not empty.any():
        return prior
    held = np.flatnonzero(~empty)
    for keys in partition.keys.T:
        # A leaf's counts are the sum of its regions' counts (in region order, as np.add.at
        # sums; bincount over the regions that hold rows is many times faster).
        n_leaves = int(keys.max()) + 1
        leaf = np.column_stack([np.bincount(keys[held], weights=counts[held, k], minlength=n_leaves)
                                for k in range(counts.shape[1])])
        prior[empty] += PRIOR_WEIGHT * leaf[keys[empty]]
    return prior


def _move_pairs(search, partition, job, taken, **options):
    """``search`` (:func:`move_search`) within what ``max_edges`` leaves beside the ``taken`` contacts and pairs,
    naming the group's budget."""
    try:
        return search(partition, max_pairs=max(job.max_edges - taken, 0), **options)
    except TooManyRegionsError as error:
        raise TooManyRegionsError(
            f"the partition's contacts and its move pairs pass max_edges={job.max_edges} ({taken} held before this "
            f"search, {partition.n_regions} regions); fuse fewer or shallower trees (a smaller group_size or "
            "max_depth) or raise relabel_params['max_edges']") from error


def _relabel_group(Z, y, n_classes, trees, weights, space, job, sample_weight):
    """Fuse, count, find the contacts and solve; raises TooManyRegionsError past a budget."""
    # Bounds snap only inside one gap of the data: on features whose values are a few ulps apart,
    # snapping across them would merge regions of different training values (relabel.snap_table).
    partition = relabel.fuse([leaf_boxes(tree) for tree in trees], max_regions=job.max_regions,
                             grid=grid_in_space(space, job.grid))
    user_weight = np.ones(Z.shape[0]) if sample_weight is None else sample_weight
    if job.relabel_counts == "train":
        count_weight = user_weight.copy()
    else:
        # The union of the group's bootstrap samples, each point once, times its weight.
        count_weight = np.where(np.sum(weights, axis=0) > 0, user_weight, 0.0)
    rows = np.flatnonzero(count_weight)
    region = partition.locate(np.column_stack([tree.tree_.apply(Z[rows]) for tree in trees]))
    counts = relabel.region_counts(region, y[rows], n_classes, count_weight[rows], n_regions=partition.n_regions)
    prior = _leaf_prior(partition, counts) if job.empty_regions == "leaves" else None
    categorical = _in_space(space, job.categorical)
    times = []

    def solve(problem, start=None):
        # The previous round's labels start the graph cut's descent near the new optimum (the same optimum).
        result = relabel.solve(problem, solver=job.solver, formulation=job.formulation, time_limit=job.time_limit,
                               threads=1, on_solver_failure=job.on_solver_failure,
                               start=start if job.solver == "graphcut" else None)
        times.append(float(result.wall_time))
        return result, problem.edges

    tops = _slab_tops_if_eligible(Z, trees, partition, space, job, categorical)
    if tops is not None:
        labels, held, result, base = relabel_slabs(partition, counts, prior, job, categorical, solve)
        return partition, labels, held, counts, _solve_info(partition, held, base, result, times), None, tops
    edges, _ = relabel.adjacency_edges(
        partition, contact=job.contact, max_edges=job.max_edges,
        categorical_features=categorical, resolution=_resolution_in_space(space, job.resolution),
        grid=grid_in_space(space, job.grid) if job.contact == "closure" else None,
    )
    monotone = None
    if job.monotonic_cst is not None:
        monotone = relabel.monotone_pairs(partition, _constraints_in_space(space, job.monotonic_cst),
                                          categorical_features=categorical)

    base = relabel.ConsistencyProblem.from_counts(counts, edges, C1=job.C1, C2=job.C2, monotone=monotone,
                                                  prior=prior)
    result, held = solve(base)
    if job.contact == "closure" and space is not None and space.ranks is not None:
        # The pairs a move inside one gap (one float step, for the pointwise notion) joins,
        # held to labels one apart without the empty regions' penalties, and added as the
        # labelling breaks them: a labelling optimal with some of them that breaks none of
        # the others is optimal with all (docs/design.md section 13, Lemma 13.4).
        search = move_search(trees, space, job.categorical, reach="gap" if job.grid is not None else "float")
        moves, all_at_once = np.empty((0, 2), np.intp), True
        labels, changed = np.asarray(result.labels, dtype=np.int64), None
        for _ in range(_LAZY_ROUNDS):
            # A pair broken now and not held was unbroken at the last search, so one of its labels has
            # changed since: only the changed regions' pairs are searched after the first round.
            broken = _move_pairs(search, partition, job, edges.shape[0] + moves.shape[0],
                                 jumps_of=labels, among=changed)
            if broken.shape[0] == 0:
                all_at_once = False
                break
            moves = np.concatenate([moves, broken])  # none held yet: the labels broke them
            result, held = solve(base.with_moves(moves), result.labels)
            new = np.asarray(result.labels, dtype=np.int64)
            labels, changed = new, new != labels
        if all_at_once:  # still breaking after these rounds: every pair at once
            # The move pairs share the contacts' budget: the problem holds both (on 5,000 rows of
            # 50 features whose integer ones moved the score past 60 regions' widths: 4.5 million
            # pairs beside 172,000 contacts, a group 30 times a tree's cost; one tree as accurate).
            everything = _move_pairs(search, partition, job, edges.shape[0])
            result, held = solve(base.with_moves(everything), result.labels)
    return partition, np.asarray(result.labels, dtype=np.intp), held, counts, _solve_info(
        partition, held, base, result, times), monotone, None


def _solve_info(partition, held, base, result, times: list) -> dict:
    """A relabelled group's facts: regions, held pairs, empty regions, the last solve's outcome, all solves' time."""
    return {
        "n_regions": int(partition.n_regions),
        "n_edges": int(held.shape[0]),
        "n_empty": int(base.empty.sum()),
        "objective": float(result.objective),
        "status": result.status.name.lower(),
        "solver": result.solver,
        "solve_time": sum(times),
        "n_solves": len(times),
    }


def _may_keep_slabs(Z, space, job) -> bool:
    """Whether a group may keep slabs, as far as its settings and values say before its trees are grown.

    Slabs need ``thresholds="slab"``, the features' own axes, closure contacts without a
    user resolution, and no monotone constraints or missing values.
    """
    if job.thresholds != "slab" or space is not None or job.contact != "closure" or job.monotonic_cst is not None:
        return False
    return not (job.resolution is not None and np.any(job.resolution)) and not np.isnan(Z).any()


def _slab_tops_if_eligible(Z, trees, partition, space, job, categorical) -> tuple | None:
    """The slab tops of a ``thresholds="slab"`` group that can keep slabs (:func:`slab_tops`), else None.

    Slabs need what :func:`_may_keep_slabs` asks and a partition whose bounds are the
    trees' thresholds (nothing snapped); a group without them is relabelled with its
    closure contacts one class apart, as any other.
    """
    if not _may_keep_slabs(Z, space, job) or partition.exact_region is not None:
        return None
    tops = slab_tops(trees, Z.shape[1], job.grid, categorical)
    # Only categorical features split: no slab, nothing to relax (no contact crosses a category split).
    return tops if tops is not None and any(t.shape[0] for t in tops) else None


@dataclass(frozen=True)
class _GroupJob:
    """What a worker needs to grow and relabel one group (module level, so joblib can pickle it)."""

    spec: TreeSpec
    relabel: bool
    thresholds: str
    bootstrap: bool
    relabel_counts: str
    empty_regions: str
    contact: str
    solver: str
    formulation: str
    C1: float | None
    C2: float | None
    time_limit: float | None
    on_solver_failure: str
    max_regions: int
    max_edges: int
    on_budget: str
    projected: NDArray[np.intp]
    kept: NDArray[np.intp]
    n_components: int
    categorical: NDArray[np.bool_] | None
    monotonic_cst: NDArray[np.int8] | None
    resolution: NDArray[np.float64] | None
    grid: relabel.DataGrid | None = None
    projection: str = "pls"
    score_features: NDArray[np.intp] | None = None
    additive: AdditiveScore | KernelScore | None = None
    residual_axes: str = "pls"
    score_model: str = "additive"
    #: The rank map of a relabelled projected space, for either notion (docs/design.md section 13).
    ranks: RankMap | None = None


def _row_hash(X: NDArray[np.float64], y: NDArray, seed: int, weight: NDArray[np.float64]) -> NDArray[np.float64]:
    """A pseudo-random number in [0, 1) per row, a function of the row's ranks, its class and ``seed``.

    Equal rows get equal numbers (a splitmix64 mix of the ranks of the row's values
    in their columns among the rows of positive weight), and the numbers do not
    depend on the features' units nor on rows of weight 0.
    """
    rows = weight > 0
    ranks = [np.searchsorted(np.unique(X[rows, j]), X[:, j]) for j in range(X.shape[1])]
    with np.errstate(over="ignore"):
        h = np.full(X.shape[0], np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15), dtype=np.uint64)
        columns = np.column_stack(ranks + [np.asarray(y)]).astype(np.uint64)
        for j in range(columns.shape[1]):
            h = h ^ columns[:, j]
            h = h + np.uint64(0x9E3779B97F4A7C15)
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _fit_group(X, y, n_classes, seeds, job, sample_weight=None, score=None, ranked=None) -> FittedGroup:
    """Grow, fuse, count and relabel one group. Module level so that joblib can pickle it.

    ``score``: ``job.additive``'s value on X, computed once for every group of a fit
    (on 100,000 x 50 data, evaluating its 50 splines took a fifth of each group's time);
    ``ranked``: ``job.ranks`` applied to X, likewise.
    A group whose partition or contact graph would pass ``max_regions`` or
    ``max_edges`` is made smaller (with ``on_budget="adapt"``): first fewer trees
    (halving the group), then shallower trees (halving the depth), until it fits;
    ``info["adapted"]`` says what changed.
    """
    weights = []
    for bootstrap_seed, _ in seeds:
        w = bootstrap_weights(X.shape[0], bootstrap_seed, job.bootstrap, sample_weight)
        # Bootstrap multiplicity times the user's weight: zero-weight rows never reach a tree.
        weights.append(w if sample_weight is None else w * sample_weight)
    if score is None and job.additive is not None:
        score = job.additive.value(X)
    # A rank-mapped space is fitted on the ranks, and reads them through its own map at prediction.
    if ranked is None and job.ranks is not None:
        ranked = job.ranks.apply(X)
    space = _group_space(X if ranked is None else ranked, y, weights, job, score)
    if space is not None and job.ranks is not None and not space.is_identity:
        space = replace(space, ranks=job.ranks)
    Z = X if space is None else space.transform(X, score, ranked)
    depth = job.spec.max_depth
    trees = _grow(Z, y, seeds, weights, job, depth, space)
    if not job.relabel:
        # The tree votes with its own leaf labels; indexed by node id for apply().
        labels = np.asarray(trees[0].leaf_label_, dtype=np.intp)
        info = {"n_regions": int(trees[0].get_n_leaves()), "n_edges": 0, "n_empty": 0,
                "objective": np.nan, "status": "not relabelled", "solver": None, "solve_time": 0.0,
                "group_size": 1, "max_depth": depth, "adapted": None}
        return FittedGroup(trees, None, labels, np.empty((0, 2), np.intp), None, info, space)

    adapted, first_error = [], None
    while True:
        try:
            partition, labels, edges, counts, info, monotone, slabs = _relabel_group(
                Z, y, n_classes, trees, weights, space, job, sample_weight)
            break
        except TooManyRegionsError as error:
            first_error = first_error or error
            if len(trees) > 1:
                keep = len(trees) // 2
                adapted.append(f"group_size {len(trees)} -> {keep}")
                trees, weights, seeds = trees[:keep], weights[:keep], seeds[:keep]
            else:
                current = trees[0].get_depth()
                if current <= 1:
                    raise first_error from None
                depth = max(1, current // 2)
                adapted.append(f"max_depth {current} -> {depth}")
                trees = _grow(Z, y, seeds, weights, job, depth, space)
    if adapted and job.on_budget == "raise":
        # The smaller setting was measured on this very group: name it in the error.
        raise TooManyRegionsError(
            f"{first_error} Measured on this group: {'; '.join(adapted)} fits "
            f"({info['n_regions']} regions, {info['n_edges']} edges)."
        ) from first_error
    info.update(group_size=len(trees), max_depth=depth, adapted="; ".join(adapted) or None)
    return FittedGroup(trees, partition, labels, edges, counts, info, space, monotone, slabs)


#: Groups fitted first, before the others: when one of them had to fuse fewer trees to fit the
#: budget, the other groups are formed at that size from the start (:func:`fit_in_sizes`).
PILOT_GROUPS = 2


def fit_in_sizes(seeds: NDArray, fit: Any, on_budget: str) -> list:
    """The groups of ``seeds`` (shape ``(n_groups, M, 2)``) fitted by ``fit(seeds, name)``, resized after the first ones.

    ``name`` labels the progress bar of each batch.

    A group that passes the budget fuses fewer trees (:func:`_fit_group`), and does so
    only after fusing its M trees and searching their contacts up to the budget: where
    every group passes it (trees of a thousand leaves in six axes, 5,000 rows of 50
    features), those failed attempts took three quarters of the fit, and two of every
    three trees grown were dropped. So the first :data:`PILOT_GROUPS` groups are fitted
    first; when one of them fused fewer trees, the trees of every later group are
    regrouped at the smallest size they kept (their seeds in order; a last incomplete
    group is not grown) and fitted at that size from the start, each still adapting on
    its own should it pass the budget again. (Where one pilot passed and the other did
    not, most later groups passed too: 29 of 33 on 5,000 rows of 50 features whose
    integer ones made 4.5 million move pairs a group; their attempts were half the
    fit.) Otherwise the later groups are fitted as
    they were drawn, and the model is the one fitting every group at once gives. Which
    groups are pilots does not depend on ``n_jobs``: the model does not either.
    """
    pilots = min(PILOT_GROUPS, seeds.shape[0])
    if on_budget != "adapt" or seeds.shape[1] == 1 or seeds.shape[0] <= pilots:
        return fit(seeds, "groups")
    first = fit(seeds[:pilots], "first groups")
    size = min(group.info["group_size"] for group in first)
    if size == seeds.shape[1]:
        return first + fit(seeds[pilots:], "groups")
    rest = seeds[pilots:].reshape(-1, 2)
    rest = rest[: rest.shape[0] // size * size].reshape(-1, size, 2)
    later = fit(rest, "groups") if rest.shape[0] else []
    for group in later:
        done = group.info["adapted"]
        group.info["adapted"] = f"group_size {seeds.shape[1]} -> {size} as the first groups" + (f"; {done}" if done else "")
    return first + later


def _group_votes(groups: list, X: NDArray[np.float64]) -> NDArray[np.intp]:
    """Class index of every group for every row of validated ``X``, shape (n_samples, n_groups).

    The groups of a fit share one additive score: it is evaluated once per score,
    not once per group (on 91 features, 33 evaluations were most of a prediction's time).
    """
    values: dict[int, NDArray[np.float64]] = {}
    ranked: dict[int, NDArray[np.float64]] = {}  # likewise one rank map per fit
    columns = []
    for group in groups:
        score = None if group.space is None else group.space.additive
        if score is not None and id(score) not in values:
            values[id(score)] = score.value(X)
        ranks = None if group.space is None else group.space.ranks
        if ranks is not None and id(ranks) not in ranked:
            ranked[id(ranks)] = ranks.apply(X)
        columns.append(group.predict_index(X, None if score is None else values[id(score)],
                                           None if ranks is None else ranked[id(ranks)]))
    return np.column_stack(columns)
