"""Tests of ensemble.save_model and ensemble.load_model: the command line's model files, from Python."""

import csv
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

import ensemble
from ensemble import ConsistentForestClassifier, ModelFileError, OTreeBagger, RankRules, load_model, save_model
from ensemble.cli._main import main
from trees import OrdinalTreeClassifier


def _frame(n=90, seed=0):
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(rng.uniform(size=(n, 3)), columns=["income", "debt", "age"])
    y = np.digitize(X["income"] - X["debt"] + rng.normal(0, 0.1, n), [-0.3, 0.3]) + 1
    return X, y


def test_save_and_load_are_public_and_documented():
    """Check that the two functions are exported from ensemble with numpydoc sections and an example."""
    assert {"save_model", "load_model", "ModelFileError"} <= set(ensemble.__all__)
    for function in (save_model, load_model):
        doc = function.__doc__
        assert all(section in doc for section in ("Parameters\n", "Raises\n", "Examples\n", ">>> "))


@pytest.mark.parametrize("model", [OTreeBagger(n_estimators=6, random_state=0),
                                   ConsistentForestClassifier(n_estimators=10, random_state=0),
                                   OrdinalTreeClassifier(max_depth=3), RankRules(n_rules=20, random_state=0)],
                         ids=lambda m: type(m).__name__)
def test_a_model_fitted_on_a_frame_keeps_its_feature_names(tmp_path, model):
    """Check that a model fitted on a DataFrame, saved and loaded, predicts on a DataFrame without
    scikit-learn's feature-name warning, exactly as before."""
    X, y = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 10 trees of the forest may be uncertified
        model.fit(X, y)
    path = tmp_path / "sub" / "model.skops"
    save_model(model, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = load_model(path)
        np.testing.assert_array_equal(back.predict(X), model.predict(X))
        np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))
    assert type(back) is type(model) and list(back.feature_names_in_) == ["income", "debt", "age"]


def test_a_loaded_otreebagger_holds_each_tree_once_and_is_certified_as_saved(tmp_path):
    """Check that a model file holds each tree once (estimators_ and groups_info_ are views of groups_,
    rebuilt on load as the same objects), that the trees' traversal tables are rebuilt, not read, and
    that the loaded model predicts and certifies as the saved one."""
    import zipfile

    X, y = _frame()
    model = OTreeBagger(n_estimators=6, random_state=0).fit(X, y)
    path = tmp_path / "m.skops"
    save_model(model, path)
    schema = zipfile.ZipFile(path).read("schema.json").decode()
    assert schema.count('"node_values"') == len(model.estimators_) == 6
    assert '"_tables"' not in schema and '"estimators_"' not in schema
    back = load_model(path)
    in_groups = [t for g in back.groups_ for t in g.trees]
    assert len(in_groups) == len(back.estimators_) == 6
    assert all(a is b for a, b in zip(in_groups, back.estimators_))
    assert back.groups_info_ == model.groups_info_ and back.groups_info_[0] is back.groups_[0].info
    for saved, loaded in zip(model.estimators_, back.estimators_):
        for a, b in zip(saved.tree_._tables, loaded.tree_._tables):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert back.is_consistent() and back.consistency_notion_ == model.consistency_notion_


def test_a_model_saved_from_python_loads_in_otreebagger_predict(tmp_path, capsys):
    """Check that otreebagger predict reads a file of save_model, matching the columns by name."""
    X, y = _frame()
    model = OTreeBagger(n_estimators=6, random_state=0).fit(X, y)
    save_model(model, tmp_path / "m.skops")
    data = tmp_path / "new.csv"
    X[["age", "debt", "income"]].assign(y=y).to_csv(data, index=False)  # other order, and a target column
    out = tmp_path / "p.csv"
    assert main(["predict", str(tmp_path / "m.skops"), str(data), "-o", str(out)]) == 0
    assert [int(r[0]) for r in list(csv.reader(open(out)))[1:]] == model.predict(X).tolist()


