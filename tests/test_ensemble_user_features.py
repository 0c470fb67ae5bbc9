"""What users of tree ensembles expect: class weights, text category columns, importances, small model files."""

# Models here are fitted for the pointwise notion where their subject is the machinery the data's
# resolution (docs/design.md section 13) does not certify: projected spaces, monotone forests.

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.class_weight import compute_sample_weight

from ensemble import ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger
from ensemble.base._estimator import SKLEARN_ROUTES_MISSING, class_weight_factors

ENSEMBLES = {
    "forest": lambda **kw: ConsistentForestClassifier(n_estimators=20, random_state=0, **kw),
    "otreebagger": lambda **kw: OTreeBagger(consistency="pointwise", n_estimators=6, random_state=0, **kw),
    "boosting": lambda **kw: ConsistentGradientBoostingClassifier(random_state=0, **kw),
}


def _data(n=240, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=n), [0.2, 0.8]) + 1
    return X, y


def _quiet_fit(model, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return model.fit(X, y, **kw)


@pytest.mark.parametrize("class_weight", ["balanced", {1: 3.0, 3: 0.5}])
def test_class_weight_factors_equal_scikit_learns(class_weight):
    """Check the per-row factors against scikit-learn's compute_sample_weight."""
    _, y = _data()
    y_idx = y - 1
    expected = compute_sample_weight(class_weight, y)
    np.testing.assert_allclose(class_weight_factors(class_weight, y_idx, np.array([1, 2, 3])), expected)


@pytest.mark.parametrize("name", sorted(ENSEMBLES))
@pytest.mark.parametrize("class_weight", ["balanced", {1: 2.0, 2: 1.0, 3: 0.25}])
def test_class_weight_equals_the_same_sample_weight(name, class_weight):
    """Check that class_weight fits the same model as its sample weights, combined with sample_weight."""
    X, y = _data()
    w = np.random.RandomState(1).uniform(0.5, 2.0, size=y.shape[0])
    a = _quiet_fit(ENSEMBLES[name](class_weight=class_weight), X, y, sample_weight=w)
    b = _quiet_fit(ENSEMBLES[name](), X, y, sample_weight=w * compute_sample_weight(class_weight, y))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_class_weight_errors_name_the_parameter():
    """Check clear errors for an unknown class and a negative weight."""
    X, y = _data()
    with pytest.raises(ValueError, match="class_weight names 7, which is not a class"):
        ConsistentForestClassifier(n_estimators=5, class_weight={7: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"class_weight\[1\] must be a finite non-negative number"):
        ConsistentForestClassifier(n_estimators=5, class_weight={1: -1.0}).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        ConsistentForestClassifier(n_estimators=5, class_weight="even").fit(X, y)


def _frame(n=240, seed=0):
    X, y = _data(n, seed)
    region = np.array(["north", "east", "south", "west"])[(X[:, 2] * 4).astype(int)]
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "region": region}), y


@pytest.mark.parametrize("name", sorted(ENSEMBLES))
@pytest.mark.parametrize("spec", [["region"], [2], "auto"])
def test_text_columns_are_encoded_as_categories(name, spec):
    """Check that a text column listed in categorical_features (or found by "auto") fits as its sorted codes."""
    frame, y = _frame()
    model = _quiet_fit(ENSEMBLES[name](categorical_features=spec), frame, y)
    assert 2 in model.categorical_features_.tolist()
    codes = frame.assign(region=np.searchsorted(["east", "north", "south", "west"], frame["region"]).astype(float))
    plain = _quiet_fit(ENSEMBLES[name](categorical_features=[2]), codes.to_numpy(), y)
    np.testing.assert_array_equal(model.predict(frame), plain.predict(codes.to_numpy()))
    assert model.is_consistent()


def test_pandas_categorical_column_uses_its_own_categories():
    """Check that a pandas Categorical column is coded in the order of its categories."""
    frame, y = _frame()
    order = ["west", "south", "north", "east"]
    cat = frame.assign(region=pd.Categorical(frame["region"], categories=order))
    model = _quiet_fit(ConsistentForestClassifier(n_estimators=10, random_state=0, categorical_features="auto"),
                       cat, y)
    codes = frame.assign(region=[order.index(v) for v in frame["region"]]).astype(float).to_numpy()
    plain = _quiet_fit(ConsistentForestClassifier(n_estimators=10, random_state=0, categorical_features=[2]),
                       codes, y)
    np.testing.assert_array_equal(model.predict(cat), plain.predict(codes))


