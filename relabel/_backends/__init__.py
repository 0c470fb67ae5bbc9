"""Solver backends: the only modules that import PuLP and OR-Tools (lazily).

Each backend module exposes ``solve(problem, *, formulation, time_limit, threads,
verbose) -> BackendResult`` (:mod:`relabel._backends._result`); :data:`relabel.SOLVERS`
maps the public names to them. The graph cut's compiled code lives in
:mod:`relabel._backends._cutgraph` (the cut graph) and :mod:`relabel._backends._pseudoflow`
(the max-flow and its certificate).
"""

from relabel._backends import cbc, cpsat, graphcut
from relabel._backends._result import BackendResult

__all__ = ["BackendResult", "cbc", "cpsat", "graphcut"]
