"""Relabelling of fused tree partitions under ordinal consistency constraints.

The pipeline of docs/design.md section 4, on boxes and counts only (no tree code):

- :func:`fuse` intersects the leaves of M trees into a :class:`FusedPartition`, with
  bounds a few ulps apart snapped to one (:func:`snap_table`, :data:`SNAP_ULPS`);
- :func:`region_counts` counts the training classes per region;
- :func:`adjacency_edges` / :func:`adjacency_graph` find the touching regions (with
  categorical features and a resolution, docs/design.md sections 4b-4c);
- :func:`monotone_pairs` orders the regions along monotone-constrained features;
- :meth:`ConsistencyProblem.from_counts` builds the ILP of Sousa & Cardoso (2011);
- :func:`solve` runs one of :data:`SOLVERS` (exact graph cut, CBC, CP-SAT);
- :func:`is_consistent` / :func:`violating_edges` and :func:`is_monotone` /
  :func:`violating_pairs` certify the labelling (``edge_violations`` and
  ``pair_violations``, their per-row masks, are deprecated near-synonyms);
- :func:`check_categorical_features`, :func:`check_monotonic_cst` and
  :func:`check_resolution` validate the per-feature options (one home for them);
- :func:`region_polygons` gives 2D regions as shapely boxes;
- :func:`compiled` is the numba decorator of every compiled kernel of the project
  (relabel's and the ensemble's), with the argument-type conventions of
  :mod:`relabel._numba`.
"""

from relabel._adjacency import CONTACTS, AdjacencyEdges, adjacency_edges, adjacency_graph
from relabel._monotone_pairs import monotone_pairs
from relabel._backends.cbc import cbc_info
from relabel._certificate import (
    edge_violations,
    is_consistent,
    is_monotone,
    pair_violations,
    violating_edges,
    violating_pairs,
)
from relabel._features import check_categorical_features, check_monotonic_cst, check_resolution
from relabel._errors import (
    RelabelError,
    RelabelInfeasibleError,
    RelabelTimeLimitError,
    RelabelWarning,
    SolverNotInstalledError,
    TooManyRegionsError,
)
from relabel._fusion import SNAP_ULPS, FusedPartition, fuse, region_counts, snap_table
from relabel._geometry import region_polygons
from relabel._grid import DataGrid
from relabel._numba import compiled
from relabel._problem import ConsistencyProblem, absolute_loss
from relabel._solve import FORMULATIONS, SOLVERS, RelabelResult, SolverStatus, solve

__all__ = [
    "AdjacencyEdges",
    "CONTACTS",
    "ConsistencyProblem",
    "DataGrid",
    "FORMULATIONS",
    "FusedPartition",
    "RelabelError",
    "RelabelInfeasibleError",
    "RelabelResult",
    "RelabelTimeLimitError",
    "RelabelWarning",
    "SNAP_ULPS",
    "SOLVERS",
    "SolverNotInstalledError",
    "SolverStatus",
    "TooManyRegionsError",
    "absolute_loss",
    "adjacency_edges",
    "adjacency_graph",
    "cbc_info",
    "check_categorical_features",
    "check_monotonic_cst",
    "check_resolution",
    "compiled",
    "edge_violations",
    "fuse",
    "is_consistent",
    "is_monotone",
    "monotone_pairs",
    "pair_violations",
    "region_counts",
    "region_polygons",
    "snap_table",
    "solve",
    "violating_edges",
    "violating_pairs",
]
