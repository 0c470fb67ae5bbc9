"""Tests for ensemble.datasets: synthetic sets, the ordinal CSV loader and benchmark loaders."""

import csv
import math
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest
from scipy.stats import norm

from ensemble import datasets
from ensemble.datasets import (
    list_benchmarks,
    load_benchmark,
    load_ordinal_csv,
    make_synthetic_i,
    make_synthetic_ii,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
needs_shared = pytest.mark.skipif(
    not (SHARED / "LEV.csv").is_file(), reason="the team's shared/datasets folder is absent"
)


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


# ---------------------------------------------------------------- syntheticI


def _synthetic_i_label(x1, x2, eps):
    """The paper's rule written out: the smallest r with b_{r-1} < z <= b_r."""
    bounds = [-math.inf, -1.0, -0.1, 0.25, 1.0, math.inf]
    z = 10 * (x1 - 0.5) * (x2 - 0.5) + eps
    for r in range(1, 6):
        if bounds[r - 1] < z <= bounds[r]:
            return r
    raise AssertionError("unreachable")


def test_synthetic_i_shape_range_and_reproducibility():
    """Check that syntheticI has the paper's shape, classes 1..5, and is seed-reproducible."""
    X, y = make_synthetic_i(random_state=0)
    assert X.shape == (1000, 2) and y.shape == (1000,)
    assert X.dtype == np.float64 and y.dtype == np.int64
    assert X.min() >= 0.0 and X.max() <= 1.0
    assert set(np.unique(y)) == {1, 2, 3, 4, 5}
    X2, y2 = make_synthetic_i(random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = make_synthetic_i(random_state=1)
    assert not np.array_equal(X, X3)


def test_synthetic_i_noise_free_labels_follow_the_rule():
    """Check that with noise=0 every label equals the paper's threshold rule applied to X."""
    X, y = make_synthetic_i(500, noise=0.0, random_state=3)
    expected = [_synthetic_i_label(a, b, 0.0) for a, b in X]
    np.testing.assert_array_equal(y, expected)


def test_synthetic_i_noise_is_gaussian_with_the_given_scale():
    """Check that the labels are the rule applied to X plus N(0, noise^2) drawn after X."""
    rng = np.random.RandomState(11)
    X, y = make_synthetic_i(300, noise=0.3, random_state=11)
    X_ref = rng.uniform(0.0, 1.0, size=(300, 2))
    eps = rng.normal(0.0, 0.3, size=300)
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(y, [_synthetic_i_label(a, b, e) for (a, b), e in zip(X, eps)])


def test_synthetic_i_class_proportions_match_numerical_integration():
    """Check that class shares match the probabilities integrated on a grid with the normal CDF."""
    m = 400
    grid = (np.arange(m) + 0.5) / m
    s = (10 * np.multiply.outer(grid - 0.5, grid - 0.5)).ravel()
    bounds = np.array([-np.inf, -1.0, -0.1, 0.25, 1.0, np.inf])
    cdf = norm.cdf((bounds[None, :] - s[:, None]) / 0.125)
    expected = np.diff(cdf, axis=1).mean(axis=0)
    n = 40_000
    _, y = make_synthetic_i(n, random_state=5)
    observed = np.bincount(y, minlength=6)[1:] / n
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(observed - expected) < 5 * se + 1e-3), (observed, expected)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, "n_samples must be a positive integer"),
        ({"n_samples": 2.5}, "n_samples must be a positive integer"),
        ({"n_samples": True}, "n_samples must be a positive integer"),
        ({"noise": -0.1}, "noise must be a finite non-negative number"),
        ({"noise": float("nan")}, "noise must be a finite non-negative number"),
        ({"noise": "high"}, "noise must be a real number"),
    ],
)
def test_synthetic_i_rejects_bad_parameters(kwargs, match):
    """Check that bad n_samples or noise give a ValueError naming the parameter."""
    with pytest.raises(ValueError, match=match):
        make_synthetic_i(**kwargs)


