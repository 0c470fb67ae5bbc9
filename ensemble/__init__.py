"""Ensembles of consistent ordinal trees: OTreeBagger, baselines, RankRules, metrics, data and model files.

The names below are imported lazily so that ``import ensemble`` stays cheap and
a submodule's optional dependency (matplotlib for plots) is only needed when used.
The sub-packages, one concept each, and the floors they sit on: docs/design.md section 1.
"""

from importlib import import_module

from ensemble import _former

_former.install()

_LAZY = {
    "OTreeBagger": "ensemble.otreebagger._otreebagger",
    "ConsistentForestClassifier": "ensemble.forest._forest",
    "ConsistentGradientBoostingClassifier": "ensemble.boosting._boosting",
    "RankRules": "ensemble.rankrules._rankrules",
    "GroupSizeWarning": "ensemble.otreebagger._otreebagger",
    "ClassOrderWarning": "trees.utils",
    "audit": "ensemble.audit",
    "AuditReport": "ensemble.audit",
    "count_jumps": "ensemble.plots._display",
    "segment_jumps": "ensemble.plots._grid",
    "RegionDisplay": "ensemble.plots._display",
    "PartitionDisplay": "ensemble.plots._partition_display",
    "save_model": "ensemble.model_files._model_file",
    "load_model": "ensemble.model_files._model_file",
    "ModelFileError": "ensemble.model_files._model_file",
    "metrics": "ensemble.metrics",
    "datasets": "ensemble.datasets",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        module = import_module(_LAZY[name])
        # ensemble.audit is both a module and its function: the function is the public name.
        value = module if module.__name__.endswith(name) and name != "audit" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ensemble' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
