"""Files saved when ``ensemble/`` was one folder of modules load and predict the same (issue 59).

The pickles and model files of tests/data/saved_before_packages were written by main at
5401230, before the sub-packages: they name classes by their former modules
(``ensemble._otreebagger``, ``ensemble._spaces``, ``ensemble._forest_trees``, ...).
"""

from __future__ import annotations

import importlib
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import ensemble
from ensemble import load_model
from ensemble._former import FORMER_MODULES

SAVED = Path(__file__).parent / "data" / "saved_before_packages"
EXPECTED = json.loads((SAVED / "predictions.json").read_text())
MODULES = {"otreebagger": "ensemble.otreebagger._otreebagger", "forest": "ensemble.forest._forest",
           "forest_monotone": "ensemble.forest._forest", "boosting": "ensemble.boosting._boosting",
           "rankrules": "ensemble.rankrules._rankrules"}


def _rows(name: str) -> np.ndarray:
    return np.load(SAVED / ("X_missing.npy" if name == "otreebagger" else "X.npy"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_pickle_saved_before_the_move_loads_and_predicts_the_same(name):
    """Check that unpickling builds today's classes and predicts what the model predicted when saved."""
    raw = (SAVED / f"{name}.pkl").read_bytes()
    assert b"ensemble._" in raw  # the file names the former flat modules
    model = pickle.loads(raw)
    assert type(model).__module__ == MODULES[name]
    np.testing.assert_array_equal(model.predict(_rows(name)), EXPECTED[name])


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if (SAVED / f"{n}.skops").exists()))
def test_a_model_file_saved_before_the_move_loads_and_predicts_the_same(name):
    """Check that a skops model file naming the former modules passes the trusted types and predicts the same."""
    model = load_model(SAVED / f"{name}.skops")
    assert type(model).__module__ == MODULES[name]
    np.testing.assert_array_equal(model.predict(_rows(name)), EXPECTED[name])


def test_every_former_path_reads_the_names_of_the_module_holding_them_now():
    """Check each former path imports as a stand-in forwarding to its module, which keeps its own name."""
    for former, now in FORMER_MODULES.items():
        stand_in, module = importlib.import_module(former), importlib.import_module(now)
        assert stand_in is not module and module.__name__ == now and module.__spec__.name == now
        public = [n for n in vars(module) if not n.startswith("__")]
        assert public and all(getattr(stand_in, n) is getattr(module, n) for n in public)
    from ensemble._otreebagger import OTreeBagger

    assert OTreeBagger is ensemble.OTreeBagger
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ensemble._no_such_module")
    with pytest.raises(AttributeError):
        assert importlib.import_module("ensemble._forest").NoSuchName is None