# ---------------------------------------------------------------- syntheticII


def test_synthetic_ii_points_in_unit_disc_with_ring_labels():
    """Check that syntheticII lies in the unit disc and y = ceil(3 r) with classes 1..3."""
    X, y = make_synthetic_ii(random_state=0)
    assert X.shape == (1000, 2) and y.dtype == np.int64
    r = np.sqrt(X[:, 0] ** 2 + X[:, 1] ** 2)
    assert r.max() <= 1.0
    np.testing.assert_array_equal(y, np.maximum(np.ceil(3 * r), 1))
    assert set(np.unique(y)) == {1, 2, 3}
    X2, y2 = make_synthetic_ii(random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


@pytest.mark.parametrize("radius, k", [(1.0, 3), (4 / 3, 4)])
def test_synthetic_ii_is_uniform_in_area(radius, k):
    """Check that ring shares equal ring areas (2k-1)/(3 radius)^2 and quadrants get 1/4 each."""
    n = 40_000
    X, y = make_synthetic_ii(n, radius=radius, random_state=2)
    assert np.hypot(X[:, 0], X[:, 1]).max() <= radius
    edges = np.minimum(np.arange(k + 1) / 3, radius)
    expected = np.diff(edges**2) / radius**2
    observed = np.bincount(y, minlength=k + 1)[1:] / n
    assert observed.shape == expected.shape
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(observed - expected) < 5 * se), (observed, expected)
    quadrant = (X[:, 0] > 0).astype(int) * 2 + (X[:, 1] > 0)
    shares = np.bincount(quadrant, minlength=4) / n
    assert np.all(np.abs(shares - 0.25) < 5 * np.sqrt(0.25 * 0.75 / n))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": -3}, "n_samples must be a positive integer"),
        ({"radius": 0.0}, "radius must be a finite positive number"),
        ({"radius": float("inf")}, "radius must be a finite positive number"),
    ],
)
def test_synthetic_ii_rejects_bad_parameters(kwargs, match):
    """Check that bad n_samples or radius give a ValueError naming the parameter."""
    with pytest.raises(ValueError, match=match):
        make_synthetic_ii(**kwargs)


# ---------------------------------------------------------------- load_ordinal_csv


