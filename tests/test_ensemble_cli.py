"""Tests of the otreebagger command line: every command, and user mistakes as one line."""

import csv
import re
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

import joblib
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
    """Check that evaluate cross-validates the three models and prints MAE, AMAE, QWK, RPS and one-off accuracy."""
    data = _write_csv(tmp_path / "d.csv", n=90)
    assert main(["evaluate", str(data), "--folds", "3", "--n-estimators", "6", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "3-fold CV" in out
    for name in ("OTreeBagger", "Certified forest", "TreeBagger", "Bagged ordinal trees"):
        assert name in out
    for column in ("MAE", "AMAE", "QWK", "RPS", "1-off acc"):
        assert column in out
    header = out.splitlines()[2]
    assert header.split() == ["lower", "is", "better"] * 2 + ["higher", "is", "better"] + [
        "lower", "is", "better", "higher", "is", "better"]


def _title_counts(text):
    """(jumps, thin bands) of a summary such as '3 jumps (2 bands thinner than a cell)'."""
    match = re.search(r"(\d+) jumps?(?: \((\d+) bands? thinner than a cell\))?", text)
    return int(match.group(1)), int(match.group(2) or 0)


def test_demo_runs_and_writes_the_regions_picture(tmp_path, capsys, pyplot, monkeypatch):
    """Check that demo shows progress, a table, and jump counts that are the same in the console and the PNG."""
    from ensemble._grid import grid_pairs

    figures = []
    monkeypatch.setattr(pyplot.Figure, "savefig", _recording(pyplot.Figure.savefig, figures))
    assert main(["demo", "--n-estimators", "12", "--output", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "syntheticI: 100 training / 900 test points" in out  # the default: data where trees jump
    assert "lower is better" in out and "higher is better" in out and "excl. compile" in out
    assert "fitting OTreeBagger" in captured.err and "drawing the regions" in captured.err
    png = tmp_path / "demo_regions.png"
    assert png.exists() and png.stat().st_size > 20_000
    (fig,) = figures
    assert fig.get_suptitle().startswith("otreebagger demo: predicted classes on syntheticI")
    titled = [ax for ax in fig.axes if "between neighbouring cells" in ax.get_title()]
    assert len(titled) == 3
    console = {}
    for line in out.splitlines():
        match = re.match(r"(.+?): (\d+ jumps?.*); certified consistent: (True|False)$", line)
        if match:
            console[match.group(1)] = (_title_counts(match.group(2)), match.group(3) == "True")
    assert len(console) == 4
    for ax in titled:
        label, summary = ax.get_title().split("\n")
        jumps, thin = _title_counts(summary)
        assert console[label][0] == (jumps, thin)  # the console says what the picture says
        # The pairs split into jumps and thin bands are all the drawn grid's pairs two classes apart,
        # and each is marked.
        ranks = np.asarray(ax.collections[0].get_array()).reshape(300, 300).astype(int)
        assert jumps + thin == grid_pairs(ranks).shape[0]
        marks = {c.get_label(): len(c.get_offsets()) for c in ax.collections[1:]}
        assert marks.get("jump of two or more classes", 0) == jumps
        assert marks.get("band thinner than a cell", 0) == thin
    # Certified models have no jump; TreeBagger on 100 points does (the point of the demo).
    for label, ((jumps, _), certified) in console.items():
        assert not certified or jumps == 0
    assert console["OTreeBagger (M=3)"][1] and console["Certified forest (auto B)"][1]
    assert console["TreeBagger (gini, majority)"][0][0] > 0
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[:5] == [f"class {k}" for k in range(1, 6)] and "jump of two or more classes" in texts


def _recording(savefig, figures):
    def record(fig, *args, **kwargs):
        figures.append(fig)
        return savefig(fig, *args, **kwargs)

    return record


def test_demo_times_the_fits_after_the_compile(monkeypatch, tmp_path, capsys):
    """Check that demo prepares the graph cut before any timed fit starts."""
    from ensemble import _cli

    events = []
    warm = _cli._warm_up
    monkeypatch.setattr(_cli, "_warm_up", lambda: (events.append("warm-up"), warm())[1])
    # Only the command line's own clock: the solvers time themselves with the same function.
    clock = SimpleNamespace(perf_counter=lambda: (events.append("clock"), time.perf_counter())[1])
    monkeypatch.setattr(_cli, "time", clock)
    assert main(["demo", "--n-estimators", "3", "--output", "", "--quiet"]) == 0
    assert events[0] == "warm-up" and events.count("clock") == 2 * len(_cli.MODELS)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Data files and a fitted model shared by the mistake cases (paths by name)."""
    tmp = tmp_path_factory.mktemp("cli")
    paths = {"tmp": tmp, "data": _write_csv(tmp / "d.csv"), "bad": _write_csv(tmp / "bad.csv", bad_feature=True)}
    paths["model"] = tmp / "m.joblib"
    assert main(["fit", str(paths["data"]), "-o", str(paths["model"]), "--n-estimators", "3"]) == 0
    rows = list(csv.reader(open(paths["data"])))
    with open(tmp / "one.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([rows[0]] + [r[:2] + ["3"] for r in rows[1:]])
    files = {
        "nan.csv": "a,b\n0.1,0.2\nnan,0.3\n",
        "empty_cell.csv": "a,b\n0.1,0.2\n,0.3\n",
        "head.csv": "a,b,y\n",
        "renamed.csv": "A,B\n0.1,0.2\n",
        "onecol.csv": "a\n0.1\n",
        "extra.csv": "a,b,id\n0.1,0.2,7\n",
        "afile": "not a folder",
    }
    for name, text in files.items():
        (tmp / name).write_text(text)
        paths[name.split(".")[0]] = tmp / name
    paths["one"] = tmp / "one.csv"
    joblib.dump({"model": 42}, tmp / "fortytwo.joblib")
    joblib.dump([1, 2], tmp / "list.joblib")
    (tmp / "corrupt.joblib").write_bytes(b"\x80\x04\x95" + bytes(range(40)) * 5)
    for name in ("fortytwo", "list", "corrupt"):
        paths[name] = tmp / f"{name}.joblib"
    return paths


def _one_error_line(capsys):
    """The single stderr line of a failed command (asserting there is exactly one, without traceback)."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fit", "{tmp}/missing.csv", "-o", "{tmp}/m2.joblib"], "file not found"),
        (["fit", "{data}", "--target", "grade", "-o", "{tmp}/m2.joblib"], "grade"),
        (["evaluate", "{bad}"], "numeric"),
        (["predict", "{tmp}/missing.joblib", "{data}", "-o", "{tmp}/p.csv"], "model file not found"),
        (["predict", "{data}", "{data}", "-o", "{tmp}/p.csv"], "not a model saved"),
        (["fit", "{data}", "--n-estimators", "2", "--group-size", "5", "-o", "{tmp}/m2.joblib"],
         "--group-size"),
        (["fit", "{data}", "--classes", "1,2", "-o", "{tmp}/m2.joblib"], "classes"),
        (["fit", "{data}", "--max-depth", "0", "-o", "{tmp}/m2.joblib"], "--max-depth"),
        # The cases of issue 14's table.
        (["fit", "{one}", "-o", "{tmp}/m2.joblib"], r"target column 'y' holds a single class \(3\); at least 2 classes"),
        (["evaluate", "{one}", "--quiet"], r"holds a single class \(3\)"),
        (["fit", "{data}", "--n-jobs", "0", "-o", "{tmp}/m2.joblib"], "--n-jobs must be a number of jobs"),
        (["evaluate", "{data}", "--n-jobs", "0"], "-1 for all processors, got 0"),
        (["predict", "{model}", "{nan}", "-o", "{tmp}/p.csv"], r"feature column 'a' .* missing value \(NaN\) at line 3"),
        (["predict", "{model}", "{empty_cell}", "-o", "{tmp}/p.csv"], "feature column 'a' .* missing value at line 3"),
        (["predict", "{model}", "{head}", "-o", "{tmp}/p.csv"], "has a header but no data rows"),
        (["predict", "{fortytwo}", "{data}", "-o", "{tmp}/p.csv"], "'model' entry is of type int, not a fitted"),
        (["predict", "{list}", "{data}", "-o", "{tmp}/p.csv"], r"not a model saved by 'otreebagger fit' \(it holds a list\)"),
        (["predict", "{corrupt}", "{data}", "-o", "{tmp}/p.csv"], r"joblib cannot read it \(\w+Error\)$"),
        (["predict", "{tmp}", "{data}", "-o", "{tmp}/p.csv"], "is a folder, not a model file"),
        (["fit", "{data}", "-o", "{afile}/sub/m.joblib"], "cannot create a folder for the model under .*afile: it is a file"),
        (["fit", "{data}", "-o", "{tmp}"], "is a folder; give a file name for the model"),
        (["predict", "{model}", "{data}", "-o", "{afile}/p.csv"], "for the predictions under .*afile: it is a file"),
        (["predict", "{model}", "{renamed}", "-o", "{tmp}/p.csv"],
         r"columns do not match the model's features \(a, b\): missing 'a', 'b'; unknown 'A', 'B'$"),
        (["predict", "{model}", "{onecol}", "-o", "{tmp}/p.csv"], r"features \(a, b\): missing 'b'$"),
        (["predict", "{model}", "{extra}", "-o", "{tmp}/p.csv"], r"features \(a, b\): unknown 'id'$"),
        (["evaluate", "{data}", "--folds", "1"], "--folds must be at least 2"),
        (["demo", "--output", "{afile}"], "is a file; give a folder for the regions PNG"),
    ],
)
def test_user_mistakes_give_one_line_and_exit_2(files, capsys, argv, message):
    """Check that user mistakes print one error line naming the problem, with no traceback, and exit 2."""
    argv = [a.format(**files) for a in argv]
    assert main(argv) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"otreebagger {argv[0]}: error: ")
    assert re.search(message, line), line
    assert "np.int64" not in line


