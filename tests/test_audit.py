"""Oracle tests of ensemble.audit: brute force over the fused partition, planted jumps, no false proof."""

import subprocess
import sys

import numpy as np
import pytest
import skops.io as sio
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier, GradientBoostingRegressor, HistGradientBoostingClassifier,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.tree import DecisionTreeClassifier

import relabel
from ensemble import ConsistentGradientBoostingClassifier, OTreeBagger, audit
from ensemble.audit._read import float32_routing
from ensemble.audit import read_model
from oracles import gap_walk_spans, inside_points
from trees import OrdinalTreeClassifier


def _data(d, n=120, seed=0, k=5):
    rng = np.random.RandomState(seed)
    X = np.round(rng.rand(n, d), 1)
    y = np.clip((X.sum(axis=1) * k / d + rng.normal(scale=0.6, size=n)).astype(int), 0, k - 1)
    return X, y


def _trees(model):
    """The model's trees as ``tree_``-like structures, and whether its ``predict`` routes a float32 copy of X."""
    if hasattr(model, "_predictors"):  # HistGradientBoosting compares float64 values with float64 thresholds
        from ensemble.audit._read import _HistTree

        return [_HistTree(p.nodes) for it in model._predictors for p in it], False
    est = getattr(model, "estimators_", [model])
    return [t.tree_ for t in np.ravel(est)], type(model).__module__.startswith("sklearn.")


class _Float32Space:
    """A tree whose thresholds are the largest float32 <= each one: on float32 inputs it routes as the original."""

    def __init__(self, tree):
        self.children_left, self.children_right, self.feature = tree.children_left, tree.children_right, tree.feature
        t = np.asarray(tree.threshold, dtype=np.float64)
        t32 = t.astype(np.float32)
        self.threshold = np.where(t32 > t, np.nextafter(t32, np.float32(-np.inf)), t32).astype(np.float64)


def _brute_jump(model, ranks):
    """Largest class difference across closure contacts of the exact fused partition of all trees.

    scikit-learn's trees (not HistGradientBoosting) cast X to float32 before routing: the partition is then
    the one of float32 space (thresholds rounded down to float32, which routes every float32 value as the
    model does), every region labelled by ``predict`` at a float32 value inside it. Its closure contacts
    are those of the model's function of float64 inputs (the same cells, in the same order).
    """
    import trees as trees_pkg

    structures, float32 = _trees(model)
    if float32:
        structures = [_Float32Space(t) for t in structures]
    part = relabel.fuse([trees_pkg.leaf_boxes(t, model.n_features_in_) for t in structures], snap=False)
    if float32:
        lo, up = part.lower.astype(np.float32), part.upper.astype(np.float32)
        above = np.where(np.isfinite(lo), np.nextafter(lo, np.float32(np.inf)), np.float32(0.0))
        points = np.where(np.isfinite(up), up, above).astype(np.float64)
    else:
        points = inside_points(part.lower, part.upper)
    labels = ranks(points)
    edges = relabel.adjacency_edges(part).edges
    return int(np.abs(labels[edges[:, 0]] - labels[edges[:, 1]]).max(initial=0))


SKLEARN = [
    lambda s: DecisionTreeClassifier(max_depth=4, random_state=s),
    lambda s: RandomForestClassifier(5, max_depth=3, random_state=s),
    lambda s: GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=s),
    lambda s: HistGradientBoostingClassifier(max_iter=4, max_depth=3, random_state=s),
    lambda s: ExtraTreesClassifier(4, max_depth=3, random_state=s),
    lambda s: GradientBoostingRegressor(n_estimators=4, max_depth=2, random_state=s),  # rounded to classes
    lambda s: HistGradientBoostingClassifier(max_iter=3, max_depth=2, random_state=s, class_weight="balanced"),
]


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("make", range(len(SKLEARN)))
def test_pointwise_matches_brute_force_sklearn(d, make):
    for seed in range(2):
        X, y = _data(d, seed=seed)
        model = SKLEARN[make](seed).fit(X, y)
        reading = read_model(model)
        brute = _brute_jump(model, reading.predict_rank)
        for cells in (400_000, 0):  # the grid, then CP-SAT
            report = audit(model, X, resolution="pointwise", time_limit=20, max_cells=cells, search="largest")
            assert report.status != "unknown"
            assert report.largest_jump <= brute <= report.bound
            if report.method not in ("sum bound", "voters"):  # sufficient proofs bound the jump by one
                assert report.largest_jump == brute  # exact both ways: CP-SAT maximises the jump
            assert (report.status == "proved") == (brute <= 1)
            if report.witness is not None:  # a real jump, one float apart
                x, x2 = report.witness
                c = reading.predict_rank(np.vstack((x, x2)))
                assert abs(c[0] - c[1]) == report.largest_jump
                assert np.all(np.abs(x - x2) <= np.spacing(np.maximum(np.abs(x), np.abs(x2))))