def test_csv_round_trip_numeric(tmp_path):
    """Check that numbers written with the csv module come back exactly, integer y as int64."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 3))
    y = rng.integers(1, 5, size=25)
    path = _write_csv(
        tmp_path / "d.csv",
        ["a", "y", "b c"],
        [[repr(float(r[0])), t, repr(float(r[1]))] for r, t in zip(X, y)],
    )
    got_X, got_y, names = load_ordinal_csv(path, return_feature_names=True)
    np.testing.assert_array_equal(got_X, X[:, :2])
    np.testing.assert_array_equal(got_y, y)
    assert got_y.dtype == np.int64
    assert names.tolist() == ["a", "b c"]


def test_csv_round_trip_string_labels_in_given_order(tmp_path):
    """Check that string targets load as strings and classes validates and keeps them."""
    rows = [[1.0, "low"], [2.0, "high"], [3.5, "mid"], [4.0, "low"]]
    path = _write_csv(tmp_path / "s.csv", ["x", "grade"], rows)
    X, y = load_ordinal_csv(path, target="grade")
    assert y.tolist() == ["low", "high", "mid", "low"]
    X, y = load_ordinal_csv(path, target="grade", classes=["low", "mid", "high"])
    assert y.tolist() == ["low", "high", "mid", "low"]
    np.testing.assert_array_equal(X.ravel(), [1.0, 2.0, 3.5, 4.0])


def test_csv_float_target_and_numeric_classes(tmp_path):
    """Check that a non-integral numeric target stays float and "2.0" matches classes=[1, 2]."""
    path = _write_csv(tmp_path / "f.csv", ["x", "y"], [[0, "1.5"], [1, "2"]])
    assert load_ordinal_csv(path)[1].dtype == np.float64
    path = _write_csv(tmp_path / "g.csv", ["x", "y"], [[0, "1.0"], [1, "2"], [2, "2.0"]])
    _, y = load_ordinal_csv(path, classes=[1, 2])
    assert y.tolist() == [1, 2, 2] and y.dtype.kind == "i"


def test_csv_skips_blank_lines_quotes_and_bom(tmp_path):
    """Check that blank lines are skipped, quoted fields parsed and a UTF-8 BOM ignored."""
    path = tmp_path / "q.csv"
    path.write_text('\ufeff"x, first",y\n\n"1.5",a\n2,"b"\n\n', encoding="utf-8")
    X, y, names = load_ordinal_csv(path, return_feature_names=True)
    assert names.tolist() == ["x, first"]
    assert X.ravel().tolist() == [1.5, 2.0] and y.tolist() == ["a", "b"]


def test_csv_error_paths(tmp_path):
    """Check that each malformed CSV gives the documented error naming the culprit."""
    missing = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        load_ordinal_csv(missing)
    path = _write_csv(tmp_path / "a.csv", ["x", "colour", "y"], [[1, "red", 1], [2, "blue", 2]])
    with pytest.raises(ValueError, match="feature column 'colour' .* is not numeric: line 2"):
        load_ordinal_csv(path)
    with pytest.raises(ValueError, match="target column 'label' not found"):
        load_ordinal_csv(path, target="label")
    path = _write_csv(tmp_path / "b.csv", ["x", "y"], [[1, "low"], [2, "top"]])
    with pytest.raises(ValueError, match="holds 'top' at line 3, which is not in classes"):
        load_ordinal_csv(path, classes=["low", "high"])
    with pytest.raises(ValueError, match="classes must not contain duplicates"):
        load_ordinal_csv(path, classes=["low", "low", "top"])
    with pytest.raises(ValueError, match="classes must not contain duplicates"):
        load_ordinal_csv(path, classes=["low", " low", "top"])  # the same text in a cell
    with pytest.raises(ValueError, match="classes must be a non-empty 1-d list"):
        load_ordinal_csv(path, classes=[])
    with pytest.raises(ValueError, match=r"classes contains missing values \(NaN or None\)"):
        load_ordinal_csv(path, classes=np.array(["low", None, "top"], dtype=object))
    ragged = tmp_path / "r.csv"
    ragged.write_text("x,y\n1,2\n3\n")
    with pytest.raises(ValueError, match="line 3 .* has 1 fields, the header has 2"):
        load_ordinal_csv(ragged)
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="is empty"):
        load_ordinal_csv(empty)
    header_only = tmp_path / "h.csv"
    header_only.write_text("x,y\n")
    with pytest.raises(ValueError, match="no data rows"):
        load_ordinal_csv(header_only)
    gap = tmp_path / "m.csv"
    gap.write_text("x,z,y\n1,,1\n")
    with pytest.raises(ValueError, match="feature column 'z' .* missing value at line 2"):
        load_ordinal_csv(gap)
    nan_cell = tmp_path / "n.csv"
    nan_cell.write_text("x,y\nnan,1\n")
    with pytest.raises(ValueError, match="feature column 'x' .* missing value"):
        load_ordinal_csv(nan_cell)
    no_target = tmp_path / "t.csv"
    no_target.write_text("x,y\n1,\n")
    with pytest.raises(ValueError, match="target column 'y' .* is empty at line 2"):
        load_ordinal_csv(no_target)
    only_target = tmp_path / "o.csv"
    only_target.write_text("y\n1\n")
    with pytest.raises(ValueError, match="no feature column"):
        load_ordinal_csv(only_target)
    dupes = tmp_path / "d.csv"
    dupes.write_text("x,x,y\n1,2,1\n")
    with pytest.raises(ValueError, match="duplicate column names"):
        load_ordinal_csv(dupes)


# ---------------------------------------------------------------- load_benchmark


@needs_shared
def test_load_benchmark_lev_matches_numpy_and_manifest(monkeypatch):
    """Check that LEV loads as 1000 x 4 floats with K=5 and the manifest's class counts."""
    monkeypatch.delenv("OTREEBAGGER_DATA", raising=False)
    X, y = load_benchmark("LEV")  # default: the repository's sibling shared/datasets
    raw = np.loadtxt(SHARED / "LEV.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(X, raw[:, :-1])
    np.testing.assert_array_equal(y, raw[:, -1].astype(int))
    assert X.shape == (1000, 4) and X.dtype == np.float64
    assert np.bincount(y)[1:].tolist() == [93, 280, 403, 197, 27]
    X2, y2 = load_benchmark("lev", SHARED)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


@needs_shared
def test_load_benchmark_lev_split_zero(monkeypatch):
    """Check that split 0 of LEV partitions the rows as listed in LEV.splits.csv."""
    X, y, train, test = load_benchmark("LEV", SHARED, split=0)
    table = np.genfromtxt(SHARED / "LEV.splits.csv", delimiter=",", names=True, dtype=None,
                          encoding="utf-8")
    chosen = table[table["split"] == 0]
    np.testing.assert_array_equal(train, np.sort(chosen["row"][chosen["role"] == "train"]))
    np.testing.assert_array_equal(test, np.sort(chosen["row"][chosen["role"] == "test"]))
    assert len(train) + len(test) == X.shape[0]
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(X.shape[0]))
    with pytest.raises(ValueError, match=r"split=3 is not in .*available splits: \[0\]"):
        load_benchmark("LEV", SHARED, split=3)


