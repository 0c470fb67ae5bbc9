"""The audit's readers of LightGBM and XGBoost models (optional libraries): the reading computes what the
booster's own predict does, on every cell of its threshold grid and at the thresholds themselves, and the
audit's verdicts agree with a brute force over that grid."""

import subprocess
import sys

import numpy as np
import pytest

from ensemble import audit
from ensemble.audit import read_model

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")


def _data(d=3, n=300, seed=0, k=5):
    rng = np.random.RandomState(seed)
    X = np.round(rng.rand(n, d), 2)
    y = np.clip((X.sum(axis=1) * k / d + rng.normal(scale=0.5, size=n)).astype(int), 0, k - 1)
    return X, y


def _probe_points(reading, rng, n=3000):
    """Random points, and points at, just below and just above every threshold of every feature."""
    d = reading.n_features
    points = [rng.rand(n, d) * 1.2 - 0.1]
    for f, t in enumerate(reading.thresholds):
        at = np.concatenate((t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)))
        P = rng.rand(at.shape[0], d)
        P[:, f] = at
        points.append(P)
    return np.vstack(points)


MODELS = [
    lambda: lgb.LGBMClassifier(n_estimators=15, num_leaves=8, verbose=-1),
    lambda: lgb.LGBMRegressor(n_estimators=15, num_leaves=8, verbose=-1),
    lambda: xgb.XGBClassifier(n_estimators=15, max_depth=3),
    lambda: xgb.XGBRegressor(n_estimators=15, max_depth=3),
]


@pytest.mark.parametrize("make", range(len(MODELS)))
@pytest.mark.parametrize("binary", [False, True])
def test_reading_routes_as_the_booster_predicts(make, binary):
    X, y = _data(seed=make)
    if binary:
        y = (y > 2).astype(int)
    model = MODELS[make]().fit(X, y)
    rng = np.random.RandomState(1)
    for obj in (model, model.booster_ if hasattr(model, "booster_") else model.get_booster()):
        reading = read_model(obj)
        P = _probe_points(reading, rng)
        assert np.array_equal(reading.evaluate(P), reading.predict_rank(P))
    if hasattr(model, "classes_"):  # the booster read alone predicts the wrapper's classes
        booster = model.booster_ if hasattr(model, "booster_") else model.get_booster()
        ranks = read_model(booster).predict_rank(P)
        assert np.array_equal(model.classes_[ranks], model.predict(P))


@pytest.mark.parametrize("make", [0, 2])
def test_verdicts_match_the_exact_grid_both_ways(make):
    X, y = _data(d=2, seed=3)
    model = MODELS[make]().fit(X, y)
    exact = audit(model, X, resolution="pointwise", time_limit=30, max_cells=10**6, search="largest")
    sat = audit(model, X, resolution="pointwise", time_limit=30, max_cells=0, search="largest")
    assert exact.method.endswith("grid") and exact.status != "unknown"
    assert sat.status == exact.status and sat.largest_jump == exact.largest_jump
    # Stopped at its first witness, CP-SAT reaches the same verdict (its presolve once called this feasibility
    # model infeasible, a false proof).
    assert audit(model, X, resolution="pointwise", time_limit=30, max_cells=0).status == exact.status
    if exact.witness is not None:
        x, x2 = exact.witness
        c = read_model(model).predict_rank(np.vstack((x, x2)))
        assert abs(int(c[0]) - int(c[1])) == exact.largest_jump


def test_refused_models_say_why():
    X, y = _data()
    Xc = np.column_stack((X, np.arange(X.shape[0]) % 3))
    model = lgb.LGBMClassifier(n_estimators=5, verbose=-1, min_data_per_group=5, cat_smooth=1)
    model.fit(Xc, y, categorical_feature=[3])
    if any(t["tree_structure"].get("decision_type") == "==" for t in model.booster_.dump_model()["tree_info"]):
        with pytest.raises(NotImplementedError, match="categorical"):
            read_model(model)
    ranker = lgb.LGBMRanker(n_estimators=3, verbose=-1).fit(X, y, group=[100, 100, 100])
    with pytest.raises(NotImplementedError, match="ranks"):
        read_model(ranker)


@pytest.mark.parametrize("make", [lambda: xgb.XGBClassifier(n_estimators=15, max_depth=3),
                                  lambda: lgb.LGBMClassifier(n_estimators=15, num_leaves=8, verbose=-1)])
def test_boosters_fitted_on_a_dataframe_are_read(make):
    """Check that a booster fitted on a DataFrame (named columns, the usual case) is read and audited, from a
    DataFrame and from an array: XGBoost's booster refused the reader's unnamed rows."""
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = make().fit(frame, y)
    reading = read_model(model)
    P = _probe_points(reading, np.random.RandomState(1), n=500)
    np.testing.assert_array_equal(reading.predict_rank(P), np.searchsorted(model.classes_, model.predict(
        pd.DataFrame(P, columns=frame.columns))))
    assert audit(model, frame, time_limit=20).status in ("proved", "refuted")


@pytest.mark.slow
def test_command_line_reads_booster_files(tmp_path):
    X, y = _data(d=2, seed=4)
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n" + "\n".join(f"{a},{b},{c}" for (a, b), c in zip(X, y)) + "\n")
    lgbm = lgb.LGBMClassifier(n_estimators=10, verbose=-1).fit(X, y)
    lgbm.booster_.save_model(str(tmp_path / "m.txt"))
    xgbm = xgb.XGBClassifier(n_estimators=10, max_depth=3).fit(X, y)
    xgbm.save_model(str(tmp_path / "m.json"))
    for path, model in ((tmp_path / "m.txt", lgbm), (tmp_path / "m.json", xgbm)):
        run = subprocess.run([sys.executable, "-m", "ensemble.cli", "audit", str(path), str(data),
                              "--time-limit", "10"], capture_output=True, text=True)
        expected = audit(model, X, time_limit=10).status
        assert run.returncode == {"proved": 0, "refuted": 1, "unknown": 3}[expected], run.stderr
    (tmp_path / "junk.txt").write_text("hello\n")
    bad = subprocess.run([sys.executable, "-m", "ensemble.cli", "audit", str(tmp_path / "junk.txt"), str(data)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
