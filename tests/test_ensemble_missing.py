"""Missing values (NaN): learned routing, text columns with gaps, certificates that cover missing patterns.

A missing value is its own category of its feature (docs/design.md section 11): a
point with x_f missing is near the points missing x_f whose other features are near.
The oracle enumerates the missing patterns of 2-feature data and checks the model
exactly on each slice: the prediction is constant between consecutive thresholds of
the present features, so a grid of one point per cell decides consistency exactly.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ensemble import ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger, RankRules
from ensemble.base._estimator import SKLEARN_ROUTES_MISSING
from ensemble.base._voting import UNIT_BITS

# The forest's default trees (scikit-learn's) take missing values from scikit-learn 1.8 on;
# its ordinal criteria do with any version.
DEFAULT = "squared_error" if SKLEARN_ROUTES_MISSING else "ogini"
CRITERIA = ["squared_error", "ogini", "wig"] if SKLEARN_ROUTES_MISSING else ["ogini", "wig"]


def _data(n=300, seed=0, missing=0.15):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    y = np.digitize(X[:, 0] + X[:, 1] + 0.2 * rng.normal(size=n), [0.6, 1.0, 1.4])
    X[rng.uniform(size=X.shape) < missing] = np.nan
    return X, y


def _cells(thresholds):
    """One point per cell of the half-open intervals between sorted thresholds: the upper ends, and one above."""
    t = np.unique(thresholds[np.isfinite(thresholds)])
    above = t[-1] + 1.0 if t.shape[0] else 0.0
    return np.concatenate([t, [above]])


def _model_thresholds(model, f):
    out = []
    for tree in model.estimators_:
        s = tree.tree_
        inner = np.asarray(s.children_left) >= 0
        out.append(np.asarray(s.threshold)[inner & (np.asarray(s.feature) == f)])
    return np.concatenate(out) if out else np.zeros(0)


def _slices(model):
    """(pattern, classes on the slice grid) for every missing pattern of 2 features."""
    c0, c1 = _cells(_model_thresholds(model, 0)), _cells(_model_thresholds(model, 1))
    rank = lambda X: np.searchsorted(model.classes_, model.predict(X))  # noqa: E731
    g0, g1 = np.meshgrid(c0, c1, indexing="ij")
    yield "none", rank(np.column_stack([g0.ravel(), g1.ravel()])).reshape(g0.shape)
    yield "x0 missing", rank(np.column_stack([np.full(c1.shape[0], np.nan), c1]))[None, :]
    yield "x1 missing", rank(np.column_stack([c0, np.full(c0.shape[0], np.nan)]))[:, None]


def _consistent(grid):
    """Neighbouring cells (sides and corners) at most one class apart."""
    if grid.shape[0] > 1 and np.abs(np.diff(grid, axis=0)).max() > 1:
        return False
    if grid.shape[1] > 1 and np.abs(np.diff(grid, axis=1)).max() > 1:
        return False
    if min(grid.shape) > 1:
        return (np.abs(grid[1:, 1:] - grid[:-1, :-1]).max() <= 1 and np.abs(grid[1:, :-1] - grid[:-1, 1:]).max() <= 1)
    return True


def _monotone(grid, cst):
    """Along each constrained axis of the grid, the classes never go the wrong way."""
    ok = True
    for axis, sign in enumerate(cst):
        if sign and grid.shape[axis] > 1:
            ok &= bool(np.all(np.diff(grid, axis=axis) * sign >= 0))
    return ok


def test_forest_fits_and_predicts_with_missing_values():
    """Check that NaN in fit and predict works, is routed by the trees, and the model is certified."""
    X, y = _data()
    model = ConsistentForestClassifier(criterion=DEFAULT, random_state=0).fit(X, y)
    assert model.is_consistent()
    assert model.__sklearn_tags__().input_tags.allow_nan
    predicted = model.predict(np.array([[np.nan, 0.9], [np.nan, 0.1], [np.nan, np.nan]]))
    assert predicted[0] >= predicted[1]  # x1 still drives the class where x0 is missing
    assert np.abs(model.predict(X) - y).mean() < 0.3
    assert np.allclose(model.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.slow
@settings(max_examples=15)
@given(seed=st.integers(0, 1000), missing=st.sampled_from([0.05, 0.2, 0.4]),
       criterion=st.sampled_from(CRITERIA))
def test_forest_with_missing_values_is_exactly_consistent_on_every_slice(seed, missing, criterion):
    """Check the certificate against the exact slice oracle, missing pattern by missing pattern."""
    X, y = _data(150, seed, missing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = ConsistentForestClassifier(n_estimators=12, max_depth=4, criterion=criterion,
                                           random_state=seed).fit(X, y)
    if model.is_consistent():
        for pattern, grid in _slices(model):
            assert _consistent(grid), pattern


def _built_to_fail():
    """Data with a three-class step along x0 and 20% gaps: too few voters cannot be consistent on it."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 2))
    y = np.where(X[:, 0] > 0.5, 3, 0) + (X[:, 1] > 0.5)
    X[rng.uniform(size=X.shape) < 0.2] = np.nan
    return X, y


