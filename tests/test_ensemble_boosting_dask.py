"""Certified boosting on Dask: the model of a LocalCluster of 2 workers is the single-machine model."""

import warnings

import numpy as np
import pytest

from ensemble import ConsistentGradientBoostingClassifier

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def _data(n=1500, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 4))
    X[:, 3] = rng.randint(0, 2, size=n)  # a 0/1 column: categorical under "auto"
    X[rng.uniform(size=X.shape) < 0.03] = np.nan
    y = np.digitize(np.nansum(X[:, :3], axis=1) + 0.3 * rng.normal(size=n), [0.8, 1.5, 2.2])
    return X, y


@pytest.mark.parametrize("params", [dict(loss="all_threshold"), dict(loss="squared_error", max_leaf_nodes=6,
                                                                        monotonic_cst=[1, 0, 0, 0])])
def test_dask_fit_equals_the_single_machine_fit(client, params):
    """Check that a fit on a dask array split over 2 workers grows the same trees (thresholds, integer
    values), the same predictions and the same certificate as the fit on the numpy array: the histograms
    summed across workers are exact (quantised gradients), so any float difference would show here."""
    X, y = _data()
    params = dict(early_stopping=False, max_iter=25, random_state=0, **params)
    local = ConsistentGradientBoostingClassifier(**params).fit(X, y)
    dist = ConsistentGradientBoostingClassifier(**params).fit(da.from_array(X, chunks=(400, 4)),
                                                              da.from_array(y, chunks=400))
    assert dist.n_iter_ == local.n_iter_ == 25
    for a, b in zip(local.estimators_, dist.estimators_, strict=True):
        assert np.array_equal(a.threshold, b.threshold) and np.array_equal(a.value, b.value)
    assert np.array_equal(local.predict(X), dist.predict(X))
    assert np.array_equal(local.predict_value(X), dist.predict_value(X))
    np.testing.assert_allclose(local.predict_proba(X), dist.predict_proba(X), atol=1e-9)
    assert dist.categorical_features_.tolist() == local.categorical_features_.tolist() == [3]
    assert dist.consistency_bound_ == local.consistency_bound_ <= 1
    assert dist.is_consistent() and dist.consistency_notion_ == "data"