@needs_shared
def test_list_benchmarks_lists_the_shared_folder():
    """Check that list_benchmarks names every NAME.csv of the folder and no splits file."""
    names = list_benchmarks(SHARED)
    expected = sorted(p.name[:-4] for p in SHARED.glob("*.csv") if ".splits" not in p.name)
    assert names == expected and "LEV" in names


def test_benchmark_data_home_from_environment(tmp_path, monkeypatch):
    """Check that OTREEBAGGER_DATA is the default folder for loading and listing."""
    _write_csv(tmp_path / "toy.csv", ["a", "b", "y"], [[0, 1, 1], [2, 3, 2], [4, 5, 2]])
    _write_csv(tmp_path / "toy.splits.csv", ["split", "row", "role"],
               [[0, 0, "train"], [0, 1, "test"], [0, 2, "train"], [1, 2, "test"],
                [1, 0, "train"], [1, 1, "train"]])
    monkeypatch.setenv("OTREEBAGGER_DATA", str(tmp_path))
    assert list_benchmarks() == ["toy"]
    X, y = load_benchmark("toy")
    assert X.tolist() == [[0, 1], [2, 3], [4, 5]] and y.tolist() == [1, 2, 2]
    _, _, train, test = load_benchmark("toy", split=1)
    assert train.tolist() == [0, 1] and test.tolist() == [2]
    assert list_benchmarks(tmp_path / "absent") == []


def test_benchmark_split_error_paths(tmp_path):
    """Check that bad split arguments and corrupt splits files raise clear errors."""
    _write_csv(tmp_path / "t.csv", ["a", "y"], [[0, 1], [1, 2]])
    with pytest.raises(FileNotFoundError, match="no splits file .*t.splits.csv"):
        load_benchmark("t", tmp_path, split=0)
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match="split must be a non-negative integer"):
            load_benchmark("t", tmp_path, split=bad)
    cases = [
        ("split,row\n0,0\n", "must have the columns split,row,role"),
        ("split,row,role\n0,5,train\n", "refers to row 5, outside 0..1"),
        ("split,row,role\n0,0,train\n0,0,test\n", "lists some row more than once"),
        ("split,row,role\n0,0,validate\n", "role 'validate'"),
        ("split,row,role\nzero,0,train\n", "must hold integers"),
    ]
    for text, match in cases:
        (tmp_path / "t.splits.csv").write_text(text)
        with pytest.raises(ValueError, match=match):
            load_benchmark("t", tmp_path, split=0)
    _write_csv(tmp_path / "s.csv", ["a", "y"], [[0, "low"]])
    with pytest.raises(ValueError, match="must hold integer classes"):
        load_benchmark("s", tmp_path)
    for name in ("../t", "", 3):
        with pytest.raises(ValueError, match="name must be"):
            load_benchmark(name, tmp_path)


