"""Tests of the otreebagger command line: every command, and user mistakes as one line."""

import csv
import shutil
import subprocess
import sys

import numpy as np
import pytest

from ensemble._cli import main


def _write_csv(path, n=80, seed=0, target="y", labels=None, bad_feature=False):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    score = 10 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) + rng.normal(0, 0.1, n)
    y = np.searchsorted([-0.5, 0.5], score)
    y_out = [labels[v] for v in y] if labels else (y + 1).tolist()
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "b", target])
        for i in range(n):
            a = "high" if bad_feature and i == 3 else repr(float(X[i, 0]))
            writer.writerow([a, repr(float(X[i, 1])), y_out[i]])
    return path


def test_fit_then_predict_round_trip(tmp_path, capsys):
    """Check that fit saves a model that predict loads, writing one class per input row."""
    data = _write_csv(tmp_path / "train.csv")
    model = tmp_path / "model.joblib"
    assert main(["fit", str(data), "-o", str(model), "--n-estimators", "6", "--group-size", "3"]) == 0
    assert "consistent: True" in capsys.readouterr().out
    out = tmp_path / "pred.csv"
    assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
    rows = list(csv.reader(open(out)))
    assert rows[0] == ["prediction"] and len(rows) == 81
    assert {int(r[0]) for r in rows[1:]} <= {1, 2, 3}


def test_fit_with_string_classes_keeps_their_order(tmp_path, capsys):
    """Check that --classes gives the order of string labels and predictions use those names."""
    data = _write_csv(tmp_path / "train.csv", labels=["poor", "fair", "good"], target="grade")
    model = tmp_path / "m.joblib"
    code = main(["fit", str(data), "--target", "grade", "--classes", "poor,fair,good",
                 "-o", str(model), "--n-estimators", "3"])
    assert code == 0
    out = tmp_path / "p.csv"
    assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
    assert {r[0] for r in list(csv.reader(open(out)))[1:]} <= {"poor", "fair", "good"}


def test_evaluate_prints_a_table_for_every_model(tmp_path, capsys):
    """Check that evaluate cross-validates the three models and prints MAE, QWK and RPS."""
    data = _write_csv(tmp_path / "d.csv", n=90)
    assert main(["evaluate", str(data), "--folds", "3", "--n-estimators", "6", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "3-fold CV" in out
    for name in ("OTreeBagger", "TreeBagger", "Bagged ordinal trees"):
        assert name in out
    assert "MAE" in out and "QWK" in out and "RPS" in out


def test_demo_runs_and_writes_the_regions_picture(tmp_path, capsys, pyplot):
    """Check that demo fits on synthetic data, reports consistency and writes a non-trivial PNG."""
    assert main(["demo", "--n-estimators", "6", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "OTreeBagger is consistent: True" in out
    png = tmp_path / "demo_regions.png"
    assert png.exists() and png.stat().st_size > 20_000


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fit", "{tmp}/missing.csv", "-o", "{tmp}/m.joblib"], "file not found"),
        (["fit", "{data}", "--target", "grade", "-o", "{tmp}/m.joblib"], "grade"),
        (["evaluate", "{bad}"], "numeric"),
        (["predict", "{tmp}/missing.joblib", "{data}", "-o", "{tmp}/p.csv"], "model file not found"),
        (["predict", "{data}", "{data}", "-o", "{tmp}/p.csv"], "not a model saved"),
        (["fit", "{data}", "--n-estimators", "2", "--group-size", "5", "-o", "{tmp}/m.joblib"],
         "--group-size"),
        (["fit", "{data}", "--classes", "1,2", "-o", "{tmp}/m.joblib"], "classes"),
        (["fit", "{data}", "--max-depth", "0", "-o", "{tmp}/m.joblib"], "--max-depth"),
    ],
)
def test_user_mistakes_give_one_line_and_exit_2(tmp_path, capsys, argv, message):
    """Check that user mistakes print one error line naming the problem and exit with status 2."""
    data = _write_csv(tmp_path / "d.csv")
    bad = _write_csv(tmp_path / "bad.csv", bad_feature=True)
    argv = [a.format(tmp=tmp_path, data=data, bad=bad) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err
    assert message in err


def test_console_script_help_for_every_command():
    """Check that the installed console script answers --help for the program and each command."""
    exe = shutil.which("otreebagger")
    cmd = [exe] if exe else [sys.executable, "-m", "ensemble._cli"]
    for sub in ([], ["demo"], ["evaluate"], ["fit"], ["predict"]):
        res = subprocess.run(cmd + sub + ["--help"], capture_output=True, text=True, timeout=60)
        assert res.returncode == 0
        assert "usage: otreebagger" in res.stdout


def test_oversized_partition_is_one_line_naming_the_options(tmp_path, capsys):
    """Check that a partition over the region budget ends as one line that names --group-size and --max-depth."""
    data = _write_csv(tmp_path / "d.csv", n=200)
    argv = ["fit", str(data), "-o", str(tmp_path / "m.joblib"), "--n-estimators", "3", "--max-regions", "5"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "max_regions=5" in err and "--max-depth" in err