def test_dask_dataframe_fit_predict_and_early_stopping(client):
    """Check a dask DataFrame in and out (names kept, lazy predictions equal to numpy ones), and hold-out
    early stopping on the workers' rows: certified, stops before max_iter."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = _data(3000, seed=1)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "flag"])
    Xd = dd.from_pandas(frame, npartitions=4)
    yd = dd.from_pandas(pd.Series(y), npartitions=4)
    model = ConsistentGradientBoostingClassifier(early_stopping=True, n_iter_no_change=5, random_state=0)
    model.fit(Xd, yd)
    assert model.feature_names_in_.tolist() == ["a", "b", "c", "flag"]
    assert model.do_early_stopping_ and 1 <= model.n_iter_ < model.max_iter and model.is_consistent()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a frame keeps its columns' names: no feature-name warning
        lazy = model.predict(Xd)
        assert hasattr(lazy, "compute") and np.array_equal(lazy.compute().to_numpy(), model.predict(frame))
        assert np.mean(model.predict(frame) == y) > 0.5
        for method in ("predict_proba", "predict_value"):
            values = getattr(model, method)(Xd).compute()
            np.testing.assert_allclose(values, getattr(model, method)(frame))


def test_dask_errors_name_the_problem(client):
    """Check one-line errors for what the Dask fit does not take."""
    X, y = _data(200)
    Xd, yd = da.from_array(X, chunks=(100, 4)), da.from_array(y, chunks=100)
    with pytest.raises(ValueError, match="class_weight"):
        ConsistentGradientBoostingClassifier(class_weight="balanced").fit(Xd, yd)
    with pytest.raises(ValueError, match="one class"):
        ConsistentGradientBoostingClassifier().fit(Xd, da.zeros(200, chunks=100))
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        ConsistentGradientBoostingClassifier().fit(da.from_array(bad, chunks=(100, 4)), yd)


@pytest.mark.parametrize("weights, message", [
    (np.r_[-1.0, np.ones(199)], "non-negative"), (np.r_[np.nan, np.ones(199)], "finite"),
    (np.zeros(200), "at least one non-zero"), (np.ones(150), "150 entries but there are 200")])
def test_dask_weights_get_the_in_memory_fits_errors(client, weights, message):
    """Check that the Dask fit refuses the weights the numpy fit refuses, with its message (it fitted with
    negative or NaN weights, and failed inside Dask on the others)."""
    X, y = _data(200)
    for Xf, yf, wf in ((X, y, weights), (da.from_array(X, chunks=(100, 4)), da.from_array(y, chunks=100),
                                         da.from_array(weights, chunks=100))):
        with pytest.raises(ValueError, match=f"^sample_weight.*{message}"):
            ConsistentGradientBoostingClassifier(max_iter=5).fit(Xf, yf, sample_weight=wf)


def test_dask_fractional_weights_warn_as_in_memory(client):
    """Check the warnings of weights that all fall short of one row, and of a model of one class, on Dask."""
    X, y = _data(400)
    with pytest.warns(UserWarning) as record:
        ConsistentGradientBoostingClassifier(max_iter=5).fit(
            da.from_array(X, chunks=(200, 4)), da.from_array(y, chunks=200),
            sample_weight=da.from_array(np.full(400, 1 / 400), chunks=200))
    messages = [str(w.message) for w in record]
    assert any(m.startswith("sample_weight: every row weighs less than 1") for m in messages), messages
    assert any("predicts the single class" in m for m in messages), messages


def test_dask_early_stopping_on_the_workers_hold_out(client):
    """Check hold-out early stopping on rows each worker holds out: certified, stops before max_iter,
    learned cut points kept the bound apart, lazy predictions equal to numpy ones."""
    X, y = _data(3000, seed=1)
    Xd = da.from_array(X, chunks=(800, 4))
    model = ConsistentGradientBoostingClassifier(early_stopping=True, n_iter_no_change=5, random_state=0)
    model.fit(Xd, da.from_array(y, chunks=800))
    assert model.do_early_stopping_ and 1 <= model.n_iter_ < model.max_iter and model.is_consistent()
    assert len(model.validation_score_) == model.n_iter_ + 1
    assert np.array_equal(model.predict(Xd).compute(), model.predict(X)) and np.mean(model.predict(X) == y) > 0.5


def test_a_shard_bins_its_partitions_one_at_a_time_as_their_concatenation():
    """Check that a worker's shard, which bins its partitions one at a time (never a second float64 copy
    of its rows), holds exactly what binning their concatenation gives: the binned fit rows in order, the
    hold-out rows, their targets and weights (rows of weight 0 in neither)."""
    from ensemble.boosting._dask import _Shard

    rng = np.random.RandomState(0)
    X, y = _data(700, seed=2)
    w = rng.uniform(size=700) * (rng.uniform(size=700) > 0.1)  # some rows of weight 0
    starts = [np.sort(rng.uniform(size=9)), np.sort(rng.uniform(size=5)), np.array([0.2, 0.5]), np.array([0.5])]
    n_bins = np.array([s.shape[0] + 1 for s in starts])
    cuts = [0, 90, 91, 400, 700]  # partitions of unequal sizes, one of a single row
    parts = [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
    shard = _Shard([X[p] for p in parts], [y[p] for p in parts], [w[p] for p in parts], starts, n_bins, 0.25, 7)
    val = (w > 0) & (np.random.RandomState(7).uniform(size=700) < 0.25)
    fit = (w > 0) & ~val
    expected = np.column_stack([np.where(np.isnan(X[fit, f]), n_bins[f], np.searchsorted(s, X[fit, f], side="right"))
                                for f, s in enumerate(starts)])
    assert 0 < val.sum() < fit.sum() and shard.n == fit.sum()
    np.testing.assert_array_equal(shard.binned, expected)
    np.testing.assert_array_equal(shard.X_val, X[val])
    for got, want in ((shard.y, y[fit]), (shard.w, w[fit]), (shard.y_val, y[val]), (shard.w_val, w[val])):
        np.testing.assert_array_equal(got, want)
