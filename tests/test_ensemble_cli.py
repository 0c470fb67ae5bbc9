"""Tests of the otreebagger command line: every command, and user mistakes as one line."""

import csv
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
import zipfile
from types import SimpleNamespace

import joblib
import numpy as np
import pytest

from ensemble.cli._main import main
from ensemble.spaces._spaces import KernelScore
from ensemble.base._estimator import SKLEARN_ROUTES_MISSING
from ensemble.model_files._model_file import load_model_file, save_model_file


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
    model = tmp_path / "model.skops"
    assert main(["fit", str(data), "-o", str(model), "--n-estimators", "6", "--group-size", "3"]) == 0
    assert "; consistent at the data's resolution;" in capsys.readouterr().out
    out = tmp_path / "pred.csv"
    assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
    rows = list(csv.reader(open(out)))
    assert rows[0] == ["prediction"] and len(rows) == 81
    assert {int(r[0]) for r in rows[1:]} <= {1, 2, 3}


def test_fit_with_string_classes_keeps_their_order(tmp_path, capsys):
    """Check that --classes gives the order of string labels and predictions use those names."""
    data = _write_csv(tmp_path / "train.csv", labels=["poor", "fair", "good"], target="grade")
    model = tmp_path / "m.skops"
    code = main(["fit", str(data), "--target", "grade", "--classes", "poor,fair,good",
                 "-o", str(model), "--n-estimators", "3"])
    assert code == 0
    out = tmp_path / "p.csv"
    assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
    assert {r[0] for r in list(csv.reader(open(out)))[1:]} <= {"poor", "fair", "good"}


def test_evaluate_prints_a_table_for_every_model(tmp_path, capsys):
    """Check that evaluate cross-validates the three models and prints MAE, AMAE, QWK, RPS and one-off accuracy."""
    data = _write_csv(tmp_path / "d.csv", n=90)
    # --n-estimators is refused with boosting (which stops early): every model that takes it.
    assert main(["evaluate", str(data), "--folds", "3", "--n-estimators", "6", "--quiet",
                 "--model", "otreebagger", "forest", "treebagger", "bagged"]) == 0
    out = capsys.readouterr().out
    assert "3-fold CV" in out
    for name in ("OTreeBagger", "Certified forest", "TreeBagger", "Bagged ordinal trees"):
        assert name in out
    for column in ("MAE", "AMAE", "QWK", "RPS", "1-off acc"):
        assert column in out
    header = out.splitlines()[2]
    assert header.split() == ["lower", "is", "better"] * 2 + ["higher", "is", "better"] + [
        "lower", "is", "better", "higher", "is", "better"]