def test_float32_routing_matches_float32_predict():
    """The float64 threshold the audit reads routes every float64 value as float32(x) <= t does."""
    rng = np.random.RandomState(0)
    a = rng.rand(5000).astype(np.float32)
    t = np.concatenate((a / 2.0 + rng.rand(5000).astype(np.float32) / 2.0,  # midpoints, as scikit-learn splits
                        a, (a + np.nextafter(a, np.float32(2))) / 2.0, rng.randn(5000) * 1e3))
    T = float32_routing(t)
    assert np.all(T.astype(np.float32) <= t) and not np.any(np.nextafter(T, np.inf).astype(np.float32) <= t)


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3])
def test_ours_agree_with_brute_force_and_certificates(d):
    X, y = _data(d, n=150, seed=3)
    for model in (OTreeBagger(n_estimators=6, group_size=3, random_state=0, projection="none"),
                  OrdinalTreeClassifier(max_depth=4),
                  ConsistentGradientBoostingClassifier(random_state=0, max_iter=30)):
        model.fit(X, y)
        report = audit(model, X, time_limit=20)
        if hasattr(model, "is_consistent") and model.is_consistent():
            assert report.status == "proved"
        if isinstance(model, OrdinalTreeClassifier):
            brute = _brute_jump(model, read_model(model).predict_rank)
            assert (report.status == "refuted") == (brute >= 2)


def test_data_notion_matches_gap_walks():
    X, y = _data(2, n=150, seed=1)
    model = RandomForestClassifier(10, random_state=0).fit(X, y)
    report = audit(model, X, resolution="data", time_limit=20)
    worst, _ = gap_walk_spans(model, X, X, trees=model.estimators_)
    assert report.largest_jump >= worst
    assert report.status == ("refuted" if max(worst, report.largest_jump) >= 2 else "proved")
    x, x2 = report.witness
    moved = np.flatnonzero(x != x2)
    assert moved.shape[0] == 1  # one feature moves, inside one gap of its training values
    v = np.unique(X[:, moved[0]])
    lo, hi = sorted((x[moved[0]], x2[moved[0]]))
    assert np.count_nonzero((v > lo) & (v < hi)) == 0


def test_planted_jump_found_in_high_dimension_by_cp_sat():
    rng = np.random.RandomState(0)
    X = rng.rand(200, 8)
    y = np.where(X[:, 5] > 0.5, 3, 0) + (X[:, 1] > 0.5)  # a planted jump of 3 on feature 5
    model = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    report = audit(model, resolution="pointwise", time_limit=20, max_cells=0, search="largest")
    # classes_ is [0, 1, 3, 4] (no 2): the jump is counted in class-index units, 0 -> 4 at a corner is 3.
    assert report.status == "refuted" and report.largest_jump == 3 and report.method.endswith("cp-sat")
    x, x2 = report.witness
    c = np.searchsorted(model.classes_, model.predict(np.vstack((x, x2))))
    assert abs(int(c[0]) - int(c[1])) == report.largest_jump
    assert np.all(np.abs(x - x2) <= np.spacing(np.maximum(np.abs(x), np.abs(x2))))  # a contact: one float apart


def test_certified_boosting_proved_and_regressor_refuted():
    X, y = _data(6, n=300, seed=2)
    model = ConsistentGradientBoostingClassifier(random_state=0).fit(X, y)
    assert model.is_consistent()
    assert audit(model, X, time_limit=20).status == "proved"
    reg = RandomForestRegressor(20, random_state=0).fit(X, y * 3)  # classes 0, 3, 6, ...: every step jumps
    report = audit(reg, X, classes=np.arange(0, 13), time_limit=10)
    assert report.status == "refuted"


