"""Tests of the kernel score of OTreeBagger's score space (``score_model="kernel"``)."""

# These tests are about the pointwise machinery of projected (or monotone) models, which the data's
# resolution (docs/design.md section 13) does not certify: their models are fitted for the pointwise notion.

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from ensemble import OTreeBagger
from ensemble.spaces._spaces import KernelScore, kernel_score

from test_ensemble_additive_space import _line_jumps, _reloaded, _wrong_way_steps

UNITS = np.array([1e-10, 1e9, 1.0, 3e5, 7.0])


def _product(n=600, d=5, seed=0, units=None):
    """Classes 1..4 of the product of the first two features (an interaction no additive score holds)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    score = X[:, 0] * X[:, 1] + 0.05 * rng.normal(size=n)
    y = np.searchsorted(np.quantile(score, [0.25, 0.5, 0.75]), score) + 1
    return (X if units is None else X * units), y


def _fitted(n=400, units=UNITS, seed=0) -> tuple[KernelScore, np.ndarray, np.ndarray]:
    X, y = _product(n, units=units, seed=seed)
    return kernel_score(X, y, np.arange(n), np.arange(5), np.ones(n), seed=0), X, y


def test_kernel_score_is_its_definition_in_odd_units():
    """Check value() against the formula computed independently (scipy distances, numpy exp)."""
    score, X, _ = _fitted()
    T = (X[:, score.features] / score.scale - score.center - score.mean) / score.std
    expected = score.intercept + np.exp(-score.gamma * cdist(T, score.landmarks, "sqeuclidean")) @ score.coefs
    assert np.allclose(score.value(X), expected, rtol=1e-10, atol=1e-10)
    assert score.gamma == pytest.approx(1 / 5)
    # Standardised coordinates: every feature's t has mean 0 and spread 1 whatever its units.
    assert np.allclose(T.mean(axis=0), 0, atol=1e-9) and np.allclose(T.std(axis=0), 1)


def test_kernel_score_equals_scikit_learns_nystroem_ridge():
    """Check the fit against scikit-learn's Nystroem features on the same landmarks and Ridge at the same penalty."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge

    score, X, y = _fitted(300)
    weight = np.random.RandomState(1).uniform(0.5, 2.0, size=300)
    score = kernel_score(X, y, np.arange(300), np.arange(5), weight, seed=0)
    T = (X / score.scale - score.center - score.mean) / score.std
    assert score.landmarks.shape[0] == 300  # fewer rows than the cap: every distinct row is a landmark
    features = Nystroem(gamma=score.gamma, n_components=300, random_state=0).fit(score.landmarks)
    ridge = Ridge(alpha=score.alpha).fit(features.transform(T), y, sample_weight=weight)
    assert np.allclose(score.value(X), ridge.predict(features.transform(T)), atol=1e-4)


def test_kernel_score_gradient_matches_finite_differences():
    """Check the analytic gradient against central differences in every feature's own units."""
    score, X, _ = _fitted()
    rows = X[:20]
    h = 1e-6 * X.std(axis=0)
    numeric = np.column_stack([
        (score.value(rows + h[f] * np.eye(5)[f]) - score.value(rows - h[f] * np.eye(5)[f])) / (2 * h[f])
        for f in range(5)])
    assert np.allclose(score.gradient(rows), numeric, rtol=1e-4, atol=1e-6 * np.abs(numeric).max())


def test_kernel_score_lipschitz_bounds_every_move():
    """Check |s(x + d e_f) - s(x)| <= Lip_f |d| on random moves, some far outside the data, in odd units."""
    score, X, _ = _fitted()
    bound = score.lipschitz()
    assert np.all(np.isfinite(bound)) and np.all(bound > 0)
    rng = np.random.RandomState(2)
    for f in range(5):
        base = X[rng.randint(400, size=2000)] * rng.choice([1.0, 3.0], size=(2000, 1))
        step = rng.uniform(-2, 2, size=2000) * X[:, f].std()
        moved = base.copy()
        moved[:, f] += step
        change = np.abs(score.value(moved) - score.value(base))
        assert np.all(change <= bound[f] * np.abs(step) * (1 + 1e-9) + 1e-12)
        # The bound holds the steepest slope seen along the feature.
        assert np.abs(score.gradient(X)[:, f]).max() <= bound[f]


def test_kernel_score_values_do_not_depend_on_the_batch():
    """Check that a row's score is the same float alone, in a batch and in a reordered batch."""
    score, X, _ = _fitted()
    whole = score.value(X)
    assert all(score.value(X[i:i + 1])[0] == whole[i] for i in range(0, 400, 37))
    order = np.random.RandomState(0).permutation(400)
    assert np.array_equal(score.value(X[order]), whole[order])