def test_evaluate_reports_a_model_that_meets_an_unseen_category_in_one_line(tmp_path, capsys):
    """Check that a test fold holding a category its training folds never saw fails OTreeBagger (which has
    no missing route there) in one line, and the forest (which reads it as missing) still compares."""
    rng = np.random.RandomState(0)
    path = tmp_path / "rare.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["x", "colour", "y"])
        for i in range(90):
            x = rng.uniform()
            writer.writerow([repr(x), "r" if i == 0 else "ab"[i % 2], 1 + int(3 * x)])
    assert main(["evaluate", str(path), "--folds", "3", "--n-estimators", "6", "--quiet",
                 "--model", "otreebagger", "forest"]) == 0
    out = capsys.readouterr().out
    assert "Certified forest" in out
    failed = [line for line in out.splitlines() if line.startswith("OTreeBagger")]
    assert len(failed) == 1 and "could not run" in failed[0] and "'r', unseen in fit" in failed[0], out
    # Every model failing is one line on stderr and status 2 (it was a traceback of an empty table).
    assert main(["evaluate", str(path), "--folds", "3", "--n-estimators", "6", "--quiet",
                 "--model", "otreebagger"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "could not run" in err and "unseen in fit" in err, err


def test_output_into_a_reader_that_stops_early_ends_quietly(tmp_path):
    """Check that predictions written to a pipe whose reader stops after one byte (``| head -c 1``) end without
    a BrokenPipeError traceback, with status 141 as a producer the closed pipe killed (the rows pass the
    pipe's buffer, so the write meets the closed pipe)."""
    data = _write_csv(tmp_path / "d.csv", n=90)
    rows = _write_csv(tmp_path / "rows.csv", n=20000, seed=1)
    model = tmp_path / "m.skops"
    assert main(["fit", str(data), "--model", "forest", "--n-estimators", "5", "-o", str(model)]) == 0
    command = (f"{sys.executable} -m ensemble predict {model} {rows} -o /dev/stdout | head -c 1 > /dev/null; "
               "echo status=${PIPESTATUS[0]}")
    res = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr
    assert res.stdout.strip() == "status=141", res.stdout
    if Path("/dev/full").exists():  # a device that refuses every write: one line, as fit says it
        assert main(["predict", str(model), str(data), "-o", "/dev/full"]) == 2


def _title_counts(text):
    """(jumps, thin bands) of a summary such as '3 jumps (2 bands thinner than a cell)'."""
    match = re.search(r"(\d+) jumps?(?: \((\d+) bands? thinner than a cell\))?", text)
    return int(match.group(1)), int(match.group(2) or 0)


@pytest.mark.slow
def test_demo_runs_and_writes_the_regions_picture(tmp_path, capsys, pyplot, monkeypatch):
    """Check that demo shows progress, a table, and jump counts that are the same in the console and the PNG."""
    from ensemble.plots._grid import grid_pairs

    figures = []
    monkeypatch.setattr(pyplot.Figure, "savefig", _recording(pyplot.Figure.savefig, figures))
    assert main(["demo", "--output", str(tmp_path), "--max-depth", "6"]) == 0
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
        match = re.match(r"(.+?): (\d+ jumps?.*); (consistent at the data's resolution|consistent pointwise only|"
                         r"not certified)$", line)
        if match:
            console[match.group(1)] = (_title_counts(match.group(2)), match.group(3) != "not certified")
    assert len(console) == 5  # every model of the registry
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
    for _label, ((jumps, _), certified) in console.items():
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


def _numba_signatures() -> int:
    """The number of compiled signatures of the package's numba kernels (module-level dispatchers)."""
    from numba.core.dispatcher import Dispatcher

    count = 0
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in ("trees", "relabel", "ensemble"):
            continue
        count += sum(len(obj.overloads) for obj in vars(module).values() if isinstance(obj, Dispatcher))
    return count


def test_demo_times_the_fits_after_the_compile(monkeypatch, tmp_path, capsys):
    """Check that demo warms up every model before any timed fit starts, and that no timed fit compiles
    (or loads from the cache) a numba kernel: between each fit's two clock readings the package's kernels
    gain no signature, so "fit s" is the fit alone, also on a first run."""
    from ensemble.cli import _main as _cli
    from ensemble.cli import _demo as _cli_demo
    from ensemble.base import _parallel

    events, signatures = [], []
    warm = _cli_demo._warm_up

    def warm_up(names, *rest):
        events.append(("warm-up", tuple(names)))
        warm(names, *rest)

    def clock():
        events.append("clock")
        signatures.append(_numba_signatures())
        return time.perf_counter()

    monkeypatch.setattr(_cli_demo, "_warm_up", warm_up)
    # Only the command line's own clock: the solvers time themselves with the same function.
    monkeypatch.setattr(_cli_demo, "time", SimpleNamespace(perf_counter=clock))
    # Every fit in this process, where the clock is read (the forked share runs the same
    # _fit_and_score after the same warm-up; test_demo_forked_share_prints_what_one_process_prints).
    monkeypatch.setattr(_parallel, "beside_this_process", lambda *args: None)
    assert main(["demo", "--max-depth", "3", "--output", "", "--quiet"]) == 0
    assert events[0] == ("warm-up", tuple(_cli.MODELS)) and events.count("clock") == 2 * len(_cli.MODELS)
    assert signatures[0] > 0
    fits = list(zip(signatures[::2], signatures[1::2], strict=True))
    assert all(before == after for before, after in fits), fits


def _demo_lines(out: str) -> list[str]:
    """The demo's output without its "fit s" column (the one figure that differs between runs)."""
    return [re.sub(r"\s+\d+\.\d+$", "", line) if re.match(r"^\S.*\s\d+\.\d{3}$", line) else line
            for line in out.splitlines()]


def test_demo_forked_share_prints_what_one_process_prints(monkeypatch, capsys):
    """Check that the demo's models fitted and walked in a forked process (two cores) give the same
    table, jumps and certificates, in the same order, as all of them fitted in this process."""
    from ensemble.base import _parallel

    argv = ["demo", "--max-depth", "3", "--output", "", "--quiet"]
    started = []
    beside = _parallel.beside_this_process

    def recording(*args):
        started.append(beside(*args))
        return started[-1]

    monkeypatch.setattr(_parallel, "beside_this_process", recording)
    assert main(argv) == 0
    forked = capsys.readouterr().out
    monkeypatch.setattr(_parallel, "beside_this_process", lambda *args: None)
    assert main(argv) == 0
    alone = capsys.readouterr().out
    assert len(started) == 1
    if len(os.sched_getaffinity(0)) >= 2:
        assert started[0] is not None  # the share really ran in another process
    assert _demo_lines(forked) == _demo_lines(alone)
    assert sum(line.endswith(("; consistent at the data's resolution", "; consistent pointwise only", "; not certified"))
               for line in alone.splitlines()) == 5
    assert len([line for line in alone.splitlines() if re.search(r"\d\.\d{3}$", line)]) == 5


def _record_warm_up(log, name, *rest):
    with open(log, "a") as fh:
        fh.write(f"{os.getpid()} {name}\n")


def test_demo_warms_an_empty_cache_in_one_process_per_core(monkeypatch, tmp_path):
    """Check the cold-cache warm-up: with the grower's cache index empty, every model is first fitted in
    forked processes (other than this one, where two cores are usable), then here; with a cache, here only."""
    from ensemble.cli import _demo as _cli_demo
    from ensemble.datasets import make_synthetic_i
    from trees import _grower

    log = tmp_path / "warm.log"
    # A module-level function: the pool pickles what it sends to its processes.
    monkeypatch.setattr(_cli_demo, "_warm_one", functools.partial(_record_warm_up, log))
    X, y = make_synthetic_i(200, random_state=0)
    names = ["treebagger", "otreebagger", "forest", "boosting"]
    for cached in (False, True):
        log.write_text("")
        monkeypatch.setattr(_grower, "grower_cached", lambda cached=cached: cached)
        _cli_demo._warm_up(names, SimpleNamespace(), X, y)
        lines = [line.split() for line in log.read_text().splitlines()]
        here = [name for pid, name in lines if int(pid) == os.getpid()]
        forked = [(int(pid), name) for pid, name in lines if int(pid) != os.getpid()]
        assert here == names
        if cached or len(os.sched_getaffinity(0)) < 2:
            assert forked == []
        else:
            # Which pool process takes which model is the pool's choice: one may take them all.
            assert sorted(name for _, name in forked) == sorted(names)
    # After the fits of this suite the grower's cache holds kernels.
    from trees import OrdinalTreeClassifier

    OrdinalTreeClassifier(max_depth=2).fit(X, y)
    assert _grower.grower_cached()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Data files and a fitted model shared by the mistake cases (paths by name)."""
    tmp = tmp_path_factory.mktemp("cli")
    paths = {"tmp": tmp, "data": _write_csv(tmp / "d.csv"), "bad": _write_csv(tmp / "bad.csv", bad_feature=True)}
    paths["model"] = tmp / "m.skops"
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
        "inf.csv": "a,b,y\n0.1,0.2,1\n0.3,inf,2\n0.5,0.6,2\n",
        "huge.csv": "a,b,y\n1e400,0.2,1\n0.3,0.4,2\n0.5,0.6,2\n",
        "long.csv": "a,b,y\n" + "1" * 200_000 + ",0.2,1\n",
        "afile": "not a folder",
    }
    for name, text in files.items():
        (tmp / name).write_text(text)
        paths[name.split(".")[0]] = tmp / name
    (tmp / "binary.csv").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    paths["binary"] = tmp / "binary.csv"
    paths["one"] = tmp / "one.csv"
    joblib.dump({"model": 42}, tmp / "fortytwo.joblib")
    joblib.dump([1, 2], tmp / "list.joblib")
    (tmp / "corrupt.joblib").write_bytes(b"\x80\x04\x95" + bytes(range(40)) * 5)
    for name in ("fortytwo", "list", "corrupt"):
        paths[name] = tmp / f"{name}.joblib"
    paths["tampered"] = _tampered(paths["model"], tmp / "tampered.skops")
    paths["foreign"] = tmp / "foreign.skops"
    from sklearn.linear_model import LogisticRegression

    import skops.io as sio

    sio.dump({"model": LogisticRegression().fit([[0.0], [1.0]], [0, 1])}, paths["foreign"])
    paths["skops_list"] = tmp / "list.skops"
    sio.dump([1, 2], paths["skops_list"])
    paths["zipped"] = tmp / "zipped.skops"
    with zipfile.ZipFile(paths["zipped"], "w") as archive:
        archive.writestr("notes.txt", "a zip, not a model")
    return paths


def _tampered(source, target):
    """A copy of a saved model whose schema names os.system for the model (an untrusted type)."""
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    schema = json.loads(members["schema.json"])
    model = schema["content"]["model"]
    assert model["__module__"] == "ensemble.otreebagger._otreebagger" and model["__class__"] == "OTreeBagger"
    model["__module__"], model["__class__"] = "os", "system"
    members["schema.json"] = json.dumps(schema).encode()
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return target


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
        (["fit", "{tmp}/missing.csv", "-o", "{tmp}/m2.skops"], "file not found"),
        (["fit", "{data}", "--target", "grade", "-o", "{tmp}/m2.skops"], "grade"),
        (["evaluate", "{bad}"], "numeric"),
        (["predict", "{tmp}/missing.skops", "{data}", "-o", "{tmp}/p.csv"], "model file not found"),
        (["predict", "{data}", "{data}", "-o", "{tmp}/p.csv"], "not a model saved"),
        (["fit", "{data}", "--n-estimators", "2", "--group-size", "5", "-o", "{tmp}/m2.skops"],
         "--group-size"),
        (["fit", "{data}", "--classes", "1,2", "-o", "{tmp}/m2.skops"], "classes"),
        (["fit", "{data}", "--max-depth", "0", "-o", "{tmp}/m2.skops"], "--max-depth"),
        # The cases of issue 14's table.
        (["fit", "{one}", "-o", "{tmp}/m2.skops"], r"target column 'y' holds a single class \(3\); at least 2 classes"),
        (["evaluate", "{one}", "--quiet"], r"holds a single class \(3\)"),
        (["fit", "{data}", "--n-jobs", "0", "-o", "{tmp}/m2.skops"], "--n-jobs must be a number of jobs"),
        (["evaluate", "{data}", "--n-jobs", "0"], "-1 for all processors, got 0"),
        (["predict", "{model}", "{head}", "-o", "{tmp}/p.csv"], "has a header but no data rows"),
        # Pickles are refused unless --unsafe-pickle, and then checked as before.
        (["predict", "{fortytwo}", "{data}", "-o", "{tmp}/p.csv"], r"not a skops archive.*pass --unsafe-pickle"),
        (["predict", "{fortytwo}", "{data}", "-o", "{tmp}/p.csv", "--unsafe-pickle"],
         "'model' entry is of type int, not a fitted"),
        (["predict", "{list}", "{data}", "-o", "{tmp}/p.csv", "--unsafe-pickle"],
         r"not a model saved by 'otreebagger fit' \(it holds a list\)"),
        (["predict", "{corrupt}", "{data}", "-o", "{tmp}/p.csv", "--unsafe-pickle"],
         r"neither skops nor joblib can read it \(\w+Error\)$"),
        # skops archives: tampered, foreign, damaged.
        (["predict", "{tampered}", "{data}", "-o", "{tmp}/p.csv"],
         r"names types that otreebagger does not trust \(os\.system\): refusing to load it"),
        (["predict", "{tampered}", "{data}", "-o", "{tmp}/p.csv", "--unsafe-pickle"], r"does not trust \(os\.system\)"),
        (["predict", "{foreign}", "{data}", "-o", "{tmp}/p.csv"], "a skops archive but not a model saved by"),
        (["predict", "{zipped}", "{data}", "-o", "{tmp}/p.csv"], r"skops cannot read it \(\w+\)$"),
        (["predict", "{skops_list}", "{data}", "-o", "{tmp}/p.csv"], r"not a model saved by .*\(it holds a list\)"),
        (["predict", "{tmp}", "{data}", "-o", "{tmp}/p.csv"], "is a folder, not a model file"),
        (["fit", "{data}", "-o", "{afile}/sub/m.skops"], "cannot create a folder for the model under .*afile: it is a file"),
        (["fit", "{data}", "-o", "{tmp}"], "is a folder; give a file name for the model"),
        (["predict", "{model}", "{data}", "-o", "{afile}/p.csv"], "for the predictions under .*afile: it is a file"),
        (["predict", "{model}", "{renamed}", "-o", "{tmp}/p.csv"],
         r"columns do not match the model's features \(a, b\): missing 'a', 'b'; unused 'A', 'B'$"),
        (["predict", "{model}", "{onecol}", "-o", "{tmp}/p.csv"], r"features \(a, b\): missing 'b'$"),
        (["predict", "{model}", "{data}", "-o", "{tmp}/p.csv", "--keep", "id,zz"],
         r"--keep: 'id', 'zz' not a column of .*d\.csv \(columns: a, b, y\)$"),
        # Files that are not CSV text, infinite values, a folder.
        (["predict", "{model}", "{binary}", "-o", "{tmp}/p.csv"], r"binary.csv is not a text CSV file \(not UTF-8"),
        (["fit", "{long}", "-o", "{tmp}/m2.skops"], r"long.csv is not a readable CSV file: field larger than"),
        (["fit", "{inf}", "-o", "{tmp}/m2.skops"], r"feature column 'b' .* infinite value \('inf'\) at line 3"),
        (["evaluate", "{huge}"], r"feature column 'a' .* infinite value \('1e400'\) at line 2"),
        (["predict", "{model}", "{inf}", "-o", "{tmp}/p.csv"], r"feature column 'b' .* infinite value"),
        (["fit", "{tmp}", "-o", "{tmp}/m2.skops"], "is a folder, not a CSV file"),
        (["audit", "{tmp}", "{data}"], "is a folder, not a model file"),
        (["audit", "{model}", "{tmp}"], "is a folder, not a CSV file"),
        (["audit", "{model}", "{bad}"], r"error: feature column 'a' of \S+bad.csv is not numeric"),  # named once
        (["evaluate", "{tmp}/missing.csv"], "file not found: .*missing.csv"),
        (["predict", "{model}", "{tmp}/missing.csv", "-o", "{tmp}/p.csv"], "file not found: .*missing.csv"),
        (["evaluate", "{data}", "--folds", "1"], "--folds must be at least 2"),
        (["demo", "--train-size", "0.001", "--output", ""], r"--train-size 0.001: The train_size = 1 should be"),
        (["fit", "{data}", "--categorical", "a", "--monotone", "a=+1", "-o", "{tmp}/m2.skops"],
         "--monotone constrains feature.*which --categorical declares categorical"),
        (["demo", "--output", "{afile}/sub"], "cannot create the folder .*afile/sub"),
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
    """Check that fit -o new/dir/model.skops creates the folders and predict -o does the same."""
    data = _write_csv(tmp_path / "d.csv")
    model = tmp_path / "new" / "dir" / "model.skops"
    assert main(["fit", str(data), "-o", str(model), "--n-estimators", "3"]) == 0
    assert model.is_file()
    out = tmp_path / "out" / "sub" / "p.csv"
    assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
    assert len(list(csv.reader(open(out)))) == 81


def _predictions(path):
    return [r[0] for r in list(csv.reader(open(path)))[1:]]


def _named(model, X):
    """Rows as a DataFrame with the model's feature names (it was fitted on a named table)."""
    import pandas as pd

    return pd.DataFrame(X, columns=model.feature_names_in_)


def test_predict_matches_columns_by_name(tmp_path, capsys):
    """Check that predict reorders the columns by name: a swapped file gives the model's own predictions."""
    data = _write_csv(tmp_path / "d.csv", n=120, seed=3)
    model_path = tmp_path / "m.skops"
    assert main(["fit", str(data), "-o", str(model_path), "--n-estimators", "6"]) == 0
    rows = list(csv.reader(open(data)))
    swapped = tmp_path / "swapped.csv"
    with open(swapped, "w", newline="") as fh:
        # Target first, features in the other order.
        csv.writer(fh).writerows([[r[2], r[1], r[0]] for r in rows])
    assert main(["predict", str(model_path), str(swapped), "-o", str(tmp_path / "p.csv")]) == 0
    model = load_model_file(model_path)["model"]
    X = np.array([[float(r[0]), float(r[1])] for r in rows[1:]])
    expected = [str(p) for p in model.predict(_named(model, X)).tolist()]
    assert _predictions(tmp_path / "p.csv") == expected
    # The same file read by position would predict differently: the test can tell.
    assert expected != [str(p) for p in model.predict(_named(model, X[:, ::-1])).tolist()]


def test_predict_by_position_for_models_without_names(tmp_path, capsys):
    """Check that a saved model without feature names is applied by position, and a wrong count is one line."""
    from ensemble import OTreeBagger

    data = _write_csv(tmp_path / "d.csv")
    rows = list(csv.reader(open(data)))
    X = np.array([[float(r[0]), float(r[1])] for r in rows[1:]])
    y = np.array([int(r[2]) for r in rows[1:]])
    model = OTreeBagger(n_estimators=3, random_state=0).fit(X, y)
    save_model_file(tmp_path / "old.skops", model, target="y")
    renamed = tmp_path / "renamed.csv"
    renamed.write_text("u,v\n" + "\n".join(f"{a!r},{b!r}" for a, b in X.tolist()) + "\n")
    assert main(["predict", str(tmp_path / "old.skops"), str(renamed), "-o", str(tmp_path / "p.csv")]) == 0
    assert _predictions(tmp_path / "p.csv") == [str(p) for p in model.predict(X).tolist()]
    three = tmp_path / "three.csv"
    three.write_text("u,v,w\n1,2,3\n")
    assert main(["predict", str(tmp_path / "old.skops"), str(three), "-o", str(tmp_path / "p.csv")]) == 2
    assert "has 3 feature columns, the model expects 2" in _one_error_line(capsys)


def test_predict_uses_the_names_of_a_model_fitted_on_a_frame(tmp_path, capsys):
    """Check that a model fitted on a pandas DataFrame is matched by its feature_names_in_."""
    pd = pytest.importorskip("pandas")
    from ensemble import OTreeBagger

    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.uniform(size=(60, 2)), columns=["age", "income"])
    y = (frame["age"] + 2 * frame["income"] > 1.5).astype(int) + 1
    model = OTreeBagger(n_estimators=3, random_state=0).fit(frame, y)
    save_model_file(tmp_path / "frame.skops", model, target="y")
    frame[["income", "age"]].to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "frame.skops"), str(tmp_path / "new.csv"), "-o",
                 str(tmp_path / "p.csv")]) == 0
    assert capsys.readouterr().err == ""
    assert _predictions(tmp_path / "p.csv") == [str(p) for p in model.predict(frame).tolist()]


