"""Hardening: the bad-input matrix, solver faults, persistence and scale-out with dask."""

import pickle
import warnings

import joblib
import numpy as np
import pytest

import relabel
from ensemble import OTreeBagger, RankRules
from trees import OrdinalTreeClassifier


def _data(n=80, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    y = np.searchsorted([0.7, 1.0, 1.3], X.sum(axis=1) + rng.normal(0, 0.1, n)) + 1
    return X, y


FACTORIES = {
    "OrdinalTreeClassifier": lambda **kw: OrdinalTreeClassifier(**{"random_state": 0, **kw}),
    "OTreeBagger": lambda **kw: OTreeBagger(**{"n_estimators": 4, "group_size": 2, "random_state": 0, **kw}),
    "RankRules": lambda **kw: RankRules(**{"n_rules": 10, "random_state": 0, **kw}),
}


def _bad_inputs():
    X, y = _data()
    nan = X.copy()
    nan[3, 1] = np.nan
    inf = X.copy()
    inf[5, 0] = -np.inf
    strings = X.astype(str).astype(object)
    strings[0, 0] = "high"
    return {
        "NaN in X": (nan, y, "NaN"),
        "inf in X": (inf, y, "infinity"),
        "empty X": (np.empty((0, 2)), np.empty(0), "0 sample"),
        "one sample": (X[:1], y[:1], "one class|1 class|1 sample|n_samples=1"),
        "one class": (X, np.full(len(y), 2), "one class|single class|1 class"),
        "string features": (strings, y, "could not convert string to float"),
        "mismatched lengths": (X, y[:-3], "inconsistent numbers of samples"),
        "3-D X": (X[:, :, None], y, "Found array with dim 3|dim 3"),
        "2-D y": (X, np.column_stack([y, y]), "y should be a 1d array|1d array"),
    }


@pytest.mark.parametrize("case", sorted(_bad_inputs()))
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_bad_data_is_rejected_with_a_clear_message(name, case):
    """Check that every estimator rejects bad data in fit with a ValueError naming the problem."""
    X, y, message = _bad_inputs()[case]
    if case == "NaN in X" and FACTORIES[name]().__sklearn_tags__().input_tags.allow_nan:
        FACTORIES[name]().fit(X, y)  # missing values are data for it (tests/test_trees_missing.py)
        return
    with pytest.raises(ValueError, match=message):
        with warnings.catch_warnings():
            # scikit-learn warns about a column-vector y before it raises.
            warnings.simplefilter("ignore")
            FACTORIES[name]().fit(X, y)


BAD_PARAMS = {
    "OrdinalTreeClassifier": [
        ({"max_depth": 0}, "max_depth"),
        ({"max_depth": 2.5}, "max_depth"),
        ({"min_samples_leaf": -1}, "min_samples_leaf"),
        ({"criterion": "twoing"}, "criterion"),
        ({"leaf_label": "mean"}, "leaf_label"),
        ({"max_features": "all"}, "max_features"),
        ({"wig_power": -1.0}, "wig_power"),
    ],
    "OTreeBagger": [
        ({"n_estimators": 0}, "n_estimators"),
        ({"group_size": "3"}, "group_size"),
        ({"solver": "glpk"}, "solver"),
        ({"relabel_params": {"formulation": "loose"}}, "formulation"),
        ({"relabel_params": {"contact": "edge"}}, "contact"),
        ({"relabel_params": {"relabel_counts": "all"}}, "relabel_counts"),
        ({"relabel_params": {"C1": -1.0}}, "C1"),
        ({"time_limit": -5}, "time_limit"),
        ({"relabel_params": {"on_solver_failure": "ignore"}}, "on_solver_failure"),
        ({"relabel_params": {"max_regions": 0}}, "max_regions"),
        ({"relabel_params": {"max_region": 10}}, "relabel_params has no key 'max_region'"),
        ({"relabel_params": [("contact", "face")]}, "relabel_params"),
        ({"space_params": {"score_model": "trees"}}, "score_model"),
        ({"contact": "edge"}, "contact"),  # a deprecated parameter is still validated
    ],
    "RankRules": [
        ({"n_rules": 0}, "n_rules"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"subsample": 1.5}, "subsample"),
        ({"technique": "newton"}, "technique"),
    ],
}


