"""Certificates of a labelling: consistency (adjacent labels differ by at most one) and monotonicity.

The rules themselves live here once: :func:`edge_violation_mask` and
:func:`pair_violation_mask` are what :func:`is_consistent` / :func:`is_monotone` check
(through :func:`violating_edges` / :func:`violating_pairs`) and what
:meth:`relabel.ConsistencyProblem.objective` calls infeasible. ``edge_violations`` and
``pair_violations`` are their deprecated public names (a near-synonym of
``violating_edges`` / ``violating_pairs`` that returned the mask).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "edge_violation_mask", "edge_violations", "is_consistent", "is_monotone", "pair_violation_mask",
    "pair_violations", "violating_edges", "violating_pairs",
]


def _is_networkx_graph(graph: Any) -> bool:
    """Whether ``graph`` is a networkx graph, without importing networkx (0.06 s of every start-up).

    A networkx graph exists only where networkx was imported, so a module not yet
    imported means the answer is no.
    """
    networkx = sys.modules.get("networkx")
    return networkx is not None and isinstance(graph, networkx.Graph)


def _edge_array(graph: Any) -> NDArray[np.intp]:
    """Edges of a networkx graph, or of an (E, 2) array, as an (E, 2) intp array."""
    if _is_networkx_graph(graph):
        if graph.is_directed() or graph.is_multigraph():
            raise ValueError("graph must be an undirected networkx.Graph")
        edges = np.array(list(graph.edges()), dtype=object).reshape(-1, 2)
        try:
            return edges.astype(np.intp)
        except (TypeError, ValueError):
            raise ValueError("graph nodes must be integer region indices 0..N-1") from None
    edges = np.asarray(graph)
    if edges.size == 0:
        edges = np.zeros((0, 2), dtype=np.intp)
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError(
            f"graph must be a networkx.Graph or an (n_edges, 2) integer array; got shape {edges.shape}"
        )
    if edges.size and not np.issubdtype(edges.dtype, np.integer):
        raise ValueError(f"graph edge array must hold integers; got dtype {edges.dtype}")
    return edges.astype(np.intp)


def _labels_for(graph: Any, labels: ArrayLike, edges: NDArray) -> NDArray:
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a 1-d array; got shape {labels.shape}")
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must hold integer class indices; got dtype {labels.dtype}")
    n_nodes = graph.number_of_nodes() if _is_networkx_graph(graph) else None
    if n_nodes is not None and n_nodes != labels.shape[0]:
        raise ValueError(f"labels has {labels.shape[0]} entries but graph has {n_nodes} nodes")
    if edges.size and (edges.min() < 0 or edges.max() >= labels.shape[0]):
        raise ValueError(f"graph edges refer to regions outside 0..{labels.shape[0] - 1}")
    return labels


def edge_violation_mask(edges: NDArray[np.integer], labels: NDArray[np.integer]) -> NDArray[np.bool_]:
    """The consistency rule, per edge: True where the two labels differ by more than one.

    Parameters
    ----------
    edges : ndarray of shape (E, 2), int
        Region pairs (already validated: indices into ``labels``).
    labels : ndarray of shape (N,), int
        Label of each region.

    Returns
    -------
    ndarray of shape (E,), bool

    Notes
    -----
    Constraint (5)/(6) of the paper (docs/design.md section 4); the single home of the rule,
    used by :func:`violating_edges` and :meth:`ConsistencyProblem.objective`. O(E).

    Examples
    --------
    >>> import numpy as np
    >>> from relabel._certificate import edge_violation_mask
    >>> edge_violation_mask(np.array([[0, 1], [1, 2]]), np.array([0, 2, 3])).tolist()
    [True, False]
    """
    edges = np.asarray(edges).reshape(-1, 2)
    labels = np.asarray(labels, dtype=np.int64)
    return np.abs(labels[edges[:, 0]] - labels[edges[:, 1]]) > 1


def pair_violation_mask(pairs: NDArray[np.integer], labels: NDArray[np.integer]) -> NDArray[np.bool_]:
    """The monotonicity rule, per ordered pair ``(n, m)``: True where ``label(n) > label(m)``.

    Parameters
    ----------
    pairs : ndarray of shape (P, 2), int
        Ordered pairs meaning ``label(n) <= label(m)`` (see :func:`monotone_pairs`).
    labels : ndarray of shape (N,), int
        Label of each region.

    Returns
    -------
    ndarray of shape (P,), bool

    Notes
    -----
    docs/design.md section 4b; the single home of the rule, used by :func:`violating_pairs`
    and :meth:`ConsistencyProblem.objective`. O(P).

    Examples
    --------
    >>> import numpy as np
    >>> from relabel._certificate import pair_violation_mask
    >>> pair_violation_mask(np.array([[0, 1], [1, 2]]), np.array([0, 2, 1])).tolist()
    [False, True]
    """
    pairs = np.asarray(pairs).reshape(-1, 2)
    labels = np.asarray(labels, dtype=np.int64)
    return labels[pairs[:, 0]] > labels[pairs[:, 1]]


def violating_edges(graph: Any, labels: ArrayLike) -> NDArray[np.intp]:
    """Edges whose two regions carry labels differing by more than one.

    Parameters
    ----------
    graph : networkx.Graph or array-like of shape (n_edges, 2)
        Region adjacency graph with nodes ``0 .. N-1``, or its edge array.
    labels : array-like of shape (N,)
        Integer label of each region (class indices; any integer scale works).

    Returns
    -------
    ndarray of shape (n_violations, 2), intp
        The violating edges, in the graph's edge order.

    Raises
    ------
    ValueError
        If labels are not a 1-d integer array matching the graph.

    Notes
    -----
    Constraint (5)/(6) of the paper checked on every edge: O(N + E).

    Examples
    --------
    >>> import networkx as nx
    >>> from relabel import violating_edges
    >>> violating_edges(nx.path_graph(3), [0, 2, 2]).tolist()
    [[0, 1]]
    """
    edges = _edge_array(graph)
    labels = _labels_for(graph, labels, edges)
    if edges.shape[0] == 0:
        return edges.reshape(0, 2)
    return edges[edge_violation_mask(edges, labels)]


def is_consistent(graph: Any, labels: ArrayLike) -> bool:
    """Whether a labelling is consistent: every edge's labels differ by at most one.

    Parameters
    ----------
    graph : networkx.Graph or array-like of shape (n_edges, 2)
        Region adjacency graph with nodes ``0 .. N-1``, or its edge array.
    labels : array-like of shape (N,)
        Integer label of each region.

    Returns
    -------
    bool
        True when no edge violates constraint (5) of the paper.

    Raises
    ------
    ValueError
        If labels are not a 1-d integer array matching the graph.

    Notes
    -----
    O(N + E); see :func:`violating_edges` for the list of violations.

    Examples
    --------
    >>> import networkx as nx
    >>> from relabel import is_consistent
    >>> is_consistent(nx.path_graph(3), [0, 1, 2]), is_consistent(nx.path_graph(3), [0, 2, 2])
    (True, False)
    """
    return violating_edges(graph, labels).shape[0] == 0


def _pair_array(pairs: Any, n_labels: int) -> NDArray[np.intp]:
    pairs = np.asarray(pairs)
    if pairs.size == 0:
        return np.zeros((0, 2), dtype=np.intp)
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise ValueError(f"pairs must be an (n_pairs, 2) integer array; got shape {pairs.shape}")
    if not np.issubdtype(pairs.dtype, np.integer):
        raise ValueError(f"pairs must hold integer region indices; got dtype {pairs.dtype}")
    if pairs.min() < 0 or pairs.max() >= n_labels:
        raise ValueError(f"pairs refer to regions outside 0..{n_labels - 1}")
    return pairs.astype(np.intp)


def violating_pairs(pairs: ArrayLike, labels: ArrayLike) -> NDArray[np.intp]:
    """Ordered pairs ``(n, m)`` whose labels break ``label(n) <= label(m)``.

    Parameters
    ----------
    pairs : array-like of shape (P, 2)
        Ordered region pairs, for example from :func:`monotone_pairs` or
        ``ConsistencyProblem.monotone``.
    labels : array-like of shape (N,)
        Integer label of each region.

    Returns
    -------
    ndarray of shape (n_violations, 2), intp
        The violating pairs, in the given order.

    Raises
    ------
    ValueError
        If labels are not a 1-d integer array or pairs are not an (P, 2) integer array
        of indices into ``labels``.

    Notes
    -----
    docs/design.md section 4b. O(N + P).

    Examples
    --------
    >>> from relabel import violating_pairs
    >>> violating_pairs([[0, 1], [1, 2]], [0, 2, 1]).tolist()
    [[1, 2]]
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a 1-d array; got shape {labels.shape}")
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must hold integer class indices; got dtype {labels.dtype}")
    pairs = _pair_array(pairs, labels.shape[0])
    return pairs[pair_violation_mask(pairs, labels)]


