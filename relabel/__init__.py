"""Relabelling of fused tree partitions under ordinal consistency constraints.

The pipeline of docs/design.md section 4, on boxes and counts only (no tree code):

- :func:`fuse` intersects the leaves of M trees into a :class:`FusedPartition`, with
  bounds a few ulps apart snapped to one (:func:`snap_table`, :data:`SNAP_ULPS`);
- :func:`region_counts` counts the training classes per region;
- :func:`adjacency_edges` / :func:`adjacency_graph` find the touching regions (with
  categorical features and a resolution, docs/design.md sections 4b-4c);
- :func:`monotone_pairs` orders the regions along monotone-constrained features;
- :func:`move_pairs` finds the regions one bounded move can join (the data's resolution
  in a projected space, docs/design.md section 13);
- :meth:`ConsistencyProblem.from_counts` builds the ILP of Sousa & Cardoso (2011);
- :func:`solve` runs one of :data:`SOLVERS` (exact graph cut, CBC, CP-SAT);
- :func:`is_consistent` / :func:`violating_edges` and :func:`is_monotone` /
  :func:`violating_pairs` certify the labelling (``edge_violations`` and
  ``pair_violations``, their per-row masks, are deprecated near-synonyms);
- :func:`check_categorical_features`, :func:`check_monotonic_cst` and
  :func:`check_resolution` validate the per-feature options (one home for them);
- :func:`region_polygons` gives 2D regions as shapely boxes;
- :func:`guillotine_tree` / :func:`push_down` (a :class:`Hierarchy`) are the box search
  that fusion and adjacency share: which boxes of a set a query box meets;
- :func:`graph_cut` runs the exact relabelling with either max-flow engine of
  :data:`GRAPH_CUT_ENGINES` (:func:`solve` uses the first, the second is an independent check);
- :func:`compiled` is the numba decorator of every compiled kernel of the project
  (relabel's and the ensemble's), with the argument-type conventions of
  :mod:`relabel._numba`.
"""

from relabel._adjacency import CONTACTS, AdjacencyEdges, adjacency_edges, adjacency_graph
from relabel._backends import graphcut as _graphcut
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
from relabel._monotone_pairs import monotone_pairs
from relabel._moves import move_pairs
from relabel._guillotine import Hierarchy, guillotine_tree, push_down
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
    "GRAPH_CUT_ENGINES",
    "Hierarchy",
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
    "graph_cut",
    "guillotine_tree",
    "is_consistent",
    "is_monotone",
    "monotone_pairs",
    "move_pairs",
    "pair_violations",
    "push_down",
    "region_counts",
    "region_polygons",
    "snap_table",
    "solve",
    "violating_edges",
    "violating_pairs",
]

#: The max-flow engines of :func:`graph_cut`: the pseudoflow (the one :func:`solve` runs) and
#: OR-Tools' push-relabel.
GRAPH_CUT_ENGINES = _graphcut.ENGINES


def graph_cut(problem: ConsistencyProblem, *, engine: str = "pseudoflow"):
    """The exact relabelling of ``problem`` by one minimum s-t cut, with the chosen max-flow engine.

    ``solve(problem)`` (``solver="graphcut"``) runs the ``"pseudoflow"`` engine and wraps
    its outcome in a :class:`RelabelResult`, by the steepest descent of docs/design.md
    section 4 where it applies (four or more classes, convex costs); this is the one cut
    over every threshold, so that the second engine, ``"ortools"`` (OR-Tools'
    push-relabel, independent code on the same arcs), and the descent can be checked or
    timed against it. All return the smallest optimal labelling.

    Parameters
    ----------
    problem : ConsistencyProblem
    engine : {"pseudoflow", "ortools"}, default="pseudoflow"
        One of :data:`GRAPH_CUT_ENGINES`.

    Returns
    -------
    result : NamedTuple ``(labels, status, bound, message)``
        ``labels`` the class index of every region (None on failure), ``status`` a
        :class:`SolverStatus` member name (``"OPTIMAL"`` once the cut is certified),
        ``bound`` a proven lower bound when the data were rounded to integers,
        ``message`` the engine's statistics. Unlike :func:`solve`, nothing is warned or
        raised on failure and no fallback labelling is made.

    Raises
    ------
    ValueError
        If ``engine`` is not one of :data:`GRAPH_CUT_ENGINES`.
    SolverNotInstalledError
        If ``engine="ortools"`` and OR-Tools is missing.

    Examples
    --------
    >>> from relabel import GRAPH_CUT_ENGINES, ConsistencyProblem, graph_cut
    >>> problem = ConsistencyProblem.from_counts([[5, 0, 0], [0, 0, 0], [0, 0, 5]], [[0, 1], [1, 2]])
    >>> [(graph_cut(problem, engine=e).status, graph_cut(problem, engine=e).labels.tolist())
    ...  for e in GRAPH_CUT_ENGINES]
    [('OPTIMAL', [0, 1, 2]), ('OPTIMAL', [0, 1, 2])]
    """
    return _graphcut.solve(problem, formulation="tight", time_limit=None, threads=1, verbose=False, engine=engine,
                           descent=False)