def test_slice_oracle_catches_a_model_built_to_fail():
    """Check the oracle has teeth: too few trees, no certificate, and a slice that jumps two classes."""
    X, y = _built_to_fail()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # The pointwise notion's trees as grown: the data's resolution would cap their steps.
        model = ConsistentForestClassifier(n_estimators=2, cut_points="half", criterion=DEFAULT,
                                           random_state=0, consistency="pointwise").fit(X, y)
    assert not model.is_consistent()
    assert not all(_consistent(grid) for _, grid in _slices(model))


@pytest.mark.parametrize("criterion", CRITERIA[:2])
@pytest.mark.parametrize("method", ["basic", "isotonic"])
def test_monotone_forest_with_missing_values_is_monotone_on_every_slice(criterion, method):
    """Check that a constrained forest fitted on data with gaps is certified and monotone on each slice."""
    X, y = _data(400, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 10 trees: not certified consistent
        model = ConsistentForestClassifier(n_estimators=10, max_depth=5, monotonic_cst=[1, 1], criterion=criterion,
                                           monotonic_method=method, random_state=0).fit(X, y)
    assert model.is_monotone()
    for pattern, grid in _slices(model):
        assert _monotone(grid, [1, 1]), pattern


def test_text_column_with_missing_and_unseen_categories_become_missing():
    """Check that a text column's missing values and unseen categories are missing values for the forest."""
    rng = np.random.RandomState(0)
    x = rng.uniform(size=200)
    region = np.array(["east", "west", None], dtype=object)[rng.randint(0, 3, size=200)]
    y = np.digitize(x + (region == "east") * 0.5, [0.5, 1.0])
    frame = pd.DataFrame({"x": x, "region": region})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a DataFrame fit warns of nothing
        model = ConsistentForestClassifier(n_estimators=20, categorical_features=["region"], criterion=DEFAULT,
                                           random_state=0).fit(frame, y)
    unseen = pd.DataFrame({"x": [0.4, 0.4], "region": ["north", None]})
    assert model.predict(unseen)[0] == model.predict(unseen)[1]  # both read as missing


def test_otreebagger_reads_unseen_categories_as_missing_only_where_missing_is_a_category():
    """Check that OTreeBagger reads an unseen text category as missing in a column with gaps in fit, and
    refuses it, naming the column and value, in a column without."""
    rng = np.random.RandomState(0)
    x = rng.uniform(size=200)
    region = np.array(["east", "west", None], dtype=object)[rng.randint(0, 3, size=200)]
    kind = np.array(["a", "b"], dtype=object)[rng.randint(0, 2, size=200)]
    y = np.digitize(x + (region == "east") * 0.5, [0.5, 1.0])
    frame = pd.DataFrame({"x": x, "region": region, "kind": kind})
    model = OTreeBagger(n_estimators=6, random_state=0).fit(frame, y)
    assert model.missing_features_.tolist() == [1] and model.is_consistent()
    unseen = pd.DataFrame({"x": [0.4, 0.4], "region": ["north", None], "kind": ["a", "a"]})
    assert model.predict(unseen)[0] == model.predict(unseen)[1]
    with pytest.raises(ValueError, match="column 'kind' holds the category 'c', unseen in fit"):
        model.predict(pd.DataFrame({"x": [0.4], "region": ["east"], "kind": ["c"]}))


@pytest.mark.parametrize("seed", range(6))
def test_rankrules_rules_grown_with_gaps_cover_what_their_conditions_say(seed):
    """Check RankRules' kernel coverage against the rule's conditions evaluated with NaN failing them:
    a ">=" cut of a feature with gaps (its suffix) must not cover the rows missing it."""
    from ensemble.rankrules._rankrules import _box_cover, _fold_copies, _with_negated_copies
    from ensemble.rankrules._core import grow_rule, presort

    rng = np.random.RandomState(seed)
    X, y = _data(120, seed, missing=0.3)
    X_t = np.ascontiguousarray(X.T)
    grown, ge_allowed, gaps = _with_negated_copies(X_t)
    assert gaps.tolist() == [0, 1] and not ge_allowed[:2].any()
    in_sub = rng.uniform(size=120) < 0.7
    a, b = np.exp(rng.normal(size=120)), np.exp(rng.normal(size=120))
    lower, upper, covered, n = grow_rule(presort(grown, y), in_sub, y, a, b, 4, ge_allowed=ge_allowed)
    lower, upper = _fold_copies(lower, upper, gaps, 2)
    assert n > 0
    assert np.array_equal(covered, _box_cover(X_t, lower, upper) & in_sub)


def test_rankrules_takes_missing_values_and_scores_them_as_failing_conditions():
    """Check RankRules with gaps: ">=" conditions still learnt on a feature with gaps, and the score is the
    sum of the responses of the rules whose every condition holds, a NaN failing any (brute force)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(400, 2))
    y = np.digitize(X[:, 0], [0.33, 0.66])
    X[rng.uniform(size=400) < 0.2, 0] = np.nan
    model = RankRules(n_rules=60, random_state=0).fit(X, y)
    assert model.__sklearn_tags__().input_tags.allow_nan
    assert np.isfinite(model.rule_lower_[:, 0]).any() and np.isfinite(model.rule_upper_[:, 0]).any()
    present = ~np.isnan(X[:, 0])
    assert np.abs(model.predict(X[present]) - y[present]).mean() < 0.1
    probe = np.array([[np.nan, 0.5], [0.9, np.nan], [0.1, 0.2]])
    expected = np.zeros(3)
    for rule in model.rules_:
        holds = np.ones(3, dtype=bool)
        for c in rule.conditions:
            v = probe[:, c.feature]
            holds &= (v >= c.threshold) if c.operator == ">=" else (v <= c.threshold)
        expected += holds * rule.response
    assert np.allclose(model.predict_value(probe), expected)


@settings(max_examples=10)
@given(seed=st.integers(0, 1000), missing=st.sampled_from([0.05, 0.2, 0.4]),
       thresholds=st.sampled_from(["midpoint", "gap"]))
def test_otreebagger_with_missing_values_is_certified_and_exactly_consistent_on_every_slice(seed, missing,
                                                                                              thresholds):
    """Check OTreeBagger's certificate on data with gaps against the exact slice oracle."""
    X, y = _data(150, seed, missing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = OTreeBagger(n_estimators=12, thresholds=thresholds, random_state=seed).fit(X, y)
    assert model.__sklearn_tags__().input_tags.allow_nan
    assert model.is_consistent()
    for pattern, grid in _slices(model):
        assert _consistent(grid), pattern


def test_otreebagger_slice_oracle_catches_unrelabelled_voters():
    """Check the oracle has teeth on OTreeBagger: bagged trees without relabelling jump on some slice."""
    X, y = _built_to_fail()
    model = OTreeBagger(n_estimators=3, relabel=False, random_state=0).fit(X, y)
    assert not model.is_consistent()
    assert not all(_consistent(grid) for _, grid in _slices(model))


def test_monotone_otreebagger_with_missing_values_is_monotone_on_every_slice():
    """Check that a constrained OTreeBagger fitted on data with gaps is certified and monotone on each slice."""
    X, y = _data(300, 3)
    model = OTreeBagger(n_estimators=12, monotonic_cst=[1, 1], random_state=0).fit(X, y)
    assert model.is_monotone() and model.is_consistent()
    for pattern, grid in _slices(model):
        assert _monotone(grid, [1, 1]), pattern


def test_otreebagger_with_missing_values_checks_constraints_given_in_the_users_features():
    """Check that ``is_monotone(cst)`` of a model fitted with gaps takes one entry per user feature (its
    missing-value indicator columns are its own) and answers as the slices do: certify, or refute."""
    X, y = _data(300, 3)
    model = OTreeBagger(n_estimators=12, monotonic_cst=[1, 1], random_state=0).fit(X, y)
    assert model.missing_features_.tolist() == [0, 1]
    grids = [grid for _, grid in _slices(model)]
    for cst in ([1, 0], [0, 1], [1, 1]):
        assert model.is_monotone(cst)
        assert all(_monotone(grid, cst) for grid in grids)
    for cst in ([-1, 0], [0, -1]):
        assert not model.is_monotone(cst)
        assert not all(_monotone(grid, cst) for grid in grids)


@pytest.mark.parametrize("model", [ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger])
def test_a_column_missing_in_every_row_is_never_split_and_changes_no_prediction(model):
    """Check that a feature with no value at all fits with each model's defaults (it used to be an
    IndexError in the forest's ranks) and carries no information: the model is certified, learns
    from the other columns, and predicts the same whatever that column holds at prediction."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(80, 3))
    y = np.digitize(X[:, 0], [0.3, 0.7])
    X[:, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # scikit-learn's own trees route missing values as in training from 1.8 on only.
        old = model is ConsistentForestClassifier and not SKLEARN_ROUTES_MISSING
        fitted = model(random_state=0, **({"criterion": "ogini"} if old else {})).fit(X, y)
    assert fitted.is_consistent()
    predicted = fitted.predict(X)
    assert np.mean(predicted == y) > 0.9
    for filled in (rng.uniform(size=80), np.full(80, -1e6), np.full(80, 1e6)):
        Z = X.copy()
        Z[:, 1] = filled
        np.testing.assert_array_equal(fitted.predict(Z), predicted)


def test_cli_refuses_a_csv_with_an_empty_column_in_one_line(tmp_path, capsys):
    """Check that ``otreebagger fit`` on a CSV whose column is empty in every row says so in one line, for every
    model (it printed a traceback, then fitted silently on a column without information)."""
    from ensemble.cli._main import main

    rng = np.random.RandomState(0)
    data = tmp_path / "empty.csv"
    rows = ["a,b,y"] + [f"{float(x)!r},,{int(x > 0.5)}" for x in rng.uniform(size=40)]
    data.write_text("\n".join(rows) + "\n")
    for name in ("forest", "boosting", "otreebagger"):
        out = tmp_path / f"{name}.skops"
        assert main(["fit", str(data), "--model", name, "-o", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.splitlines() == [err] and "'b' has no value" in err
        assert not out.exists()
    assert "Traceback" not in capsys.readouterr().err


def test_otreebagger_learns_from_missingness_and_reads_unseen_gaps_as_the_median():
    """Check that "missing" is a category OTreeBagger can learn, with importances in the user's features,
    and that a value missing only at prediction is read as the feature's training median."""
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(400, 2))
    y = np.digitize(X[:, 1], [0.5])
    gone = rng.uniform(size=400) < 0.3
    X[gone, 0] = np.nan
    y[gone] = 3  # a missing x0 says the top class
    model = OTreeBagger(n_estimators=12, random_state=0).fit(X, y)
    assert model.missing_features_.tolist() == [0]
    assert model.predict(np.array([[np.nan, 0.1], [np.nan, 0.9]])).tolist() == [3, 3]
    assert model.predict(np.array([[0.3, 0.1], [0.3, 0.9]])).tolist() == [0, 1]
    # Three classes between "missing" and a value next to the fill value: allowed only
    # because missing is a category of its own, never near a value.
    beside = np.nextafter(model._fill[0], np.inf)
    assert model.predict(np.array([[beside, 0.1]])).tolist() == [0]
    assert model.is_consistent()
    importances = model.feature_importances_
    assert importances.shape == (2,) and importances.sum() == pytest.approx(1.0)
    median = np.nanmedian(X[:, 1])
    probe = np.array([[0.2, np.nan], [0.7, np.nan]])
    assert np.array_equal(model.predict(probe), model.predict(np.array([[0.2, median], [0.7, median]])))


def test_ordinal_criterion_forest_routes_missing_values_like_its_trees():
    """Check that an ordinal-criterion forest accepts NaN, its trees learnt where NaN goes, and it is certified."""
    X, y = _data(400, 1, 0.3)
    model = ConsistentForestClassifier(criterion="ogini", random_state=0).fit(X, y)
    assert model.is_consistent()
    learnt = [tree.tree_.missing_go_to_left[tree.tree_.children_left != -1] for tree in model.estimators_]
    assert any(m.any() for m in learnt) and any((~m).any() for m in learnt)  # both directions used
    X_nan = np.array([[np.nan, 0.9], [np.nan, 0.1]])
    assert model.predict(X_nan)[0] >= model.predict(X_nan)[1]


@pytest.mark.skipif(SKLEARN_ROUTES_MISSING, reason="scikit-learn >= 1.8 routes missing values as in training")
def test_old_scikit_learn_regression_trees_refuse_missing_values_naming_the_way_out():
    """Check that before scikit-learn 1.8 the default criterion refuses NaN, naming the version and the criteria."""
    X, y = _data()
    model = ConsistentForestClassifier(n_estimators=5)
    assert not model.__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match=r"scikit-learn >= 1.8.*criterion='ogini'"):
        model.fit(X, y)


