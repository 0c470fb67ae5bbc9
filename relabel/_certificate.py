"""Consistency certificate: adjacent regions carry labels differing by at most one."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["is_consistent", "violating_edges"]


def _edge_array(graph: Any) -> NDArray[np.intp]:
    """Edges of a networkx graph, or of an (E, 2) array, as an (E, 2) intp array."""
    if isinstance(graph, nx.Graph):
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
    n_nodes = graph.number_of_nodes() if isinstance(graph, nx.Graph) else None
    if n_nodes is not None and n_nodes != labels.shape[0]:
        raise ValueError(f"labels has {labels.shape[0]} entries but graph has {n_nodes} nodes")
    if edges.size and (edges.min() < 0 or edges.max() >= labels.shape[0]):
        raise ValueError(f"graph edges refer to regions outside 0..{labels.shape[0] - 1}")
    return labels


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
    gap = np.abs(labels[edges[:, 0]].astype(np.int64) - labels[edges[:, 1]].astype(np.int64))
    return edges[gap > 1]


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