def test_resolution_and_monotone():
    X, y = _data(2, n=150, seed=4)
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    small = audit(model, X, resolution=1e-9, time_limit=10)
    large = audit(model, X, resolution=0.5, time_limit=10)
    assert large.largest_jump >= small.largest_jump
    if large.witness is not None:
        x, x2 = large.witness
        assert np.all(np.abs(x - x2) <= 0.5)
    # r = 0 is the pointwise notion (it ran CP-SAT to its time limit on a certified forest and ended unknown).
    zero = audit(model, X, resolution=0.0, time_limit=10)
    assert zero.notion == "pointwise" and zero.status == audit(model, X, resolution="pointwise").status
    report = audit(model, X, monotonic_cst=[1, 1], time_limit=10)
    assert report.monotone_status in ("refuted", "proved")
    if report.fall_witness is not None:
        x, x2 = report.fall_witness
        assert x[0] <= x2[0] and x[1] <= x2[1]
        c = model.predict(np.vstack((x, x2)))
        assert c[0] - c[1] == report.worst_fall >= 1


def test_regressor_cut_points_and_errors():
    X, y = _data(2, seed=5)
    reg = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    report = audit(reg, X, cuts=[0.5, 1.5, 2.5, 3.5], time_limit=10)
    assert report.status in ("proved", "refuted")
    with pytest.raises(ValueError, match="resolution"):
        audit(reg, X, resolution="nope")
    with pytest.raises(ValueError, match="cuts"):
        audit(reg, X, cuts=[2.0, 1.0])
    with pytest.raises(ValueError, match="X must"):
        audit(reg, X[:, :1])
    with pytest.raises(NotImplementedError, match="constant start"):  # the offset would vary with x
        from sklearn.linear_model import LinearRegression
        audit(GradientBoostingRegressor(n_estimators=2, init=LinearRegression()).fit(X, y), X)


@pytest.mark.slow
def test_command_line_exit_status(tmp_path):
    X, y = _data(2, seed=6)
    model = RandomForestClassifier(10, random_state=0).fit(X, y)
    sio.dump(model, tmp_path / "rf.skops")
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n" + "\n".join(f"{a},{b},{c}" for (a, b), c in zip(X, y)) + "\n")
    run = subprocess.run([sys.executable, "-m", "ensemble.cli", "audit", str(tmp_path / "rf.skops"), str(data),
                          "--time-limit", "10"], capture_output=True, text=True)
    expected = audit(model, X, time_limit=10).status
    assert run.returncode == {"proved": 0, "refuted": 1, "unknown": 3}[expected]
    bad = subprocess.run([sys.executable, "-m", "ensemble.cli", "audit", str(data), str(data)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_models_fitted_on_named_columns_are_audited_without_warnings():
    """Check that a model fitted on a DataFrame is audited (its probes are arrays in its column order) as the
    same model fitted on an array, with no "valid feature names" warning per probe."""
    import warnings

    import pandas as pd

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 3))
    y = np.digitize(X[:, 0] + X[:, 1] + 0.2 * rng.normal(size=300), [0.7, 1.0, 1.3])
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    for make in (lambda: DecisionTreeClassifier(random_state=0),
                 lambda: ConsistentGradientBoostingClassifier(max_iter=20, random_state=0)):
        named, plain = make().fit(frame, y), make().fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            report = audit(named, X, random_state=0)
        expected = audit(plain, X, random_state=0)
        assert (report.status, report.largest_jump, report.next_value_jumps) == \
            (expected.status, expected.largest_jump, expected.next_value_jumps)


@pytest.mark.parametrize("name", ["boosting", "forest", "otreebagger"])
def test_audit_reads_finite_data_near_the_float_limit(name):
    """Probes beyond such data stay finite (they overflowed to inf, and predict refused them)."""
    from ensemble import ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger

    rng = np.random.RandomState(0)
    X = (rng.uniform(size=(60, 2)) - 0.5) * 1.7e308 * 2
    y = np.clip(((X[:, 0] / 1.7e308 + 1) * 2).astype(int), 0, 3)
    model = {"boosting": ConsistentGradientBoostingClassifier(max_iter=30, random_state=0),
             "forest": ConsistentForestClassifier(n_estimators=10, random_state=0),
             "otreebagger": OTreeBagger(n_estimators=6, random_state=0)}[name].fit(X, y)
    for notion in ("data", "pointwise"):
        report = audit(model, X, resolution=notion, time_limit=10)
        assert report.status == ("proved" if model.is_consistent(notion=notion) else report.status)
        assert report.status != "unknown" or report.bound >= 1