def test_fit_creates_missing_output_folders(tmp_path, capsys):
    """Check that fit -o new/dir/model.joblib creates the folders and predict -o does the same."""
    data = _write_csv(tmp_path / "d.csv")
    model = tmp_path / "new" / "dir" / "model.joblib"
    assert main(["fit", str(data), "-o", str(model), "--n-estimators", "3"]) == 0
    assert model.is_file()
    out = tmp_path / "out" / "sub" / "p.csv"
    assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
    assert len(list(csv.reader(open(out)))) == 81


def _predictions(path):
    return [r[0] for r in list(csv.reader(open(path)))[1:]]


def test_predict_matches_columns_by_name(tmp_path, capsys):
    """Check that predict reorders the columns by name: a swapped file gives the model's own predictions."""
    data = _write_csv(tmp_path / "d.csv", n=120, seed=3)
    model_path = tmp_path / "m.joblib"
    assert main(["fit", str(data), "-o", str(model_path), "--n-estimators", "6"]) == 0
    rows = list(csv.reader(open(data)))
    swapped = tmp_path / "swapped.csv"
    with open(swapped, "w", newline="") as fh:
        # Target first, features in the other order.
        csv.writer(fh).writerows([[r[2], r[1], r[0]] for r in rows])
    assert main(["predict", str(model_path), str(swapped), "-o", str(tmp_path / "p.csv")]) == 0
    model = joblib.load(model_path)["model"]
    X = np.array([[float(r[0]), float(r[1])] for r in rows[1:]])
    expected = [str(p) for p in model.predict(X).tolist()]
    assert _predictions(tmp_path / "p.csv") == expected
    # The same file read by position would predict differently: the test can tell.
    assert expected != [str(p) for p in model.predict(X[:, ::-1]).tolist()]