@pytest.mark.parametrize("name", sorted(ENSEMBLES))
def test_an_object_column_of_numbers_is_numeric(name):
    """Check that a column of dtype object holding numbers (df.T.T, concatenations) is read as the numbers, as
    scikit-learn reads it, not coded as a category of every value (which left the guarantee and made every new
    number an unseen category); RankRules takes it too."""
    from ensemble import RankRules

    frame, y = _frame()
    numbers = frame[["a", "b"]]
    objects = numbers.assign(a=numbers["a"].astype(object))
    model = _quiet_fit(ENSEMBLES[name](), objects, y)
    assert model.categorical_features_.tolist() == []
    plain = _quiet_fit(ENSEMBLES[name](), numbers, y)
    moved = objects.assign(a=(numbers["a"] + 1e-4).astype(object))  # values never seen in fit
    np.testing.assert_array_equal(model.predict(moved), plain.predict(numbers + [1e-4, 0.0]))
    RankRules(n_rules=10, random_state=0).fit(objects, y)


def test_unseen_category_is_an_error_naming_the_column_and_value():
    """Check that a category unseen in fit is a clear error at predict."""
    frame, y = _frame()
    model = _quiet_fit(OTreeBagger(consistency="pointwise", n_estimators=3, categorical_features=["region"]), frame, y)
    other = frame.copy()
    other.loc[0, "region"] = "centre"
    with pytest.raises(ValueError, match="column 'region' holds the category 'centre', unseen in fit"):
        model.predict(other)
    ids = frame.assign(region=[f"id{i:03d}" for i in range(frame.shape[0])])  # an id column: one message line
    model = _quiet_fit(OTreeBagger(consistency="pointwise", n_estimators=3, categorical_features=["region"]), ids, y)
    with pytest.raises(ValueError, match=r"the known categories are \['id000', .*'id009'\] and \d+ more$"):
        model.predict(other)


def test_auto_categorical_finds_zero_one_and_bool_columns():
    """Check that "auto" declares 0/1 numeric and bool columns categorical, constrained ones never, and
    leaves other two-valued numeric columns (ages 30 and 40) continuous."""
    X, y = _data()
    frame = pd.DataFrame({"x": X[:, 0], "onehot": (X[:, 1] > 0.5).astype(float), "flag": X[:, 2] > 0.3})
    model = _quiet_fit(ConsistentForestClassifier(n_estimators=10, categorical_features="auto"), frame, y)
    assert model.categorical_features_.tolist() == [1, 2]
    ages = frame.assign(age=np.where(X[:, 1] > 0.5, 40.0, 30.0), gappy=np.where(X[:, 0] > 0.9, np.nan,
                                                                                  (X[:, 2] > 0.5) * 1.0))
    for name in sorted(ENSEMBLES):
        # The gappy column is missing in places: scikit-learn's own trees route that only from 1.8 on.
        old = name == "forest" and not SKLEARN_ROUTES_MISSING
        with_ages = _quiet_fit(ENSEMBLES[name](categorical_features="auto", **({"criterion": "ogini"} if old else {})),
                               ages, y)
        assert with_ages.categorical_features_.tolist() == [1, 2, 4], name  # a 0/1 column with gaps is 0/1
    constrained = _quiet_fit(ConsistentForestClassifier(n_estimators=10, categorical_features="auto",
                                                        monotonic_cst=[1, 1, 0]), frame, y)
    assert constrained.categorical_features_.tolist() == [2]
    none = _quiet_fit(ConsistentForestClassifier(n_estimators=10, categorical_features=None), frame, y)
    assert none.categorical_features_.tolist() == []


