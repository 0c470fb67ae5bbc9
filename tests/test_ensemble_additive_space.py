"""Tests of OTreeBagger's additive group space (``projection="additive"``) and its score."""

# These tests are about the pointwise machinery of projected (or monotone) models, which the data's
# resolution (docs/design.md section 13) does not certify: their models are fitted for the pointwise notion.

import os
import tempfile
import warnings

import numpy as np
import pytest

from ensemble import OTreeBagger, count_jumps
from ensemble import segment_jumps
from ensemble.spaces._spaces import AdditiveScore, GroupSpace, _additive_score, _residual_features
from ensemble.model_files._model_file import load_model_file, save_model_file


def _data(n=400, d=5, seed=0, units=None):
    """Classes 1..4 of an additive nonlinear score of the first three features, plus noise features."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    score = np.sin(3 * X[:, 0]) + (X[:, 1] - 0.5) ** 2 * 4 + X[:, 2] + 0.2 * rng.normal(size=n)
    y = np.searchsorted(np.quantile(score, [0.25, 0.5, 0.75]), score) + 1
    if units is not None:
        X = X * np.asarray(units)
    return X, y


def _de_boor_basis(x, t, k, i):
    """B_{i,k}(x) by the Cox-de Boor recursion (right-closed at the last knot), an independent oracle."""
    if k == 0:
        last = t[i + 1] == t[-1] and t[i] < t[i + 1]
        return float(t[i] <= x < t[i + 1] or (last and x == t[-1]))
    out = 0.0
    if t[i + k] > t[i]:
        out += (x - t[i]) / (t[i + k] - t[i]) * _de_boor_basis(x, t, k - 1, i)
    if t[i + k + 1] > t[i + 1]:
        out += (t[i + k + 1] - x) / (t[i + k + 1] - t[i + 1]) * _de_boor_basis(x, t, k - 1, i + 1)
    return out


def _oracle_value(score, X):
    """The score by the definition: intercept + sum of each curve at its clamped, scaled feature."""
    out = np.full(X.shape[0], score.intercept)
    for i, f in enumerate(score.features):
        t, c = score.knots[i], score.coefs[i]
        for r in range(X.shape[0]):
            v = min(max(X[r, f] / score.scale[i] - score.center[i], t[0]), t[-1])
            out[r] += sum(c[j] * _de_boor_basis(v, t, 3, j) for j in range(c.shape[0]))
    return out


def _reloaded(model):
    """``model`` written to a model file and read back (the command line's skops archive)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.skops")
        save_model_file(path, model)
        return load_model_file(path)["model"]


def _line_jumps(model, X, rng, n_lines=60, n_steps=1500):
    """Jumps of two classes along segments between random rows (can refute consistency only).

    A scan step two classes apart is bisected to 1e-15 of its segment: a consistent
    model may pass through a band of the class between thinner than a step.
    """
    a, b = X[rng.randint(len(X), size=n_lines)], X[rng.randint(len(X), size=n_lines)]
    t = np.linspace(0.0, 1.0, n_steps)[:, None]
    points = np.concatenate([a[i] + t * (b[i] - a[i]) for i in range(n_lines)])

    def rank(Z):
        # The bisection may ask for no point at all once every step is decided.
        return np.searchsorted(model.classes_, model.predict(Z)) if Z.shape[0] else np.empty(0, np.intp)

    ranks = rank(points).reshape(n_lines, n_steps)
    line, step = np.nonzero(np.abs(np.diff(ranks, axis=1)) > 1)
    start, end = line * n_steps + step, line * n_steps + step + 1
    return int(segment_jumps(points[start], points[end], ranks[line, step], ranks[line, step + 1], rank,
                            tol=1e-15).sum())


@pytest.mark.parametrize("units", [None, [1e-10, 1e9, 1.0, 3e5, 1e-300]])
def test_additive_score_is_its_definition_inside_and_beyond_the_knots(units):
    """Check the score against the Cox-de Boor recursion, in odd units and past the training range."""
    X, y = _data(300, units=units)
    score = _additive_score(X, y, np.arange(300), np.arange(5), np.ones(300))
    rng = np.random.RandomState(1)
    probe = np.vstack([X[:20], X[:5] * 3.0, X[:5] * -2.0, X[:5] * 0.0])
    probe = probe[rng.permutation(probe.shape[0])]
    np.testing.assert_allclose(score.value(probe), _oracle_value(score, probe), rtol=1e-9, atol=1e-9)


def test_additive_score_skips_constant_features():
    """Check that a constant column gets no curve and the others keep their own scales."""
    X, y = _data(300, units=[1.0, 1e6, 1.0, 1.0, 1.0])
    X = np.column_stack([np.full(300, 5.0), X])
    score = _additive_score(X, y, np.arange(300), np.arange(6), np.ones(300))
    assert score.features.tolist() == [1, 2, 3, 4, 5]
    assert score.scale.shape == (5,) and score.scale[1] > 1e5
    np.testing.assert_allclose(score.value(X[:30]), _oracle_value(score, X[:30]), rtol=1e-9, atol=1e-9)
    model = OTreeBagger(consistency="pointwise", n_estimators=6, projection="additive", random_state=0).fit(X, y)
    assert model.is_consistent()


def test_additive_score_values_do_not_depend_on_the_batch():
    """Check that a row's score is the same float alone and within any batch."""
    X, y = _data(300)
    score = _additive_score(X, y, np.arange(300), np.arange(5), np.ones(300))
    together = score.value(X)
    alone = np.array([score.value(X[i: i + 1])[0] for i in range(0, 300, 7)])
    assert np.array_equal(together[::7], alone)


def test_additive_score_reads_read_only_arrays():
    """Check a score whose arrays are read-only (a model loaded from a memory map) evaluates the same."""
    X, y = _data(300)
    score = _additive_score(X, y, np.arange(300), np.arange(5), np.ones(300))
    expected = score.value(X)
    for array in (*score.knots, *score.coefs):
        array.flags.writeable = False
    X.flags.writeable = False
    assert np.array_equal(score.value(X), expected)
    assert np.all(np.isfinite(score.lipschitz()))


def test_additive_score_fits_the_class_index():
    """Check that the fitted score follows the class index (a model that ignored y would not)."""
    X, y = _data(600)
    score = _additive_score(X, y, np.arange(600), np.arange(5), np.ones(600))
    assert np.corrcoef(score.value(X), y)[0, 1] > 0.85
    # The noise features move the score far less than the informative ones.
    assert score.spread[3:].max() < 0.3 * score.spread[:3].min()


def test_additive_curves_do_not_swing_back_at_sparse_ends():
    """Check that a curve's gap swing stays near the class's step where single rows hold the extreme values.

    Three integer features add up to the score behind five quantile classes; their
    extreme values hold one to five rows. A penalty that shrank each coefficient to zero
    pulled those ends back toward the mean: 1.59 classes inside one end gap, against 0.42
    anywhere the rows lie. Penalising the increments pulls an end toward its neighbour.
    """
    from ensemble.spaces._moves import gap_swing

    rng = np.random.RandomState(0)
    X = np.round(rng.normal(size=(3000, 3)) * 2)
    s = X.sum(axis=1) + rng.normal(size=3000)
    y = np.searchsorted(np.quantile(s, [0.2, 0.4, 0.6, 0.8]), s).astype(np.float64)
    ranks = np.column_stack([np.unique(X[:, f], return_inverse=True)[1] for f in range(3)]).astype(np.float64)
    score = _additive_score(ranks, y, np.arange(3000), np.arange(3), np.ones(3000), on_ranks=True)
    for f in range(3):
        assert gap_swing(score, f, np.unique(X[:, f]).shape[0] - 1) < 0.6
    assert np.corrcoef(score.value(ranks), y)[0, 1] > 0.85


def test_additive_score_lipschitz_bounds_every_move():
    """Check |s(x + d e_f) - s(x)| <= Lip_f |d| on random moves, in odd units."""
    X, y = _data(400, units=[1e-10, 1e9, 1.0, 1.0, 7.0])
    score = _additive_score(X, y, np.arange(400), np.arange(5), np.ones(400))
    bound = score.lipschitz()
    rng = np.random.RandomState(2)
    for f in range(5):
        base = X[rng.randint(400, size=500)]
        step = (rng.uniform(-0.2, 0.2, size=500) * X[:, f].std())
        moved = base.copy()
        moved[:, f] += step
        change = np.abs(score.value(moved) - score.value(base))
        assert np.all(change <= bound[f] * np.abs(step) * (1 + 1e-9) + 1e-12)
    # Not vacuous: the steepest observed slope of the first feature is near its bound.
    grid = np.repeat(X[:1], 20001, axis=0)
    grid[:, 0] = np.linspace(X[:, 0].min(), X[:, 0].max(), 20001)
    slope = np.abs(np.diff(score.value(grid))) / np.diff(grid[:, 0])
    assert slope.max() > 0.3 * bound[0]


def _hand_score(coefs):
    """One curve on [0, 1] with clamped knots 0, 0.5, 1 and the given five coefficients."""
    t = np.array([0.0, 0, 0, 0, 0.5, 1, 1, 1, 1])
    return AdditiveScore(np.array([0]), np.array([1.0]), np.array([0.0]), (t,), (np.asarray(coefs, float),),
                         0.0, np.array([1.0]))


@pytest.mark.parametrize("coefs, expected", [
    ([0, 1, 1, 2, 3], 1), ([3, 2, 2, 0, -1], -1), ([1, 1, 1, 1, 1], 0), ([0, 4, -2, 4, 0], 2),
])
def test_additive_score_directions_are_truthful(coefs, expected):
    """Check the curve's stated direction, and that a stated one holds on a dense scan."""
    score = _hand_score(coefs)
    assert score.directions()[0] == expected
    values = score.value(np.linspace(-0.5, 1.5, 4001)[:, None])
    steps = np.diff(values)
    if expected == 1:
        assert steps.min() >= -1e-12
    elif expected == -1:
        assert steps.max() <= 1e-12
    elif expected == 0:
        assert np.abs(steps).max() <= 1e-12
    else:  # this curve does fall somewhere and rise elsewhere
        assert steps.min() < 0 < steps.max()


def test_space_constraints_follow_the_curves_directions():
    """Check GroupSpace.constraints on the score: a rising curve maps a constraint, a mixed one conflicts."""
    rising = GroupSpace(np.empty(0, np.intp), np.zeros((0, 1)), np.zeros(1), np.array([1]),
                        np.empty(0), np.empty(0), np.empty(0), _hand_score([0, 1, 1, 2, 3]))
    assert rising.constraints(np.array([1, 0])).tolist() == [1, 0]
    assert rising.constraints(np.array([-1, 1])).tolist() == [-1, 1]
    mixed = GroupSpace(np.empty(0, np.intp), np.zeros((0, 1)), np.zeros(1), np.array([1]),
                       np.empty(0), np.empty(0), np.empty(0), _hand_score([0, 4, -2, 4, 0]))
    assert mixed.constraints(np.array([1, 0])) is None
    assert mixed.constraints(np.array([1, 0]), conflict=-1).tolist() == [-1, 0]
    assert mixed.constraints(np.array([0, 1])).tolist() == [0, 1]
    with pytest.raises(ValueError, match="not affine"):
        mixed.affine()


def test_additive_otreebagger_is_certified_and_the_oracle_agrees():
    """Check is_consistent() on an additive-space model and a line-scan oracle in the features."""
    X, y = _data(400)
    model = OTreeBagger(consistency="pointwise", n_estimators=30, projection="additive", random_state=0, space_params={'score_model': "additive", 'residual_axes': "pls"}).fit(X, y)
    assert all(group.space.additive is not None for group in model.groups_)
    assert all(group.space.n_components == 3 for group in model.groups_)
    assert model.is_consistent()
    assert _line_jumps(model, X, np.random.RandomState(0)) == 0
    # The oracle can fail: the same scan finds the jumps of unrelabelled bagged trees.
    free = OTreeBagger(consistency="pointwise", n_estimators=30, projection="additive", relabel=False, vote="mode",
                       random_state=0).fit(X, y)
    assert _line_jumps(free, X, np.random.RandomState(0)) > 0


def test_additive_certificate_fails_on_a_model_built_to_fail():
    """Check that relabelled groups whose labels are then scrambled are not certified."""
    X, y = _data(300)
    model = OTreeBagger(consistency="pointwise", n_estimators=9, projection="additive", random_state=0).fit(X, y)
    for group in model.groups_:
        group.labels[:] = np.where(np.arange(group.labels.shape[0]) % 2 == 0, 0, model.n_classes_ - 1)
    assert model.is_consistent() is False


def test_additive_space_beats_pls_on_additive_data():
    """Check the space's purpose: on an additive nonlinear class, fresh rows err less than with PLS."""
    X, y = _data(1200, d=8, seed=3)
    train, test = np.arange(600), np.arange(600, 1200)
    errors = {}
    for projection in ("pls", "additive"):
        # The additive score with PLS beside it: the space alone, no held-out choice.
        model = OTreeBagger(consistency="pointwise", n_estimators=30, projection=projection, random_state=0, space_params={'score_model': "additive", 'residual_axes': "pls"}).fit(X[train], y[train])
        errors[projection] = np.mean(np.abs(model.predict(X[test]) - y[test]))
    assert errors["additive"] < errors["pls"] - 0.05


def test_additive_space_is_free_of_the_features_units():
    """Check that features in odd units give the same model (power-of-two scales, quantile knots)."""
    X, y = _data(300)
    units = np.array([1e-10, 1e9, 1.0, 3e5, 2.0**-30])
    plain = OTreeBagger(consistency="pointwise", n_estimators=9, projection="additive", random_state=0).fit(X, y)
    odd = OTreeBagger(consistency="pointwise", n_estimators=9, projection="additive", random_state=0).fit(X * units, y)
    agree = np.mean(plain.predict(X) == odd.predict(X * units))
    assert agree >= 0.99
    assert odd.is_consistent()


def test_additive_space_with_resolution_is_r_consistent():
    """Check that r-consistency maps through the score's Lipschitz bound and certifies."""
    X, y = _data(300)
    model = OTreeBagger(consistency="pointwise", n_estimators=9, projection="additive", resolution=0.05, random_state=0).fit(X, y)
    assert model.is_consistent(resolution=0.05)
    # Oracle: points closer than r along every feature never get classes two apart.
    rng = np.random.RandomState(4)
    base = rng.uniform(size=(20000, 5))
    near = base + rng.uniform(-0.05, 0.05, size=base.shape) * 0.999
    ranks = np.searchsorted(model.classes_, model.predict(np.vstack([base, near])))
    assert np.abs(ranks[:20000] - ranks[20000:]).max() <= 1
    # Not vacuous: the unconstrained bagged trees of the same space do jump within r.
    free = OTreeBagger(consistency="pointwise", n_estimators=9, projection="additive", relabel=False, vote="mode", random_state=0).fit(X, y)
    ranks = np.searchsorted(free.classes_, free.predict(np.vstack([base, near])))
    assert np.abs(ranks[:20000] - ranks[20000:]).max() > 1


def _wrong_way_steps(model, monotonic_cst, rng, n=4000):
    """Pairs x, x + t e_f (t > 0) whose classes go against the constraint on f (an oracle)."""
    base = rng.uniform(size=(n, len(monotonic_cst)))
    wrong = 0
    for f, sign in enumerate(monotonic_cst):
        if sign == 0:
            continue
        moved = base.copy()
        moved[:, f] += rng.uniform(0, 0.5, size=n)
        ranks = np.searchsorted(model.classes_, model.predict(np.vstack([base, moved])))
        wrong += int(np.sum(sign * (ranks[n:] - ranks[:n]) < 0))
    return wrong


def test_bounded_ridge_reaches_the_optimum_of_another_solver():
    """Check the bounded ridge fit against L-BFGS-B on the same objective (weights, penalty, bounds)."""
    from scipy.optimize import minimize

    from ensemble.spaces._spaces import _bounded_ridge

    rng = np.random.RandomState(6)
    design = rng.normal(size=(200, 8))
    target = design @ np.array([1.0, -2.0, 0.5, -0.5, 1.5, 0.0, -1.0, 2.0]) + rng.normal(size=200)
    weight = rng.uniform(0.5, 2.0, size=200)
    nonneg = np.array([True, True, False, True, False, False, True, True])
    alpha = 3.0

    def objective(theta):
        intercept = np.average(target - design @ theta, weights=weight)
        residual = target - intercept - design @ theta
        return float(weight @ residual**2 + alpha * theta @ theta)

    theta, intercept = _bounded_ridge(design, target, weight, alpha, nonneg)
    assert np.all(theta[nonneg] >= 0) and np.any(theta[nonneg] < 1e-8)  # some bounds bind
    assert intercept == pytest.approx(np.average(target - design @ theta, weights=weight))
    other = minimize(objective, np.zeros(8), method="L-BFGS-B",
                     bounds=[(0, None) if b else (None, None) for b in nonneg], options={"ftol": 1e-15, "gtol": 1e-10})
    assert objective(theta) <= other.fun + 1e-6 * abs(other.fun)
    assert objective(theta) == pytest.approx(other.fun, rel=1e-6)


def test_additive_space_carries_monotone_constraints():
    """Check monotone curves for constrained features: certified, and an oracle finds no wrong-way step."""
    X, y = _data(500)
    cst = [0, 0, 1, 0, 0]  # the class rises with feature 2 (plus noise)
    model = OTreeBagger(consistency="pointwise", n_estimators=12, projection="additive", monotonic_cst=cst, random_state=0).fit(X, y)
    space = model.groups_[0].space
    assert space.additive.directions()[space.additive.features.tolist().index(2)] == 1
    assert 2 not in space.projected  # PLS directions never touch a constrained feature
    assert model.is_monotone() and model.is_consistent()
    assert _wrong_way_steps(model, cst, np.random.RandomState(5)) == 0
    # Not vacuous: the free model of the same space does go the wrong way somewhere.
    free = OTreeBagger(consistency="pointwise", n_estimators=12, projection="additive", random_state=0).fit(X, y)
    assert _wrong_way_steps(free, cst, np.random.RandomState(5)) > 0
    assert not free.is_monotone(monotonic_cst=cst)


def test_additive_score_monotone_curves_follow_their_signs():
    """Check that a constrained curve only moves its way, even against the data's direction."""
    X, y = _data(500)
    signs = np.array([1, -1, 0, 0, -1])  # feature 0 rises then falls in y; feature 1 is U-shaped
    score = _additive_score(X, y, np.arange(500), np.arange(5), np.ones(500), signs)
    assert score.directions().tolist()[:2] == [1, -1] and score.directions()[4] in (-1, 0)
    grid = np.repeat(X[:1], 3001, axis=0)
    for f, sign in ((0, 1), (1, -1), (4, -1)):
        probe = grid.copy()
        probe[:, f] = np.linspace(-0.2, 1.2, 3001)
        assert np.all(sign * np.diff(score.value(probe)) >= -1e-12)


def test_additive_model_saves_loads_and_keeps_categorical_axes():
    """Check a saved additive-space model predicts the same, and categorical columns keep their axes."""
    X, y = _data(300)
    X = np.column_stack([X, (X[:, 0] > 0.5).astype(float)])  # a 0/1 column: categorical by default
    model = OTreeBagger(consistency="pointwise", n_estimators=9, projection="additive", random_state=0, space_params={'residual_axes': "pls"}).fit(X, y)
    space = model.groups_[0].space
    assert space.kept.tolist() == [5] and 5 not in space.additive.features
    importances = model.feature_importances_
    assert importances.min() >= 0 and importances.sum() == pytest.approx(1.0)
    loaded = _reloaded(model)
    assert np.array_equal(loaded.predict(X), model.predict(X))
    assert loaded.is_consistent()


def test_additive_space_draws_its_regions_by_bisection():
    """Check the 2D display's jump count on an additive-space model (curved boundaries, no lines)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 2))
    y = np.digitize(np.sin(3 * X[:, 0]) + X[:, 1] ** 2, [0.6, 1.1, 1.5]) + 1
    model = OTreeBagger(consistency="pointwise", n_estimators=9, projection="additive", random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert count_jumps(model, X, grid_resolution=60) == 0


def _interaction(n=1200, d=5, seed=0):
    """Classes 1..4 of the product of the first two centred features: no additive score follows it."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    return X, 1 + np.digitize((X[:, 0] - 0.5) * (X[:, 1] - 0.5), [-0.05, 0.0, 0.05])


def test_residual_features_are_those_the_interaction_needs():
    """Check the residual tree's axes: the interacting pair, only among the candidates, none on a flat residual."""
    X, y = _interaction()
    rows, weight = np.arange(X.shape[0]), np.ones(X.shape[0])
    residual = y - y.mean()
    assert _residual_features(X, residual, rows, weight, np.arange(5), 2).tolist() == [0, 1]
    assert _residual_features(X, residual, rows, weight, np.array([1, 2, 3]), 2)[0] == 1
    assert _residual_features(X, residual, rows, weight, np.arange(5), 1).shape == (1,)
    assert _residual_features(X, np.zeros(X.shape[0]), rows, weight, np.arange(5), 2).shape == (0,)
    # Rows of weight 0 are not the group's: a residual only they carry is not seen.
    outside = np.where(X[:, 3] > 0.5, 5.0, 0.0)
    assert 3 in _residual_features(X, outside, rows, weight, np.arange(5), 2)
    assert 3 not in _residual_features(X, outside, rows[X[:, 3] <= 0.5], weight, np.arange(5), 2)


def test_auto_residual_axes_learn_an_interaction_that_pls_cannot():
    """Check residual_axes="auto" on interaction data: chooses the features, learns, certified, oracle agrees."""
    X, y = _interaction()
    train, test = np.arange(600), np.arange(600, 1200)
    # Beside the additive score, which cannot hold the interaction (a kernel score may: its own tests).
    model = OTreeBagger(consistency="pointwise", n_estimators=30, random_state=0, space_params={'score_model': "additive"}).fit(X[train], y[train])
    scores = model.residual_axes_scores_
    assert set(scores) == {"pls", "features"} and model.residual_axes_ == min(scores, key=scores.get)
    assert model.residual_axes_ == "features"
    kept = [set(group.space.kept.tolist()) for group in model.groups_]
    assert sum(k == {0, 1} for k in kept) >= 0.8 * len(kept)
    error = np.abs(model.predict(X[test]) - y[test]).mean()
    pls = OTreeBagger(consistency="pointwise", n_estimators=30, random_state=0, space_params={'score_model': "additive", 'residual_axes': "pls"}).fit(X[train], y[train])
    assert pls.residual_axes_ == "pls" and pls.residual_axes_scores_ is None
    assert error < 0.2 < 0.4 < np.abs(pls.predict(X[test]) - y[test]).mean()
    assert model.is_consistent()
    assert _line_jumps(model, X[test], np.random.RandomState(1)) == 0
    loaded = _reloaded(model)
    assert np.array_equal(loaded.predict(X), model.predict(X)) and loaded.is_consistent()


def test_residual_axes_never_hold_a_constrained_feature():
    """Check monotone constraints with interaction axes: certified, and the wrong-way oracle finds nothing."""
    X, y = _interaction(900)
    y = np.minimum(y + (X[:, 2] > 0.5), 4)  # rises with feature 2 too
    cst = [0, 0, 1, 0, 0]
    model = OTreeBagger(consistency="pointwise", n_estimators=12, monotonic_cst=cst, random_state=0, space_params={'residual_axes': "features"}).fit(X, y)
    assert all(2 not in group.space.kept for group in model.groups_)
    assert model.is_monotone() and model.is_consistent()
    assert _wrong_way_steps(model, cst, np.random.RandomState(5)) == 0


def test_residual_axes_tie_keeps_pls(monkeypatch):
    """Check that equal held-out errors keep PLS, and that the choice is recorded."""
    X, y = _data(300)
    monkeypatch.setattr(OTreeBagger, "_probe_error", lambda self, data, job, probe, seeds, held_out: 0.5)
    model = OTreeBagger(consistency="pointwise", n_estimators=6, random_state=0).fit(X, y)
    assert model.residual_axes_scores_ == {"pls": 0.5, "features": 0.5} and model.residual_axes_ == "pls"
    assert all(group.space.n_components == 3 for group in model.groups_)
    raw = OTreeBagger(consistency="pointwise", n_estimators=6, projection="none", random_state=0).fit(X, y)
    assert raw.residual_axes_ is None and raw.residual_axes_scores_ is None


def test_residual_features_on_a_subsample_of_many_rows(monkeypatch):
    """Check that past the row cap the residual tree reads evenly spaced rows and still finds the pair."""
    import ensemble.spaces._spaces as groups

    X, y = _interaction(3000)
    rows, weight = np.arange(3000), np.ones(3000)
    monkeypatch.setattr(groups, "_RESIDUAL_ROWS", 600)
    assert _residual_features(X, y - y.mean(), rows, weight, np.arange(5), 2).tolist() == [0, 1]
    # Only the capped rows are read: a residual living on the others is not seen.
    unseen = np.ones(3000, bool)
    unseen[np.linspace(0, 2999, 600).astype(np.intp)] = False
    hidden = np.where(unseen & (X[:, 4] > 0.5), 5.0, 0.0)
    assert _residual_features(X, hidden, rows, weight, np.arange(5), 2).shape == (0,)


def test_pls_space_of_constant_features_keeps_their_axes():
    """Check that a group space whose projected features are all constant on its rows (no PLS
    direction) keeps them on their own axes instead of leaving the trees no feature at all."""
    X = np.full((8, 3), 5.0)
    y = np.arange(8) % 2
    space = GroupSpace.pls(X, y, np.arange(8), np.array([0, 1]), np.array([2]), 2)
    assert space.is_identity and space.kept.tolist() == [0, 1, 2]
    assert space.transform(X).shape == (8, 3)


@pytest.mark.parametrize("kind", ["constant", "constant and integer", "integer", "float"])
@pytest.mark.parametrize("projection", ["additive", "auto"])
@pytest.mark.parametrize("n, d", [(6, 2), (8, 2), (12, 3), (20, 1), (20, 3)])
def test_tiny_fits_in_every_space_fit_and_are_certified(kind, projection, n, d):
    """Check tiny fits (6-20 rows, 1-3 features, two classes): constant columns gave the additive and
    PLS spaces no axis, so a tree grown on zero features crashed or fusing raised "boxes_list[0] must
    have at least one feature"."""
    rng = np.random.RandomState(n + d)
    X = rng.uniform(size=(n, d))
    if kind != "float":
        X = rng.randint(0, 4, size=(n, d)).astype(np.float64)
    if kind.startswith("constant"):
        X[:, : d if kind == "constant" else max(d - 1, 1)] = 5.0
    y = np.arange(n) % 2
    for params in ({}, {"min_samples_leaf": 5}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            model = OTreeBagger(consistency="pointwise", n_estimators=6, projection=projection, random_state=0, **params).fit(X, y)
        assert model.is_consistent()
        assert set(model.predict(X)) <= {0, 1}
        for group in model.groups_:
            assert group.space is None or group.space.transform(X).shape[1] > 0