def test_string_classes_without_order_warn_with_the_order_used(tmp_path, capsys):
    """Check that text classes without --classes print one warning naming the alphabetical order, else none."""
    data = _write_csv(tmp_path / "s.csv", labels=["poor", "fair", "good"], target="grade")
    argv = ["fit", str(data), "--target", "grade", "-o", str(tmp_path / "m.skops"), "--n-estimators", "3"]
    assert main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("otreebagger fit: warning: ") and "fair < good < poor" in err[0]
    assert "--classes" in err[0]
    assert main(argv + ["--classes", "poor,fair,good"]) == 0
    assert capsys.readouterr().err == ""
    # Integer classes have their natural order: no warning.
    assert main(["fit", str(_write_csv(tmp_path / "d.csv")), "-o", str(tmp_path / "m.skops"),
                 "--n-estimators", "3"]) == 0
    assert capsys.readouterr().err == ""


def test_evaluate_says_when_it_lowers_the_folds(tmp_path, capsys):
    """Check that evaluate warns in one line when the smallest class forces fewer folds, and not otherwise."""
    data = _write_csv(tmp_path / "d.csv", n=90)
    counts = np.unique([r[2] for r in list(csv.reader(open(data)))[1:]], return_counts=True)[1]
    smallest = int(counts.min())
    assert main(["evaluate", str(data), "--folds", "5000", "--n-estimators", "3", "--quiet",
                 "--model", "otreebagger"]) == 0
    captured = capsys.readouterr()
    warning = captured.err.strip().splitlines()
    assert len(warning) == 1
    assert warning[0].startswith("otreebagger evaluate: warning: --folds 5000 lowered to ")
    assert f"lowered to {smallest}:" in warning[0] and f"{smallest}-fold CV" in captured.out
    assert main(["evaluate", str(data), "--folds", "2", "--n-estimators", "3", "--quiet",
                 "--model", "otreebagger"]) == 0
    assert capsys.readouterr().err == ""