def _one_hot_data(n=300, seed=0):
    """Two continuous features and a three-category variable one-hot in columns 2-4, whose category moves the
    class by three: a change of category jumps, a small move of a continuous feature does not need to."""
    rng = np.random.RandomState(seed)
    X = rng.rand(n, 2)
    category = rng.randint(0, 3, n)
    one_hot = np.eye(3)[category]
    y = np.clip(np.round(2 * X[:, 0]) + 3 * (category == 2), 0, 5).astype(int)
    return np.column_stack([X, one_hot]), y


def test_categorical_features_keep_witnesses_off_the_categories():
    """Check a witness never moves a declared category, by index, by mask and by name, and that undeclared
    one-hot columns give the witnesses a user would not call small moves."""
    import pandas as pd

    X, y = _one_hot_data()
    model = RandomForestClassifier(30, random_state=0).fit(X, y)
    free = audit(model, X, resolution="data", time_limit=20, search="largest")
    assert free.status == "refuted"
    moved = np.flatnonzero(free.witness[0] != free.witness[1])
    assert set(moved.tolist()) <= {2, 3, 4}  # the jump of three lies across the categories
    for spec in ([2, 3, 4], np.array([False, False, True, True, True])):
        report = audit(model, X, resolution="data", categorical_features=spec, time_limit=20, search="largest")
        if report.witness is not None:
            a, b = report.witness
            assert np.array_equal(a[2:], b[2:])
            assert np.all(np.isin(a[2:], (0.0, 1.0)))  # the categories the data holds, not a point between
            c = read_model(model).predict_rank(np.vstack(report.witness))
            assert abs(int(c[0]) - int(c[1])) == report.largest_jump
    frame = pd.DataFrame(X, columns=["size", "age", "red", "green", "blue"])
    named = RandomForestClassifier(30, random_state=0).fit(frame, y)
    by_name = audit(named, frame, resolution="data", categorical_features=["red", "green", "blue"], time_limit=20)
    if by_name.witness is not None:
        assert np.array_equal(by_name.witness[0][2:], by_name.witness[1][2:])
    with pytest.raises(ValueError, match="categorical_features"):
        audit(named, frame, categorical_features=["purple"])


def test_witness_rows_name_a_dataframes_columns_without_warnings():
    """Check the witness rows use the DataFrame's column names and no scikit-learn warning leaks."""
    import warnings

    import pandas as pd

    X, y = _data(3, seed=1)
    frame = pd.DataFrame(X, columns=["in1", "in2", "in3"])
    model = RandomForestClassifier(20, random_state=0).fit(frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = audit(model, frame, resolution="pointwise", time_limit=20)
    assert report.feature_names == ["in1", "in2", "in3"]
    if report.witness is not None:
        text = report.summary()
        assert "in" in text.splitlines()[1] and "x0" not in text and "x2" not in text


def test_the_search_stops_at_its_first_witness_and_says_so():
    """Check the default search returns at its first confirmed witness (well inside the time limit) and says
    so; search='largest' finds a jump at least as large, and both witnesses are confirmed by predict."""
    X, y = _data(4, n=400, seed=2, k=7)
    model = RandomForestRegressor(60, random_state=0).fit(X, y)
    first = audit(model, X, classes=np.arange(7), resolution="pointwise", time_limit=60)
    assert first.status == "refuted" and first.search == "first"
    assert first.elapsed < 30 and first.time_to_witness is not None
    assert first.elapsed - first.time_to_witness < 2.0
    largest = audit(model, X, classes=np.arange(7), resolution="pointwise", time_limit=60, search="largest")
    assert largest.search == "largest" and largest.largest_jump >= first.largest_jump
    for report in (first, largest):
        c = read_model(model, classes=np.arange(7)).predict_rank(np.vstack(report.witness))
        assert abs(int(c[0]) - int(c[1])) == report.largest_jump
    if first.largest_jump < first.bound:
        assert "the first witness found" in first.summary().splitlines()[0]
    with pytest.raises(ValueError, match="search"):
        audit(model, X, search="all")


def test_audit_reads_a_certified_models_own_training_grid_whatever_rows_it_is_given():
    """Check that rows other than the training rows do not redefine the data's resolution of a model that kept its
    training values: two rows at x0 = 0.1 and 0.9 make one gap over the model's whole rise from class 0 to 3 (a
    move the notion does not cover), and read as the grid they "refuted" a model ``is_consistent()`` proves. A
    scikit-learn tree, which keeps no grid, is still audited on the rows' values."""
    from ensemble import ConsistentGradientBoostingClassifier

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 2))
    y = np.digitize(X[:, 0], [0.4, 0.5, 0.6])
    model = ConsistentGradientBoostingClassifier(max_iter=30, random_state=0).fit(X, y)
    assert model.consistency_notion_ == "data" and model.is_consistent()
    far = np.array([[0.1, 0.5], [0.9, 0.5]])
    for rows in (X, far):
        report = audit(model, rows, random_state=0, time_limit=20)
        assert (report.status, report.notion) == ("proved", "data")
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    report = audit(tree, far, random_state=0, time_limit=20)
    assert (report.status, report.notion, report.largest_jump) == ("refuted", "data", 3)


