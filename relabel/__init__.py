"""Relabelling of fused tree partitions under ordinal consistency constraints.

The pipeline of DESIGN.md section 4, on boxes and counts only (no tree code):

- :func:`fuse` intersects the leaves of M trees into a :class:`FusedPartition`;
- :func:`region_counts` counts the training classes per region;
- :func:`adjacency_edges` / :func:`adjacency_graph` find the touching regions;
- :meth:`ConsistencyProblem.from_counts` builds the ILP of Sousa & Cardoso (2011);
- :func:`solve` runs one of :data:`SOLVERS` (exact graph cut, CBC, CP-SAT);
- :func:`is_consistent` / :func:`violating_edges` certify the labelling;
- :func:`region_polygons` gives 2D regions as shapely boxes.
"""

from relabel._adjacency import CONTACTS, AdjacencyEdges, adjacency_edges, adjacency_graph
from relabel._backends.cbc import cbc_info
from relabel._certificate import is_consistent, violating_edges
from relabel._errors import (
    RelabelError,
    RelabelInfeasibleError,
    RelabelTimeLimitError,
    RelabelWarning,
    SolverNotInstalledError,
    TooManyRegionsError,
)
from relabel._fusion import FusedPartition, fuse, region_counts
from relabel._geometry import region_polygons
from relabel._problem import ConsistencyProblem, absolute_loss
from relabel._solve import FORMULATIONS, SOLVERS, RelabelResult, SolverStatus, solve

__all__ = [
    "AdjacencyEdges",
    "CONTACTS",
    "ConsistencyProblem",
    "FORMULATIONS",
    "FusedPartition",
    "RelabelError",
    "RelabelInfeasibleError",
    "RelabelResult",
    "RelabelTimeLimitError",
    "RelabelWarning",
    "SOLVERS",
    "SolverNotInstalledError",
    "SolverStatus",
    "TooManyRegionsError",
    "absolute_loss",
    "adjacency_edges",
    "adjacency_graph",
    "cbc_info",
    "fuse",
    "is_consistent",
    "region_counts",
    "region_polygons",
    "solve",
    "violating_edges",
]