def test_a_model_of_otreebagger_fit_loads_in_python(tmp_path, capsys):
    """Check that ensemble.load_model reads a file of otreebagger fit, with the CSV's columns as feature names."""
    X, y = _frame()
    data = tmp_path / "d.csv"
    X.assign(y=y).to_csv(data, index=False)
    assert main(["fit", str(data), "-o", str(tmp_path / "m.skops"), "--n-estimators", "6"]) == 0
    assert main(["predict", str(tmp_path / "m.skops"), str(data), "-o", str(tmp_path / "p.csv")]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = load_model(tmp_path / "m.skops")
        predicted = model.predict(X)
    assert list(model.feature_names_in_) == ["income", "debt", "age"]
    assert [int(r[0]) for r in list(csv.reader(open(tmp_path / "p.csv")))[1:]] == predicted.tolist()


class _Foreign(ClassifierMixin, BaseEstimator):
    """A fitted classifier of no trusted type: a model file may not hold it."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self


def test_bad_files_and_models_give_clear_errors(tmp_path):
    """Check the errors of load_model (missing file, folder, not a model file, a pickle) and save_model
    (unfitted, or holding types a model file may not hold: nothing is written)."""
    with pytest.raises(FileNotFoundError, match="model file not found: .*missing.skops"):
        load_model(tmp_path / "missing.skops")
    with pytest.raises(ModelFileError, match="is a folder, not a model file"):
        load_model(tmp_path)
    (tmp_path / "d.csv").write_text("a,y\n1,2\n")
    with pytest.raises(ModelFileError, match="not a skops archive"):
        load_model(tmp_path / "d.csv")
    joblib.dump({"model": 42}, tmp_path / "old.joblib")
    with pytest.raises(ModelFileError, match="not a skops archive"):
        load_model(tmp_path / "old.joblib")
    assert issubclass(ModelFileError, ValueError)
    with pytest.raises(ValueError, match="save_model needs a fitted model"):
        save_model(OTreeBagger(), tmp_path / "u.skops")
    X, y = _frame(40)
    foreign = _Foreign().fit(X.to_numpy(), y)
    with pytest.raises(ValueError, match="cannot save a _Foreign: a model file may not hold"):
        save_model(foreign, tmp_path / "r.skops")
    assert not (tmp_path / "u.skops").exists() and not (tmp_path / "r.skops").exists()


_TRUSTED_SCRIPT = """
import json, sys
from ensemble.model_files._model_file import _skops_io
_skops_io()
from skops.io import _trusted_types
print(json.dumps({"names": _trusted_types.SKLEARN_ESTIMATOR_TYPE_NAMES,
                  "all_imported": "sklearn.semi_supervised" in sys.modules}))
"""


def _trusted_in_fresh_process(cache_home):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), PYTHONPATH=str(root))
    done = subprocess.run([sys.executable, "-c", _TRUSTED_SCRIPT], capture_output=True, text=True, env=env,
                          cwd=str(root), timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_skops_trusts_the_same_names_from_the_cache_without_importing_all_of_scikit_learn(tmp_path):
    """Check that the first import computes skops's default-trusted estimators (importing every scikit-learn
    module) and caches their names; that the next process trusts exactly the same names without importing
    them (predict's start-up); and that a damaged cache file falls back to the full import."""
    first = _trusted_in_fresh_process(tmp_path)
    assert first["all_imported"] and "sklearn.ensemble._forest.RandomForestClassifier" in first["names"]
    (cache,) = (tmp_path / "otreebagger").iterdir()
    second = _trusted_in_fresh_process(tmp_path)
    assert second == {"names": first["names"], "all_imported": False}
    cache.write_text("os.system\n")  # not a scikit-learn name: ignored, recomputed and rewritten
    third = _trusted_in_fresh_process(tmp_path)
    assert third == first and cache.read_text().split() == first["names"]


@pytest.mark.parametrize("score_model", ["additive", "kernel"])
def test_a_file_naming_the_spaces_former_modules_loads_and_predicts_the_same(tmp_path, score_model):
    """Check that a model file whose space classes carry their former module names (ensemble._groups,
    ensemble._kernel_score: files written before the spaces had a module of their own) loads and predicts the same."""
    import re
    import zipfile

    rng = np.random.RandomState(0)
    X = rng.rand(200, 4)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0.8).astype(int) + (X[:, 3] > 0.5)
    model = OTreeBagger(n_estimators=3, consistency="pointwise", projection="additive", random_state=0,
                        space_params={"score_model": score_model, "residual_axes": "pls"}).fit(X, y)
    path, old = tmp_path / "new.skops", tmp_path / "old.skops"
    save_model(model, path)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "schema.json":
                text = data.decode()
                assert '"ensemble.spaces._spaces"' in text
                former = {"GroupSpace": "ensemble._groups", "AdditiveScore": "ensemble._groups",
                          "KernelScore": "ensemble._kernel_score"}
                text = re.sub(r'("__class__": "(\w+)",\s*"__module__": )"ensemble\.spaces\._spaces"',
                              lambda m, former=former: f'{m.group(1)}"{former[m.group(2)]}"', text)
                assert '"ensemble.spaces._spaces"' not in text
                data = text.encode()
            dst.writestr(item, data)
    loaded = load_model(old)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.is_consistent()
