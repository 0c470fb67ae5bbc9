"""The certified forest's trees: the worker that grows one, its integer values, the out-of-bag sums.

docs/design.md section 9. :func:`_fit_tree` grows one tree of
:class:`ensemble.ConsistentForestClassifier` on its bootstrap sample (a joblib job:
module level, so that it pickles) and finds the gap of training values around every
threshold; :class:`_Voter` holds what the tree adds to the sum besides its structure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ensemble.base import _kernels
from ensemble.base._estimator import TrainingData, TreeSpec, bootstrap_weights, draw_in_gaps, grow_tree
from ensemble.certificates._certificates import tree_nodes
from ensemble.spaces._rank_map import RangeClip
from ensemble.spaces._moves import affine_bounds
from ensemble.spaces._spaces import GroupSpace, _resolution_in_space
from ensemble.certificates._thresholds import Ranks, float32_margins
from ensemble.base._voting import UNIT_BITS
from trees import OrdinalTreeClassifier

__all__ = ["_OutOfBag", "_TreeJob", "_Voter", "_data_in_space", "_fit_tree", "clipped_index", "float_reach_in_space",
           "index_resolves_floats"]

#: The monotone index is offered to ``monotonic_space="auto"`` only while one float step of any
#: feature moves it by less than this share of its spread over the training rows: beyond, the
#: certificate exact in floats would count many thresholds together (features on a lattice of ulps
#: at a large offset, where one float is a large share of the feature's spread).
_INDEX_FLOAT_SHARE = 1e-6


def clipped_index(X: NDArray[np.float64], y: NDArray, rows: NDArray, monotonic: NDArray) -> GroupSpace | None:
    """The monotone index of the constrained features, each clipped to its training range (docs/design.md section 9).

    Clipping (:class:`ensemble.spaces._rank_map.RangeClip`, the range of ``rows``) moves no
    training point and bounds what one float step of a feature does to the index,
    everywhere in the float line: :func:`float_reach_in_space`.
    """
    constrained = np.flatnonzero(monotonic)
    index = GroupSpace.monotone_index(X, y, rows, monotonic)
    if index is None:
        return None
    low, high = X[rows][:, constrained].min(axis=0), X[rows][:, constrained].max(axis=0)
    return replace(index, ranks=RangeClip(constrained, low, high))


def float_reach_in_space(space: GroupSpace) -> NDArray[np.float64]:
    """Per axis of ``space``, how far one float step of one feature can move it (0 off the index).

    On component j, ``offset + sum_i (fl(x_i) / s_i - c_i) W_ij`` with ``x_i`` clipped:
    ``s_i`` is a power of two, so a step of ``x_i`` (at most an ulp of its range's
    largest magnitude) moves the exact sum by ``|W_ij| / s_i`` times that, and each
    evaluation is within the classical bound gamma_(n + 3) of the terms' magnitudes
    (doubled for second-order terms) of it. Kept axes are the features themselves:
    0, the pointwise certificate's threshold clusters cover one float there.
    """
    reach = np.zeros(space.n_components + space.kept.shape[0])
    k, clip = space.n_components, space.ranks
    if k == 0:
        return reach
    at = np.minimum(np.searchsorted(clip.features, space.projected), clip.features.shape[0] - 1)
    if np.any(clip.features[at] != space.projected):
        reach[:k] = np.inf  # a feature read unclipped: one float step is not bounded
        return reach
    _, error = affine_bounds(space, clip.low[at], clip.high[at])
    moved = np.max(np.abs(space.weights) * (clip.float_step()[at] / space._scale)[:, None], axis=0)
    reach[:k] = (moved + 2.0 * error) * (1 + 1e-9)
    return reach


def index_resolves_floats(space: GroupSpace, X: NDArray[np.float64]) -> bool:
    """Whether one float step moves the index by a negligible share of its spread (:data:`_INDEX_FLOAT_SHARE`)."""
    z = space.transform(X)[:, 0]
    return bool(float_reach_in_space(space)[0] <= _INDEX_FLOAT_SHARE * float(np.ptp(z)))


def _data_in_space(data: TrainingData, space: GroupSpace | None) -> TrainingData:
    """The training data on the coordinates of ``space``: features, kinds, constraints and resolution mapped."""
    if space is None:
        return data
    monotonic = space.constraints(data.monotonic)  # one component, every weight of its feature's sign
    # No grid: a move inside one gap of a feature the index combines moves the index across
    # many of its own gaps, which its grid would not see.
    return TrainingData(np.ascontiguousarray(space.transform(data.X)), data.y, data.sample_weight,
                        space.kept_mask(data.categorical), monotonic.astype(np.int8),
                        _resolution_in_space(space, data.resolution), None)


@dataclass(frozen=True)
class _TreeJob:
    """What a worker needs to grow the forest's trees (module level, so joblib can pickle it).

    ``X_fit`` is what the trees are grown on: the ranks of the training values
    (:class:`Ranks`; float32 for scikit-learn's trees, passed unchecked as its
    forests do), and ``X_route`` its rows of positive weight as float64, which
    define the gaps, mapped back to raw values by ``ranks``.
    """

    spec: TreeSpec
    bootstrap: bool
    cut_rule: str
    X: NDArray[np.float64]
    X_fit: NDArray
    X_route: NDArray[np.float64]
    ranks: "Ranks"
    missing: NDArray[np.bool_]
    y: NDArray[np.intp]
    sample_weight: NDArray[np.float64] | None


def _fit_tree(job: _TreeJob, seeds: NDArray):
    """Grow one tree on a bootstrap sample and move its thresholds into their gaps.

    Returns the fitted tree (its thresholds as grown, on ranks), the moved
    thresholds (raw values), the gap ``[lo, hi)`` of every internal node, the
    tree's voter tables (:class:`_Voter`) and, for ``cut_points="oob"``, its
    out-of-bag rows with their values.
    """
    bootstrap_seed, tree_seed = seeds
    X, y, n_classes = job.X, job.y, job.spec.n_classes
    w = bootstrap_weights(X.shape[0], bootstrap_seed, job.bootstrap, job.sample_weight)
    out_of_bag = np.flatnonzero(w == 0) if job.cut_rule == "oob" else None
    if job.sample_weight is not None:
        w = w * job.sample_weight
    tree = grow_tree(job.spec, job.X_fit, y, w, tree_seed, missing=job.missing)
    left, right, feature, threshold, missing = tree_nodes(tree)
    lo, hi = _kernels.node_gaps(left, right, feature, threshold, missing, job.X_route)
    internal = np.asarray(left) >= 0
    lo, hi = job.ranks.raw_gaps(np.asarray(feature)[internal], lo[internal], hi[internal])
    # A split at an infinite threshold sends present values one way and missing ones the
    # other: it stays where it is (a gap with no room), and it is no boundary in space.
    # A finite threshold with no present training value of its node on one side
    # separates the same rows (older scikit-learn writes such splits so); its gap is
    # unbounded on that side, so it goes to that end: +inf (present values left) or
    # -inf (present values right), no boundary either.
    present_only = ~np.isfinite(np.asarray(threshold)[internal])
    end = np.asarray(threshold, dtype=np.float64)[internal].copy()
    end[~present_only & (hi == np.inf)] = np.inf
    end[~present_only & (lo == -np.inf)] = -np.inf
    present_only = ~np.isfinite(end)
    lo[present_only] = hi[present_only] = end[present_only]
    if job.spec.criterion == "squared_error":
        lo, hi = float32_margins(lo, hi)
    moved = np.array(threshold, dtype=np.float64)
    moved[internal] = draw_in_gaps(np.random.RandomState(tree_seed), lo, hi)
    # Leaf class counts of the tree's own (weighted bootstrap) sample: the mean class
    # index is the tree's value, the normalised counts its class distribution. The moved
    # thresholds send the rows as the grown ones did; they are written into the tree once
    # the forest has separated them from the other trees'.
    leaf = _kernels.tree_apply(X, left, right, feature, moved, missing)
    counts = np.bincount(leaf * n_classes + y, weights=w, minlength=internal.shape[0] * n_classes)
    voter = _Voter.from_tree(_tree_values(tree), counts.reshape(-1, n_classes), internal)
    # Out-of-bag rows with their leaves: their values are read once the tree's values are final.
    oob = None if out_of_bag is None else (out_of_bag.astype(np.int32), leaf[out_of_bag].astype(np.int32))
    return tree, moved, lo, hi, voter, oob


def _tree_values(tree: Any) -> NDArray[np.float64]:
    """The mean class index of every node as the tree itself holds it.

    scikit-learn's regression tree stores it as its value, our trees as
    ``mean_index``; under monotone constraints both are clipped into the bounds
    that keep the tree monotone, so they are read, not recomputed from counts.
    """
    if isinstance(tree, OrdinalTreeClassifier):
        return np.asarray(tree.tree_.mean_index, dtype=np.float64)
    return np.asarray(tree.tree_.value, dtype=np.float64)[:, 0, 0]


class _Voter(NamedTuple):
    """What a tree contributes besides its structure: integer values and leaf distributions.

    ``value`` holds each leaf's mean class index as an integer multiple of
    2**-UNIT_BITS (0 at internal nodes), ``leaf_row`` each node's row in ``proba``
    (-1 at internal nodes) and ``proba`` the class distribution of every leaf.
    """

    value: NDArray[np.int64]
    leaf_row: NDArray[np.int32]
    proba: NDArray[np.float32]

    @classmethod
    def from_tree(cls, values: NDArray[np.float64], counts: NDArray[np.float64],
                  internal: NDArray[np.bool_]) -> "_Voter":
        """From the tree's own leaf values (clipped when it is monotone) and its leaf class counts."""
        leaves = np.flatnonzero(~internal)
        total = counts[leaves].sum(axis=1)
        share = counts[leaves] / np.where(total > 0, total, 1.0)[:, None]
        value = np.zeros(internal.shape[0], dtype=np.int64)
        # Rounding to the integer grid keeps the order of the values (monotone trees stay monotone).
        value[leaves] = np.rint(values[leaves] * (1 << UNIT_BITS))
        leaf_row = np.full(internal.shape[0], -1, dtype=np.int32)
        leaf_row[leaves] = np.arange(leaves.shape[0], dtype=np.int32)
        return cls(value, leaf_row, share.astype(np.float32))


class _OutOfBag(NamedTuple):
    """Out-of-bag sums of the trees' values per training row, for learned cut points."""

    y: NDArray[np.intp]
    sums: NDArray[np.int64]
    counts: NDArray[np.int64]
    sample_weight: NDArray[np.float64] | None

    def means(self, n_trees: int) -> tuple:
        """``(values, y, weight)`` of the rows out of bag at least once (and of positive weight).

        ``values`` are their out-of-bag mean values on the scale of the sums
        ``predict`` cuts (``n_trees * unit`` per class); ``weight`` is None without
        sample weights.
        """
        seen = self.counts > 0
        if self.sample_weight is not None:
            seen &= self.sample_weight > 0
        weight = None if self.sample_weight is None else self.sample_weight[seen]
        return self.sums[seen] * (n_trees / self.counts[seen]), self.y[seen], weight