def test_predict_by_position_for_models_without_names(tmp_path, capsys):
    """Check that a saved model without feature names is applied by position, and a wrong count is one line."""
    from ensemble import OTreeBagger

    data = _write_csv(tmp_path / "d.csv")
    rows = list(csv.reader(open(data)))
    X = np.array([[float(r[0]), float(r[1])] for r in rows[1:]])
    y = np.array([int(r[2]) for r in rows[1:]])
    model = OTreeBagger(n_estimators=3, random_state=0).fit(X, y)
    joblib.dump({"model": model, "target": "y"}, tmp_path / "old.joblib")
    renamed = tmp_path / "renamed.csv"
    renamed.write_text("u,v\n" + "\n".join(f"{a!r},{b!r}" for a, b in X.tolist()) + "\n")
    assert main(["predict", str(tmp_path / "old.joblib"), str(renamed), "-o", str(tmp_path / "p.csv")]) == 0
    assert _predictions(tmp_path / "p.csv") == [str(p) for p in model.predict(X).tolist()]
    three = tmp_path / "three.csv"
    three.write_text("u,v,w\n1,2,3\n")
    assert main(["predict", str(tmp_path / "old.joblib"), str(three), "-o", str(tmp_path / "p.csv")]) == 2
    assert "has 3 feature columns, the model expects 2" in _one_error_line(capsys)