def test_registry_entry_is_a_new_model_for_fit_and_evaluate(tmp_path, capsys, monkeypatch):
    """Check that one entry in the CLI's model registry makes a model available to fit --model and evaluate."""
    from ensemble import OTreeBagger
    from ensemble.cli import _main as _cli

    entry = _cli.ModelEntry("single-tree groups (B={n_estimators})",
                            lambda args: OTreeBagger(group_size=1, n_estimators=args.n_estimators, random_state=0))
    monkeypatch.setitem(_cli.MODELS, "single", entry)
    data = _write_csv(tmp_path / "d.csv", n=90)
    assert main(["fit", str(data), "--model", "single", "-o", str(tmp_path / "m.skops"), "--n-estimators", "2",
                 "--group-size", "1"]) == 0
    assert "fitted single-tree groups (B=2)" in capsys.readouterr().out
    assert load_model_file(tmp_path / "m.skops")["model"].group_size == 1
    assert main(["evaluate", str(data), "--folds", "2", "--n-estimators", "3", "--quiet", "--model", "single",
                 "otreebagger"]) == 0
    assert "single-tree groups (B=3)" in capsys.readouterr().out


def test_console_script_help_for_every_command():
    """Check that the installed console script answers --help for the program and each command."""
    exe = shutil.which("otreebagger")
    cmd = [exe] if exe else [sys.executable, "-m", "ensemble.cli"]
    for sub in ([], ["demo"], ["evaluate"], ["fit"], ["predict"]):
        res = subprocess.run(cmd + sub + ["--help"], capture_output=True, text=True, timeout=60)
        assert res.returncode == 0
        assert "usage: otreebagger" in res.stdout
    for module in ("ensemble", "ensemble.cli"):
        res = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and "usage: otreebagger" in res.stdout


