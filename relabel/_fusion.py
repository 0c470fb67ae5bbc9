"""Fusion of tree partitions: the non-empty intersections of the leaves of M trees."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from relabel._errors import TooManyRegionsError
from relabel._guillotine import Hierarchy, guillotine_tree, push_down

__all__ = ["SNAP_ULPS", "FusedPartition", "fuse", "region_counts", "snap_table"]

logger = logging.getLogger(__name__)

# Mixed-radix codes are kept below 2**62 so that sums and comparisons stay exact in int64.
_CODE_LIMIT = 1 << 62

#: Two bounds a, b of one feature are one threshold when |a - b| <= SNAP_ULPS units in
#: the last place of max(|a|, |b|) (docs/design.md section 4c).
SNAP_ULPS = 4


def snap_table(values: ArrayLike, grid_values: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sorted distinct finite values and the value each one snaps to.

    Parameters
    ----------
    values : array-like of float
        Bounds of one feature (infinite values are ignored).
    grid_values : array-like of float, optional
        The feature's sorted training values: bounds a < b chain only when no value v has
        a <= v < b (they separate the same values). ``None``: every close chain snaps.

    Returns
    -------
    distinct, snapped : ndarray of shape (u,), float64
        ``snapped[i]`` is the representative of ``distinct[i]``: consecutive distinct
        values at most :data:`SNAP_ULPS` ulps of the larger magnitude apart are chained
        into one cluster (single linkage, so no two representatives are that close),
        and a cluster's representative is its largest value.

    Notes
    -----
    docs/design.md section 4c. Two trees may compute one threshold through different float
    operations (0.325 and 0.32500000000000007); fusing them would leave an empty sliver
    region 5.5e-17 wide that the ILP can use as a free step between classes two apart.
    The largest member is the representative so that the points of a sliver (above the
    smallest member, at or below the largest) all lie at or below the snapped
    threshold, the side the half-open convention ``lower < x <= upper`` gives to the
    collapsed sliver. O(u log u).
    On a grid, bounds in different gaps stay apart however close: snapped, they merged the
    regions of training values a few ulps apart (design section 4c).

    Examples
    --------
    >>> from relabel import snap_table
    >>> distinct, snapped = snap_table([0.325, 0.32500000000000007, 0.5, float("inf")])
    >>> distinct.tolist(), snapped.tolist()
    ([0.325, 0.32500000000000007, 0.5], [0.32500000000000007, 0.32500000000000007, 0.5])
    """
    distinct = np.unique(np.asarray(values, dtype=np.float64))
    distinct = distinct[np.isfinite(distinct)]
    if distinct.shape[0] < 2:
        return distinct, distinct.copy()
    scale = np.maximum(np.abs(distinct[1:]), np.abs(distinct[:-1]))
    starts = np.concatenate(([True], np.diff(distinct) > SNAP_ULPS * np.spacing(scale)))
    if grid_values is not None:
        # A bound t lies in gap searchsorted(v, t, "right") (x <= t goes left): chains stay inside one gap.
        gap = np.searchsorted(np.asarray(grid_values, dtype=np.float64), distinct, side="right")
        starts[1:] |= gap[1:] != gap[:-1]
    if starts.all():
        return distinct, distinct.copy()
    first = np.flatnonzero(starts)
    last = np.concatenate((first[1:], [distinct.shape[0]])) - 1
    return distinct, np.repeat(distinct[last], np.diff(np.concatenate((first, [distinct.shape[0]]))))


def _snap(values: NDArray, distinct: NDArray, snapped: NDArray) -> NDArray:
    """Map every finite value of ``values`` (all present in ``distinct``) to its representative."""
    out = values.copy()
    moved = distinct != snapped
    if not moved.any():
        return out
    # Few values move: find their occurrences instead of searching every bound.
    at = np.flatnonzero(np.isin(values, distinct[moved]))
    out[at] = snapped[np.searchsorted(distinct, values[at])]
    return out