def test_predict_uses_the_names_of_a_model_fitted_on_a_frame(tmp_path, capsys):
    """Check that a model fitted on a pandas DataFrame is matched by its feature_names_in_."""
    pd = pytest.importorskip("pandas")
    from ensemble import OTreeBagger

    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.uniform(size=(60, 2)), columns=["age", "income"])
    y = (frame["age"] + 2 * frame["income"] > 1.5).astype(int) + 1
    model = OTreeBagger(n_estimators=3, random_state=0).fit(frame, y)
    joblib.dump({"model": model, "target": "y"}, tmp_path / "frame.joblib")
    frame[["income", "age"]].to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "frame.joblib"), str(tmp_path / "new.csv"), "-o",
                 str(tmp_path / "p.csv")]) == 0
    assert capsys.readouterr().err == ""
    assert _predictions(tmp_path / "p.csv") == [str(p) for p in model.predict(frame).tolist()]


def test_string_classes_without_order_warn_with_the_order_used(tmp_path, capsys):
    """Check that text classes without --classes print one warning naming the alphabetical order, else none."""
    data = _write_csv(tmp_path / "s.csv", labels=["poor", "fair", "good"], target="grade")
    argv = ["fit", str(data), "--target", "grade", "-o", str(tmp_path / "m.joblib"), "--n-estimators", "3"]
    assert main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("otreebagger fit: warning: ") and "fair < good < poor" in err[0]
    assert "--classes" in err[0]
    assert main(argv + ["--classes", "poor,fair,good"]) == 0
    assert capsys.readouterr().err == ""
    # Integer classes have their natural order: no warning.
    assert main(["fit", str(_write_csv(tmp_path / "d.csv")), "-o", str(tmp_path / "m.joblib"),
                 "--n-estimators", "3"]) == 0
    assert capsys.readouterr().err == ""