def is_monotone(pairs: ArrayLike, labels: ArrayLike) -> bool:
    """Whether a labelling respects every ordered pair ``label(n) <= label(m)``.

    Parameters
    ----------
    pairs : array-like of shape (P, 2)
        Ordered region pairs, for example from :func:`monotone_pairs`.
    labels : array-like of shape (N,)
        Integer label of each region.

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        As :func:`violating_pairs`.

    Notes
    -----
    With the pairs of :func:`monotone_pairs` (face contacts along the constrained
    features), a True answer means the predicted class never goes the wrong way along
    any line parallel to a constrained feature (docs/design.md section 4b). O(N + P).

    Examples
    --------
    >>> from relabel import is_monotone
    >>> is_monotone([[0, 1], [1, 2]], [0, 1, 1]), is_monotone([[0, 1]], [1, 0])
    (True, False)
    """
    return violating_pairs(pairs, labels).shape[0] == 0


def _deprecated_mask(old: str, new: str) -> None:
    warnings.warn(
        f"relabel.{old} is deprecated and will be removed; use relabel.{new}, which validates its input "
        "and returns the violating rows themselves (the rows where this mask is True)",
        FutureWarning,
        stacklevel=3,
    )


def edge_violations(edges: ArrayLike, labels: ArrayLike) -> NDArray[np.bool_]:
    """Deprecated: the per-edge mask of :func:`violating_edges` (a near-synonym of it).

    Use :func:`violating_edges`, which validates its input and returns the violating
    edges themselves. Emits a FutureWarning; otherwise unchanged.

    Examples
    --------
    >>> import warnings
    >>> from relabel import edge_violations
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     edge_violations([[0, 1], [1, 2]], [0, 2, 3]).tolist()
    [True, False]
    """
    _deprecated_mask("edge_violations", "violating_edges")
    return edge_violation_mask(edges, labels)


def pair_violations(pairs: ArrayLike, labels: ArrayLike) -> NDArray[np.bool_]:
    """Deprecated: the per-pair mask of :func:`violating_pairs` (a near-synonym of it).

    Use :func:`violating_pairs`, which validates its input and returns the violating
    pairs themselves. Emits a FutureWarning; otherwise unchanged.

    Examples
    --------
    >>> import warnings
    >>> from relabel import pair_violations
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     pair_violations([[0, 1], [1, 2]], [0, 2, 1]).tolist()
    [False, True]
    """
    _deprecated_mask("pair_violations", "violating_pairs")
    return pair_violation_mask(pairs, labels)