def test_audit_reads_the_training_values_otreebaggers_rank_maps_keep():
    """Check that OTreeBagger in a rank-mapped space (six continuous features), whose groups split no feature's own
    axis and so bracket no training value in its kept grid, is audited on the training values its rank maps hold:
    the next-value moves of the rows are probed (none were, the grid read as empty), and rows far apart on x0
    neither redefine the resolution nor refute the model."""
    from ensemble import OTreeBagger

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 6)).round(2)
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=300), [0.5, 0.9, 1.2])
    model = OTreeBagger(n_estimators=6, random_state=0).fit(X, y)
    assert model.groups_[0].space.ranks is not None and model.consistency_notion_ == "data"
    report = audit(model, X, random_state=0, time_limit=30)
    assert (report.status, report.notion) == ("proved", "data") and report.next_value_moves > 0
    far = np.array([[0.0, 0.5, 0.5, 0.5, 0.5, 0.5], [1.0, 0.5, 0.5, 0.5, 0.5, 0.5]])
    assert audit(model, far, random_state=0, time_limit=30).status == "proved"


def test_a_foreign_model_of_text_classes_warns_of_the_order_it_is_read_in():
    """Check that the audit of a scikit-learn tree fitted on text labels says it reads them sorted (its classes_
    order; poor < fair < good read as fair < good < poor shows jumps of two that are not there), and that
    classes= gives the order, under which the tree is proved."""
    from sklearn.tree import DecisionTreeClassifier

    from ensemble import ClassOrderWarning

    X = np.linspace(0, 1, 300)[:, None]
    y = np.array(["poor", "fair", "good"])[np.digitize(X[:, 0], [1 / 3, 2 / 3])]
    model = DecisionTreeClassifier().fit(X, y)
    with pytest.warns(ClassOrderWarning, match="'fair' < 'good' < 'poor'"):
        assert audit(model, X).status == "refuted"
    assert audit(model, X, classes=["poor", "fair", "good"]).status == "proved"



def test_the_largest_jump_found_is_among_the_counted_pairs():
    """Check that when the exact grid decides, the pairs counted are its contacts and hold the pair of the
    largest jump it reports (the probes' counts were kept instead, and listed no pair of that jump)."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.RandomState(1)
    X = rng.randint(0, 8, size=(300, 3)).astype(float)  # integer data: next-value moves count jumps first
    y = np.clip((X.sum(axis=1) / 2.5 + rng.normal(scale=1.0, size=300)).astype(int), 0, 8)
    model = RandomForestClassifier(5, random_state=1).fit(X, y)
    report = audit(model, X, search="largest", time_limit=30)
    assert report.status == "refuted" and "grid" in report.method
    assert tuple(sorted(report.witness_classes)) in {tuple(sorted(pair)) for pair in report.counts}, report.counts
