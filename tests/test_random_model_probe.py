"""The random-model probe (benchmarks/random_model_probe.py): a small run agrees everywhere, and its
checks see a false claim, a false proof and a bad witness when they are built in."""

import importlib.util
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from ensemble import OTreeBagger, audit

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "random_model_probe.py"


@pytest.fixture(scope="module")
def probe():
    """The script as a module (benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location("random_model_probe", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("random_model_probe", module)
    spec.loader.exec_module(module)
    return module


def _jumpy_data():
    """One feature whose classes go 0, 2, 1 along it: any tree fitting it jumps from 0 to 2 at one threshold."""
    x = np.arange(30, dtype=np.float64)
    y = np.repeat([0, 2, 1], 10)
    rng = np.random.default_rng(0)
    return np.column_stack([x, rng.normal(size=30)]), y


def test_small_probe_run_has_no_crash_and_no_disagreement(probe):
    """Check that 12 random models (fixed seed, short audits) fit, and that no verdict disagrees with the oracle."""
    results = probe.run(12, seed=0, time_limit=2.0, oracle_rows=12)
    counts = probe.counts(results)
    assert counts["models"] == 12 and counts["checked"] + counts["refused"] + counts["crashes"] == 12
    assert counts["checked"] >= 8
    bad = [line for r in results for line in probe.anomaly_lines(r)]
    assert counts["crashes"] == 0 and bad == [], "\n".join(bad)
    assert not probe.failed(results)


def test_the_checker_reports_a_false_pointwise_claim(probe):
    """Check that a random forest presented as certified pointwise gets (a), with two adjacent floats two
    classes apart as evidence, and that the audit's refutation is confirmed (no (c))."""
    X, y = _jumpy_data()
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    out = probe.check_model(model, X, notion="pointwise", certified=True, time_limit=5.0, oracle_rows=10)
    assert out["oracle"] >= 2 and out["oracle_how"].startswith("adjacent floats")
    assert [k for k, _ in out["flags"]] == ["a", "d"]
    assert out["status"] == "refuted" and "class 0" in out["oracle_evidence"] and "class 2" in out["oracle_evidence"]
    assert probe.failed([dict(out, outcome="ok")])


def test_the_checker_reports_a_false_data_claim_of_bagged_trees(probe):
    """Check that OTreeBagger without relabelling, presented as certified at the data's resolution, gets (a)."""
    X, y = _jumpy_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OTreeBagger(relabel=False, n_estimators=3, random_state=0).fit(X, y)
    assert model.consistency_notion_ is None and not model.is_consistent(notion="data")
    out = probe.check_model(model, X, notion="data", certified=True, time_limit=5.0, oracle_rows=10)
    assert out["oracle"] >= 2 and ("a", ) == tuple(k for k, _ in out["flags"] if k == "a")


def test_the_oracle_walk_finds_a_band_one_float_wide(probe):
    """Check the oracle on a stump pair whose middle class holds no float: 0 up to t, 2 just above."""
    X, y = _jumpy_data()
    model = RandomForestClassifier(n_estimators=1, bootstrap=False, random_state=0).fit(X, y)
    found = probe.oracle(model, X, X[:3], np.zeros(2, dtype=bool), "pointwise")
    (x, z), (a, b) = found["points"], found["classes"]
    assert found["jump"] == 2 and {a, b} == {0, 2}
    assert np.nextafter(min(x[0], z[0]), np.inf) == max(x[0], z[0]) and x[1] == z[1]


def test_the_oracle_finds_a_jump_at_a_corner_only(probe):
    """Check the corner reading on a tree whose classes 0 and 2 meet only at a corner (every face joins 0-1 or 1-2)."""
    from trees import OrdinalTreeClassifier

    g = np.arange(10, dtype=np.float64)
    X = np.array([[a, b] for a in g for b in g])
    y = (X[:, 0] > 4).astype(int) + (X[:, 1] > 4).astype(int)
    model = OrdinalTreeClassifier(criterion="gini").fit(X, y)  # float64 thresholds (scikit-learn's read float32)
    found = probe.oracle(model, X, X[::7], np.zeros(2, dtype=bool), "pointwise")
    assert found["jump"] == 2 and found["how"] == "corner of ['x0', 'x1']"
    assert probe.confirm_witness(model, found["points"], "pointwise", X, np.zeros(2, dtype=bool))[0]
    walks = probe.walk_lines(model, X[::7], [g, g], probe.tree_cuts(model, 2), np.ones(2, dtype=bool))
    assert max(probe._adjacent_jump(t, c)[0] for _, _, t, c in walks) == 1  # no axis walk sees it


def test_confirm_witness_rejects_what_is_no_witness(probe):
    """Check the witness check: points not two classes apart, a move across a training value, a categorical move."""
    X, y = _jumpy_data()
    model = RandomForestClassifier(n_estimators=1, bootstrap=False, random_state=0).fit(X, y)
    movable = np.zeros(2, dtype=bool)
    far = (np.array([5.0, 0.0]), np.array([12.0, 0.0]))  # classes 0 and 2, training values 6..11 between
    assert probe.confirm_witness(model, far, "pointwise", X, movable)[0] is False
    ok, why = probe.confirm_witness(model, far, "data", X, movable)
    assert not ok and "across 6 training values" in why
    near = (np.array([9.0, 0.0]), np.array([10.0, 0.0]))  # one gap: a witness of the data's resolution only
    assert probe.confirm_witness(model, near, "data", X, movable)[0]
    assert not probe.confirm_witness(model, near, "pointwise", X, movable)[0]
    assert not probe.confirm_witness(model, near, "data", X, np.array([True, False]))[0]
    same_class = (np.array([1.0, 0.0]), np.array([2.0, 0.0]))
    assert "classes 0 and 0" in probe.confirm_witness(model, same_class, "data", X, movable)[1]


def test_the_checker_reports_a_false_proof_and_a_bad_witness(probe, monkeypatch):
    """Check (b) and (c) on a model that jumps: an audit made to say "proved", then one whose witness is moved."""
    X, y = _jumpy_data()
    model = RandomForestClassifier(n_estimators=1, bootstrap=False, random_state=0).fit(X, y)
    real = audit(model, X, resolution="data", time_limit=5.0)
    assert real.status == "refuted"
    monkeypatch.setattr(probe, "audit", lambda *a, **k: replace(real, status="proved", witness=None))
    out = probe.check_model(model, X, notion="data", certified=False, oracle_rows=5)
    assert [k for k, _ in out["flags"]] == ["b"]
    far = (np.array([0.0, 0.0]), np.array([15.0, 0.0]))  # classes 0 and 2, across 1..14
    monkeypatch.setattr(probe, "audit", lambda *a, **k: replace(real, witness=far))
    out = probe.check_model(model, X, notion="data", certified=False, oracle_rows=5)
    assert [k for k, _ in out["flags"]] == ["c"] and "across" in out["flags"][0][1]