@pytest.mark.parametrize(
    "name, params, message",
    [(name, p, m) for name, cases in BAD_PARAMS.items() for p, m in cases],
)
def test_bad_parameters_name_the_parameter(name, params, message):
    """Check that a wrong parameter type or range raises a ValueError naming that parameter in fit."""
    X, y = _data()
    with pytest.raises(ValueError, match=message):
        FACTORIES[name](**params).fit(X, y)


@pytest.mark.parametrize(
    "weight, message",
    [(-1.0, "sample_weight|negative"), (np.nan, "NaN|sample_weight"), (np.inf, "infinity|sample_weight")],
)
def test_bad_sample_weights_are_rejected(weight, message):
    """Check that negative or non-finite sample weights raise a ValueError in the tree's fit."""
    X, y = _data()
    w = np.ones(len(y))
    w[4] = weight
    with pytest.raises(ValueError, match=message):
        OrdinalTreeClassifier().fit(X, y, sample_weight=w)


def test_predict_rejects_a_different_number_of_features():
    """Check that predict on data with another number of features raises a ValueError."""
    X, y = _data()
    for _name, make in FACTORIES.items():
        model = make().fit(X, y)
        with pytest.raises(ValueError, match="features"):
            model.predict(np.zeros((3, 3)))


def _hard_instance():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 4))
    y = np.searchsorted([1.5, 2.0, 2.5], X.sum(axis=1) + rng.normal(0, 0.3, 300))
    return X, y


# A time-limited solve may return the feasible all-one-class labelling, and the model says so.
@pytest.mark.filterwarnings("ignore:.* predicts the single class .*:UserWarning")
def test_time_limit_warns_and_keeps_the_model_consistent():
    """Check that a solver stopped by its time limit warns, reports its status and stays consistent."""
    X, y = _hard_instance()
    with pytest.warns(relabel.RelabelWarning, match="TIME_LIMIT"):
        model = OTreeBagger(n_estimators=2, group_size=2, solver="cpsat", time_limit=0.05,
                            random_state=0).fit(X, y)
    info = model.groups_info_[0]
    assert info["status"] in {"time_limit", "feasible"}
    assert model.is_consistent()
    exact = OTreeBagger(n_estimators=2, group_size=2, random_state=0).fit(X, y)
    assert exact.groups_info_[0]["status"] == "optimal"
    # The fallback is feasible, never better than the proven optimum.
    assert info["objective"] >= exact.groups_info_[0]["objective"] - 1e-9


def test_time_limit_raises_when_asked():
    """Check that on_solver_failure='raise' turns a time-limited solve into RelabelTimeLimitError."""
    X, y = _hard_instance()
    model = OTreeBagger(n_estimators=2, group_size=2, solver="cpsat", time_limit=0.05,
                        random_state=0, relabel_params={'on_solver_failure': "raise"})
    with pytest.raises(relabel.RelabelTimeLimitError, match="time|TIME_LIMIT"):
        model.fit(X, y)
    assert issubclass(relabel.RelabelTimeLimitError, relabel.RelabelError)
    assert issubclass(relabel.RelabelError, RuntimeError)


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("dump", ["pickle", "joblib"])
def test_round_trip_predicts_identically(name, dump, tmp_path):
    """Check that a pickled or joblib-saved fitted estimator predicts exactly as the original."""
    X, y = _data(120, d=3)
    model = FACTORIES[name]().fit(X, y)
    grid = np.random.RandomState(1).uniform(-0.2, 1.2, size=(400, 3))
    if dump == "pickle":
        restored = pickle.loads(pickle.dumps(model))
    else:
        joblib.dump(model, tmp_path / "m.joblib")
        restored = joblib.load(tmp_path / "m.joblib")
    np.testing.assert_array_equal(restored.predict(grid), model.predict(grid))
    np.testing.assert_array_equal(restored.predict_proba(grid), model.predict_proba(grid))
    if name == "OTreeBagger":
        assert restored.is_consistent()


def test_fit_on_a_dask_cluster_matches_the_local_fit():
    """Check that fitting through joblib's dask backend on a local cluster gives the local model."""
    distributed = pytest.importorskip("distributed")
    X, y = _data(150, d=2)
    grid = np.random.RandomState(2).uniform(-0.2, 1.2, size=(300, 2))
    params = dict(n_estimators=6, group_size=3, random_state=7)
    local = OTreeBagger(n_jobs=1, **params).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            remote = OTreeBagger(n_jobs=-1, **params).fit(X, y)
    np.testing.assert_array_equal(remote.predict_proba(grid), local.predict_proba(grid))
    assert remote.is_consistent()