def test_benchmark_network_failure_says_where_it_looked(tmp_path, monkeypatch):
    """Check that a missing CSV plus a failed OpenML download names the folder and the cause."""
    calls = []

    def offline(**kwargs):
        calls.append(kwargs)
        raise URLError("Name or service not known")

    monkeypatch.setattr("sklearn.datasets.fetch_openml", offline)
    with pytest.raises(FileNotFoundError, match="no ESL.csv in .*OpenML.*URLError"):
        load_benchmark("ESL", tmp_path)
    assert calls[0]["name"] == "ESL" and calls[0]["data_home"] == str(tmp_path)


@pytest.mark.filterwarnings("ignore:Invalid cache:RuntimeWarning")
def test_failed_download_leaves_no_empty_folders(tmp_path):
    """Check that a real failed OpenML fetch removes the folders it created and keeps those that existed."""
    # A space in the name makes urllib refuse the URL before any connection: the
    # download fails for real, on or off line, after scikit-learn made its folders.
    fresh = tmp_path / "a" / "b" / "cache"
    with pytest.raises(FileNotFoundError, match="fetching it from OpenML .*failed with InvalidURL"):
        load_benchmark("no such set", fresh)
    assert list(tmp_path.iterdir()) == []

    kept = tmp_path / "home"
    (kept / "openml" / "old").mkdir(parents=True)
    (kept / "notes.txt").write_text("mine")
    with pytest.raises(FileNotFoundError, match="InvalidURL"):
        load_benchmark("no such set", kept)
    left = sorted(str(p.relative_to(kept)) for p in kept.rglob("*"))
    assert left == ["notes.txt", "openml", "openml/old"]


@needs_shared
def test_benchmark_fetch_never_caches_into_shared_folder(monkeypatch):
    """Check that with the shared folder as default, OpenML caching goes to ~/otreebagger_data."""
    monkeypatch.delenv("OTREEBAGGER_DATA", raising=False)
    calls = []

    def offline(**kwargs):
        calls.append(kwargs)
        raise OSError("offline")

    monkeypatch.setattr("sklearn.datasets.fetch_openml", offline)
    with pytest.raises(FileNotFoundError, match="sibling folder shared/datasets"):
        load_benchmark("no-such-benchmark")
    assert Path(calls[0]["data_home"]) == Path("~/otreebagger_data").expanduser()


def _serve_sklearn_openml_fixture(monkeypatch, data_id):
    """Serve scikit-learn's bundled OpenML test files instead of the network, or skip."""
    module = pytest.importorskip("sklearn.datasets.tests.test_openml")
    patch = getattr(module, "_monkey_patch_webbased_functions", None)
    if patch is None:
        pytest.skip("scikit-learn's OpenML test helper is not available")
    patch(monkeypatch, data_id, True)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_benchmark_openml_fallback_orders_numeric_categories(tmp_path, monkeypatch):
    """Check that a fetched nominal target {'1','-1'} becomes classes 1..2 in numeric order."""
    _serve_sklearn_openml_fixture(monkeypatch, 292)
    X, y = load_benchmark("australian", tmp_path)
    from sklearn.datasets import fetch_openml

    ref = fetch_openml(name="australian", data_home=str(tmp_path), as_frame=False,
                       parser="liac-arff")
    np.testing.assert_array_equal(X, ref.data.toarray())
    np.testing.assert_array_equal(y, np.where(ref.target.astype(float) < 0, 1, 2))
    assert (tmp_path / "openml").is_dir()
    with pytest.raises(FileNotFoundError, match="came from OpenML"):
        load_benchmark("australian", tmp_path, split=0)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_benchmark_openml_fallback_rejects_missing_values(tmp_path, monkeypatch):
    """Check that a fetched data set with missing values is refused with a ValueError."""
    _serve_sklearn_openml_fixture(monkeypatch, 2)
    with pytest.raises(ValueError, match="'anneal' has missing values"):
        load_benchmark("anneal", tmp_path)


