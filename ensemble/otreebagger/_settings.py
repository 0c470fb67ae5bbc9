"""OTreeBagger's finer settings: the keys of ``relabel_params`` and ``space_params``, and their resolution.

A dict parameter keeps a constructor short while every setting stays validated,
documented and reachable; the former parameters of the same names still work for a
deprecation period (a FutureWarning names the key that replaces each).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

from sklearn.utils._param_validation import Interval, StrOptions, validate_parameter_constraints

import relabel

__all__ = ["DEPRECATED", "RELABEL_PARAMS", "SPACE_PARAMS", "resolve_settings"]


# Measured (benchmarks/memory.py and the relabel benchmark, K = 5): a group's peak
# memory is driven by its adjacency edges. With OR-Tools' max-flow it was about
# 1 KB per edge (10.3 M edges in 4D: 10.9 GB; 1.7 M edges in 2D: 2.2 GB); the
# pseudoflow graph cut needs about 0.4 KB per edge (2.84 M edges in 4D: 1.14 GB
# above the data), plus about 0.3 KB per region. These budgets keep one group well
# under 6 GB, so two parallel jobs fit a 24 GB machine with room to spare. The edges' budget
# is also the problem's size past which a group costs far more than its trees and fusing
# pays nothing: 5,000 rows of 50 features, integer or on a 13-value lattice, fused about 4
# million contacts and move pairs a group of 3 (16x to 49x TreeBagger's fit), where single
# trees erred the same (benchmarks/otreebagger_cost.py --counts 5000, --levels 13); the
# shared sets' groups hold at most 75,000.
DEFAULT_MAX_REGIONS = 1_000_000
DEFAULT_MAX_EDGES = 1_000_000


#: The default of a deprecated parameter: never a value a user gives.
DEPRECATED = "deprecated"

#: The keys of ``relabel_params``: default and constraint of each.
RELABEL_PARAMS: dict[str, tuple[Any, list]] = {
    "formulation": ("paper", [StrOptions(set(relabel.FORMULATIONS))]),
    "contact": ("closure", [StrOptions(set(relabel.CONTACTS))]),
    "relabel_counts": ("bootstrap", [StrOptions({"bootstrap", "train"})]),
    "empty_regions": ("leaves", [StrOptions({"leaves", "paper"})]),
    "C1": (None, [Interval(Real, 0.0, None, closed="neither"), None]),
    "C2": (None, [Interval(Real, 0.0, None, closed="neither"), None]),
    "on_solver_failure": ("warn", [StrOptions({"warn", "raise"})]),
    "max_regions": (DEFAULT_MAX_REGIONS, [Interval(Integral, 1, None, closed="left")]),
    "max_edges": (DEFAULT_MAX_EDGES, [Interval(Integral, 0, None, closed="left")]),
    "on_budget": ("adapt", [StrOptions({"adapt", "raise"})]),
}

#: The keys of ``space_params``: default and constraint of each.
SPACE_PARAMS: dict[str, tuple[Any, list]] = {
    "score_model": ("auto", [StrOptions({"auto", "additive", "kernel"})]),
    "residual_axes": ("auto", [StrOptions({"auto", "pls", "features"})]),
    "monotonic_space": ("auto", [StrOptions({"auto", "index", "axes"})]),
}


def resolve_settings(estimator: Any, name: str, table: dict[str, tuple[Any, list]]) -> dict[str, Any]:
    """The settings of the dict parameter ``name``: its keys over the defaults of ``table``, validated.

    A deprecated parameter of one of the keys, if given, counts as that key and warns
    (FutureWarning naming the key); given both ways it is an error.

    Examples
    --------
    >>> from ensemble import OTreeBagger
    >>> model = OTreeBagger(relabel_params={"max_regions": 10_000})
    >>> resolve_settings(model, "relabel_params", RELABEL_PARAMS)["max_regions"]
    10000
    """
    given = getattr(estimator, name) or {}
    unknown = sorted(set(given) - set(table), key=str)
    if unknown:
        raise ValueError(f"{name} has no key {unknown[0]!r}; expected keys among {sorted(table)}")
    settings = {key: default for key, (default, _) in table.items()}
    for key in table:
        old = getattr(estimator, key, DEPRECATED)
        if isinstance(old, str) and old == DEPRECATED:
            continue
        if key in given:
            raise ValueError(f"{key} is given twice, as a parameter and in {name}; give it in {name} only")
        warnings.warn(f"The parameter {key} is deprecated in 0.1 and will be removed in 0.3: "
                      f"use {name}={{{key!r}: {old!r}}}", FutureWarning, stacklevel=4)
        settings[key] = old
    settings.update(given)
    validate_parameter_constraints({key: rule for key, (_, rule) in table.items()}, settings,
                                   caller_name=f"{type(estimator).__name__}({name}=...)")
    return settings