def test_two_valued_measurement_is_continuous_so_boosting_moves_one_class_at_a_time_between_its_values():
    """Check that a column of ages 30 and 40 is continuous under "auto": the certified boosting is then
    consistent between the two values (declared categorical it predicted class 0 at 35.0 and class 4 at
    the next float), and declaring it categorical is still the user's choice."""
    rng = np.random.RandomState(0)
    age = np.where(rng.uniform(size=200) < 0.5, 30.0, 40.0)
    X = np.column_stack([age, rng.uniform(size=200)])
    y = np.where(age == 40.0, 4, 0)
    y[:10] = [1, 2, 3, 1, 2, 3, 1, 2, 3, 2]
    model = ConsistentGradientBoostingClassifier(random_state=0).fit(X, y)
    assert model.categorical_features_.tolist() == []
    assert model.is_consistent()
    ages = np.concatenate([[30.0, 35.0, np.nextafter(35.0, np.inf)], np.linspace(30.0, 40.0, 201)])
    classes = model.predict(np.column_stack([ages, np.full(ages.shape[0], 0.5)]))
    assert abs(int(classes[1]) - int(classes[2])) <= 1
    assert np.abs(np.diff(classes[3:])).max() <= 1  # one class at a time from 30 to 40
    declared = ConsistentGradientBoostingClassifier(categorical_features=[0], random_state=0).fit(X, y)
    assert declared.categorical_features_.tolist() == [0]


@pytest.mark.parametrize("name", sorted(ENSEMBLES))
def test_feature_importances_find_the_informative_feature(name):
    """Check that importances sum to 1 and rank the one informative feature first."""
    X, y = _data(400)
    model = _quiet_fit(ENSEMBLES[name](), X, y)
    importances = model.feature_importances_
    assert importances.shape == (3,) and np.isclose(importances.sum(), 1.0)
    assert np.argmax(importances) == 0 and importances[0] > 0.5


def test_otreebagger_importances_through_pls_components():
    """Check that projected groups give their components' importances to the features that make them."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(400, 8))
    y = np.digitize(X[:, 0] + X[:, 1] + 0.2 * rng.normal(size=400), [0.6, 1.0, 1.4])
    model = OTreeBagger(consistency="pointwise", n_estimators=9, random_state=0).fit(X, y)
    assert all(group.space is not None for group in model.groups_)
    importances = model.feature_importances_
    assert np.isclose(importances.sum(), 1.0)
    assert set(np.argsort(importances)[-2:]) == {0, 1}


def test_saved_otreebagger_is_small_and_certifies_after_loading():
    """Check that a saved OTreeBagger holds no region boxes, contacts or counts, and re-derives its certificate."""
    X, y = _data(600)
    model = OTreeBagger(consistency="pointwise", n_estimators=12, random_state=0).fit(X, y)
    forest = ConsistentForestClassifier(random_state=0).fit(X, y)
    blob = pickle.dumps(model)
    loaded = pickle.loads(blob)
    assert all(g.edges is None and g.counts is None for g in loaded.groups_)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.is_consistent() and loaded.is_consistent() == model.is_consistent()
    assert len(blob) <= 3 * len(pickle.dumps(forest))


@pytest.mark.filterwarnings("ignore:.* predicts the single class .*:UserWarning")
@pytest.mark.parametrize("name", sorted(ENSEMBLES))
def test_weights_that_all_fall_short_of_one_row_warn(name):
    """Check that weights summing to 1 warn, naming sample_weight: a weight is a multiplicity (1 = one row).

    Boosting on such weights grows no tree (no leaf holds min_samples_leaf = 5 rows of weight); balanced
    class weights (mean 1) and weights of one row or more say nothing.
    """
    X, y = _data()
    with pytest.warns(UserWarning, match="sample_weight: every row weighs less than 1"):
        model = ENSEMBLES[name]().fit(X, y, sample_weight=np.full(X.shape[0], 1.0 / X.shape[0]))
    if name == "boosting":
        assert model.n_iter_ == 0
    for kw in ({"sample_weight": np.full(X.shape[0], 2.0)}, {"sample_weight": compute_sample_weight("balanced", y)}):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            warnings.filterwarnings("ignore", message=".*predicts the single class")
            ENSEMBLES[name]().fit(X, y, **kw)
