"""Ensembles of consistent ordinal trees: OTreeBagger, baselines, RankRules, metrics, data and model files.

The names below are imported lazily so that ``import ensemble`` stays cheap and
a submodule's optional dependency (matplotlib for plots) is only needed when used.
"""

from importlib import import_module

_LAZY = {
    "OTreeBagger": "ensemble._otreebagger",
    "ConsistentForestClassifier": "ensemble._forest",
    "ConsistentGradientBoostingClassifier": "ensemble._boosting",
    "RankRules": "ensemble._rankrules",
    "GroupSizeWarning": "ensemble._otreebagger",
    "ClassOrderWarning": "trees.utils",
    "audit": "ensemble.audit",
    "AuditReport": "ensemble.audit",
    "count_jumps": "ensemble._display",
    "segment_jumps": "ensemble._grid",
    "RegionDisplay": "ensemble._display",
    "PartitionDisplay": "ensemble._partition_display",
    "save_model": "ensemble._model_file",
    "load_model": "ensemble._model_file",
    "ModelFileError": "ensemble._model_file",
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