@pytest.mark.slow
# 6 s an example on 2 cores (the slice grids of boosting's many thresholds): the longest test of the
# suite at 15; every run draws fresh seeds, so 6 per run still covers the three missing rates over time.
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 1000), missing=st.sampled_from([0.05, 0.2, 0.4]))
def test_boosting_with_missing_values_is_certified_and_exactly_consistent_on_every_slice(seed, missing):
    """Check certified boosting on data with gaps: certified by construction, and the slice oracle agrees."""
    X, y = _data(300, seed, missing)
    model = ConsistentGradientBoostingClassifier(min_samples_leaf=5, random_state=seed).fit(X, y)
    assert model.is_consistent()
    for pattern, grid in _slices(model):
        assert _consistent(grid), pattern


def test_boosting_learns_from_missingness_through_real_versus_missing_splits():
    """Check that a feature whose gaps carry the signal gets splits of all real values against the missing ones
    (threshold +inf), that predictions follow them, and that the model stays certified and consistent on slices."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(3000, 2))
    gone = rng.uniform(size=3000) < 0.3
    X[gone, 0] = np.nan
    y = np.digitize(X[:, 1], [0.5]) + 2 * gone  # classes 0..3: missing x0 lifts the class by two
    model = ConsistentGradientBoostingClassifier(random_state=0).fit(X, y)
    assert model.is_consistent()
    inner = [t.children_left >= 0 for t in model.estimators_]
    present_only = sum(int(np.sum(np.isinf(t.threshold[m]) & (t.feature[m] == 0)))
                       for t, m in zip(model.estimators_, inner, strict=True))
    assert present_only > 0
    probe = np.array([[0.3, 0.2], [np.nan, 0.2], [0.3, 0.8], [np.nan, 0.8]])
    np.testing.assert_array_equal(model.predict(probe), [0, 2, 1, 3])
    assert all(_consistent(grid) for _, grid in _slices(model))


@pytest.mark.slow
def test_monotone_boosting_with_missing_values_is_monotone_on_every_slice():
    """Check that constrained boosting on data with gaps is certified monotone and monotone on each slice."""
    X, y = _data(600, 5)
    model = ConsistentGradientBoostingClassifier(monotonic_cst=[1, 1], min_samples_leaf=5, random_state=0).fit(X, y)
    assert model.is_monotone() and model.is_consistent()
    for pattern, grid in _slices(model):
        assert _monotone(grid, [1, 1]), pattern


def test_boosting_prediction_routes_missing_values_as_each_tree_learnt():
    """Check the compiled sum of all trees against one plain walk per tree that follows missing_go_to_left,
    on rows missing each feature, with trees that send missing values both ways."""
    X, y = _data(800, 7, 0.3)
    model = ConsistentGradientBoostingClassifier(random_state=0).fit(X, y)
    learnt = np.concatenate([t.missing_go_to_left[t.children_left >= 0] for t in model.estimators_])
    assert learnt.any() and not learnt.all()
    walked = np.full(X.shape[0], float(model._f0))
    for tree in model.estimators_:
        for i, row in enumerate(X):
            node = 0
            while tree.children_left[node] >= 0:
                v = row[tree.feature[node]]
                go_left = bool(tree.missing_go_to_left[node]) if np.isnan(v) else v <= tree.threshold[node]
                node = tree.children_left[node] if go_left else tree.children_right[node]
            walked[i] += tree.value[node]
    np.testing.assert_allclose(model.predict_value(X), walked / float(1 << UNIT_BITS), rtol=0, atol=1e-9)