def test_kernel_score_learns_an_interaction_and_shares_it_among_its_features():
    """Check the score's purpose: it follows x0 * x1, which the additive score cannot hold."""
    from ensemble.spaces._spaces import _additive_score

    X, y = _product(800)
    rows, weight = np.arange(800), np.ones(800)
    kernel = kernel_score(X, y, rows, np.arange(5), weight)
    additive = _additive_score(X, y, rows, np.arange(5), weight)
    assert np.corrcoef(kernel.value(X), y)[0, 1] > 0.9 > 0.3 > abs(np.corrcoef(additive.value(X), y)[0, 1])
    assert kernel.spread[2:].max() < 0.3 * kernel.spread[:2].min()
    assert kernel.directions().tolist() == [2] * 5


def test_kernel_score_skips_constant_features_and_repeated_rows():
    """Check that a constant feature is not read and twin rows make one landmark."""
    X, y = _product(200)
    X[:, 3] = 4.0
    X = np.vstack([X, X])
    y = np.concatenate([y, y])
    score = kernel_score(X, y, np.arange(400), np.arange(5), np.ones(400))
    assert score.features.tolist() == [0, 1, 2, 4]
    assert score.landmarks.shape == (200, 4)
    assert kernel_score(X, y, np.arange(400), np.array([3]), np.ones(400)) is None


def test_kernel_otreebagger_is_certified_and_the_oracle_agrees():
    """Check is_consistent() on a kernel-score model and the line-scan oracle in the features."""
    X, y = _product(800)
    train, test = np.arange(500), np.arange(500, 800)
    model = OTreeBagger(consistency="pointwise", n_estimators=30, random_state=0, space_params={'score_model': "kernel", 'residual_axes': "pls"}).fit(X[train],
                                                                                                      y[train])
    assert model.score_model_ == "kernel" and model.score_model_scores_ is None
    assert all(isinstance(group.space.additive, KernelScore) for group in model.groups_)
    assert model.is_consistent()
    assert _line_jumps(model, X, np.random.RandomState(0)) == 0
    # The score itself holds the product: PLS axes beside it suffice (beside an additive score they do not).
    additive = OTreeBagger(consistency="pointwise", n_estimators=30, random_state=0, space_params={'score_model': "additive", 'residual_axes': "pls"}).fit(X[train], y[train])
    errors = [np.abs(m.predict(X[test]) - y[test]).mean() for m in (model, additive)]
    assert errors[0] < errors[1] - 0.15
    # Importances come from the score's shares: the product's two features lead.
    assert set(np.argsort(model.feature_importances_)[-2:].tolist()) == {0, 1}


def test_kernel_certificate_fails_on_a_model_built_to_fail():
    """Check that scrambled region labels of a kernel-score model are not certified, and the oracle sees jumps."""
    X, y = _product(300)
    model = OTreeBagger(consistency="pointwise", n_estimators=9, random_state=0, space_params={'score_model': "kernel"}).fit(X, y)
    for group in model.groups_:
        group.labels[:] = np.where(np.arange(group.labels.shape[0]) % 2 == 0, 0, model.n_classes_ - 1)
    assert model.is_consistent() is False
    assert _line_jumps(model, X, np.random.RandomState(0)) > 0


def test_kernel_space_with_resolution_is_r_consistent():
    """Check that r-consistency maps through the kernel score's Lipschitz bound and certifies."""
    X, y = _product(300)
    r = 0.05
    model = OTreeBagger(consistency="pointwise", n_estimators=6, resolution=r, random_state=0, space_params={'score_model': "kernel"}).fit(X, y)
    assert model.is_consistent(resolution=r)
    rng = np.random.RandomState(4)
    base = rng.uniform(-1, 1, size=(20000, 5))
    near = base + rng.uniform(-r, r, size=base.shape) * 0.999
    ranks = np.searchsorted(model.classes_, model.predict(np.vstack([base, near])))
    assert np.abs(ranks[:20000] - ranks[20000:]).max() <= 1