def _read_boxes(boxes: Any, position: int) -> tuple[NDArray, NDArray, NDArray]:
    """Unpack and validate one LeafBoxes-like ``(leaf_ids, lower, upper)`` triple."""
    try:
        leaf_ids, lower, upper = boxes
    except (TypeError, ValueError):
        raise ValueError(
            f"boxes_list[{position}] must be a (leaf_ids, lower, upper) triple such as "
            f"trees.LeafBoxes; got {type(boxes).__name__}"
        ) from None
    leaf_ids = np.asarray(leaf_ids)
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    if leaf_ids.ndim != 1 or leaf_ids.shape[0] == 0:
        raise ValueError(
            f"boxes_list[{position}].leaf_ids must be a non-empty 1-d array; got shape {leaf_ids.shape}"
        )
    if not np.issubdtype(leaf_ids.dtype, np.integer):
        raise ValueError(f"boxes_list[{position}].leaf_ids must be integers; got dtype {leaf_ids.dtype}")
    n_leaves = leaf_ids.shape[0]
    if lower.ndim != 2 or lower.shape[0] != n_leaves or upper.shape != lower.shape:
        raise ValueError(
            f"boxes_list[{position}].lower and .upper must both have shape (n_leaves, n_features) "
            f"with n_leaves={n_leaves}; got {lower.shape} and {upper.shape}"
        )
    if lower.shape[1] == 0:
        raise ValueError(f"boxes_list[{position}] must have at least one feature")
    if np.isnan(lower).any() or np.isnan(upper).any():
        raise ValueError(f"boxes_list[{position}] bounds contain NaN")
    if not np.all(lower < upper):
        raise ValueError(
            f"boxes_list[{position}] has an empty leaf box: every leaf needs lower < upper "
            "in every coordinate"
        )
    if np.unique(leaf_ids).shape[0] != n_leaves:
        raise ValueError(f"boxes_list[{position}].leaf_ids contains duplicates")
    if leaf_ids.min() < 0:
        raise ValueError(f"boxes_list[{position}].leaf_ids must be non-negative")
    return leaf_ids.astype(np.int64), lower, upper