def test_openml_conversion_keeps_declared_order_of_text_categories():
    """Check that a nominal target with text categories keeps its declared (ordinal) order."""
    from sklearn.utils import Bunch

    bunch = Bunch(
        data=np.array([[0.5, 2.0], [1.5, 0.0], [2.5, 1.0], [3.5, 0.0]]),
        feature_names=["x", "grade"],
        categories={"grade": ["poor", "fair", "good"]},
        details={"default_target_attribute": "grade"},
    )
    X, y = datasets._from_openml_bunch(bunch, "toy")
    assert X.ravel().tolist() == [0.5, 1.5, 2.5, 3.5]
    assert y.tolist() == [3, 1, 2, 1]


def test_feature_csv_reader_drops_the_target_and_rejects_bad_files(tmp_path):
    """Check that the prediction reader keeps file order, drops the target if present and names bad cells."""
    path = _write_csv(tmp_path / "new.csv", ["b", "y", "a"], [[1, 5, 2.5], [3, 6, 4]])
    X, names = datasets._load_features_csv(path, drop="y")
    assert names == ["b", "a"] and X.tolist() == [[1.0, 2.5], [3.0, 4.0]]
    X, names = datasets._load_features_csv(path, drop="grade")
    assert names == ["b", "y", "a"] and X.shape == (2, 3)
    _write_csv(tmp_path / "nan.csv", ["a", "b"], [[1, 2], ["nan", 3]])
    with pytest.raises(ValueError, match=r"feature column 'a' of .* missing value \(NaN\) at line 3"):
        datasets._load_features_csv(tmp_path / "nan.csv")
    _write_csv(tmp_path / "head.csv", ["a", "b"], [])
    with pytest.raises(ValueError, match="has a header but no data rows"):
        datasets._load_features_csv(tmp_path / "head.csv")
    _write_csv(tmp_path / "only.csv", ["y"], [[1]])
    with pytest.raises(ValueError, match="no feature column besides 'y'"):
        datasets._load_features_csv(tmp_path / "only.csv", drop="y")
    with pytest.raises(FileNotFoundError, match="no such CSV file"):
        datasets._load_features_csv(tmp_path / "missing.csv")


def test_load_ordinal_csv_keeps_text_columns_when_asked(tmp_path):
    """Check text_features: columns of words become text columns of a DataFrame, a number column with a word
    stays an error unless named, and missing cells are missing values."""
    path = tmp_path / "t.csv"
    path.write_text("a,colour,b,y\n1.5,red,x,1\n2,,3,2\n3,blue,4,2\n")
    with pytest.raises(ValueError, match="column 'b' .* is not numeric: line 2 holds 'x'"):
        datasets.load_ordinal_csv(path, text_features=True, missing=True)
    X, y = datasets.load_ordinal_csv(path, text_features=["b"], missing=True)
    assert list(X.columns) == ["a", "colour", "b"] and X["a"].tolist() == [1.5, 2.0, 3.0]
    assert X["colour"].isna().tolist() == [False, True, False] and X["colour"][0] == "red"
    assert X["b"].tolist() == ["x", "3", "4"]
    with pytest.raises(ValueError, match="column 'colour' .* missing value at line 3"):
        datasets.load_ordinal_csv(path, text_features=["b"])
    numbers = tmp_path / "n.csv"
    numbers.write_text("a,y\n1,1\n2,2\n")
    X, _ = datasets.load_ordinal_csv(numbers, text_features=True)  # no text column: the float array as always
    assert isinstance(X, np.ndarray) and X.dtype == np.float64