def test_auto_score_model_chooses_by_held_out_error_and_keeps_additive_on_a_tie(monkeypatch):
    """Check score_model="auto": the held-out scores decide; equal scores keep the additive score."""
    X, y = _product(600)
    # With PLS beside it, only a score that holds the product itself can follow it.
    model = OTreeBagger(consistency="pointwise", n_estimators=12, random_state=0, space_params={'residual_axes': "pls"}).fit(X, y)
    scores = model.score_model_scores_
    assert set(scores) == {"additive", "kernel"} and model.score_model_ == min(scores, key=scores.get)
    assert model.score_model_ == "kernel" and model.residual_axes_scores_ is None
    assert all(isinstance(group.space.additive, KernelScore) for group in model.groups_)
    # Both left open: the pair is chosen jointly, and each dict holds the other choice's row.
    both = OTreeBagger(consistency="pointwise", n_estimators=12, random_state=0).fit(X, y)
    chosen = both.score_model_scores_[both.score_model_]
    assert chosen == both.residual_axes_scores_[both.residual_axes_]
    assert chosen == min(*both.score_model_scores_.values(), *both.residual_axes_scores_.values())
    monkeypatch.setattr(OTreeBagger, "_probe_error", lambda self, data, job, probe, seeds, held_out: 0.5)
    tie = OTreeBagger(consistency="pointwise", n_estimators=6, random_state=0).fit(X, y)
    assert tie.score_model_scores_ == {"additive": 0.5, "kernel": 0.5} and tie.score_model_ == "additive"
    assert tie.residual_axes_scores_ == {"pls": 0.5, "features": 0.5} and tie.residual_axes_ == "pls"
    raw = OTreeBagger(consistency="pointwise", n_estimators=6, projection="none", random_state=0).fit(X, y)
    assert raw.score_model_ is None and raw.score_model_scores_ is None


def test_monotone_constraints_keep_the_additive_score():
    """Check that constraints keep the certified additive curves, and that a kernel score is refused."""
    X, y = _product(500)
    y = np.minimum(y + (X[:, 2] > 0.5), 4)
    cst = [0, 0, 1, 0, 0]
    model = OTreeBagger(consistency="pointwise", n_estimators=9, monotonic_cst=cst, random_state=0).fit(X, y)
    assert model.score_model_ == "additive" and model.score_model_scores_ is None
    assert model.is_monotone() and model.is_consistent()
    rng = np.random.RandomState(5)
    assert _wrong_way_steps(model, cst, rng) == 0
    with pytest.raises(ValueError, match="score_model='kernel' cannot follow monotonic_cst"):
        OTreeBagger(consistency="pointwise", n_estimators=3, monotonic_cst=cst, space_params={'score_model': "kernel"}).fit(X, y)


def test_kernel_model_saves_loads_and_predicts_the_same():
    """Check the model file: a kernel-score model loads as a trusted type and predicts the same."""
    X, y = _product(300, units=UNITS)
    model = OTreeBagger(consistency="pointwise", n_estimators=6, random_state=0, space_params={'score_model': "kernel"}).fit(X, y)
    loaded = _reloaded(model)
    assert np.array_equal(loaded.predict(X), model.predict(X)) and loaded.is_consistent()


def test_kernel_space_is_free_of_the_features_units():
    """Check that odd units give nearly the same model (power-of-two scales, then standardised)."""
    X, y = _product(300)
    plain = OTreeBagger(consistency="pointwise", n_estimators=9, random_state=0, space_params={'score_model': "kernel"}).fit(X, y)
    odd = OTreeBagger(consistency="pointwise", n_estimators=9, random_state=0, space_params={'score_model': "kernel"}).fit(X * UNITS, y)
    assert np.mean(plain.predict(X) == odd.predict(X * UNITS)) >= 0.97
    assert odd.is_consistent()


def test_kernel_score_past_the_row_cap_reads_evenly_spaced_rows(monkeypatch):
    """Check the cap: the regression reads only the capped rows, and the score still follows the class."""
    import ensemble.spaces._spaces as module

    X, y = _product(3000)
    monkeypatch.setattr(module, "_KERNEL_ROWS", 600)
    read = np.linspace(0, 2999, 600).astype(np.intp)
    score = kernel_score(X, y, np.arange(3000), np.arange(5), np.ones(3000))
    assert np.corrcoef(score.value(X), y)[0, 1] > 0.85
    # Labels changed on the rows it does not read change nothing; on a read row they do.
    unread = np.setdiff1d(np.arange(3000), read)
    moved = y.copy()
    moved[unread] = 1
    again = kernel_score(X, moved, np.arange(3000), np.arange(5), np.ones(3000))
    assert np.array_equal(again.coefs, score.coefs)
    moved = y.copy()
    moved[read[:50]] = 5
    assert not np.array_equal(kernel_score(X, moved, np.arange(3000), np.arange(5), np.ones(3000)).coefs,
                              score.coefs)