def test_oversized_partition_adapts_with_one_warning_or_names_a_measured_setting(tmp_path, capsys):
    """Check that a group past the region budget is made smaller with one warning line, or (--on-budget raise)
    ends as one error line naming a smaller setting measured to fit."""
    data = _write_csv(tmp_path / "d.csv", n=200)
    argv = ["fit", str(data), "-o", str(tmp_path / "m.skops"), "--n-estimators", "3", "--max-regions", "12"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "warning:" in err and "--max-regions=12" in err
    assert "--group-size 3 -> 1" in err
    assert "fitted OTreeBagger (M=3) (groups of 1 kept) on 200 samples" in captured.out
    assert main(argv[:-2]) == 0 and "fitted OTreeBagger (M=3) on 200 samples" in capsys.readouterr().out
    for baseline in ("treebagger", "bagged"):  # trees voting alone: no group was made smaller
        assert main(argv[:-2] + ["--model", baseline]) == 0 and "kept)" not in capsys.readouterr().out
    assert main(argv + ["--on-budget", "raise"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--max-regions=12" in err
    assert "Measured on this group: --group-size 3 -> 1" in err and "fits (" in err


def test_budget_categorical_and_verbose_options(tmp_path, capsys):
    """Check --max-edges, --categorical by name or index, --monotone and --verbose on fit."""
    data = _write_csv(tmp_path / "d.csv", n=120)
    out = tmp_path / "m.skops"
    assert main(["fit", str(data), "-o", str(out), "--n-estimators", "3", "--categorical", "b",
                 "--monotone", "a=+1", "--max-edges", "100000", "--verbose"]) == 0
    captured = capsys.readouterr()
    assert "OTreeBagger groups" in captured.err
    model = load_model_file(out)["model"]
    assert model.categorical_features == [1] and model.monotonic_cst == [1, 0] and model.relabel_params == {"max_edges": 100000}
    assert model.is_monotone()
    for bad, message in ((["--categorical", "zz"], "--categorical: 'zz' is not a feature column"),
                         (["--monotone", "a=up"], "--monotone: 'a=up' is not NAME=+1 or NAME=-1"),
                         (["--max-edges", "0"], "--max-edges must be a positive integer")):
        assert main(["fit", str(data), "-o", str(out), "--n-estimators", "3"] + bad) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err


def test_projection_and_residual_axes_options_reach_the_model(tmp_path, capsys):
    """Check that --projection and --residual-axes reach OTreeBagger, and a bad choice is one line, exit 2."""
    data = _write_csv(tmp_path / "d.csv", n=120)
    out = tmp_path / "m.skops"
    assert main(["fit", str(data), "-o", str(out), "--n-estimators", "6", "--projection", "additive",
                 "--residual-axes", "features"]) == 0
    model = load_model_file(out)["model"]
    assert model.projection == "additive" and model.space_params_["residual_axes"] == model.residual_axes_ == "features"
    # The class follows the product of the two features, an interaction: beside the score, the residual
    # tree puts features on axes of their own (with PLS there would be none).
    assert all(group.space.additive is not None and group.space.kept.shape[0] >= 1 for group in model.groups_)
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["fit", str(data), "-o", str(out), "--residual-axes", "trees"])
    assert stop.value.code == 2
    assert "--residual-axes: invalid choice: 'trees'" in _one_error_line(capsys)
    assert main(["fit", str(data), "-o", str(out), "--n-estimators", "6", "--projection", "additive",
                 "--score-model", "kernel"]) == 0
    model = load_model_file(out)["model"]
    assert model.space_params_["score_model"] == model.score_model_ == "kernel"
    assert all(isinstance(group.space.additive, KernelScore) for group in model.groups_)
    # A kernel score has no certified direction: refused under --monotone, one line naming the options.
    capsys.readouterr()
    assert main(["fit", str(data), "-o", str(out), "--n-estimators", "3", "--projection", "additive",
                 "--score-model", "kernel", "--monotone", "a=+1"]) == 2
    err = _one_error_line(capsys)
    assert "--score-model='kernel' cannot follow --monotone" in err


# A forest on a monotone index is certified pointwise only, and says so; the summary is what is tested here.
@pytest.mark.filterwarnings("ignore:.*certified pointwise only.*:UserWarning")
def test_fit_summary_says_whether_a_constrained_model_is_monotone(tmp_path, capsys):
    """Check fit's summary line certifies a constrained model and names the features a forest's index combines."""
    data = _write_csv(tmp_path / "d.csv", n=200)
    out = tmp_path / "m.skops"
    assert main(["fit", str(data), "-o", str(out), "--model", "forest", "--monotone", "a=+1,b=-1"]) == 0
    line = capsys.readouterr().out
    model = load_model_file(out)["model"]
    assert "monotone: True" in line and model.is_monotone()
    assert ("monotone index of a, b" in line) == (model.space_ is not None)
    assert main(["fit", str(data), "-o", str(out), "--model", "forest"]) == 0
    assert "monotone" not in capsys.readouterr().out


def test_max_depth_defaults_to_each_models_own():
    """Check that without --max-depth every model keeps its own default depth, and that it sets them all."""
    from ensemble import ConsistentForestClassifier, OTreeBagger
    from ensemble.cli._main import MODELS, _parser

    defaults = {"otreebagger": OTreeBagger().max_depth, "forest": ConsistentForestClassifier().max_depth,
                "treebagger": None, "bagged": None, "boosting": None}
    args = _parser().parse_args(["fit", "d.csv", "-o", "m.skops"])
    assert {name: entry.build(args).max_depth for name, entry in MODELS.items()} == defaults
    args = _parser().parse_args(["fit", "d.csv", "-o", "m.skops", "--max-depth", "5"])
    assert {entry.build(args).max_depth for entry in MODELS.values()} == {5}


def test_forest_model_in_fit_and_evaluate_where_otreebagger_cannot_run(tmp_path, capsys, monkeypatch):
    """Check --model forest in fit, and that evaluate still compares the forest when OTreeBagger stops."""
    from ensemble import OTreeBagger
    from ensemble.cli import _main as _cli

    data = _write_csv(tmp_path / "d.csv", n=90)
    model = tmp_path / "forest.skops"
    assert main(["fit", str(data), "--model", "forest", "-o", str(model)]) == 0
    assert "fitted Certified forest (auto B)" in capsys.readouterr().out
    assert type(load_model_file(model)["model"]).__name__ == "ConsistentForestClassifier"
    # --max-regions is OTreeBagger's only (refused beside the forest): here OTreeBagger's own budget is 1.
    entry = _cli.ModelEntry("OTreeBagger (M={group_size})",
                            lambda args: OTreeBagger(n_estimators=6, relabel_params={'max_regions': 1, 'on_budget': "raise"}))
    monkeypatch.setitem(_cli.MODELS, "otreebagger", entry)
    code = main(["evaluate", str(data), "--folds", "3", "--quiet", "--model", "otreebagger", "forest"])
    out = capsys.readouterr().out
    assert code == 0
    assert "OTreeBagger (M=3) could not run: " in out and "--max-regions" in out
    table = out.split("OTreeBagger (M=3) could not run")[0]
    assert "Certified forest (auto B)" in table and "OTreeBagger" not in table


def test_predict_writes_probabilities_and_kept_columns_and_ignores_unused_ones(tmp_path, capsys):
    """Check --proba (one column per class, the model's probabilities), --keep (passed through first)
    and that columns the model does not use are ignored with one note line."""
    data = _write_csv(tmp_path / "d.csv", n=60, labels=["poor", "fair", "good"])
    model_path = tmp_path / "m.skops"
    assert main(["fit", str(data), "--classes", "poor,fair,good", "-o", str(model_path),
                 "--n-estimators", "6"]) == 0
    rows = list(csv.reader(open(data)))
    new = tmp_path / "new.csv"
    with open(new, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "b", "comment", "a"])
        writer.writerows([[f"c{i}", r[1], "text, with a comma", r[0]] for i, r in enumerate(rows[1:])])
    capsys.readouterr()
    out = tmp_path / "p.csv"
    assert main(["predict", str(model_path), str(new), "-o", str(out), "--proba", "--keep", "id"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["otreebagger predict: note: ignoring the columns the model does not use: 'comment'"]
    written = list(csv.reader(open(out)))
    assert written[0] == ["id", "prediction", "proba_poor", "proba_fair", "proba_good"]
    model = load_model_file(model_path)["model"]
    X = np.array([[float(r[0]), float(r[1])] for r in rows[1:]])
    assert [r[0] for r in written[1:]] == [f"c{i}" for i in range(60)]
    assert [r[1] for r in written[1:]] == model.predict(_named(model, X)).tolist()
    np.testing.assert_array_equal(np.array([r[2:] for r in written[1:]], dtype=float),
                                  model.predict_proba(_named(model, X)))
    # Without the options: the predictions alone, and the same note.
    assert main(["predict", str(model_path), str(new), "-o", str(out)]) == 0
    assert "does not use: 'id', 'comment'" in capsys.readouterr().err
    assert list(csv.reader(open(out)))[0] == ["prediction"]


def _registry_args(name, extra=()):
    from ensemble.cli._main import _parser, _resolve_features

    args = _parser().parse_args(["fit", "d.csv", "-o", "m.skops", "--model", name, "--n-estimators", "6", *extra])
    _resolve_features(args, ["a", "b"])
    return args


@pytest.mark.parametrize("extra", [(), ("--categorical", "b"), ("--monotone", "a=+1")], ids=["plain", "cat", "mono"])
@pytest.mark.parametrize("name", ["otreebagger", "forest", "treebagger", "bagged", "boosting"])
def test_every_registered_model_round_trips_through_its_file(tmp_path, name, extra):
    """Check that every model the command line can save loads from its skops file with trusted types only
    and predicts identically (classes and probabilities)."""
    import warnings

    import skops.io as sio

    from ensemble.cli._main import MODELS, _build
    from ensemble.model_files._model_file import trusted_types

    assert set(MODELS) == {"otreebagger", "forest", "treebagger", "bagged", "boosting"}  # a new model: add it above
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(120, 2))
    y = np.searchsorted([0.6, 1.2], X.sum(axis=1) + rng.normal(0, 0.1, 120)) + 1
    _, model = _build(name, _registry_args(name, extra))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # options a baseline ignores may warn
        model.fit(X, y)
    path = tmp_path / "m.skops"
    save_model_file(path, model, target="y", features=["a", "b"])
    assert set(sio.get_untrusted_types(file=path)) <= set(trusted_types())
    loaded = load_model_file(path)
    assert loaded["target"] == "y" and loaded["features"] == ["a", "b"]
    back = loaded["model"]
    assert type(back) is type(model) and back is not model
    grid = np.random.RandomState(2).uniform(-0.1, 1.1, size=(500, 2))
    np.testing.assert_array_equal(back.predict(grid), model.predict(grid))
    np.testing.assert_array_equal(back.predict_proba(grid), model.predict_proba(grid))
    assert back.is_consistent() == model.is_consistent()


def test_a_pickle_is_loaded_only_with_the_unsafe_flag(tmp_path, capsys):
    """Check that a pickled model (an older version's file) is refused without --unsafe-pickle and used with it."""
    data = _write_csv(tmp_path / "d.csv")
    assert main(["fit", str(data), "-o", str(tmp_path / "m.skops"), "--n-estimators", "3"]) == 0
    saved = load_model_file(tmp_path / "m.skops")
    joblib.dump(saved, tmp_path / "old.joblib")
    argv = ["predict", str(tmp_path / "old.joblib"), str(data), "-o", str(tmp_path / "p.csv")]
    capsys.readouterr()
    assert main(argv) == 2
    assert "pass --unsafe-pickle" in _one_error_line(capsys)
    assert not (tmp_path / "p.csv").exists()
    assert main(argv + ["--unsafe-pickle"]) == 0
    assert main(["predict", str(tmp_path / "m.skops"), str(data), "-o", str(tmp_path / "q.csv")]) == 0
    assert open(tmp_path / "p.csv").read() == open(tmp_path / "q.csv").read()


def test_argument_errors_and_version_are_one_line(capsys):
    """Check that argparse's own errors are one line with exit status 2, and --version prints the version."""
    from importlib.metadata import PackageNotFoundError, version

    for argv, message in ((["fit"], "the following arguments are required: data, -o/--output"),
                          (["fit", "d.csv", "-o", "m", "--n-estimators", "z"], "invalid int value: 'z'"),
                          (["nosuch"], "invalid choice: 'nosuch'"),
                          # It named the estimators' random_state (scikit-learn's message) instead of the option.
                          (["fit", "d.csv", "-o", "m", "--seed", "-1"], "argument --seed: expected an integer from 0")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        line = _one_error_line(capsys)
        assert line.startswith("otreebagger") and message in line and line.endswith("--help')")
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    try:
        expected = version("otreebagger")
    except PackageNotFoundError:  # a source tree that is not installed
        expected = "unknown (not installed)"
    assert capsys.readouterr().out == f"otreebagger {expected}\n"


def test_quick_paths_import_nothing_heavy(tmp_path):
    """Check that --help, --version and errors found from the arguments do not import numpy, scikit-learn,
    numba, the estimators or skops (what makes them answer at once)."""
    heavy = ("numpy", "sklearn", "numba", "relabel", "trees", "skops", "ensemble.datasets", "ensemble.otreebagger._otreebagger")
    script = (
        "import sys, ensemble.cli._main as cli\n"
        "for argv in (['--help'], ['--version'], ['fit', '--help'], ['demo', '--n-estimators', '0'],\n"
        f"             ['fit', {str(tmp_path / 'no.csv')!r}, '-o', {str(tmp_path / 'm.skops')!r}],\n"
        f"             ['predict', {str(tmp_path / 'no.skops')!r}, 'x.csv', '-o', 'p.csv']):\n"
        "    try:\n"
        "        cli.main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=str(Path(__file__).resolve().parents[1]))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_predict_imports_no_graph_solver_or_plotting_library(files):
    """Check that otreebagger predict with a saved model loads neither networkx, the relabelling solvers
    (PuLP, OR-Tools), shapely's geometry users nor matplotlib: prediction needs none of them."""
    heavy = ("networkx", "pulp", "ortools", "matplotlib")
    out = Path(str(files["tmp"])) / "light.out.csv"
    script = (
        "import sys, ensemble.cli._main as cli\n"
        f"assert cli.main(['predict', {str(files['model'])!r}, {str(files['data'])!r}, '-o', {str(out)!r}]) == 0\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parents[1]))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert len(out.read_text().splitlines()) == 81


@pytest.mark.parametrize("name", ["nan", "empty_cell"])
def test_predict_reads_nan_and_empty_cells_as_missing_values(files, capsys, name):
    """Check that the default model predicts rows with a NaN or an empty cell (a missing value)."""
    out = Path(str(files["tmp"])) / f"{name}.out.csv"
    assert main(["predict", str(files["model"]), str(files[name]), "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3


def test_missing_cells_fit_every_model(tmp_path, capsys):
    """Check that empty or NA cells are missing values: the forest, OTreeBagger and boosting fit and predict."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(120, 2))
    y = np.digitize(X.sum(axis=1), [0.7, 1.3]) + 1
    path = tmp_path / "gaps.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "b", "y"])
        for i, ((a, b), c) in enumerate(zip(X, y, strict=True)):
            writer.writerow(["" if i % 7 == 0 else a, "NA" if i % 11 == 0 else b, c])
    otb, out = tmp_path / "o.skops", tmp_path / "p.csv"
    assert main(["fit", str(path), "--target", "y", "-o", str(otb)]) == 0
    assert "; consistent at the data's resolution;" in capsys.readouterr().out
    assert main(["predict", str(otb), str(path), "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 121
    model = tmp_path / "m.skops"
    if not SKLEARN_ROUTES_MISSING:  # the forest's default trees need scikit-learn 1.8 for NaN: one line says so
        assert main(["fit", str(path), "--target", "y", "--model", "forest", "-o", str(model)]) == 2
        assert "scikit-learn >= 1.8" in capsys.readouterr().err
        return
    assert main(["fit", str(path), "--target", "y", "--model", "forest", "-o", str(model)]) == 0
    assert main(["predict", str(model), str(path), "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 121
    assert main(["fit", str(path), "--target", "y", "--model", "boosting", "-o", str(model)]) == 0


# --------------------------------------------------------------------------- the Python defaults

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
_PYTHON_MODELS = {
    # What each --model is in Python: its estimator with the defaults, and these fixed parameters.
    "otreebagger": ("OTreeBagger", {}),
    "forest": ("ConsistentForestClassifier", {}),
    "treebagger": ("OTreeBagger", dict(relabel=False, vote="mode", criterion="gini", projection="none",
                                       max_depth=None)),
    "bagged": ("OTreeBagger", dict(relabel=False, projection="none", max_depth=None)),
    "boosting": ("ConsistentGradientBoostingClassifier", {}),
}


def _shared_sample(name, tmp_path, n=200):
    """The first ``n`` rows of a shuffled shared data set, written as a CSV file (the CLI's and Python's input)."""
    source = SHARED / f"{name}.csv"
    if not source.is_file():
        pytest.skip(f"shared data set {name} not found under {SHARED}")
    rows = list(csv.reader(open(source)))
    body = rows[1:]
    order = np.random.RandomState(0).permutation(len(body))[:n]
    path = tmp_path / f"{name}.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([rows[0]] + [body[i] for i in sorted(order)])
    return path


@pytest.mark.slow
@pytest.mark.parametrize("data", ["tae", "car", "LEV"])
def test_cli_models_equal_the_python_estimators_with_their_defaults(tmp_path, capsys, data):
    """Check that fit + predict give the predictions of the Python estimator with its own defaults (only the
    seed and number of trees the command passes), for every model: the command line passes only what is given,
    so car's one-hot columns are categorical for both ("auto")."""
    import warnings

    import ensemble
    from ensemble.cli._main import MODELS
    from ensemble.datasets import load_ordinal_csv

    assert set(_PYTHON_MODELS) == set(MODELS)
    path = _shared_sample(data, tmp_path)
    X, y = load_ordinal_csv(path, target="y")
    for name, (cls, fixed) in _PYTHON_MODELS.items():
        trees = [] if name == "boosting" else ["--n-estimators", "6"]
        model_path, out = tmp_path / f"{name}.skops", tmp_path / f"{name}.csv"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 6 trees of the forest may be uncertified: it warns, both ways
            assert main(["fit", str(path), "--model", name, "-o", str(model_path), "--seed", "0", *trees]) == 0
            assert main(["predict", str(model_path), str(path), "-o", str(out)]) == 0
            params = dict(fixed, random_state=0, **({} if name == "boosting" else {"n_estimators": 6}))
            python = getattr(ensemble, cls)(**params).fit(X, y)
        assert load_model_file(model_path)["model"].get_params() == python.get_params(), name
        cli = [int(r[0]) for r in list(csv.reader(open(out)))[1:]]
        assert cli == python.predict(X).tolist(), name
    capsys.readouterr()


def test_car_one_hot_columns_are_categorical_by_default(tmp_path, capsys):
    """Check that without --categorical the command line keeps the estimators' "auto": car's 21 one-hot
    columns are categorical (the fix of the front-door issue: it used to pass None, fusing them as continuous)."""
    path = _shared_sample("car", tmp_path, n=150)
    model_path = tmp_path / "m.skops"
    assert main(["fit", str(path), "-o", str(model_path), "--n-estimators", "3"]) == 0
    model = load_model_file(model_path)["model"]
    assert model.categorical_features == "auto" and model._categorical.all() and model._categorical.shape == (21,)


# --------------------------------------------------------------------------- options a model does not take


@pytest.mark.parametrize("argv, option, takers", [
    (["fit", "--model", "forest", "--group-size", "2"], "--group-size", "OTreeBagger only"),
    (["fit", "--model", "boosting", "--n-estimators", "10"], "--n-estimators",
     "otreebagger, forest, treebagger and bagged"),
    (["fit", "--model", "boosting", "--n-jobs", "2"], "--n-jobs", "otreebagger, forest, treebagger and bagged"),
    (["fit", "--model", "treebagger", "--monotone", "a=+1"], "--monotone", "otreebagger, forest and boosting"),
    (["fit", "--model", "bagged", "--monotone", "a=+1"], "--monotone", "otreebagger, forest and boosting"),
    *[(["fit", "--model", model, flag, value], flag, "OTreeBagger only")
      for model in ("treebagger", "forest")
      for flag, value in (("--max-regions", "10"), ("--max-edges", "10"), ("--on-budget", "raise"),
                          ("--projection", "pls"), ("--score-model", "kernel"), ("--residual-axes", "pls"))],
    (["evaluate", "--n-estimators", "6"], "--n-estimators", "otreebagger, forest, treebagger and bagged"),
    (["demo", "--group-size", "2", "--model", "otreebagger", "bagged"], "--group-size", "OTreeBagger only"),
])
def test_an_option_a_model_does_not_take_is_refused_in_one_line(files, capsys, argv, option, takers):
    """Check that an option given with a model that ignores it is one stderr line naming the option and the
    models it applies to, exit status 2, no traceback (and before any data is read)."""
    command, rest = argv[0], argv[1:]
    data = [] if command == "demo" else [str(files["data"])]
    output = ["-o", str(files["tmp"] / "never.skops")] if command == "fit" else []
    assert main([command, *data, *rest, *output]) == 2
    line = _one_error_line(capsys)
    assert re.match(rf"otreebagger {command}: error: {re.escape(option)} applies to {re.escape(takers)}, not to ",
                    line), line
    assert not (files["tmp"] / "never.skops").exists()


@pytest.mark.parametrize("name, extra", [
    ("forest", ["--n-estimators", "7"]), ("forest", ["--monotone", "a=+1"]), ("boosting", ["--monotone", "a=+1"]),
    ("treebagger", ["--n-jobs", "1", "--max-depth", "3"]), ("otreebagger", ["--group-size", "2", "--n-estimators", "4"]),
])
def test_an_option_a_model_takes_reaches_it(tmp_path, capsys, name, extra):
    """Check that options are honoured by the models that take them (the forest's --n-estimators among them)."""
    import warnings

    data = _write_csv(tmp_path / "d.csv", n=120)
    out = tmp_path / "m.skops"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["fit", str(data), "--model", name, "-o", str(out), *extra]) == 0
    params = load_model_file(out)["model"].get_params()
    expected = {"--n-estimators": "n_estimators", "--monotone": "monotonic_cst", "--n-jobs": "n_jobs",
                "--max-depth": "max_depth", "--group-size": "group_size"}
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        got = params[expected[flag]]
        assert got == ([1, 0] if flag == "--monotone" else int(value)), (flag, got)
    if extra[:2] == ["--n-estimators", "7"]:
        assert load_model_file(out)["model"].n_estimators_ == 7


def test_help_marks_the_options_of_some_models_only(capsys):
    """Check that --help says in words which models an option applies to."""
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--group-size", "--max-regions", "--max-edges", "--on-budget", "--projection", "--score-model",
                 "--residual-axes"):
        assert re.search(rf"{flag} \S+ [^-]*\(OTreeBagger only\)", text), flag
    assert "income=+1,debt=-1 (otreebagger, forest and boosting)" in text
    assert "number of trees B (otreebagger, forest, treebagger and bagged)" in text


def _text_csv(path, n=120, seed=0):
    """Two numeric features and a text category column 'colour' that moves the class."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    colour = rng.choice(["red", "green", "blue"], size=n)
    y = np.digitize(X.sum(axis=1) + (colour == "red"), [0.8, 1.6]) + 1
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "colour", "b", "y"])
        writer.writerows([[repr(float(a)), c, repr(float(b)), int(t)] for (a, b), c, t in zip(X, colour, y, strict=True)])
    return path


@pytest.mark.parametrize("declare", [[], ["--categorical", "colour"]], ids=["auto", "declared"])
@pytest.mark.parametrize("name", ["otreebagger", "forest", "boosting"])
def test_text_feature_columns_are_encoded_as_the_python_api_does(tmp_path, capsys, name, declare):
    """Check that a text column is accepted (by default, as "auto" does, or declared with --categorical), that
    predict reads it as text, and that the predictions are the Python estimator's on a DataFrame."""
    import warnings

    import pandas as pd

    import ensemble

    path = _text_csv(tmp_path / "t.csv")
    model_path, out = tmp_path / "m.skops", tmp_path / "p.csv"
    trees = [] if name == "boosting" else ["--n-estimators", "6"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["fit", str(path), "--model", name, "-o", str(model_path), *trees, *declare]) == 0
        assert main(["predict", str(model_path), str(path), "-o", str(out)]) == 0
        frame = pd.read_csv(path)
        cls = _PYTHON_MODELS[name][0]
        params = dict(random_state=0, **({} if name == "boosting" else {"n_estimators": 6}))
        if declare:
            params["categorical_features"] = [1]
        python = getattr(ensemble, cls)(**params).fit(frame[["a", "colour", "b"]], frame["y"])
    assert [int(r[0]) for r in list(csv.reader(open(out)))[1:]] == python.predict(frame[["a", "colour", "b"]]).tolist()
    assert list(load_model_file(model_path)["model"].feature_names_in_) == ["a", "colour", "b"]


def test_a_number_column_with_a_word_is_still_an_error_unless_declared(files, capsys):
    """Check that a column of numbers with one word in it (a typo) stays a one-line error, and is a text
    category column when --categorical names it."""
    bad = str(files["bad"])
    assert main(["fit", bad, "-o", str(files["tmp"] / "t.skops"), "--n-estimators", "3"]) == 2
    assert "is not numeric: line 5 holds 'high'" in _one_error_line(capsys)
    assert main(["fit", bad, "-o", str(files["tmp"] / "t.skops"), "--n-estimators", "3", "--categorical", "a"]) == 0
    # A model fitted on numbers reads the column as numbers: predict has no --categorical to advise.
    numeric = files["tmp"] / "n.skops"
    assert main(["fit", str(files["data"]), "-o", str(numeric), "--n-estimators", "3"]) == 0
    capsys.readouterr()
    assert main(["predict", str(numeric), bad, "-o", str(files["tmp"] / "p.csv")]) == 2
    line = _one_error_line(capsys)
    assert "the model reads that column as numbers" in line and "--categorical" not in line, line


def test_the_script_runs_main_then_freezes_the_collector_for_a_quick_exit(capsys):
    """Check that the installed script is ensemble.cli._main.run, that it returns main's status, and that it
    leaves the garbage collector frozen (Python's last collection then skips the libraries' objects)."""
    import gc

    from ensemble.cli._main import run

    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert 'otreebagger = "ensemble.cli._main:run"' in pyproject
    gc.unfreeze()
    try:
        args = ["fit", "no-such-file.csv", "-o", "model.skops"]
        assert run(args) == main(args) == 2
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert "no-such-file.csv" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("options", [["--model", "otreebagger", "--n-estimators", "6"], ["--model", "treebagger"],
                                     ["--model", "forest", "--monotone", "a=+1,b=+1"],
                                     ["--model", "boosting"]])
def test_fit_prints_the_notion_the_saved_model_proves(tmp_path, capsys, options):
    """Check fit's verdict names the strongest notion the saved model's certificate proves, in the library's words."""
    from ensemble.certificates._certificates import VERDICTS, certified_notion

    data, model_path = _write_csv(tmp_path / "train.csv"), tmp_path / "m.skops"
    assert main(["fit", str(data), "-o", str(model_path), *options]) == 0
    out = capsys.readouterr().out
    model = load_model_file(model_path)["model"]
    notion = certified_notion(model)
    assert f"; {VERDICTS[notion]}" in out and "consistent: " not in out


def test_a_semicolon_file_gets_a_delimiter_hint_and_reads_with_delimiter(tmp_path, capsys):
    """Check a ;-separated file fails with one line naming --delimiter, and fit, predict and audit read it with it."""
    data = _write_csv(tmp_path / "train.csv")
    semi = tmp_path / "semi.csv"
    semi.write_text(data.read_text().replace(",", ";"))
    model = tmp_path / "m.skops"
    assert main(["fit", str(semi), "-o", str(model)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--delimiter ';'" in err
    assert main(["fit", str(semi), "--delimiter", ";", "-o", str(model), "--n-estimators", "6"]) == 0
    assert main(["predict", str(model), str(semi), "--delimiter", ";", "-o", str(tmp_path / "p.csv")]) == 0
    assert len((tmp_path / "p.csv").read_text().splitlines()) == 81
    assert main(["audit", str(model), str(semi), "--delimiter", ";", "--time-limit", "20"]) in (0, 1, 3)
    capsys.readouterr()
    assert main(["audit", str(model), str(semi), "--delimiter", ";", "--time-limit", "0"]) == 2
    assert "--time-limit must be a positive number" in capsys.readouterr().err  # the option, not time_limit
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["fit", str(semi), "--delimiter", ";;", "-o", str(model)])
    assert stop.value.code == 2 and "one character" in capsys.readouterr().err
    tab = tmp_path / "tab.csv"  # the hint's own spelling, '\t', is taken as a tab, and so is "tab"
    tab.write_text(data.read_text().replace(",", "\t"))
    assert main(["fit", str(tab), "-o", str(model)]) == 2
    assert "--delimiter '\\t'" in capsys.readouterr().err
    for spelling in ("\\t", "tab", "\t"):
        assert main(["fit", str(tab), "--delimiter", spelling, "-o", str(model), "--n-estimators", "6"]) == 0


def test_an_empty_feature_column_and_a_word_among_numbers_are_one_line(tmp_path, capsys):
    """Check an all-missing feature column is refused (it was fitted silently) and a word in a number column
    points to --categorical."""
    rows = ["a,b,y"] + [f"{i},,{1 + i % 2}" for i in range(12)]
    (tmp_path / "empty.csv").write_text("\n".join(rows) + "\n")
    assert main(["fit", str(tmp_path / "empty.csv"), "-o", str(tmp_path / "m.skops")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'b' has no value" in err
    data = _write_csv(tmp_path / "word.csv", bad_feature=True)
    assert main(["fit", str(data), "-o", str(tmp_path / "m.skops")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--categorical a" in err


def test_a_broken_lightgbm_file_is_one_line_without_lightgbms_own(tmp_path):
    """Check LightGBM's native "[Fatal]" line does not precede the command line's error on a broken model file."""
    pytest.importorskip("lightgbm")
    data = _write_csv(tmp_path / "train.csv")
    broken = tmp_path / "model.txt"
    broken.write_text("tree\nversion=v4\nnum_class=1\ngarbage\n")
    done = subprocess.run([sys.executable, "-m", "ensemble.cli", "audit", str(broken), str(data)],
                          capture_output=True, text=True, timeout=120, cwd=str(Path(__file__).resolve().parents[1]))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "[Fatal]" not in done.stderr
    assert "LightGBM cannot load it" in done.stderr


def test_audit_takes_categorical_columns_and_largest(tmp_path, capsys):
    """Check otreebagger audit --categorical keeps witnesses off the named columns, refuses an unknown name in one
    line, and --largest searches on."""
    import pandas as pd
    import skops.io as sio
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.RandomState(0)
    X = rng.rand(300, 2)
    category = rng.randint(0, 3, 300)
    frame = pd.DataFrame(np.column_stack([X, np.eye(3)[category]]), columns=["size", "age", "red", "green", "blue"])
    y = np.clip(np.round(2 * X[:, 0]) + 3 * (category == 2), 0, 5).astype(int)
    sio.dump(RandomForestClassifier(30, random_state=0).fit(frame, y), tmp_path / "rf.skops")
    frame.assign(y=y).to_csv(tmp_path / "d.csv", index=False)
    argv = ["audit", str(tmp_path / "rf.skops"), str(tmp_path / "d.csv"), "--time-limit", "30"]
    assert main(argv) == 1
    assert "the first witness found" in capsys.readouterr().out
    assert main([*argv, "--categorical", "red,green,blue", "--largest"]) in (0, 1)
    out = capsys.readouterr().out
    moved = [line for line in out.splitlines() if line.startswith("  class")]
    for line in moved:
        assert not any(line.split(" at ")[1].startswith(c) for c in ("red=", "green=", "blue="))
    assert main([*argv, "--categorical", "purple"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "purple" in err


def test_audit_reads_the_missing_cells_fit_and_predict_read(tmp_path, capsys):
    """Check otreebagger audit proves a forest fitted on a CSV with empty and NA cells, as fit and predict take the
    file (it stopped at the first missing cell, exit 2), and that a model the audit cannot read with missing
    values (OTreeBagger) gets one line on stderr and exit 2."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 2)).round(3)
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [0.5, 1.0]) + 1
    rows = [f"{'' if i % 11 == 0 else a},{'NA' if i % 13 == 0 else b},{c}" for i, (a, b, c) in enumerate(zip(*X.T, y))]
    path = tmp_path / "gaps.csv"
    path.write_text("a,b,y\n" + "\n".join(rows) + "\n")
    for model, status in (("forest", 0), ("otreebagger", 2)):
        saved = str(tmp_path / f"{model}.skops")
        assert main(["fit", str(path), "--model", model, "--n-estimators", "12", "-o", saved]) == 0
        capsys.readouterr()
        assert main(["audit", saved, str(path), "--time-limit", "30"]) == status
        out, err = capsys.readouterr()
        if status == 0:
            assert out.startswith("proved (data)"), out
        else:
            assert err.strip().splitlines() == [err.strip()] and "missing values" in err


def test_fit_names_the_columns_its_verdict_leaves_out_and_categorical_none_keeps_them(tmp_path, capsys):
    """Check that fit's "consistent" line names the 0/1 column the default reads as a category (its flips are
    not covered), that --categorical none makes it continuous (and covered), and that the help says which
    two-valued columns are categories (it said every one; a column of 1 and 2 is continuous)."""
    rng = np.random.RandomState(0)
    x0, flag = rng.uniform(size=300).round(3), rng.randint(0, 2, 300)
    path = tmp_path / "flag.csv"
    path.write_text("x0,flag,y\n" + "".join(f"{a},{b},{1 + (a > 0.5) + b}\n" for a, b in zip(x0, flag)))
    for extra, categorical in (([], [1]), (["--categorical", "none"], [])):
        saved = tmp_path / "m.skops"
        assert main(["fit", str(path), "--model", "forest", "--n-estimators", "12", "-o", str(saved), *extra]) == 0
        out = capsys.readouterr().out
        assert ("(not across categories: flag)" in out) == bool(categorical), out
        assert list(load_model_file(saved)["model"].categorical_features_) == categorical
    # A baseline's "not certified" carries no qualifier (it read as a guarantee for the other moves).
    assert main(["fit", str(path), "--model", "treebagger", "--n-estimators", "6", "-o", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "not certified; saved" in out and "categories" not in out, out
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    assert "values 0 and 1" in " ".join(capsys.readouterr().out.split())


def test_fewer_trees_than_the_default_group_size_names_both_options(tmp_path, capsys):
    """Check that --n-estimators 2 alone (below the default group of 3) is one line naming --n-estimators and the
    default of --group-size the user never passed, exit 2."""
    path = tmp_path / "d.csv"
    path.write_text("a,y\n" + "".join(f"{i / 40},{1 + i // 14}\n" for i in range(40)))
    assert main(["fit", str(path), "--n-estimators", "2", "-o", str(tmp_path / "m.skops")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "--n-estimators=2" in err and "(3 by default)" in err, err


def test_a_models_warning_is_one_line_in_the_command_lines_words(tmp_path, capsys):
    """Check a library warning during fit prints once as 'otreebagger fit: warning: ...', without Python's
    'path:line: UserWarning:' form pointing into scikit-learn."""
    path = tmp_path / "tiny.csv"
    path.write_text("a,y\n" + "".join(f"{i % 2},{1 + i % 4 // 2}\n" for i in range(16)))  # a cannot tell the classes
    assert main(["fit", str(path), "--model", "forest", "-o", str(tmp_path / "m.skops")]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and all(line.startswith("otreebagger fit: warning: ") for line in lines), err
    assert "UserWarning" not in err and "single class" in err and len(set(lines)) == len(lines)


@pytest.mark.parametrize("model", ["forest", "otreebagger", "boosting"])
def test_audit_reads_text_columns_as_fit_coded_them(tmp_path, capsys, model):
    """Check otreebagger audit proves a model fitted on a CSV with a text column, from that same file (it refused
    the column as not numeric, exit 2, and its advice --categorical did not help), and audit() takes the
    DataFrame itself (it raised "could not convert string to float")."""
    import pandas as pd

    from ensemble import audit, load_model

    rng = np.random.RandomState(0)
    frame = pd.DataFrame({"inc": rng.uniform(size=200).round(2), "region": rng.choice(["n", "s", "e"], 200)})
    y = np.clip((frame.inc * 4 + (frame.region == "s") * 1.5).astype(int), 0, 4) + 1
    path = tmp_path / "text.csv"
    frame.assign(y=y).to_csv(path, index=False)
    saved = str(tmp_path / f"{model}.skops")
    size = [] if model == "boosting" else ["--n-estimators", "9"]
    assert main(["fit", str(path), "--model", model, *size, "-o", saved]) == 0
    capsys.readouterr()
    assert main(["audit", saved, str(path), "--time-limit", "30"]) == 0
    assert capsys.readouterr().out.startswith("proved (data)")
    fitted = load_model(saved)
    assert audit(fitted, frame, time_limit=30).status == "proved"


def test_a_target_of_fractions_names_the_column_and_the_way_to_read_them(tmp_path, capsys):
    """Check that a target holding 1.5 gets one line naming the column, the value and --classes (it was
    scikit-learn's "Unknown label type: continuous"), and that --classes reads such values as classes."""
    path = tmp_path / "half.csv"
    path.write_text("a,b,y\n1,2,1.5\n3,4,2\n5,6,1\n7,8,2\n2,1,1.5\n4,3,1\n")
    assert main(["fit", str(path), "-o", str(tmp_path / "m.skops")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "'y' holds 1.5" in err and "--classes" in err
    assert main(["fit", str(path), "-o", str(tmp_path / "m.skops"), "--classes", "1,1.5,2", "--n-estimators", "3"]) == 0
