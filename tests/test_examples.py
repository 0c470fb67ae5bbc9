"""Smoke tests of the example scripts: each runs into tmp_path and writes a non-trivial PNG."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"

# Small settings keep the suite fast; the scripts' defaults make the published figures.
CASES = {
    "plot_regions_synthetic.py": ["--n-estimators", "5", "--grid-resolution", "60"],
    "plot_fused_partition.py": ["--max-depth", "3"],
    "plot_criteria.py": ["--grid-resolution", "60"],
    "compare_solvers.py": ["--n-samples", "80", "--time-limit", "60"],
    "plot_monotone.py": ["--n-train", "80"],
    "plot_importances.py": ["--n-repeats", "2"],
    "audit_your_model.py": ["--max-iter", "10", "--time-limit", "10"],
}


def _load(name):
    spec = importlib.util.spec_from_file_location(name[:-3], EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _assert_drawn(path):
    from matplotlib.image import imread

    image = imread(path)
    # A blank canvas has one colour; a drawn figure has many.
    assert len({tuple(px) for px in image.reshape(-1, image.shape[-1])[::97]}) > 20


def test_every_example_is_covered():
    """Check that every script in examples/ has a smoke test case."""
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(CASES)


# Over 50 s on a cold cache (it grows trees with every criterion): left out of the oldest-versions run.
SLOW_EXAMPLES = {"plot_criteria.py"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_EXAMPLES else n
                                  for n in sorted(CASES)])
def test_example_writes_a_png(name, tmp_path, pyplot):
    """Check that the example runs with --output and saves a PNG of more than a few kilobytes."""
    if name == "audit_your_model.py" and not (DATA / "ERA.csv").is_file():
        pytest.skip(f"the audit example reads the shared data set ERA, not found under {DATA}")
    argv = CASES[name] + ["--output", str(tmp_path), *(["--data-home", str(DATA)] if name == "audit_your_model.py" else [])]
    path = Path(_load(name).main(argv))
    assert path.parent == tmp_path and path.suffix == ".png"
    assert path.stat().st_size > 10_000
    _assert_drawn(path)


def test_fused_partition_example_runs_offline_without_data(tmp_path, pyplot, monkeypatch):
    """Check that the fused-partition example runs with no data folder and every connection refused."""
    import socket

    def refuse(*args, **kwargs):
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    # No local benchmark copy and a fresh home: a download attempt would fail and leave folders.
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OTREEBAGGER_DATA", str(tmp_path / "no-data"))
    out = tmp_path / "out"
    _assert_drawn(Path(_load("plot_fused_partition.py").main(["--max-depth", "3", "--output", str(out)])))
    assert list(home.iterdir()) == [] and not (tmp_path / "no-data").exists()


def test_fused_partition_example_on_the_local_wine_data(tmp_path, pyplot):
    """Check that --data-home draws the red wine data from a local CSV."""
    if not (DATA / "winequality-red.csv").exists():
        pytest.skip("the winequality-red CSV is not beside the repository")
    argv = ["--max-depth", "3", "--output", str(tmp_path), "--data-home", str(DATA)]
    _assert_drawn(Path(_load("plot_fused_partition.py").main(argv)))


def test_monotone_example_shows_what_it_claims(tmp_path, pyplot):
    """Check that in the monotone example the constrained models have no wrong-way step and the others do."""
    module = _load("plot_monotone.py")
    X, y = module.make_credit(200, random_state=0)
    from ensemble import OTreeBagger

    free = OTreeBagger(n_estimators=12, random_state=0).fit(X, y)
    tied = OTreeBagger(n_estimators=12, monotonic_cst=module.CST, random_state=0).fit(X, y)
    assert module.wrong_way(free, resolution=80).shape[0] > 0 and not free.is_monotone(module.CST)
    assert module.wrong_way(tied, resolution=80).shape[0] == 0 and tied.is_monotone()


def test_importances_example_ranks_the_informative_features(tmp_path, pyplot):
    """Check that on its synthetic data the permutation importances rank the two informative features first."""
    from sklearn.inspection import permutation_importance

    from ensemble import ConsistentForestClassifier
    from ensemble.metrics import ordinal_scorer

    module = _load("plot_importances.py")
    X, y, X_test, y_test, _ = module.load(None)
    model = ConsistentForestClassifier(random_state=0).fit(X, y)
    result = permutation_importance(model, X_test, y_test, scoring=ordinal_scorer("mae"), n_repeats=2,
                                    random_state=0)
    assert set(np.argsort(result.importances_mean)[-2:]) == {0, 3}
    expected = module.ExpectedClass(model).fit(X)
    assert np.allclose(expected.predict(X_test[:5]), model.predict_proba(X_test[:5]) @ np.arange(model.n_classes_))


@pytest.mark.parametrize("name", ["plot_regions_synthetic.py", "plot_monotone.py"])
def test_published_pictures_still_come_out_of_their_scripts(name, tmp_path, pyplot):
    """Check the README's and the user guide's pictures are what their scripts draw today, at their defaults: the
    panels' titles (test MAE, jumps, wrong-way steps, certificates) match the ones committed beside the PNG.
    When this fails, the code changed what the pictures show: rerun ``python examples/NAME --output
    examples/images`` and commit the picture with its titles."""
    path = Path(_load(name).main(["--output", str(tmp_path)]))
    committed = EXAMPLES / "images" / path.with_suffix(".titles.txt").name
    assert path.with_suffix(".titles.txt").read_text() == committed.read_text()