@dataclass(frozen=True, eq=False)
class FusedPartition:
    """The fused partition of M trees: every non-empty intersection of their leaves.

    Regions are half-open boxes ``lower < x <= upper`` keyed by the tuple of the M
    leaf ids that contain them, sorted lexicographically by that tuple. Build it with
    :func:`fuse`.

    Bounds of one feature that differ by a few ulps are snapped to one value by
    :func:`fuse` (docs/design.md section 4c), so the float slivers between them are not
    regions. The leaf tuples of those slivers (which the trees still produce for the
    float points inside them) are aliases of the region that holds the sliver's
    snapped image: :meth:`locate` maps them there.

    Attributes
    ----------
    keys : ndarray of shape (n_regions, n_trees), int64
        Leaf id of each tree for each region (column j is tree j's ``apply`` value).
    lower, upper : ndarray of shape (n_regions, n_features), float64
        Bounds of each region; ``lower < upper`` in every coordinate.
    leaf_ids : tuple of ndarray
        The sorted leaf ids of each tree.
    alias_keys : ndarray of shape (n_aliases, n_trees), int64
        Leaf tuples of vanished slivers, sorted.
    alias_region : ndarray of shape (n_aliases,), intp
        The region each alias is located in: the region that contains the sliver's
        image with the collapsed coordinates on the side given by the half-open
        convention (at or below the snapped threshold), else on the other side, else
        (no region contains the whole image) the region of the image's top corner.
    alias_lower, alias_upper : ndarray of shape (n_aliases, n_features)
        The snapped image of each sliver (``lower == upper`` on the collapsed features).
    alias_covered : ndarray of shape (n_aliases,), bool
        Whether the alias region's closure contains the whole image, so that the
        sliver's contacts are the region's own.
    exact_lower, exact_upper : ndarray of shape (n_exact, n_features) or None
        When snapping moved a bound: the regions as the trees' float comparisons cut
        them, before snapping (slivers included). ``None`` when nothing snapped (the
        regions are then exact).
    exact_region : ndarray of shape (n_exact,), intp, or None
        The region :meth:`locate` maps each exact region's points to (its own region, or
        a sliver's alias region; -1 where the trees do not tile the space). The
        neighbours at the data's resolution are found on these boxes
        (:func:`adjacency_edges`), since snapping may carry a bound across a training value.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import fuse
    >>> a = (np.array([1, 2]), np.array([[-np.inf], [0.5]]), np.array([[0.5], [np.inf]]))
    >>> b = (np.array([1, 2]), np.array([[-np.inf], [1.5]]), np.array([[1.5], [np.inf]]))
    >>> part = fuse([a, b])
    >>> part.keys.tolist(), part.n_regions, part.n_trees, part.n_features
    ([[1, 1], [2, 1], [2, 2]], 3, 2, 1)
    >>> part.locate(np.array([[2, 1], [1, 1]])).tolist()
    [1, 0]
    """

    keys: NDArray[np.int64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    leaf_ids: tuple = field(repr=False)
    _stages: tuple = field(repr=False)
    alias_keys: NDArray[np.int64] = field(default=None, repr=False)
    alias_region: NDArray[np.intp] = field(default=None, repr=False)
    alias_lower: NDArray[np.float64] = field(default=None, repr=False)
    alias_upper: NDArray[np.float64] = field(default=None, repr=False)
    alias_covered: NDArray[np.bool_] = field(default=None, repr=False)
    _alias_codes: NDArray[np.int64] = field(default=None, repr=False)
    exact_lower: NDArray[np.float64] | None = field(default=None, repr=False)
    exact_upper: NDArray[np.float64] | None = field(default=None, repr=False)
    exact_region: NDArray[np.intp] | None = field(default=None, repr=False)

    @property
    def n_aliases(self) -> int:
        """Number of leaf tuples of vanished float slivers that :meth:`locate` maps to a region."""
        return 0 if self.alias_keys is None else int(self.alias_keys.shape[0])

    @property
    def alias_images(self):
        """``(lower, upper, region)`` of the sliver images not contained in their alias region.

        These are the only aliases whose contacts are not already their region's; see
        :func:`adjacency_edges`. Empty arrays when there are none.
        """
        if self.alias_keys is None:
            d = self.n_features
            return np.zeros((0, d)), np.zeros((0, d)), np.zeros(0, np.intp)
        loose = ~self.alias_covered
        return self.alias_lower[loose], self.alias_upper[loose], self.alias_region[loose]

    @property
    def n_regions(self) -> int:
        """Number of regions N."""
        return int(self.keys.shape[0])

    @property
    def n_trees(self) -> int:
        """Number of fused trees M."""
        return int(self.keys.shape[1])

    @property
    def n_features(self) -> int:
        """Dimension d of the feature space."""
        return int(self.lower.shape[1])

    def locate(self, leaves: ArrayLike) -> NDArray[np.intp]:
        """Map rows of leaf ids to region indices.

        Parameters
        ----------
        leaves : array-like of shape (n_samples, n_trees)
            Column j holds tree j's ``apply`` output for each sample.

        Returns
        -------
        ndarray of shape (n_samples,), intp
            Index (into ``keys``) of each sample's region.

        Raises
        ------
        ValueError
            If ``leaves`` does not have n_trees integer columns, or a row matches no
            region nor alias (impossible for leaf ids produced by the trees that built
            the partition).

        Notes
        -----
        Each key tuple is encoded into one int64 by a mixed radix of leaf-id ranks
        (staged through prefix ranks when the radix product would overflow), then
        found by binary search: O(n_samples * n_trees * log n_regions). A tuple of a
        vanished float sliver is found in the alias table and mapped to its
        ``alias_region``.

        Examples
        --------
        >>> import numpy as np
        >>> from relabel import fuse
        >>> a = (np.array([1, 2]), np.array([[-np.inf], [0.0]]), np.array([[0.0], [np.inf]]))
        >>> fuse([a]).locate([[2], [1], [2]]).tolist()
        [1, 0, 1]
        """
        leaves = np.asarray(leaves)
        if leaves.ndim != 2 or leaves.shape[1] != self.n_trees:
            raise ValueError(
                f"leaves must have shape (n_samples, {self.n_trees}) (one column per tree); "
                f"got shape {leaves.shape}"
            )
        if leaves.shape[0] and not np.issubdtype(leaves.dtype, np.integer):
            raise ValueError(f"leaves must hold integer leaf ids; got dtype {leaves.dtype}")
        pos, hit = self._find(_leaf_ranks(self.leaf_ids, leaves))
        if not hit.all():
            bad = int(np.flatnonzero(~hit)[0])
            raise ValueError(
                f"leaves row {bad} ({leaves[bad].tolist()}) matches no region of the partition"
            )
        return pos.astype(np.intp)

    def _find(self, ranks: NDArray[np.int64]) -> tuple:
        """Region of each rank tuple (regions first, then aliases) and whether it was found."""
        code, found = _encode(self._stages, ranks)
        table = self._stages[-1][1]
        pos = np.minimum(np.searchsorted(table, code), max(table.shape[0] - 1, 0))
        hit = found & (table[pos] == code)
        if not hit.all() and self._alias_codes is not None and self._alias_codes.shape[0]:
            miss = np.flatnonzero(~hit)
            codes = self._alias_codes
            apos = np.minimum(np.searchsorted(codes, code[miss]), codes.shape[0] - 1)
            ahit = found[miss] & (codes[apos] == code[miss])
            pos[miss[ahit]] = self.alias_region[apos[ahit]]
            hit[miss[ahit]] = True
        return pos, hit


def _leaf_ranks(leaf_ids: tuple, leaves: NDArray) -> NDArray[np.int64]:
    """Rank of each leaf id within its tree's sorted leaf ids; ValueError when unknown."""
    ranks = np.empty(leaves.shape, dtype=np.int64)
    for j, ids in enumerate(leaf_ids):
        column = leaves[:, j]
        # Leaf ids are node ids, a small dense range: a lookup table beats a binary
        # search on this, the prediction path.
        table = np.full(int(ids[-1]) + 1, -1, dtype=np.int64)
        table[ids] = np.arange(ids.shape[0])
        inside = (column >= 0) & (column <= ids[-1])
        r = table[np.where(inside, column, 0)]
        bad = ~inside | (r < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"leaves[{i}, {j}] = {column[i]} is not a leaf id of tree {j}"
            )
        ranks[:, j] = r
    return ranks


def _build_stages(ranks: NDArray[np.int64], radices: Sequence[int], n_main: int | None = None) -> tuple:
    """Encoding tables for the sorted, unique rank tuples of the regions.

    A stage covers a run of columns whose radix product fits in ``_CODE_LIMIT``; the
    next stage starts from the rank of the prefix code among the regions' prefixes,
    which is below n_regions, so every stage fits in int64 whatever M and the tree
    sizes. The last stage's codes are strictly increasing over the regions. With
    ``n_main``, only the first ``n_main`` rows are regions (the last table); the other
    rows (aliases) are encoded too, so their prefixes are found.
    """
    stages = []
    n_rows = ranks.shape[0]
    prefix = np.zeros(n_rows, dtype=np.int64)
    prefix_radix = 1
    columns: list[int] = []
    for j, radix in enumerate(radices):
        if prefix_radix * radix >= _CODE_LIMIT:
            table = np.unique(prefix)
            stages.append((tuple(columns), table))
            prefix = np.searchsorted(table, prefix).astype(np.int64)
            prefix_radix = table.shape[0]
            columns = []
        prefix = prefix * radix + ranks[:, j]
        prefix_radix *= radix
        columns.append(j)
    # The regions' full codes are distinct (checked by fuse), so sorting suffices.
    main = prefix if n_main is None else prefix[:n_main]
    stages.append((tuple(columns), np.sort(main), tuple(radices)))
    return tuple(stages), prefix


def _encode(stages: tuple, ranks: NDArray[np.int64]):
    """Encode rank tuples with the stages; ``found`` is False for unknown prefixes."""
    radices = stages[-1][2]
    code = np.zeros(ranks.shape[0], dtype=np.int64)
    found = np.ones(ranks.shape[0], dtype=bool)
    for stage in stages:
        columns, table = stage[0], stage[1]
        for j in columns:
            code = code * radices[j] + ranks[:, j]
        if stage is not stages[-1]:
            pos = np.minimum(np.searchsorted(table, code), table.shape[0] - 1)
            found &= table[pos] == code
            code = pos.astype(np.int64)
    return code, found


def fuse(boxes_list: Sequence[Any], *, max_regions: int | None = None, snap: bool = True, grid: Any = None
         ) -> FusedPartition:
    """Intersect the leaves of M trees into one partition of the feature space.

    Parameters
    ----------
    boxes_list : sequence of (leaf_ids, lower, upper)
        One LeafBoxes-like triple per tree (for example :func:`trees.leaf_boxes`):
        ``leaf_ids`` of shape (L,), ``lower`` and ``upper`` of shape (L, d) describing
        half-open boxes ``lower < x <= upper`` that partition the feature space.
    max_regions : int, optional
        Budget for the number of regions; the fusion stops with
        :class:`TooManyRegionsError` as soon as it is certain to exceed it, before
        the region arrays are allocated. ``None`` means no limit.
    snap : bool, default=True
        Snap bounds a few ulps apart into one (below). ``False`` keeps every
        bound as given: the partition is then exactly the function the trees
        compute on float64 input, thin leaves included; certificates of models
        whose prediction does not go through :meth:`FusedPartition.locate`
        (a single unrelabelled tree, a forest's tree) must use it.
    grid : relabel.DataGrid, optional
        Bounds snap only inside one of its gaps (:func:`snap_table`); a feature without values snaps as without.

    Returns
    -------
    FusedPartition
        Regions keyed by their tuple of leaf ids, sorted lexicographically, each the
        non-empty intersection of one leaf per tree after snapping (below), with the
        alias table of the vanished slivers.

    Raises
    ------
    TooManyRegionsError
        If the partition would have more than ``max_regions`` regions.
    ValueError
        If ``boxes_list`` is empty, a triple is malformed (shapes, NaN, empty or
        duplicate leaves), the trees disagree on the number of features, or a tree's
        boxes are not a tree partition.

    Notes
    -----
    docs/design.md section 4 (fusion). The first tree's leaves are the initial regions;
    each next tree's leaves are organised in a splitting hierarchy (rebuilt from the
    boxes by guillotine cuts) and every current region box is pushed down it,
    following both children only when it straddles a threshold. The cost of tree j is
    O((N_{j-1} + N_j) * depth_j) vectorised steps, plus O(L_j * d * depth_j * log L_j)
    to rebuild its hierarchy, where N_j is the number of regions after fusing j
    trees: output-sensitive, never the product of the leaf counts.

    Float slivers (docs/design.md section 4c): per feature, the finite bounds of all M trees
    that are at most :data:`SNAP_ULPS` = 4 ulps of the larger magnitude apart (and, with
    ``grid``, in one of its gaps), chained over the sorted distinct values, become one
    value, the largest of the chain (:func:`snap_table`). Since snapping is monotone, the snapped regions are the
    fused regions whose snapped box is not empty, with snapped bounds: no sliver region
    remains, and adjacency sees the contacts across the snapped threshold. Every
    vanished leaf tuple (the trees still produce it for the float points of the sliver)
    becomes an alias of the region holding the sliver's image, found by pushing the
    image, placed at or below the snapped threshold on the collapsed features (the
    half-open convention) and in the interior on the others, down each tree's
    hierarchy; when no region holds the whole image on that side nor on the other,
    the region of its top corner, and :func:`adjacency_edges` adds the image's contacts
    to it. Without close bounds the cost is one ``np.unique`` of the bounds per
    feature; with them, O(N d log u) to snap and O(A M depth) for the A aliases.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import fuse
    >>> inf = np.inf
    >>> # Tree 1 splits x0 at 0.5; tree 2 splits x1 at 0.3, then x0 at 0.8 above it.
    >>> t1 = (np.array([1, 2]), np.array([[-inf, -inf], [0.5, -inf]]), np.array([[0.5, inf], [inf, inf]]))
    >>> t2 = (np.array([1, 3, 4]), np.array([[-inf, -inf], [-inf, 0.3], [0.8, 0.3]]),
    ...       np.array([[inf, 0.3], [0.8, inf], [inf, inf]]))
    >>> part = fuse([t1, t2])
    >>> part.keys.tolist()
    [[1, 1], [1, 3], [2, 1], [2, 3], [2, 4]]
    >>> part.locate([[2, 4], [1, 3]]).tolist()
    [4, 1]

    Thresholds a few ulps apart are one threshold; the sliver's tuple still locates:

    >>> a = (np.array([1, 2]), np.array([[-inf], [0.325]]), np.array([[0.325], [inf]]))
    >>> b = (np.array([1, 2]), np.array([[-inf], [0.32500000000000007]]), np.array([[0.32500000000000007], [inf]]))
    >>> sliver = fuse([a, b])
    >>> sliver.keys.tolist(), sliver.alias_keys.tolist(), sliver.locate([[2, 1]]).tolist()
    ([[1, 1], [2, 2]], [[2, 1]], [0])

    With scikit-learn trees, pass ``[trees.leaf_boxes(t) for t in fitted_trees]`` and
    locate ``np.column_stack([t.apply(X) for t in fitted_trees])``.
    """
    trees = _read_trees(boxes_list, max_regions)
    lower, upper, key_positions, hierarchies = _intersect(trees, max_regions)
    tables = _snap_tables(trees, grid) if snap else None
    if tables is None:
        return _keyed_partition(trees, lower, upper, key_positions, None, hierarchies, tables)
    exact = (lower, upper, key_positions)
    lower, upper, key_positions, slivers = _snap_regions(lower, upper, key_positions, tables)
    partition = _keyed_partition(trees, lower, upper, key_positions, slivers, hierarchies, tables)
    return _with_exact(partition, trees, *exact)


def _with_exact(partition: FusedPartition, trees: list, lower, upper, key_positions) -> FusedPartition:
    """The partition with its regions before snapping and the region each one locates in."""
    region, found = partition._find(_Ranks(trees).ranks(key_positions))
    region = np.where(found, region, -1).astype(np.intp)
    lower, upper = np.ascontiguousarray(lower), np.ascontiguousarray(upper)
    for array in (lower, upper, region):
        array.flags.writeable = False
    return replace(partition, exact_lower=lower, exact_upper=upper, exact_region=region)


def _read_trees(boxes_list: Sequence[Any], max_regions: int | None) -> list:
    """Validated ``(leaf_ids, lower, upper)`` of every tree, and a first check of the budget."""
    if isinstance(boxes_list, tuple) and len(boxes_list) == 3 and hasattr(boxes_list, "_fields"):
        raise ValueError("boxes_list must be a sequence of LeafBoxes (one per tree), not one LeafBoxes")
    if max_regions is not None and (
        isinstance(max_regions, bool) or not isinstance(max_regions, (int, np.integer)) or max_regions < 1
    ):
        raise ValueError(f"max_regions must be a positive integer or None; got {max_regions!r}")
    boxes_list = list(boxes_list)
    if not boxes_list:
        raise ValueError("boxes_list must contain at least one tree's leaf boxes")
    trees = [_read_boxes(b, i) for i, b in enumerate(boxes_list)]
    n_features = trees[0][1].shape[1]
    for i, (_, lower, _) in enumerate(trees):
        if lower.shape[1] != n_features:
            raise ValueError(
                f"every tree must have the same number of features; boxes_list[0] has "
                f"{n_features} and boxes_list[{i}] has {lower.shape[1]}"
            )
    n_first = trees[0][0].shape[0]
    if max_regions is not None and n_first > max_regions:
        raise TooManyRegionsError(
            f"the first tree alone has {n_first} leaves, more than max_regions={max_regions}; "
            "fuse shallower trees (in OTreeBagger: a smaller max_depth) or raise max_regions"
        )
    return trees


def _intersect(trees: list, max_regions: int | None):
    """The non-empty intersections of the trees' leaves, by pushing the regions down each next tree.

    Returns ``lower, upper`` (N, d), ``key_positions`` (N, M), the position of each
    region's leaf in every tree's input, and the hierarchies built (by tree index).
    """
    _, lower, upper = trees[0]
    key_positions = np.arange(lower.shape[0], dtype=np.intp)[:, None]
    hierarchies = {}
    for j in range(1, len(trees)):
        _, leaf_lower, leaf_upper = trees[j]
        hierarchy = guillotine_tree(leaf_lower, leaf_upper, name=f"boxes_list[{j}]")
        hierarchies[j] = hierarchy
        regions, leaves = push_down(lower, upper, hierarchy, max_pairs=max_regions)
        new_lower = np.maximum(lower[regions], leaf_lower[leaves])
        new_upper = np.minimum(upper[regions], leaf_upper[leaves])
        # A region only reaches a leaf it overlaps when the boxes tile the space; the
        # check guards against trees that cover different parts of it.
        keep = np.all(new_lower < new_upper, axis=1)
        lower, upper = new_lower[keep], new_upper[keep]
        key_positions = np.column_stack((key_positions[regions[keep]], leaves[keep]))
        logger.debug("fused tree %d: %d regions", j, lower.shape[0])
    return lower, upper, key_positions, hierarchies


def _snap_tables(trees: list, grid: Any = None) -> list | None:
    """The :func:`snap_table` of every feature over all the trees' bounds (in ``grid``); None when nothing snaps."""
    n_features = trees[0][1].shape[1]
    if grid is not None and grid.n_features != n_features:
        raise ValueError(f"grid has {grid.n_features} features, the trees {n_features}")
    tables = [
        snap_table(np.concatenate([np.concatenate((lo[:, f], hi[:, f])) for _, lo, hi in trees]),
                   None if grid is None else grid.values[f])
        for f in range(n_features)
    ]
    if all(np.array_equal(distinct, snapped) for distinct, snapped in tables):
        return None
    return tables


def _snap_regions(lower, upper, key_positions, tables):
    """Snapped region bounds without the vanished slivers, and the slivers (or None).

    The slivers are ``(key_positions, image_lower, image_upper)`` of the regions whose
    snapped box is empty.
    """
    n_features = lower.shape[1]
    lower = np.column_stack([_snap(lower[:, f], *tables[f]) for f in range(n_features)])
    upper = np.column_stack([_snap(upper[:, f], *tables[f]) for f in range(n_features)])
    survive = np.all(lower < upper, axis=1)
    if survive.all():
        return lower, upper, key_positions, None
    slivers = (key_positions[~survive], lower[~survive], upper[~survive])
    logger.debug("snapping removed %d float slivers", slivers[0].shape[0])
    return lower[survive], upper[survive], key_positions[survive], slivers


class _Ranks:
    """Leaf positions to leaf-id ranks (the key columns as small integers) and ranks to leaf ids."""

    def __init__(self, trees: list):
        self.of_position = []
        for ids, _, _ in trees:
            order = np.argsort(ids, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.shape[0])
            self.of_position.append(rank)
        self.sorted_ids = tuple(np.sort(ids) for ids, _, _ in trees)
        self.radices = [ids.shape[0] for ids, _, _ in trees]

    def ranks(self, positions: NDArray) -> NDArray[np.int64]:
        n_trees = len(self.radices)
        return np.column_stack(
            [self.of_position[j][positions[:, j]] for j in range(n_trees)]
        ).astype(np.int64).reshape(-1, n_trees)

    def keys(self, rank_rows: NDArray) -> NDArray[np.int64]:
        n_trees = len(self.radices)
        return np.column_stack(
            [self.sorted_ids[j][rank_rows[:, j]] for j in range(n_trees)]
        ).astype(np.int64).reshape(-1, n_trees)


def _keyed_partition(trees, lower, upper, key_positions, slivers, hierarchies, tables) -> FusedPartition:
    """Sort the regions by leaf tuple, build the encoding stages and the alias table of the slivers."""
    ranks_of = _Ranks(trees)
    n_main = key_positions.shape[0]
    alias_positions = slivers[0] if slivers is not None else np.zeros((0, len(trees)), dtype=np.intp)
    ranks = ranks_of.ranks(key_positions)
    stages, code = _build_stages(np.vstack((ranks, ranks_of.ranks(alias_positions))), ranks_of.radices,
                                 n_main=n_main)
    code, alias_code = code[:n_main], code[n_main:]
    order = np.argsort(code, kind="stable")
    if np.any(np.diff(code[order]) == 0):
        raise ValueError("boxes_list produced two regions with the same leaf tuple: leaves overlap")
    keys = ranks_of.keys(ranks[order])
    lower = np.ascontiguousarray(lower[order])
    upper = np.ascontiguousarray(upper[order])
    extra = {}
    if alias_positions.shape[0]:
        extra = _alias_table(trees, slivers, hierarchies, tables, ranks_of, stages, code[order], alias_code)
    for array in (keys, lower, upper, *ranks_of.sorted_ids, *extra.values()):
        array.flags.writeable = False
    return FusedPartition(keys=keys, lower=lower, upper=upper, leaf_ids=ranks_of.sorted_ids, _stages=stages,
                          **extra)


def _alias_table(trees, slivers, hierarchies, tables, ranks_of, stages, sorted_code, alias_code) -> dict:
    """The ``alias_*`` fields of :class:`FusedPartition`: each sliver's tuple and the region it locates in."""
    alias_positions, image_lower, image_upper = slivers
    n_main = sorted_code.shape[0]
    target_positions, covered = _alias_targets(trees, hierarchies, tables, image_lower, image_upper,
                                               alias_positions)
    found = np.all(target_positions >= 0, axis=1)
    target_code, ok = _encode(stages, ranks_of.ranks(np.maximum(target_positions, 0)))
    found &= ok
    if n_main:
        region = np.minimum(np.searchsorted(sorted_code, target_code), n_main - 1)
        found &= sorted_code[region] == target_code
    else:
        region = np.zeros(found.shape[0], dtype=np.intp)
        found[:] = False
    # A tuple whose target is not found (trees that do not tile the space) stays
    # unknown to locate, as before snapping.
    rows = np.flatnonzero(found)[np.argsort(alias_code[found], kind="stable")]
    return dict(
        alias_keys=ranks_of.keys(ranks_of.ranks(alias_positions[rows])),
        alias_region=region[rows].astype(np.intp),
        alias_lower=np.ascontiguousarray(image_lower[rows]),
        alias_upper=np.ascontiguousarray(image_upper[rows]),
        alias_covered=covered[rows],
        _alias_codes=alias_code[rows],
    )


def _alias_targets(trees, hierarchies, tables, image_lower, image_upper, positions):
    """Leaf positions (one per tree) of the region each vanished sliver is located in.

    ``image_lower``/``image_upper`` are the snapped bounds of the vanished regions
    (``lower >= upper`` on the collapsed features, where both are the snapped
    threshold c). The image is placed just at or below c on the collapsed features
    ((c-, c], the half-open convention), then on the other sides, and pushed with its
    interior on the other features down each tree's hierarchy with snapped thresholds:
    when every tree holds it in one leaf, that leaf tuple is a region containing the
    whole image (``covered``). Otherwise the region of the image's top corner (the
    point c on the collapsed features, the upper end of the interval elsewhere).
    Returns ``(positions (A, M) or -1, covered (A,))``.
    """
    n_alias, n_trees = positions.shape
    collapsed = image_lower >= image_upper
    c = image_upper
    snapped = []
    for j, (_, leaf_lower, leaf_upper) in enumerate(trees):
        hierarchy = hierarchies.get(j)
        if hierarchy is None:
            hierarchy = guillotine_tree(leaf_lower, leaf_upper, name=f"boxes_list[{j}]")
        feature, threshold, left, right, leaf = hierarchy
        threshold = threshold.copy()
        for f, table in enumerate(tables):
            at = feature == f
            threshold[at] = _snap(threshold[at], *table)
        boxes = (np.column_stack([_snap(leaf_lower[:, f], *tables[f]) for f in range(len(tables))]),
                 np.column_stack([_snap(leaf_upper[:, f], *tables[f]) for f in range(len(tables))]))
        snapped.append((Hierarchy(feature, threshold, left, right, leaf), boxes))

    def leaves_of(q_lo, q_hi):
        # One leaf per tree holding the whole query box (lower < x <= upper), else -1.
        out = np.full((q_lo.shape[0], n_trees), -1, dtype=np.intp)
        for j, (hierarchy, (s_lo, s_hi)) in enumerate(snapped):
            query, leaf = push_down(q_lo, q_hi, hierarchy)
            # Leaves whose snapped box collapsed can be reached without holding a point.
            overlap = np.all(np.maximum(q_lo[query], s_lo[leaf]) < np.minimum(q_hi[query], s_hi[leaf]), axis=1)
            query, leaf = query[overlap], leaf[overlap]
            count = np.bincount(query, minlength=q_lo.shape[0])
            single = count[query] == 1
            out[query[single], j] = leaf[single]
        return out

    below = np.nextafter(c, -np.inf)
    above = np.nextafter(c, np.inf)
    result = np.full((n_alias, n_trees), -1, dtype=np.intp)
    covered = np.zeros(n_alias, dtype=bool)
    # Sides of the collapsed features: all below first (the half-open convention), then
    # each pattern in a fixed order (up to 3 collapsed features; beyond, all above).
    n_collapsed = int(collapsed.sum(axis=1).max(initial=0))
    patterns = [np.zeros(n_collapsed, bool)] + [
        np.array([(p >> i) & 1 for i in range(n_collapsed)], bool) for p in range(1, 2 ** min(n_collapsed, 3))
    ] + ([np.ones(n_collapsed, bool)] if n_collapsed > 3 else [])
    for pattern in patterns:
        todo = np.flatnonzero(~covered)
        if todo.shape[0] == 0:
            break
        up = np.zeros((todo.shape[0], collapsed.shape[1]), dtype=bool)
        rank = np.cumsum(collapsed[todo], axis=1) - 1  # index of each collapsed feature in the pattern
        up[collapsed[todo]] = pattern[rank[collapsed[todo]]]
        q_lo = np.where(collapsed[todo], np.where(up, c[todo], below[todo]), image_lower[todo])
        q_hi = np.where(collapsed[todo], np.where(up, above[todo], c[todo]), image_upper[todo])
        leaves = leaves_of(q_lo, q_hi)
        hit = np.all(leaves >= 0, axis=1)
        result[todo[hit]] = leaves[hit]
        covered[todo[hit]] = True
    loose = np.flatnonzero(~covered)
    if loose.shape[0]:
        lo, hi = image_lower[loose], image_upper[loose]
        corner = np.where(np.isfinite(hi), hi, np.where(np.isfinite(lo), lo + 1.0, 0.0))
        corner = np.where(collapsed[loose], c[loose], corner)
        result[loose] = leaves_of(np.nextafter(corner, -np.inf), corner)
    return result, covered


def region_counts(
    region_index: ArrayLike,
    y: ArrayLike,
    n_classes: int,
    sample_weight: ArrayLike | None = None,
    *,
    n_regions: int | None = None,
) -> NDArray[np.float64]:
    """(Weighted) class counts per region, the p_{n,i} of docs/design.md section 4.

    Parameters
    ----------
    region_index : array-like of shape (n_samples,)
        Region of each sample, for example from :meth:`FusedPartition.locate`.
    y : array-like of shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes K (at least 2).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative finite weights (bootstrap multiplicities, for instance).
    n_regions : int, optional
        Number of rows of the result; defaults to ``max(region_index) + 1``.

    Returns
    -------
    ndarray of shape (n_regions, n_classes), float64
        ``counts[n, i]`` is the total weight of the samples of class i in region n.

    Raises
    ------
    ValueError
        On mismatched lengths, class indices outside ``0 .. n_classes - 1``, region
        indices outside ``0 .. n_regions - 1``, ``n_classes < 2``, or negative or
        non-finite weights.

    Notes
    -----
    One ``np.bincount`` over ``region * K + class``: O(n_samples + N K).

    Examples
    --------
    >>> from relabel import region_counts
    >>> region_counts([0, 0, 2], [1, 0, 1], n_classes=2, n_regions=3).tolist()
    [[1.0, 1.0], [0.0, 0.0], [0.0, 1.0]]
    """
    region_index = np.asarray(region_index)
    y = np.asarray(y)
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2; got {n_classes!r}")
    if region_index.ndim != 1 or y.shape != region_index.shape:
        raise ValueError(
            "region_index and y must be 1-d arrays of the same length; got shapes "
            f"{region_index.shape} and {y.shape}"
        )
    if region_index.size and not np.issubdtype(region_index.dtype, np.integer):
        raise ValueError(f"region_index must hold integers; got dtype {region_index.dtype}")
    if y.size and not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"y must hold class indices 0..n_classes-1 as integers; got dtype {y.dtype}")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"y must hold class indices in 0..{n_classes - 1}; got range {y.min()}..{y.max()}")
    if n_regions is None:
        n_regions = int(region_index.max()) + 1 if region_index.size else 0
    elif isinstance(n_regions, bool) or not isinstance(n_regions, (int, np.integer)) or n_regions < 0:
        raise ValueError(f"n_regions must be a non-negative integer; got {n_regions!r}")
    if region_index.size and (region_index.min() < 0 or region_index.max() >= n_regions):
        raise ValueError(f"region_index must lie in 0..{n_regions - 1}")
    if sample_weight is None:
        weights = None
    else:
        weights = np.asarray(sample_weight, dtype=np.float64)
        if weights.shape != y.shape:
            raise ValueError(f"sample_weight must have shape {y.shape}; got {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("sample_weight must be finite and non-negative")
    flat = region_index.astype(np.int64) * n_classes + y.astype(np.int64)
    counts = np.bincount(flat, weights=weights, minlength=n_regions * n_classes)
    return counts.astype(np.float64).reshape(n_regions, n_classes)
