"""Where the modules of ``ensemble`` lived before its sub-packages, so that files saved then still load.

A pickle names each class by the module that held it when it was written, and so does
a model file (skops); ``ensemble`` was one flat folder of modules until the sub-packages
(docs/design.md section 1). Importing a former path gives a stand-in module that reads
every name from the module holding it now: ``pickle.load`` and ``load_model`` find the
classes where they are, and nothing is imported until a file asks for it.
:func:`ensemble.model_files._model_file.trusted_types` trusts the former names of the
project's own classes, read from :data:`FORMER_MODULES`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

#: Former module path -> the module that holds its names now.
FORMER_MODULES: dict[str, str] = {
    "ensemble._base": "ensemble.base._estimator",
    "ensemble._kernels": "ensemble.base._kernels",
    "ensemble._voting": "ensemble.base._voting",
    "ensemble._parallel": "ensemble.base._parallel",
    "ensemble._docs": "ensemble.base._docs",
    "ensemble._certificates": "ensemble.certificates._certificates",
    "ensemble._certificate_faces": "ensemble.certificates._faces",
    "ensemble._certificate_gaps": "ensemble.certificates._gaps",
    "ensemble._certificate_jumps": "ensemble.certificates._jumps",
    "ensemble._certificate_monotone": "ensemble.certificates._monotone",
    "ensemble._sums": "ensemble.certificates._sums",
    "ensemble._thresholds": "ensemble.certificates._thresholds",
    "ensemble._rank_map": "ensemble.spaces._rank_map",
    "ensemble._spaces": "ensemble.spaces._spaces",
    "ensemble._space_moves": "ensemble.spaces._moves",
    "ensemble._otreebagger": "ensemble.otreebagger._otreebagger",
    "ensemble._groups": "ensemble.otreebagger._groups",
    "ensemble._group_jobs": "ensemble.otreebagger._group_jobs",
    "ensemble._selection": "ensemble.otreebagger._selection",
    "ensemble._settings": "ensemble.otreebagger._settings",
    "ensemble._voter_checks": "ensemble.otreebagger._voter_checks",
    "ensemble._missing_indicators": "ensemble.otreebagger._missing_indicators",
    "ensemble._forest": "ensemble.forest._forest",
    "ensemble._forest_trees": "ensemble.forest._trees",
    "ensemble._gap_room": "ensemble.forest._gap_room",
    "ensemble._resolution": "ensemble.forest._resolution",
    "ensemble._monotone": "ensemble.forest._monotone",
    "ensemble._boosting": "ensemble.boosting._boosting",
    "ensemble._boosting_dask": "ensemble.boosting._dask",
    "ensemble._boosting_loss": "ensemble.boosting._loss",
    "ensemble._boosting_steps": "ensemble.boosting._steps",
    "ensemble._rankrules": "ensemble.rankrules._rankrules",
    "ensemble._rankrules_core": "ensemble.rankrules._core",
    "ensemble._rankrules_kernels": "ensemble.rankrules._kernels",
    "ensemble._display": "ensemble.plots._display",
    "ensemble._partition_display": "ensemble.plots._partition_display",
    "ensemble._grid": "ensemble.plots._grid",
    "ensemble._metric_inputs": "ensemble.metrics._inputs",
    "ensemble._metrics_per_class": "ensemble.metrics._per_class",
    "ensemble._csv": "ensemble.datasets._csv",
    "ensemble._audit_boosters": "ensemble.audit._boosters",
    "ensemble._audit_bound": "ensemble.audit._bound",
    "ensemble._audit_grid": "ensemble.audit._grid",
    "ensemble._audit_ours": "ensemble.audit._ours",
    "ensemble._audit_probe": "ensemble.audit._probe",
    "ensemble._audit_read": "ensemble.audit._read",
    "ensemble._audit_sat": "ensemble.audit._sat",
    "ensemble._audit_voters": "ensemble.audit._voters",
    "ensemble._model_file": "ensemble.model_files._model_file",
    "ensemble._cli": "ensemble.cli._main",
    "ensemble._cli_audit": "ensemble.cli._audit",
    "ensemble._cli_common": "ensemble.cli._common",
    "ensemble._cli_demo": "ensemble.cli._demo",
    "ensemble._cli_parser": "ensemble.cli._parser",
    # Already a stand-in before the sub-packages: the kernel score moved to the spaces.
    "ensemble._kernel_score": "ensemble.spaces._spaces",
}


class _FormerPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import a former path as a stand-in module that forwards every name to the module holding it now."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in FORMER_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        # A stand-in rather than the module itself under a second name: the module's own
        # __spec__ and __name__ stay true (importlib would overwrite them otherwise).
        now = importlib.import_module(FORMER_MODULES[module.__name__])
        module.__doc__ = f"Former path of :mod:`{now.__name__}`, kept for files saved before the sub-packages."
        module.__getattr__ = lambda name: getattr(now, name)
        module.__dir__ = lambda: dir(now)


def install() -> None:
    """Let former paths import (once per process; after every real module, which they never shadow)."""
    if not any(isinstance(finder, _FormerPaths) for finder in sys.meta_path):
        sys.meta_path.append(_FormerPaths())
