"""The consistency problem of Sousa & Cardoso (2011), equations 1-10, as pure data."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from relabel._certificate import _is_networkx_graph, edge_violation_mask, pair_violation_mask

__all__ = ["ConsistencyProblem", "absolute_loss"]


def absolute_loss(n_classes: int) -> NDArray[np.float64]:
    """The absolute-error loss matrix ``L[i, k] = |i - k|``.

    Parameters
    ----------
    n_classes : int
        Number of classes K.

    Returns
    -------
    ndarray of shape (K, K), float64

    Examples
    --------
    >>> from relabel import absolute_loss
    >>> absolute_loss(3).tolist()
    [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]
    """
    k = np.arange(n_classes)
    return np.abs(k[:, None] - k[None, :]).astype(np.float64)


def _check_counts(counts: ArrayLike) -> NDArray[np.float64]:
    try:
        counts = np.asarray(counts, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("counts must be a numeric (n_regions, n_classes) array") from None
    if counts.ndim != 2:
        raise ValueError(f"counts must be a 2-d (n_regions, n_classes) array; got shape {counts.shape}")
    if counts.shape[1] < 2:
        raise ValueError(f"counts needs K >= 2 classes (columns); got K = {counts.shape[1]}")
    if counts.shape[0] < 1:
        raise ValueError("counts needs at least one region (row)")
    if not np.all(np.isfinite(counts)):
        raise ValueError("counts must be finite (no NaN or inf)")
    if np.any(counts < 0):
        raise ValueError("counts must be non-negative")
    return counts


def _check_prior(prior: ArrayLike | None, shape: tuple, empty: NDArray[np.bool_]) -> NDArray[np.float64]:
    if prior is None:
        return np.zeros(shape)
    try:
        prior = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("prior must be a numeric (n_regions, n_classes) array") from None
    if prior.shape != shape:
        raise ValueError(f"prior must have the counts' shape {shape}; got {prior.shape}")
    if not np.all(np.isfinite(prior)) or np.any(prior < 0):
        raise ValueError("prior must be finite and non-negative")
    if np.any(prior[~empty] != 0):
        raise ValueError("prior must be zero on the regions with counts (it weighs the empty regions only)")
    return prior


def _check_loss(loss: ArrayLike | None, n_classes: int) -> NDArray[np.float64]:
    if loss is None:
        return absolute_loss(n_classes)
    loss = np.asarray(loss, dtype=np.float64)
    if loss.shape != (n_classes, n_classes):
        raise ValueError(f"loss must have shape ({n_classes}, {n_classes}); got {loss.shape}")
    if not np.all(np.isfinite(loss)) or np.any(loss < 0):
        raise ValueError("loss must be finite and non-negative")
    for i in range(n_classes):
        row = loss[i]
        # V-shaped: the loss of predicting k for true class i never decreases as k
        # moves away from i, on either side.
        if np.any(np.diff(row[: i + 1]) > 0) or np.any(np.diff(row[i:]) < 0):
            raise ValueError(
                f"loss must be V-shaped: row {i} must be non-increasing up to column {i} "
                f"and non-decreasing after it; got {row.tolist()}"
            )
    return loss


def _check_penalty(value: Any, name: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a non-negative real number or None; got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite non-negative number; got {value!r}")
    return value


def _check_edges(graph: Any, n_regions: int, name: str = "graph") -> NDArray[np.intp]:
    if _is_networkx_graph(graph):
        if graph.is_directed() or graph.is_multigraph():
            raise ValueError("graph must be an undirected networkx.Graph")
        nodes = set(graph.nodes)
        if graph.number_of_nodes() != n_regions or nodes != set(range(n_regions)):
            raise ValueError(
                f"graph nodes must be exactly the region indices 0..{n_regions - 1} "
                f"(counts has {n_regions} rows); got {graph.number_of_nodes()} nodes"
            )
        edges = np.array(list(graph.edges()), dtype=np.int64).reshape(-1, 2)
    else:
        edges = np.asarray(graph)
        if edges.size == 0:
            edges = np.zeros((0, 2), dtype=np.int64)  # an empty list means no edges
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise ValueError(
                f"{name} must be a networkx.Graph or an (n_edges, 2) integer array; "
                f"got shape {edges.shape}"
            )
        if edges.size and not np.issubdtype(edges.dtype, np.integer):
            raise ValueError(f"{name} edge array must hold integers; got dtype {edges.dtype}")
        edges = edges.astype(np.int64)
        if edges.size and (edges.min() < 0 or edges.max() >= n_regions):
            raise ValueError(
                f"{name} edges must join region indices in 0..{n_regions - 1} "
                f"(counts has {n_regions} rows)"
            )
    if np.any(edges[:, 0] == edges[:, 1]):
        raise ValueError(f"{name} must not contain self-loops")
    edges = np.sort(edges, axis=1)
    if edges.shape[0]:
        # Sorted unique rows through one int64 key per edge and a plain sort: same
        # result as np.unique(axis=0), which took 3.7 s on 2.8 M edges (0.1 s now).
        keys = np.sort(edges[:, 0] * np.int64(max(n_regions, 1)) + edges[:, 1])
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        edges = np.column_stack((keys // max(n_regions, 1), keys % max(n_regions, 1)))
    return edges.astype(np.intp)


def _check_monotone(monotone: Any, n_regions: int) -> NDArray[np.intp]:
    if monotone is None:
        return np.zeros((0, 2), dtype=np.intp)
    pairs = np.asarray(monotone)
    if pairs.size == 0:
        return np.zeros((0, 2), dtype=np.intp)
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise ValueError(
            f"monotone must be an (n_pairs, 2) integer array of ordered region pairs; got shape {pairs.shape}"
        )
    if not np.issubdtype(pairs.dtype, np.integer):
        raise ValueError(f"monotone must hold integer region indices; got dtype {pairs.dtype}")
    pairs = pairs.astype(np.int64)
    if pairs.min() < 0 or pairs.max() >= n_regions:
        raise ValueError(f"monotone pairs must join region indices in 0..{n_regions - 1} (counts has {n_regions} rows)")
    if np.any(pairs[:, 0] == pairs[:, 1]):
        raise ValueError("monotone pairs must join two different regions")
    # Ordered pairs: (n, m) and (m, n) are different constraints, so only exact
    # duplicates go (one int64 key per pair, as for the edges).
    keys = np.unique(pairs[:, 0] * np.int64(n_regions) + pairs[:, 1])
    return np.column_stack((keys // n_regions, keys % n_regions)).astype(np.intp)


@dataclass(frozen=True, eq=False)
class ConsistencyProblem:
    """Relabelling a partition under ordinal consistency (paper eq. 1-10).

    Regions n = 0..N-1 get labels 0..K-1 (class indices). Labels of adjacent regions
    must differ by at most one; a label change across an edge with an empty region
    costs ``C1`` (both empty, set Delta1) or ``C2`` (exactly one empty, Delta2).
    Build it with :meth:`from_counts`.

    Attributes
    ----------
    counts : ndarray of shape (N, K)
        Class counts p_{n,i} per region.
    prior : ndarray of shape (N, K)
        Class weights q_{n,i} of the empty regions (zero rows elsewhere; all zero
        without a prior).
    costs : ndarray of shape (N, K)
        c_{n,k} = sum_i L[i, k] (p_{n,i} + q_{n,i}), the cost of labelling region
        n with k.
    loss : ndarray of shape (K, K)
        The V-shaped loss matrix (absolute error by default).
    edges : ndarray of shape (E, 2), intp
        Adjacent pairs (n < m), with the unpenalised ``moves`` of :meth:`from_counts`,
        unique, sorted.
    empty : ndarray of shape (N,), bool
        Regions with zero total count.
    delta1, delta2 : ndarray of shape (E,), bool
        Edges of the graph (not ``moves``) with both / exactly one endpoint empty.
    C1, C2 : float
        Penalties of eq. (10).
    monotone : ndarray of shape (P, 2), intp
        Ordered pairs ``(n, m)`` with the hard constraint ``label(n) <= label(m)``
        (docs/design.md section 4b), unique, sorted; empty without monotone constraints.

    Examples
    --------
    >>> import networkx as nx
    >>> from relabel import ConsistencyProblem
    >>> problem = ConsistencyProblem.from_counts([[3, 0, 0], [0, 0, 0], [0, 0, 2]], nx.path_graph(3))
    >>> problem.costs.tolist()
    [[0.0, 3.0, 6.0], [0.0, 0.0, 0.0], [4.0, 2.0, 0.0]]
    >>> problem.objective([0, 1, 2]), problem.objective([0, 0, 2])
    (0.37037037037037035, inf)
    """

    counts: NDArray[np.float64]
    prior: NDArray[np.float64]
    costs: NDArray[np.float64]
    loss: NDArray[np.float64]
    edges: NDArray[np.intp]
    empty: NDArray[np.bool_]
    delta1: NDArray[np.bool_]
    delta2: NDArray[np.bool_]
    C1: float
    C2: float
    monotone: NDArray[np.intp] = field(default_factory=lambda: np.zeros((0, 2), dtype=np.intp))

    @classmethod
    def from_counts(
        cls,
        counts: ArrayLike,
        graph: Any,
        C1: float | None = None,
        C2: float | None = None,
        *,
        loss: ArrayLike | None = None,
        monotone: ArrayLike | None = None,
        prior: ArrayLike | None = None,
        moves: ArrayLike | None = None,
    ) -> "ConsistencyProblem":
        """Validate the inputs and build the problem.

        Parameters
        ----------
        counts : array-like of shape (N, K)
            Non-negative finite (weighted) class counts per region, K >= 2.
        graph : networkx.Graph or array-like of shape (E, 2)
            Region adjacency graph with nodes exactly ``0 .. N-1``, or its integer
            edge array (skips networkx on hot paths).
        C1, C2 : float, optional
            Penalties for a label change across an edge with two / one empty regions.
            Defaults are the paper's ``C1 = 1 / (N (K-1))`` and
            ``C2 = 1 / (0.9 N (K-1))``, computed as ``10 / (9 N (K-1))`` so the float
            is the correctly rounded rational.
        loss : array-like of shape (K, K), optional
            V-shaped loss ``L[i, k]`` of predicting k for true class i; absolute
            error ``|i - k|`` by default.
        monotone : array-like of shape (P, 2), optional
            Ordered region pairs ``(n, m)`` meaning ``label(n) <= label(m)``, hard for
            empty regions too, typically :func:`relabel.monotone_pairs` of the
            partition. Every solver enforces them (graph cut: one infinite arc
            x_{n,k} -> x_{m,k} per k; "paper": ``sum_k x_{n,k} <= sum_k x_{m,k}``;
            "tight": ``x_{n,k} <= x_{m,k}`` per k). A constant labelling satisfies them,
            so the problem stays feasible.
        prior : array-like of shape (N, K), optional
            Non-negative finite class weights of the empty regions (rows of
            regions with counts must be zero): an empty region labelled k then
            costs ``sum_i L[i, k] prior[n, i]`` besides the penalties, so it leans
            towards the prior's weighted median where the constraints leave it
            free (OTreeBagger: the class counts of the trees' leaves around it).
            The region stays empty for Delta1/Delta2. ``None``: empty regions
            cost nothing, as in the paper.
        moves : array-like of shape (P, 2), optional
            Further region pairs held to labels at most one apart, as hard as the
            graph's edges but never penalised (not in Delta1/Delta2): the pairs
            one small move joins without a contact (docs/design.md section 13).
            They join ``edges``; a pair in both is the graph's.

        Returns
        -------
        ConsistencyProblem

        Raises
        ------
        ValueError
            If counts are not a finite non-negative 2-d array with K >= 2 columns, the
            graph's nodes do not match the counts' rows, C1/C2 are not finite and
            non-negative, the loss matrix has the wrong shape or is not V-shaped, or
            ``monotone`` is not an (P, 2) array of pairs of distinct region indices.

        Notes
        -----
        Costs are one matrix product, O(N K^2); edges are deduplicated in O(E log E).

        Examples
        --------
        >>> import numpy as np
        >>> from relabel import ConsistencyProblem
        >>> p = ConsistencyProblem.from_counts(np.eye(2), np.array([[0, 1]]))
        >>> p.n_regions, p.n_classes, p.C1
        (2, 2, 0.5)
        >>> q = ConsistencyProblem.from_counts([[0, 3], [2, 0]], [[0, 1]], monotone=[[0, 1]])
        >>> q.objective([1, 0]), q.objective([0, 0]), q.objective([1, 1])
        (inf, 3.0, 2.0)
        >>> r = ConsistencyProblem.from_counts([[2, 0], [0, 0]], [[0, 1]], prior=[[0, 0], [0, 0.5]])
        >>> r.costs.tolist(), bool(r.empty[1])
        ([[0.0, 2.0], [0.5, 0.0]], True)
        >>> m = ConsistencyProblem.from_counts([[1, 0], [0, 0], [0, 1]], [[0, 1]], moves=[[1, 2], [0, 1]])
        >>> m.edges.tolist(), m.delta2.tolist()  # the move pair (1, 2) is held but costs nothing
        ([[0, 1], [1, 2]], [True, False])
        """
        counts = _check_counts(counts)
        n_regions, n_classes = counts.shape
        loss = _check_loss(loss, n_classes)
        edges = _check_edges(graph, n_regions)
        pairs = _check_monotone(monotone, n_regions)
        scale = n_regions * (n_classes - 1)
        C1 = _check_penalty(C1, "C1", 1.0 / scale)
        C2 = _check_penalty(C2, "C2", 10.0 / (9 * scale))
        empty = counts.sum(axis=1) == 0
        prior = _check_prior(prior, counts.shape, empty)
        costs = (counts + prior) @ loss
        empty_ends = empty[edges[:, 0]].astype(np.int8) + empty[edges[:, 1]]
        arrays = dict(
            counts=counts, prior=prior, costs=costs, loss=loss, edges=edges, empty=empty,
            delta1=empty_ends == 2, delta2=empty_ends == 1, monotone=pairs,
        )
        for array in arrays.values():
            array.flags.writeable = False
        problem = cls(**arrays, C1=C1, C2=C2)
        return problem if moves is None else problem.with_moves(moves)

    def with_moves(self, moves: ArrayLike) -> "ConsistencyProblem":
        """The same problem with the region pairs ``moves`` held too, never penalised.

        The ``moves`` argument of :meth:`from_counts`, for a problem already built: the
        costs are kept, a pair already among the edges keeps its penalty, and a new
        pair joins them outside Delta1/Delta2 (a relabelling that adds pairs round by
        round pays for the costs and the graph once).

        Examples
        --------
        >>> from relabel import ConsistencyProblem
        >>> p = ConsistencyProblem.from_counts([[1, 0], [0, 0], [0, 1]], [[0, 1]])
        >>> q = p.with_moves([[1, 2]])
        >>> q.edges.tolist(), q.delta2.tolist(), p.edges.tolist()
        ([[0, 1], [1, 2]], [True, False], [[0, 1]])
        """
        n = self.n_regions
        moved = _check_edges(moves, n, "moves")
        key = np.int64(max(n, 1))
        own = self.edges[:, 0].astype(np.int64) * key + self.edges[:, 1]
        keys = np.concatenate((own, moved[:, 0].astype(np.int64) * key + moved[:, 1]))
        # Two sorted runs: a stable sort merges them in linear time (np.union1d hashes and sorts anew).
        keys.sort(kind="stable")
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if keys.shape[0] else keys
        # Both key lists are sorted and unique: a pair keeps its flags when found among the edges.
        at = np.searchsorted(own, keys).clip(0, max(own.shape[0] - 1, 0))
        found = own[at] == keys if own.shape[0] else np.zeros(keys.shape[0], dtype=bool)
        arrays = dict(edges=np.column_stack((keys // key, keys % key)).astype(np.intp),
                      delta1=np.where(found, self.delta1[at], False) if own.shape[0] else found,
                      delta2=np.where(found, self.delta2[at], False) if own.shape[0] else found)
        for array in arrays.values():
            array.flags.writeable = False
        return replace(self, **arrays)

    @property
    def n_regions(self) -> int:
        """Number of regions N."""
        return int(self.counts.shape[0])

    @property
    def n_classes(self) -> int:
        """Number of classes K."""
        return int(self.counts.shape[1])

    @property
    def n_edges(self) -> int:
        """Number of adjacent pairs E."""
        return int(self.edges.shape[0])

    @property
    def n_monotone(self) -> int:
        """Number of ordered monotone pairs P."""
        return int(self.monotone.shape[0])

    def _check_labels(self, labels: ArrayLike) -> NDArray[np.intp]:
        labels = np.asarray(labels)
        if labels.shape != (self.n_regions,):
            raise ValueError(f"labels must have shape ({self.n_regions},); got {labels.shape}")
        if not np.issubdtype(labels.dtype, np.integer):
            if not np.all(np.isfinite(labels)) or np.any(labels != np.round(labels)):
                raise ValueError("labels must be integer class indices")
        labels = labels.astype(np.intp)
        if labels.min() < 0 or labels.max() >= self.n_classes:
            raise ValueError(f"labels must be class indices in 0..{self.n_classes - 1}")
        return labels

    def objective(self, labels: ArrayLike) -> float:
        """The ILP objective (10) of a labelling; ``inf`` when it is inconsistent.

        Parameters
        ----------
        labels : array-like of shape (N,)
            Class index 0..K-1 of every region.

        Returns
        -------
        float
            ``sum_n c[n, labels[n]] + C1 #{Delta1 edges with a label change}
            + C2 #{Delta2 edges with a label change}``, or ``inf`` if an edge's
            labels differ by more than one or a monotone pair ``(n, m)`` has
            ``label(n) > label(m)`` (the ILP is infeasible there).

        Raises
        ------
        ValueError
            If labels have the wrong shape or are not class indices 0..K-1.

        Notes
        -----
        With labels differing by at most one, the optimal delta of eq. (7)-(8) is
        exactly the indicator of a change, so this is eq. (10). O(N + E).

        Examples
        --------
        >>> from relabel import ConsistencyProblem
        >>> p = ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 1]])
        >>> p.objective([0, 1]), p.objective([0, 0])
        (0.0, 1.0)
        """
        labels = self._check_labels(labels)
        if edge_violation_mask(self.edges, labels).any() or pair_violation_mask(self.monotone, labels).any():
            return math.inf
        unary = float(self.costs[np.arange(self.n_regions), labels].sum())
        changed = labels[self.edges[:, 0]] != labels[self.edges[:, 1]]
        return unary + self.C1 * int(np.sum(changed & self.delta1)) + self.C2 * int(
            np.sum(changed & self.delta2)
        )

    def best_constant_labels(self) -> NDArray[np.intp]:
        """The best labelling giving every region the same class (always feasible).

        Returns
        -------
        ndarray of shape (N,), intp

        Notes
        -----
        argmin_k sum_n c[n, k]: O(N K). The ILP's guaranteed feasible point (monotone
        pairs hold with equality), used as
        warm start and as fallback when a solver finds nothing.

        Examples
        --------
        >>> from relabel import ConsistencyProblem
        >>> ConsistencyProblem.from_counts([[0, 2], [1, 1]], [[0, 1]]).best_constant_labels().tolist()
        [1, 1]
        """
        k = int(np.argmin(self.costs.sum(axis=0)))
        return np.full(self.n_regions, k, dtype=np.intp)