def test_evaluate_says_when_it_lowers_the_folds(tmp_path, capsys):
    """Check that evaluate warns in one line when the smallest class forces fewer folds, and not otherwise."""
    data = _write_csv(tmp_path / "d.csv", n=90)
    counts = np.unique([r[2] for r in list(csv.reader(open(data)))[1:]], return_counts=True)[1]
    smallest = int(counts.min())
    assert main(["evaluate", str(data), "--folds", "5000", "--n-estimators", "3", "--quiet"]) == 0
    captured = capsys.readouterr()
    warning = captured.err.strip().splitlines()
    assert len(warning) == 1
    assert warning[0].startswith("otreebagger evaluate: warning: --folds 5000 lowered to ")
    assert f"lowered to {smallest}:" in warning[0] and f"{smallest}-fold CV" in captured.out
    assert main(["evaluate", str(data), "--folds", "2", "--n-estimators", "3", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_registry_entry_is_a_new_model_for_fit_and_evaluate(tmp_path, capsys, monkeypatch):
    """Check that one entry in the CLI's model registry makes a model available to fit --model and evaluate."""
    from ensemble import OTreeBagger
    from ensemble import _cli

    entry = _cli.ModelEntry("single-tree groups (B={n_estimators})",
                            lambda args: OTreeBagger(group_size=1, n_estimators=args.n_estimators, random_state=0))
    monkeypatch.setitem(_cli.MODELS, "single", entry)
    data = _write_csv(tmp_path / "d.csv", n=90)
    assert main(["fit", str(data), "--model", "single", "-o", str(tmp_path / "m.joblib"), "--n-estimators", "2",
                 "--group-size", "1"]) == 0
    assert "fitted single-tree groups (B=2)" in capsys.readouterr().out
    assert joblib.load(tmp_path / "m.joblib")["model"].group_size == 1
    assert main(["evaluate", str(data), "--folds", "2", "--n-estimators", "3", "--quiet"]) == 0
    assert "single-tree groups (B=3)" in capsys.readouterr().out


def test_console_script_help_for_every_command():
    """Check that the installed console script answers --help for the program and each command."""
    exe = shutil.which("otreebagger")
    cmd = [exe] if exe else [sys.executable, "-m", "ensemble._cli"]
    for sub in ([], ["demo"], ["evaluate"], ["fit"], ["predict"]):
        res = subprocess.run(cmd + sub + ["--help"], capture_output=True, text=True, timeout=60)
        assert res.returncode == 0
        assert "usage: otreebagger" in res.stdout


def test_oversized_partition_adapts_with_one_warning_or_names_a_measured_setting(tmp_path, capsys):
    """Check that a group past the region budget is made smaller with one warning line, or (--on-budget raise)
    ends as one error line naming a smaller setting measured to fit."""
    data = _write_csv(tmp_path / "d.csv", n=200)
    argv = ["fit", str(data), "-o", str(tmp_path / "m.joblib"), "--n-estimators", "3", "--max-regions", "12"]
    assert main(argv) == 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "warning:" in err and "--max-regions=12" in err
    assert "--group-size 3 -> 1" in err
    assert main(argv + ["--on-budget", "raise"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--max-regions=12" in err
    assert "Measured on this group: --group-size 3 -> 1" in err and "fits (" in err


def test_budget_categorical_and_verbose_options(tmp_path, capsys):
    """Check --max-edges, --categorical by name or index, --monotone and --verbose on fit."""
    data = _write_csv(tmp_path / "d.csv", n=120)
    out = tmp_path / "m.joblib"
    assert main(["fit", str(data), "-o", str(out), "--n-estimators", "3", "--categorical", "b",
                 "--monotone", "a=+1", "--max-edges", "100000", "--verbose"]) == 0
    captured = capsys.readouterr()
    assert "OTreeBagger groups" in captured.err
    model = joblib.load(out)["model"]
    assert model.categorical_features == [1] and model.monotonic_cst == [1, 0] and model.max_edges == 100000
    assert model.is_monotone()
    for bad, message in ((["--categorical", "zz"], "--categorical: 'zz' is not a feature column"),
                         (["--monotone", "a=up"], "--monotone: 'a=up' is not NAME=+1 or NAME=-1"),
                         (["--max-edges", "0"], "--max-edges must be a positive integer")):
        assert main(["fit", str(data), "-o", str(out), "--n-estimators", "3"] + bad) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err


def test_max_depth_defaults_to_each_models_own():
    """Check that without --max-depth every model keeps its own default depth, and that it sets them all."""
    from ensemble import ConsistentForestClassifier, OTreeBagger
    from ensemble._cli import MODELS, _parser

    defaults = {"otreebagger": OTreeBagger().max_depth, "forest": ConsistentForestClassifier().max_depth,
                "treebagger": None, "bagged": None}
    args = _parser().parse_args(["fit", "d.csv", "-o", "m.joblib"])
    assert {name: entry.build(args).max_depth for name, entry in MODELS.items()} == defaults
    args = _parser().parse_args(["fit", "d.csv", "-o", "m.joblib", "--max-depth", "5"])
    assert {entry.build(args).max_depth for entry in MODELS.values()} == {5}


def test_forest_model_in_fit_and_evaluate_where_otreebagger_cannot_run(tmp_path, capsys):
    """Check --model forest in fit, and that evaluate still compares the forest when OTreeBagger stops."""
    data = _write_csv(tmp_path / "d.csv", n=90)
    model = tmp_path / "forest.joblib"
    assert main(["fit", str(data), "--model", "forest", "-o", str(model)]) == 0
    assert "fitted Certified forest (auto B)" in capsys.readouterr().out
    assert type(joblib.load(model)["model"]).__name__ == "ConsistentForestClassifier"
    code = main(["evaluate", str(data), "--folds", "3", "--n-estimators", "6", "--max-regions", "1", "--quiet",
                 "--model", "otreebagger", "forest"])
    out = capsys.readouterr().out
    assert code == 0
    assert "OTreeBagger (M=3) could not run: " in out and "--max-regions" in out
    table = out.split("OTreeBagger (M=3) could not run")[0]
    assert "Certified forest (auto B)" in table and "OTreeBagger" not in table
