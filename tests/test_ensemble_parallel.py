"""Tests of ensemble.base._parallel: jobs run under joblib backends with and without generator support."""

import os

import joblib
import numpy as np
import pytest
from joblib.parallel import LokyBackend, register_parallel_backend
from sklearn.utils.parallel import delayed

from ensemble import OTreeBagger
from ensemble.base._parallel import run_jobs, supports_generator
from ensemble.datasets import make_synthetic_i


class NoGeneratorLokyBackend(LokyBackend):
    """Loky processes that refuse ``return_as="generator"``, as Ray's and Spark's backends do."""

    supports_return_generator = False


register_parallel_backend("test-no-generator", NoGeneratorLokyBackend)


def _pid_after(value):
    return value, os.getpid()


@pytest.mark.parametrize("backend", ["test-no-generator", "multiprocessing"])
def test_otreebagger_under_a_backend_without_generators_matches_one_job(backend):
    """Check that OTreeBagger fits under a backend without generator support and predicts as with n_jobs=1."""
    X, y = make_synthetic_i(150, random_state=1)
    params = dict(n_estimators=6, group_size=3, max_depth=4, random_state=0)
    reference = OTreeBagger(n_jobs=1, **params).fit(X, y)
    with joblib.parallel_backend(backend, n_jobs=2):
        assert not supports_generator()
        model = OTreeBagger(n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    for got, want in zip(model.groups_info_, reference.groups_info_):
        assert got["objective"] == want["objective"] and got["n_regions"] == want["n_regions"]
    assert model.is_consistent()


def test_run_jobs_without_generators_uses_the_backend_workers_and_keeps_order():
    """Check that jobs under a generator-less backend run in other processes and come back in order."""
    with joblib.parallel_backend("test-no-generator", n_jobs=2):
        results = run_jobs((delayed(_pid_after)(i) for i in range(6)), n_jobs=2, total=6, desc="t")
    assert [value for value, _ in results] == list(range(6))
    assert os.getpid() not in {pid for _, pid in results}


def test_run_jobs_progress_bar_completes_without_generators(capsys):
    """Check that verbose=1 draws a progress bar that reaches the total when results come as a list."""
    with joblib.parallel_backend("test-no-generator", n_jobs=2):
        run_jobs((delayed(abs)(-i) for i in range(3)), n_jobs=2, total=3, desc="jobs", verbose=1)
    err = capsys.readouterr().err
    assert "jobs" in err and "3/3" in err


def test_run_jobs_streams_under_backends_with_generators():
    """Check that the default and threading backends report generator support and keep the order."""
    assert supports_generator()
    with joblib.parallel_backend("threading", n_jobs=2):
        assert supports_generator()
        assert run_jobs((delayed(abs)(-i) for i in range(5)), n_jobs=2, total=5, desc="t") == list(range(5))


def test_run_jobs_rejects_zero_jobs():
    """Check that n_jobs=0 raises a ValueError naming n_jobs, for run_jobs and for OTreeBagger.fit."""
    with pytest.raises(ValueError, match="n_jobs=0 has no meaning"):
        run_jobs((delayed(abs)(i) for i in range(2)), n_jobs=0, total=2, desc="t")
    X, y = make_synthetic_i(60, random_state=0)
    with pytest.raises(ValueError, match="n_jobs=0"):
        OTreeBagger(n_estimators=2, group_size=1, n_jobs=0).fit(X, y)


@pytest.mark.parametrize("backend", ["test-no-generator", "threading"])
def test_consistent_forest_under_any_backend_matches_one_job(backend, capsys):
    """Check that the certified forest fits under backends with and without generators, as with n_jobs=1."""
    from ensemble import ConsistentForestClassifier

    X, y = make_synthetic_i(150, random_state=1)
    reference = ConsistentForestClassifier(n_estimators=12, n_jobs=1, random_state=0).fit(X, y)
    with joblib.parallel_backend(backend, n_jobs=2):
        model = ConsistentForestClassifier(n_estimators=12, n_jobs=2, verbose=1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.predict_value(X), reference.predict_value(X))
    assert "12/12" in capsys.readouterr().err
    with pytest.raises(ValueError, match="n_jobs=0"):
        ConsistentForestClassifier(n_jobs=0).fit(X, y)
